/*
 * geli-speed: how fast the data path and the attached file are, as ratios
 * against baselines measured in the same run on the same machine:
 *
 *   1. the AES-XTS-128 sector transform at 4096-byte sectors, one thread,
 *      against `openssl speed -evp aes-128-xts -bytes 4096`, and against a
 *      bare loop of EVP calls with one IV reset per sector (what OpenSSL 3.0
 *      lets any caller reach: speed never changes the IV);
 *   2. the same with two threads against one (and AES-CBC-128 decryption);
 *   3. sequential write and read through `geli attach`'s file against a
 *      plain FUSE passthrough of a backing file of the same kind.
 *
 * Usage: geli-speed [-q] [-g GELI] [-d DIR] [-r rounds] [-s MiB] [-t seconds]
 * A benchmark, not a test: it prints numbers and never fails on them.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "../src/attach/fusefile.h"
#include "../src/bench/stats.h"
#include "geli.h"

static double seconds = 2.0;


/* `openssl speed -evp CIPHER -bytes 4096 [-decrypt]`, in bytes per second. */
static double
openssl_speed(const char *cipher, bool decrypt)
{
	char cmd[256], line[512], name[64];
	double best = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "openssl speed -evp %s -bytes 4096 -seconds %d %s 2>/dev/null",
	    cipher, (int)(seconds + 0.5) < 1 ? 1 : (int)(seconds + 0.5),
	    decrypt ? "-decrypt" : "");
	f = popen(cmd, "r");
	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL) {
		double k;
		/* The result line: "AES-128-XTS    9405530.11k" */
		if (sscanf(line, "%63s %lfk", name, &k) == 2 &&
		    strcasecmp(name, cipher) == 0)
			best = k * 1000;
	}
	pclose(f);
	return best;
}

/*
 * The least any OpenSSL 3.0 caller pays for GELI's XTS: the EVP calls alone,
 * one IV (tweak) reset per 4096-byte sector, over 1 MiB batches, no key
 * lookup, no volume.  Bytes per second.
 */
static double
evp_xts_floor(void)
{
	EVP_CIPHER *cipher = EVP_CIPHER_fetch(NULL, "AES-128-XTS", NULL);
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	uint8_t key[32], iv[16] = { 0 }, *buf = aligned_alloc(4096, 1 << 20);
	size_t bytes = 0;
	double t0, t = 0;
	int outl;

	geli_random(key, sizeof(key));
	if (cipher == NULL || ctx == NULL || buf == NULL ||
	    EVP_CipherInit_ex2(ctx, cipher, key, NULL, 1, NULL) != 1)
		goto out;
	memset(buf, 0x5a, 1 << 20);
	t0 = now();
	do {
		for (uint64_t i = 0; i < 256; i++) {
			uint64_t off = bytes + i * 4096;
			memcpy(iv, &off, 8);
			if (EVP_CipherInit_ex(ctx, NULL, NULL, NULL, iv, 1) != 1 ||
			    EVP_CipherUpdate(ctx, buf + i * 4096, &outl,
			    buf + i * 4096, 4096) != 1)
				goto out;
		}
		bytes += 1 << 20;
		t = now();
	} while (t - t0 < seconds);
	t -= t0;
out:
	geli_wipe(key, sizeof(key));
	EVP_CIPHER_CTX_free(ctx);
	EVP_CIPHER_free(cipher);
	free(buf);
	return t > 0 ? (double)bytes / t : 0;
}

/* A volume on an in-memory provider (memfd), with a random key. */
static struct geli_volume *
mem_volume(unsigned ealgo, unsigned keylen, uint32_t S, unsigned threads)
{
	struct geli_provider *p;
	struct geli_metadata md;
	struct geli_volume *v;
	uint8_t mkey[128];
	char path[64];
	int fd;

	fd = memfd_create("geli-speed", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, 64 << 20) != 0)
		return NULL;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (geli_provider_open(path, true, &p) != 0)
		return NULL;
	close(fd);
	memset(&md, 0, sizeof(md));
	md.version = GELI_VERSION;
	md.ealgo = (uint16_t)ealgo;
	md.keylen = (uint16_t)keylen;
	md.sectorsize = S;
	md.provsize = 64 << 20;
	geli_random(mkey, sizeof(mkey));
	if (geli_volume_open(p, &md, mkey, 0, threads, &v) != 0)
		return NULL;
	geli_wipe(mkey, sizeof(mkey));
	return v;
}

