/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * geli-speed: how fast the data path and the attached file are, as ratios
 * against baselines measured in the same run on the same machine, each pair
 * measured in turn `rounds` times (medians of the figures and of the
 * per-round ratios):
 *
 *   1. the sector transform at 4096-byte sectors, one thread, with the
 *      selected crypto backend ($GELI_CRYPTO, default libgcrypt) against
 *      `openssl speed -evp CIPHER -bytes 4096 [-decrypt]`, against a bare
 *      loop of libgcrypt calls with one IV reset per sector (what any caller
 *      of the library reaches), and against the other backend (legacy
 *      ciphers);
 *   2. integrity (AES-XTS-128 + HMAC/SHA256) decryption against `openssl
 *      speed -evp sha256 -bytes 8192`;
 *   3. two threads against one;
 *   4. sequential write and read through `geli attach`'s file against a
 *      plain FUSE passthrough of a backing file of the same kind.
 *
 * Usage: geli-speed [-q] [-g GELI] [-d DIR] [-r rounds] [-s MiB] [-t seconds]
 * A benchmark, not a test: it prints numbers and never fails on them.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <gcrypt.h>
#include <openssl/evp.h>

#include "files.h"
#include "fusefile.h"
#include "geli.h"
#include "spawn.h"
#include "stats.h"
#include "volumes.h"

static double seconds = 1.0;
static int rounds = 3;

/* ---- Baselines ------------------------------------------------------------------ */

/* `openssl speed -evp CIPHER -bytes N [-decrypt]`, in bytes per second. */
static double
openssl_speed(const char *alg, int bytes, bool decrypt)
{
	char nbytes[16], secs[16], line[512], name[64];
	const char *argv[] = { "openssl", "speed", "-evp", alg, "-bytes", nbytes,
	    "-seconds", secs, decrypt ? "-decrypt" : NULL, NULL };
	struct spawn s = { argv, NULL, NULL, SPAWN_NO_STDERR };
	double best = 0;
	FILE *f;
	pid_t pid;

	snprintf(nbytes, sizeof(nbytes), "%d", bytes);
	snprintf(secs, sizeof(secs), "%d", (int)(seconds + 0.5) < 1 ? 1 : (int)(seconds + 0.5));
	pid = spawn_start(&s, &f);
	if (pid < 0)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL) {
		double k;
		/* The result line: "AES-128-XTS    9405530.11k" */
		if (sscanf(line, "%63s %lfk", name, &k) == 2 &&
		    strcasecmp(name, alg) == 0)
			best = k * 1000;
	}
	fclose(f);
	(void)spawn_wait(pid);
	return best;
}

/*
 * Bare loops: what any caller of one library pays per GELI sector, with the
 * key set once, no key lookup and no volume: the calls for one 4096-byte
 * sector (fn) over 1 MiB batches for `seconds`.  Bytes per second.
 */
struct floor {
	gcry_cipher_hd_t h;
	gcry_md_hd_t md;
	EVP_CIPHER_CTX *ctx;
	size_t ivlen;
	bool enc;
	uint8_t key[64], iv[32], ivk[64], ak[72];
	uint8_t *buf, *phys;	/* 1 MiB of sectors; integrity: their chunks */
	/* Integrity: the layout of the volume transform_speed measures
	 * (geli_auth_layout on a provider in memory): data bytes and tag
	 * bytes per physical sector of P bytes, lsec of them a sector. */
	uint32_t P, dps, lsec, alen;
};

static double
floor_loop(struct floor *f, int (*fn)(struct floor *, uint64_t i, uint64_t off))
{
	size_t bytes = 0;
	double t0 = now(), t = t0;

	do {
		for (uint64_t i = 0; i < 256; i++)
			if (fn(f, i, bytes + i * 4096) != 0)
				return 0;
		bytes += 1 << 20;
		t = now();
	} while (t - t0 < seconds);
	return (double)bytes / (t - t0);
}

/* gcry_cipher_setiv and one call (XTS, or CBC with the offset as its IV). */
static int
gcry_sector(struct floor *f, uint64_t i, uint64_t off)
{
	uint8_t *p = f->buf + i * 4096;

	memcpy(f->iv, &off, 8);
	gcry_cipher_setiv(f->h, f->iv, f->ivlen);
	return f->enc ? gcry_cipher_encrypt(f->h, p, 4096, NULL, 0) :
	    gcry_cipher_decrypt(f->h, p, 4096, NULL, 0);
}

