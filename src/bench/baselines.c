/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * geli bench --baselines: what the data path is compared with, measured
 * beside it (study.h): a plain FUSE passthrough (--attached), `openssl
 * speed` and the crypto backend alone (--cipher-only).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <unistd.h>

#include "algs.h"
#include "crypto.h"
#include "files.h"
#include "fusefile.h"
#include "geli.h"
#include "spawn.h"
#include "study.h"

/*
 * A plain FUSE passthrough (fusefile.h, the front end geli attach serves
 * with) of a memory file, against which --attached's raw memory file shows
 * FUSE's own share; direct I/O, as attach serves.
 */
struct passthrough {
	int fd;
	uint64_t size;
};

static uint64_t
pt_size(void *a)
{
	return ((struct passthrough *)a)->size;
}

static ssize_t
pt_read(void *a, void *buf, size_t len, uint64_t off)
{
	ssize_t n = pread(((struct passthrough *)a)->fd, buf, len, (off_t)off);

	return n < 0 ? -errno : n;
}

static ssize_t
pt_write(void *a, const void *buf, size_t len, uint64_t off)
{
	ssize_t n = pwrite(((struct passthrough *)a)->fd, buf, len, (off_t)off);

	return n < 0 ? -errno : n;
}

static int
pt_flush(void *a)
{
	return fdatasync(((struct passthrough *)a)->fd) == 0 ? 0 : -errno;
}

static int
baseline_fuse(const struct bench_opts *o, uint8_t *buf, struct sample *s)
{
	char dir[] = "/dev/shm/geli-bench.XXXXXX", file[64], mnt[64];
	struct passthrough pt = { -1, o->size };
	struct blockio be = { .arg = &pt, .size = pt_size,
	    .read = pt_read, .write = pt_write, .flush = pt_flush };
	struct fusefile *ff = NULL;
	struct meter m = { o, -1, 0 };
	struct raw r = { -1 };
	int error;

	if (mkdtemp(dir) == NULL)
		return -errno;
	snprintf(file, sizeof(file), "%s/file", dir);
	snprintf(mnt, sizeof(mnt), "%s/mnt", dir);
	pt.fd = open(file, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	error = pt.fd < 0 || posix_fallocate(pt.fd, 0, (off_t)o->size) != 0 ||
	    write_file(mnt, "") != 0 ? -EIO : 0;
	if (error == 0)
		error = fusefile_start(mnt, &be, false, true, &ff);
	if (error == 0 && (r.fd = open(mnt, O_RDWR | O_CLOEXEC)) < 0)
		error = -errno;
	if (error == 0)
		error = write_read(&m, raw_write, raw_read, &r, buf, o->size, s);
	if (r.fd >= 0)
		close(r.fd);
	fusefile_stop(ff);
	if (pt.fd >= 0)
		close(pt.fd);
	remove_tree(dir);
	return error;
}

/* openssl speed's name of c's cipher, or NULL (NULL has none). */
static const char *
openssl_name(const struct config *c, char *buf, size_t len)
{
	switch (c->ealgo) {
	case GELI_ALGO_AES_XTS:
		snprintf(buf, len, "aes-%u-xts", c->keylen);
		return buf;
	case GELI_ALGO_AES_CBC:
		snprintf(buf, len, "aes-%u-cbc", c->keylen);
		return buf;
	case GELI_ALGO_CAMELLIA_CBC:
		snprintf(buf, len, "camellia-%u-cbc", c->keylen);
		return buf;
	case GELI_ALGO_BLOWFISH_CBC:
		return "bf-cbc";	/* its 128-bit key, whatever keylen */
	case GELI_ALGO_3DES_CBC:
		return "des-ede3-cbc";
	}
	return NULL;
}

/* One `openssl speed` run: bytes per second (0 when it said nothing), and
 * its CPU time in *cpu. */
static double
openssl_speed(const char *alg, uint32_t S, int secs, bool decrypt, double *cpu)
{
	char nbytes[16], nsecs[16], line[512], name[64];
	const char *argv[] = { "openssl", "speed", "-provider", "default",
	    "-provider", "legacy", "-evp", alg, "-bytes", nbytes, "-seconds",
	    nsecs, decrypt ? "-decrypt" : NULL, NULL };
	struct spawn sp = { .argv = argv, .flags = SPAWN_NO_STDERR };
	struct rusage r0, r1;
	double speed = 0;
	FILE *f;
	pid_t pid;

	snprintf(nbytes, sizeof(nbytes), "%u", S);
	snprintf(nsecs, sizeof(nsecs), "%d", secs);
	getrusage(RUSAGE_CHILDREN, &r0);
	pid = spawn_start(&sp, &f);
	if (pid < 0)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL) {
		double k;

		/* The result line: "AES-128-XTS    9405530.11k" */
		if (sscanf(line, "%63s %lfk", name, &k) == 2 &&
		    strcasecmp(name, alg) == 0)
			speed = k * 1000;
	}
	fclose(f);
	if (spawn_wait(pid) != 0)
		speed = 0;
	getrusage(RUSAGE_CHILDREN, &r1);
	*cpu = (double)(r1.ru_utime.tv_sec - r0.ru_utime.tv_sec) +
	    (double)(r1.ru_utime.tv_usec - r0.ru_utime.tv_usec) / 1e6 +
	    (double)(r1.ru_stime.tv_sec - r0.ru_stime.tv_sec) +
	    (double)(r1.ru_stime.tv_usec - r0.ru_stime.tv_usec) / 1e6;
	return speed;
}