/* Transform 1 MiB batches (a FUSE request's worth) for `seconds`: bytes/s. */
static double
transform_speed(unsigned ealgo, unsigned keylen, unsigned threads, bool enc)
{
	struct geli_volume *v = mem_volume(ealgo, keylen, 4096, threads);
	size_t n = 256, bytes = 0;
	uint8_t *buf;
	double t0, t;

	if (v == NULL)
		return 0;
	buf = aligned_alloc(4096, n * 4096);
	geli_random(buf, n * 4096);
	t0 = now();
	do {
		geli_volume_transform(v, bytes / 4096 % 16384, n, buf, buf, enc);
		bytes += n * 4096;
		t = now();
	} while (t - t0 < seconds);
	free(buf);
	geli_volume_close(v);
	return (double)bytes / (t - t0);
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
	fdatasync(fd);
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

static int
run(const char *cmd)
{
	int r = system(cmd);

	return WIFEXITED(r) ? WEXITSTATUS(r) : -1;
}


static void
fuse_compare(const char *geli, const char *dir, uint64_t mib, int rounds)
{
	char cmd[16384], backing[512], pt_file[1024], pt_mnt[1024], rund[1024],
	    prov[1024], pass[1024], eli[2100];
	double pw[9], pr[9], aw[9], ar[9];
	uint64_t size = mib << 20;
	struct fusefile *ff = NULL;
	struct plain pl;

	snprintf(backing, sizeof(backing), "%s/geli-speed.XXXXXX", dir);
	if (mkdtemp(backing) == NULL) {
		fprintf(stderr, "geli-speed: cannot create a directory in %s\n", dir);
		return;
	}
	snprintf(pt_file, sizeof(pt_file), "%s/plain.img", backing);
	snprintf(pt_mnt, sizeof(pt_mnt), "%s/plain.mnt", backing);
	snprintf(prov, sizeof(prov), "%s/geli.img", backing);
	snprintf(pass, sizeof(pass), "%s/pass", backing);
	snprintf(rund, sizeof(rund), "%s/run", backing);
	snprintf(eli, sizeof(eli), "%s/geli.img.eli", rund);
	setenv("GELI_RUNDIR", rund, 1);

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
	snprintf(cmd, sizeof(cmd), "printf 'speed test\\n' > '%s' && truncate -s %ju '%s' && "
	    "'%s' init -B none -i 1000 -s 4096 -J '%s' '%s' >/dev/null && '%s' attach -j '%s' '%s'",
	    pass, (uintmax_t)(size + 4096), prov, geli, pass, prov, geli, pass, prov);
	if (run(cmd) != 0) {
		fprintf(stderr, "geli-speed: geli attach failed\n");
		goto out;
	}
	for (int i = 0; i < rounds; i++) {
		seq_io(pt_mnt, size, &pw[i], &pr[i]);
		seq_io(eli, size, &aw[i], &ar[i]);
	}
	double mpw = stats(pw, rounds).median, mpr = stats(pr, rounds).median;
	double maw = stats(aw, rounds).median, mar = stats(ar, rounds).median;
	printf("| sequential write, %ju MiB, 1 MiB blocks + fdatasync | plain FUSE passthrough | %.0f MB/s | geli attach (AES-XTS-128, S=4096) | %.0f MB/s | %.0f%% |\n",
	    (uintmax_t)mib, mpw, maw, 100 * maw / mpw);
	printf("| sequential read, %ju MiB, 1 MiB blocks | plain FUSE passthrough | %.0f MB/s | geli attach (AES-XTS-128, S=4096) | %.0f MB/s | %.0f%% |\n",
	    (uintmax_t)mib, mpr, mar, 100 * mar / mpr);
	snprintf(cmd, sizeof(cmd), "'%s' detach geli.img", geli);
	run(cmd);
out:
	fusefile_stop(ff);
	if (pl.fd >= 0)
		close(pl.fd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", backing);
	run(cmd);
}

int
main(int argc, char **argv)
{
	const char *geli = "build/src/geli/geli", *dir = "/var/tmp";
	uint64_t mib = 512;
	int ch, rounds = 3;
	bool quick = false;

	while ((ch = getopt(argc, argv, "qg:d:r:s:t:")) != -1) {
		switch (ch) {
		case 'q': quick = true; break;
		case 'g': geli = optarg; break;
		case 'd': dir = optarg; break;
		case 's': mib = strtoull(optarg, NULL, 10); break;
		case 'r':
			rounds = atoi(optarg);
			if (rounds < 1 || rounds > 9)
				rounds = 3;
			break;
		case 't': seconds = atof(optarg); break;
		default:
			fprintf(stderr, "usage: geli-speed [-q] [-g geli] [-d dir] [-r rounds] [-s MiB] [-t seconds]\n");
			return 2;
		}
	}
	if (quick) {
		seconds = 0.3;
		mib = 32;
		rounds = 1;
	}
	signal(SIGPIPE, SIG_IGN);
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	printf("| measurement | baseline | baseline | geli | geli | ratio |\n");
	printf("|---|---|---|---|---|---|\n");

	double ossl = openssl_speed("aes-128-xts", false);
	double one = transform_speed(GELI_ALGO_AES_XTS, 128, 1, true);
	printf("| AES-XTS-128 encrypt, S=4096, 1 thread | openssl speed -evp aes-128-xts -bytes 4096 | %.0f MB/s | sector transform, 1 MiB batches | %.0f MB/s | %.0f%% |\n",
	    ossl / 1e6, one / 1e6, 100 * one / ossl);
	double floor = evp_xts_floor();
	printf("| AES-XTS-128 encrypt, S=4096, 1 thread | openssl speed -evp aes-128-xts -bytes 4096 | %.0f MB/s | bare EVP loop, one IV reset per sector (OpenSSL 3.0's ceiling for any caller) | %.0f MB/s | %.0f%% |\n",
	    ossl / 1e6, floor / 1e6, 100 * floor / ossl);
	printf("| AES-XTS-128 encrypt, S=4096, 1 thread | bare EVP loop, one IV reset per sector | %.0f MB/s | sector transform | %.0f MB/s | %.0f%% |\n",
	    floor / 1e6, one / 1e6, 100 * one / floor);
	double onedec = transform_speed(GELI_ALGO_AES_XTS, 128, 1, false);
	printf("| AES-XTS-128 decrypt, S=4096, 1 thread | openssl speed -evp aes-128-xts -bytes 4096 | %.0f MB/s | sector transform | %.0f MB/s | %.0f%% |\n",
	    ossl / 1e6, onedec / 1e6, 100 * onedec / ossl);
	double two = transform_speed(GELI_ALGO_AES_XTS, 128, 2, true);
	printf("| AES-XTS-128 encrypt, 2 threads vs 1 (%ld cores) | 1 thread | %.0f MB/s | 2 threads | %.0f MB/s | %.2fx |\n",
	    cpus, one / 1e6, two / 1e6, two / one);
	double cbc1 = transform_speed(GELI_ALGO_AES_CBC, 128, 1, false);
	double cbc2 = transform_speed(GELI_ALGO_AES_CBC, 128, 2, false);
	double osslcbc = openssl_speed("aes-128-cbc", true);
	printf("| AES-CBC-128 decrypt, S=4096, 1 thread | openssl speed -evp aes-128-cbc -decrypt | %.0f MB/s | sector transform (IV = SHA256 per sector) | %.0f MB/s | %.0f%% |\n",
	    osslcbc / 1e6, cbc1 / 1e6, 100 * cbc1 / osslcbc);
	printf("| AES-CBC-128 decrypt, 2 threads vs 1 | 1 thread | %.0f MB/s | 2 threads | %.0f MB/s | %.2fx |\n",
	    cbc1 / 1e6, cbc2 / 1e6, cbc2 / cbc1);
	fflush(stdout);
	if (geteuid() == 0 && access("/dev/fuse", R_OK | W_OK) == 0)
		fuse_compare(geli, dir, mib, rounds);
	else
		printf("| attached file vs FUSE passthrough | skipped: needs root and /dev/fuse | | | | |\n");
	return 0;
}