/* GELI's CBC decryption: the IV SHA256(IVK || LE64(off)) in one
 * gcry_md_hash_buffers call, then setiv and the decryption. */
static int
gcry_cbc_iv_sector(struct floor *f, uint64_t i, uint64_t off)
{
	gcry_buffer_t iov[2];

	memset(iov, 0, sizeof(iov));
	iov[0].data = f->ivk;
	iov[0].len = 64;
	iov[1].data = &off;
	iov[1].len = 8;
	gcry_md_hash_buffers(GCRY_MD_SHA256, 0, f->iv, iov, 2);
	gcry_cipher_setiv(f->h, f->iv, 16);
	return gcry_cipher_decrypt(f->h, f->buf + i * 4096, 4096, NULL, 0);
}

/* Integrity (AES-XTS-128 + HMAC/SHA256, nine chunks a sector on 512-byte
 * physical sectors): per chunk the HMAC keyed with AK || LE64(phys), its
 * tag compared, the chunk's XTS decryption. */
static int
gcry_auth_sector(struct floor *f, uint64_t i, uint64_t off)
{
	static volatile int differ;	/* the tag compare, kept */

	(void)off;
	for (uint64_t j = 0; j < f->lsec; j++) {
		uint64_t ph = i * f->lsec * f->P + j * f->P;
		size_t len = j + 1 < f->lsec ? f->dps : 4096 - (f->lsec - 1) * f->dps;

		memcpy(f->ak + 64, &ph, 8);
		gcry_md_setkey(f->md, f->ak, sizeof(f->ak));
		gcry_md_write(f->md, f->phys + ph + f->alen, len);
		differ += memcmp(gcry_md_read(f->md, 0), f->phys + ph, f->alen) != 0;
		memcpy(f->iv, &ph, 8);
		gcry_cipher_setiv(f->h, f->iv, 16);
		gcry_cipher_decrypt(f->h, f->buf + i * 4096 + j * f->dps, len,
		    f->phys + ph + f->alen, len);
	}
	(void)differ;	/* clang: set but not used */
	return 0;
}

/* The integrity layout of AES-XTS-128 + HMAC/SHA256 at S=4096 on a
 * provider in memory, from the library, into f. */
static int
auth_layout(struct floor *f)
{
	struct geli_metadata md;
	struct geli_provider *p;
	int error;

	error = mem_provider(NULL, 0, false, &p, NULL);
	if (error != 0)
		return error;
	f->P = geli_provider_sectorsize(p);
	geli_provider_close(p);
	bench_metadata(&md, GELI_ALGO_AES_XTS, 128, GELI_ALGO_HMAC_SHA256, 4096);
	f->alen = geli_hashlen(GELI_ALGO_HMAC_SHA256);
	return geli_auth_layout(&md, f->P, &f->dps, &f->lsec);
}

/* OpenSSL 3's EVP calls: EVP_CipherInit_ex for each IV, one update. */
static int
evp_sector(struct floor *f, uint64_t i, uint64_t off)
{
	uint8_t *p = f->buf + i * 4096;
	int outl;

	memcpy(f->iv, &off, 8);
	return EVP_CipherInit_ex(f->ctx, NULL, NULL, NULL, f->iv, f->enc) == 1 &&
	    EVP_CipherUpdate(f->ctx, p, &outl, p, 4096) == 1 ? 0 : -1;
}

enum floor_kind { FLOOR_GCRY, FLOOR_GCRY_CBC_IV, FLOOR_GCRY_AUTH, FLOOR_EVP };

/* Set up the loop of kind (libgcrypt's algo/mode/keybytes, or the EVP
 * cipher name), run it, tear it down. */