/*
 * `openssl speed -evp` of c's cipher on one buffer of a sector's size (one
 * IV for all of it), encrypting then decrypting, for --seconds (at least
 * the one second it counts in).  Its own timing: the figure openssl
 * prints.
 */
static int
baseline_openssl(const struct config *c, const struct bench_opts *o,
    struct sample *s)
{
	uint32_t S = c->sectorsize != 0 ? c->sectorsize : o->sectorsize;
	int secs = o->seconds < 1.5 ? 1 : (int)(o->seconds + 0.5);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	char buf[32];
	const char *alg = openssl_name(c, buf, sizeof(buf));
	double cw = 0, cr = 0;

	if (alg == NULL)
		return -ENOTSUP;
	s->wr = openssl_speed(alg, S, secs, false, &cw) / 1e6;
	s->rd = openssl_speed(alg, S, secs, true, &cr) / 1e6;
	s->cpu = 100.0 * (cw + cr) / (2.0 * secs * (double)(ncpu > 0 ? ncpu : 1));
	return s->wr > 0 && s->rd > 0 ? 0 : -ENOTSUP;
}

/*
 * The crypto backend alone: c's cipher through libgeli's seam (crypto.h),
 * keyed once, each request's sectors in one batch call with their IVs
 * given (no range keys, no IV hashing, no pool: one thread), in place.
 * What any caller of that library could reach for the data path's work.
 */
struct bare {
	struct gc_cipher_ctx *ctx;
	uint8_t *ivs;		/* the IVs of a request's sectors */
	uint32_t S;
};

static ssize_t
bare_crypt(struct bare *b, uint8_t *buf, size_t len, int enc)
{
	return gc_crypt_batch(b->ctx, len / b->S, b->ivs, buf, buf, b->S,
	    enc) == 0 ? (ssize_t)len : -1;
}

static ssize_t
bare_encrypt(void *a, uint8_t *buf, size_t len, uint64_t off)
{
	(void)off;
	return bare_crypt(a, buf, len, 1);
}

static ssize_t
bare_decrypt(void *a, uint8_t *buf, size_t len, uint64_t off)
{
	(void)off;
	return bare_crypt(a, buf, len, 0);
}

static int
baseline_backend(const struct config *c, const struct bench_opts *o,
    uint8_t *buf, struct sample *s)
{
	const struct geli_alg *alg = algs_cipher(c->ealgo);
	const size_t bs = o->bs != 0 ? o->bs : 1 << 20;
	struct bare b = { NULL, NULL,
	    c->sectorsize != 0 ? c->sectorsize : o->sectorsize };
	struct meter m = { o, -1, 0 };
	size_t n = bs / b.S, ivlen;
	uint8_t key[64];
	int error;

	if (alg == NULL)
		return -EINVAL;
	ivlen = gc_ivlen(alg->cipher, alg->mode);
	b.ivs = calloc(n, ivlen > 0 ? ivlen : 1);
	if (b.ivs == NULL)
		return -ENOMEM;
	/* Each sector's byte offset as its IV (what XTS takes; CBC hashes
	 * its own, which is not the cipher's work). */
	for (size_t i = 0; i < n && ivlen >= 8; i++) {
		uint64_t off = (uint64_t)i * b.S;

		for (int k = 0; k < 8; k++)
			b.ivs[i * ivlen + (size_t)k] = (uint8_t)(off >> (8 * k));
	}
	geli_random(key, sizeof(key));
	error = gc_cipher_new(NULL, alg->cipher, alg->mode, key,
	    algs_keybytes(alg, c->keylen), &b.ctx);
	geli_wipe(key, sizeof(key));
	if (error == 0)
		error = write_read(&m, bare_encrypt, bare_decrypt, &b, buf, bs, s);
	gc_cipher_free(b.ctx);
	free(b.ivs);
	return error;
}

int
measure_baseline(const struct config *c, const struct bench_opts *o,
    uint8_t *buf, struct sample *s)
{
	switch (c->base) {
	case BASE_FUSE:
		return baseline_fuse(o, buf, s);
	case BASE_OPENSSL:
		return baseline_openssl(c, o, s);
	case BASE_BACKEND:
		return baseline_backend(c, o, buf, s);
	case BASE_NONE:
	case BASE_NOACCEL:	/* the data path itself: measure() */
		break;
	}
	return -EINVAL;
}