static double
bare_loop(enum floor_kind kind, int algo, int mode, size_t keybytes,
    const char *evpname, bool enc)
{
	struct floor f = { .enc = enc };
	EVP_CIPHER *cipher = NULL;
	double r = 0;

	/* Without integrity phys is unused: one sector's layout is assumed. */
	f.P = f.dps = 4096;
	f.lsec = 1;
	if (kind == FLOOR_GCRY_AUTH && auth_layout(&f) != 0)
		goto out;
	f.buf = aligned_alloc(4096, 1 << 20);
	f.phys = aligned_alloc(4096, 256 * (size_t)f.lsec * f.P);
	if (f.buf == NULL || f.phys == NULL)
		goto out;
	memset(f.buf, 0x5a, 1 << 20);
	geli_random(f.phys, 256 * (size_t)f.lsec * f.P);
	geli_random(f.key, sizeof(f.key));
	geli_random(f.ivk, sizeof(f.ivk));
	geli_random(f.ak, sizeof(f.ak));
	if (kind == FLOOR_EVP) {
		cipher = EVP_CIPHER_fetch(NULL, evpname, NULL);
		f.ctx = EVP_CIPHER_CTX_new();
		if (cipher != NULL && f.ctx != NULL &&
		    EVP_CipherInit_ex2(f.ctx, cipher, f.key, NULL, enc, NULL) == 1 &&
		    EVP_CIPHER_CTX_set_padding(f.ctx, 0) == 1)
			r = floor_loop(&f, evp_sector);
		EVP_CIPHER_CTX_free(f.ctx);
		EVP_CIPHER_free(cipher);
		goto out;
	}
	if (kind == FLOOR_GCRY_AUTH && gcry_md_open(&f.md, GCRY_MD_SHA256,
	    GCRY_MD_FLAG_HMAC) != 0)
		goto out;
	f.ivlen = gcry_cipher_get_algo_blklen(algo);
	if (gcry_cipher_open(&f.h, algo, mode, 0) == 0) {
		if (gcry_cipher_setkey(f.h, f.key, keybytes) == 0)
			r = floor_loop(&f, kind == FLOOR_GCRY ? gcry_sector :
			    kind == FLOOR_GCRY_CBC_IV ? gcry_cbc_iv_sector :
			    gcry_auth_sector);
		gcry_cipher_close(f.h);
	}
	gcry_md_close(f.md);
out:
	free(f.buf);
	free(f.phys);
	geli_wipe(&f, sizeof(f));
	return r;
}

/* ---- The data path ------------------------------------------------------------------- */

/* A volume on an in-memory provider (memfd), with a random key, made with
 * the crypto backend `crypto` (NULL: the selected one). */
static struct geli_volume *
mem_volume(const char *crypto, unsigned ealgo, unsigned keylen, unsigned aalgo,
    uint32_t S, unsigned threads)
{
	const char *prev = geli_crypto_name();
	struct geli_provider *p;
	struct geli_metadata md;
	struct geli_volume *v = NULL;

	/* 64 MiB of sectors, never touched: the transform does no I/O. */
	bench_metadata(&md, ealgo, keylen, aalgo, S);
	if (mem_provider(&md, 64 << 20, false, &p, NULL) != 0)
		return NULL;
	if ((crypto == NULL || geli_crypto_select(crypto) == 0) &&
	    random_volume(p, &md, threads, &v) != 0)
		v = NULL;
	if (v == NULL)
		geli_provider_close(p);
	geli_crypto_select(prev);
	return v;
}

struct xf {
	const char *crypto;	/* backend, NULL: the selected one */
	unsigned ealgo, keylen, aalgo, threads;
	bool enc;
};

/*
 * Transform 1 MiB batches (a FUSE request's worth) of 4096-byte sectors for
 * `seconds`: bytes/s.  With integrity, decryption verifies what one
 * encryption of the same sectors wrote (phys holds tags and ciphertext).
 */
static double
transform_speed(const struct xf *x)
{
	struct geli_volume *v = mem_volume(x->crypto, x->ealgo, x->keylen, x->aalgo,
	    4096, x->threads);
	size_t n = 256, bytes = 0;
	uint8_t *buf, *phys;
	double t0, t = 0;

	if (v == NULL)
		return 0;
	buf = aligned_alloc(4096, n * 4096);
	phys = aligned_alloc(4096, n * geli_volume_physical_sectorsize(v));
	geli_random(buf, n * 4096);
	if (x->aalgo != 0 && !x->enc)
		geli_volume_transform(v, 0, n, buf, phys, true);
	t0 = now();
	do {
		uint64_t first = x->aalgo != 0 ? 0 : bytes / 4096 % 16384;
		if (geli_volume_transform(v, first, n, buf, phys, x->enc) != 0) {
			bytes = 0;
			break;
		}
		bytes += n * 4096;
		t = now();
	} while (t - t0 < seconds);
	free(buf);
	free(phys);
	geli_volume_close(v);
	return bytes > 0 ? (double)bytes / (t - t0) : 0;
}

/* ---- Pairs measured in turn --------------------------------------------------------- */

enum kind { OSSL_SPEED, FLOOR, XFORM };

struct side {
	enum kind kind;
	const char *name;	/* openssl speed's alg / EVP cipher name */
	int bytes;		/* openssl speed -bytes */
	enum floor_kind floor;	/* FLOOR */
	int algo, mode;		/* libgcrypt's */
	size_t keybytes;
	struct xf x;		/* XFORM; x.enc also for the floors and speed */
};

static double
measure(const struct side *s)
{
	switch (s->kind) {
	case OSSL_SPEED:
		return openssl_speed(s->name, s->bytes, !s->x.enc);
	case FLOOR:
		return bare_loop(s->floor, s->algo, s->mode, s->keybytes, s->name,
		    s->x.enc);
	case XFORM:
		return transform_speed(&s->x);
	}
	return 0;
}

/*
 * One row: baseline and geli measured in turn `rounds` times; the medians of
 * both, and the median of the per-round ratios (in % or as "x").
 */
static void
pair(const char *what, const char *bname, const struct side *b,
    const char *gname, const struct side *g, bool times)
{
	double bv[STATS_MAX], gv[STATS_MAX], rv[STATS_MAX];

	for (int i = 0; i < rounds; i++) {
		bv[i] = measure(b);
		gv[i] = measure(g);
		rv[i] = bv[i] > 0 ? gv[i] / bv[i] : 0;
	}
	double bm = stats(bv, rounds).median, gm = stats(gv, rounds).median;
	struct stat3 r = stats(rv, rounds);
	if (times)
		printf("| %s | %s | %.0f MB/s | %s | %.0f MB/s | %.2fx (%.2f-%.2f) |\n",
		    what, bname, bm / 1e6, gname, gm / 1e6, r.median, r.min, r.max);
	else
		printf("| %s | %s | %.0f MB/s | %s | %.0f MB/s | %.0f%% (%.0f-%.0f) |\n",
		    what, bname, bm / 1e6, gname, gm / 1e6, 100 * r.median,
		    100 * r.min, 100 * r.max);
	fflush(stdout);
}

static struct side
ossl(const char *alg, int bytes, bool enc)
{
	return (struct side){ .kind = OSSL_SPEED, .name = alg, .bytes = bytes,
	    .x = { .enc = enc } };
}

static struct side
floor_gcry(int algo, int mode, size_t keybytes, bool enc)
{
	return (struct side){ .kind = FLOOR, .floor = FLOOR_GCRY, .algo = algo,
	    .mode = mode, .keybytes = keybytes, .x = { .enc = enc } };
}

static struct side
xform(const char *crypto, unsigned ealgo, unsigned keylen, unsigned aalgo,
    unsigned threads, bool enc)
{
	return (struct side){ .kind = XFORM, .x = { crypto, ealgo, keylen, aalgo,
	    threads, enc } };
}

static void
cipher_rows(long cpus)
{
	const char *be = geli_crypto_name();
	char gname[160];
	struct side b, g;

	snprintf(gname, sizeof(gname), "sector transform (%s), 1 MiB batches",
	    geli_crypto_version());
	for (int k = 0; k < 2; k++) {
		unsigned kl = k == 0 ? 128 : 256;
		char alg[32], what[96];
		snprintf(alg, sizeof(alg), "aes-%u-xts", kl);
		for (int e = 1; e >= 0; e--) {
			char bname[96];
			snprintf(what, sizeof(what), "AES-XTS-%u %s, S=4096, 1 thread", kl,
			    e ? "encrypt" : "decrypt");
			snprintf(bname, sizeof(bname), "openssl speed -evp %s -bytes 4096%s",
			    alg, e ? "" : " -decrypt");
			b = ossl(alg, 4096, e);
			g = xform(NULL, GELI_ALGO_AES_XTS, kl, 0, 1, e);
			pair(what, bname, &b, gname, &g, true);
			b = floor_gcry(kl == 128 ? GCRY_CIPHER_AES128 : GCRY_CIPHER_AES256,
			    GCRY_CIPHER_MODE_XTS, kl / 4, e);
			pair(what, "bare libgcrypt loop, one setiv per sector", &b, gname, &g,
			    false);
		}
	}
	b = ossl("aes-128-cbc", 4096, false);
	g = xform(NULL, GELI_ALGO_AES_CBC, 128, 0, 1, false);
	pair("AES-CBC-128 decrypt, S=4096, 1 thread", "openssl speed -evp aes-128-cbc "
	    "-bytes 4096 -decrypt", &b, "sector transform (IV = SHA256 per sector)", &g, true);
	struct side ceil = { .kind = FLOOR, .floor = FLOOR_GCRY_CBC_IV,
	    .algo = GCRY_CIPHER_AES128, .mode = GCRY_CIPHER_MODE_CBC, .keybytes = 16 };
	pair("AES-CBC-128 decrypt, S=4096, 1 thread", "openssl speed -evp aes-128-cbc "
	    "-bytes 4096 -decrypt", &b, "bare libgcrypt loop: hash_buffers IV, setiv, "
	    "decrypt (any libgcrypt caller's ceiling)", &ceil, true);
	pair("AES-CBC-128 decrypt, S=4096, 1 thread", "that bare libgcrypt loop", &ceil,
	    "sector transform", &g, false);
	/* CBC encryption is serial: the faster library's bare loop bounds it. */
	struct side gs = floor_gcry(GCRY_CIPHER_AES128, GCRY_CIPHER_MODE_CBC, 16, true);
	struct side es = { .kind = FLOOR, .floor = FLOOR_EVP, .name = "AES-128-CBC",
	    .x = { .enc = true } };
	double gf = measure(&gs), ef = measure(&es);
	b = gf >= ef ? gs : es;
	g = xform(NULL, GELI_ALGO_AES_CBC, 128, 0, 1, true);
	pair("AES-CBC-128 encrypt, S=4096, 1 thread", gf >= ef ?
	    "bare libgcrypt loop (the faster library here)" :
	    "bare EVP loop (the faster library here)", &b,
	    "sector transform (IV = SHA256 per sector)", &g, false);
	b = ossl("camellia-128-cbc", 4096, false);
	g = xform(NULL, GELI_ALGO_CAMELLIA_CBC, 128, 0, 1, false);
	pair("CAMELLIA-CBC-128 decrypt, S=4096, 1 thread", "openssl speed -evp "
	    "camellia-128-cbc -bytes 4096 -decrypt", &b, "sector transform", &g, true);
	if (strcmp(be, "openssl") != 0) {
		b = xform("openssl", GELI_ALGO_BLOWFISH_CBC, 128, 0, 1, false);
		g = xform(NULL, GELI_ALGO_BLOWFISH_CBC, 128, 0, 1, false);
		pair("Blowfish-CBC-128 decrypt, S=4096, 1 thread",
		    "sector transform, OpenSSL backend", &b, "sector transform", &g, true);
		b = xform("openssl", GELI_ALGO_3DES_CBC, 192, 0, 1, false);
		g = xform(NULL, GELI_ALGO_3DES_CBC, 192, 0, 1, false);
		pair("3DES-CBC decrypt, S=4096, 1 thread",
		    "sector transform, OpenSSL backend", &b, "sector transform", &g, true);
	}
	b = ossl("sha256", 8192, true);
	g = xform(NULL, GELI_ALGO_AES_XTS, 128, GELI_ALGO_HMAC_SHA256, 1, false);
	pair("AES-XTS-128 + HMAC/SHA256 decrypt, S=4096, 1 thread",
	    "openssl speed -evp sha256 -bytes 8192", &b,
	    "sector transform (verify 9 tags, decrypt)", &g, false);
	ceil = (struct side){ .kind = FLOOR, .floor = FLOOR_GCRY_AUTH,
	    .algo = GCRY_CIPHER_AES128, .mode = GCRY_CIPHER_MODE_XTS, .keybytes = 32 };
	pair("AES-XTS-128 + HMAC/SHA256 decrypt, S=4096, 1 thread",
	    "openssl speed -evp sha256 -bytes 8192", &b,
	    "bare libgcrypt loop: per chunk setkey, write, read, setiv, decrypt "
	    "(any libgcrypt caller's ceiling)", &ceil, false);
	pair("AES-XTS-128 + HMAC/SHA256 decrypt, S=4096, 1 thread",
	    "that bare libgcrypt loop", &ceil, "sector transform", &g, false);
	char two[64];
	snprintf(two, sizeof(two), "AES-XTS-128 encrypt, 2 threads vs 1 (%ld cores)", cpus);
	b = xform(NULL, GELI_ALGO_AES_XTS, 128, 0, 1, true);
	g = xform(NULL, GELI_ALGO_AES_XTS, 128, 0, 2, true);
	pair(two, "1 thread", &b, "2 threads", &g, true);
	b = xform(NULL, GELI_ALGO_AES_CBC, 128, 0, 1, false);
	g = xform(NULL, GELI_ALGO_AES_CBC, 128, 0, 2, false);
	pair("AES-CBC-128 decrypt, 2 threads vs 1", "1 thread", &b, "2 threads", &g, true);
}

/* ---- The attached file against a plain FUSE passthrough ---------------------- */

struct plain {
	int fd;
	uint64_t size;
};

static uint64_t pl_size(void *a) { return ((struct plain *)a)->size; }

static ssize_t
pl_read(void *a, void *buf, size_t len, uint64_t off)
{
	struct plain *p = a;
	ssize_t n = pread(p->fd, buf, len, (off_t)off);
	return n < 0 ? -errno : n;
}

static ssize_t
pl_write(void *a, const void *buf, size_t len, uint64_t off)
{
	struct plain *p = a;
	ssize_t n = pwrite(p->fd, buf, len, (off_t)off);
	return n < 0 ? -errno : n;
}

static int
pl_flush(void *a)
{
	return fdatasync(((struct plain *)a)->fd) == 0 ? 0 : -errno;
}

/* Sequential write (then fdatasync) and read of size bytes: MB/s each. */
static void
seq_io(const char *file, uint64_t size, double *wr, double *rd)
{
	size_t bs = 1 << 20;
	uint8_t *buf = aligned_alloc(4096, bs);
	double t0;
	int fd;

	*wr = *rd = 0;
	geli_random(buf, bs);
	fd = open(file, O_RDWR);
	if (fd < 0)
		goto out;
	t0 = now();
	for (uint64_t off = 0; off < size; off += bs)
		if (pwrite(fd, buf, bs, (off_t)off) != (ssize_t)bs)
			goto out;
	if (fdatasync(fd) != 0)
		goto out;
	*wr = (double)size / (now() - t0) / 1e6;
	t0 = now();
	for (uint64_t off = 0; off < size; off += bs)
		if (pread(fd, buf, bs, (off_t)off) != (ssize_t)bs)
			goto out;
	*rd = (double)size / (now() - t0) / 1e6;
out:
	if (fd >= 0)
		close(fd);
	free(buf);
}

static void
fuse_compare(const char *geli, const char *dir, uint64_t mib)
{
	char backing[512], pt_file[1024], pt_mnt[1024], eli[1100];
	const char *prov[] = { "geli.img" };
	double pw[STATS_MAX], pr[STATS_MAX], aw[STATS_MAX], ar[STATS_MAX];
	double rw[STATS_MAX], rr[STATS_MAX];
	uint64_t size = mib << 20;
	struct fusefile *ff = NULL;
	struct plain pl;
	struct attached a = { .geli = geli, .dir = backing, .ealgo = GELI_ALGO_AES_XTS,
	    .keylen = 128, .sectorsize = 4096, .iterations = 1000 };

	snprintf(backing, sizeof(backing), "%s/geli-speed.XXXXXX", dir);
	if (mkdtemp(backing) == NULL) {
		fprintf(stderr, "geli-speed: cannot create a directory in %s\n", dir);
		return;
	}
	snprintf(pt_file, sizeof(pt_file), "%s/plain.img", backing);
	snprintf(pt_mnt, sizeof(pt_mnt), "%s/plain.mnt", backing);
	snprintf(eli, sizeof(eli), "%s/run/geli.img.eli", backing);
	/* The attach daemon runs the backend measured here. */
	setenv("GELI_CRYPTO", geli_crypto_name(), 1);

	/* The passthrough: the same FUSE front end over a plain file. */
	pl.fd = open(pt_file, O_RDWR | O_CREAT, 0600);
	pl.size = size;
	if (pl.fd < 0 || ftruncate(pl.fd, (off_t)size) != 0 ||
	    close(open(pt_mnt, O_CREAT | O_WRONLY, 0600)) != 0)
		goto out;
	struct fusefile_backend be = { .arg = &pl, .size = pl_size,
	    .read = pl_read, .write = pl_write, .flush = pl_flush };
	if (fusefile_start(pt_mnt, &be, false, true, &ff) != 0) {
		fprintf(stderr, "geli-speed: cannot mount the passthrough\n");
		goto out;
	}
	/* The real thing: geli init + geli attach (AES-XTS-128, S=4096). */
	if (attached_file(&a, prov[0], size) != 0 || attached_start(&a, prov, 1) != 0) {
		fprintf(stderr, "geli-speed: geli attach failed\n");
		goto out;
	}
	for (int i = 0; i < rounds; i++) {
		seq_io(pt_mnt, size, &pw[i], &pr[i]);
		seq_io(eli, size, &aw[i], &ar[i]);
		rw[i] = pw[i] > 0 ? aw[i] / pw[i] : 0;
		rr[i] = pr[i] > 0 ? ar[i] / pr[i] : 0;
	}
	struct stat3 w = stats(rw, rounds), r = stats(rr, rounds);
	printf("| sequential write, %ju MiB, 1 MiB blocks + fdatasync | plain FUSE passthrough | %.0f MB/s | geli attach (AES-XTS-128, S=4096, %s) | %.0f MB/s | %.0f%% (%.0f-%.0f) |\n",
	    (uintmax_t)mib, stats(pw, rounds).median, geli_crypto_version(),
	    stats(aw, rounds).median, 100 * w.median, 100 * w.min, 100 * w.max);
	printf("| sequential read, %ju MiB, 1 MiB blocks | plain FUSE passthrough | %.0f MB/s | geli attach (AES-XTS-128, S=4096, %s) | %.0f MB/s | %.0f%% (%.0f-%.0f) |\n",
	    (uintmax_t)mib, stats(pr, rounds).median, geli_crypto_version(),
	    stats(ar, rounds).median, 100 * r.median, 100 * r.min, 100 * r.max);
	attached_stop(&a, prov, 1, false);
out:
	fusefile_stop(ff);
	if (pl.fd >= 0)
		close(pl.fd);
	remove_tree(backing);
}

int
main(int argc, char **argv)
{
	const char *geli = "build/src/geli/geli", *dir = "/var/tmp";
	char gelipath[PATH_MAX];
	uint64_t mib = 512;
	bool quick = false, only_fuse = false, no_fuse = false;
	int ch;

	while ((ch = getopt(argc, argv, "qFCg:d:r:s:t:")) != -1) {
		switch (ch) {
		case 'q': quick = true; break;
		case 'F': only_fuse = true; break;
		case 'C': no_fuse = true; break;
		case 'g': geli = optarg; break;
		case 'd': dir = optarg; break;
		case 's': mib = strtoull(optarg, NULL, 10); break;
		case 'r':
			rounds = atoi(optarg);
			if (rounds < 1 || rounds > STATS_MAX)
				rounds = 3;
			break;
		case 't': seconds = atof(optarg); break;
		default:
			fprintf(stderr, "usage: geli-speed [-q] [-C | -F] [-g geli] [-d dir] "
			    "[-r rounds] [-s MiB] [-t seconds]\n"
			    "  -C  ciphers only; -F  the attached file only\n");
			return 2;
		}
	}
	/* The geli commands run in their own directory. */
	if (realpath(geli, gelipath) != NULL)
		geli = gelipath;
	if (quick) {
		seconds = 0.3;
		mib = 32;
		rounds = 1;
	}
	signal(SIGPIPE, SIG_IGN);
	/* libgcrypt started for the bare loops, whichever backend is tested. */
	if (geli_crypto_select("gcrypt") != 0 || geli_crypto_select(NULL) != 0) {
		fprintf(stderr, "geli-speed: unknown GELI_CRYPTO backend\n");
		return 2;
	}
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	printf("| measurement | baseline | baseline | geli | geli | ratio (min-max) |\n");
	printf("|---|---|---|---|---|---|\n");
	if (!only_fuse)
		cipher_rows(cpus);
	if (no_fuse)
		return 0;
	if (geteuid() == 0 && access("/dev/fuse", R_OK | W_OK) == 0)
		fuse_compare(geli, dir, mib);
	else
		printf("| attached file vs FUSE passthrough | skipped: needs root and /dev/fuse | | | | |\n");
	return 0;
}
