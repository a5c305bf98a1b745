/*
 * geli bench: the classic GELI study on in-memory providers, as FreeBSD's
 * users ran it with dd on md(4) disks: a raw (no encryption) baseline and
 * every cipher and key length FreeBSD offered, write and read MB/s, percent
 * of raw, CPU.  Baseline and encrypted runs are interleaved in one process;
 * each figure is the median of --runs runs.
 *
 * A provider is a memfd (memory, no disk); the volume on it is the same
 * libgeli data path that `geli attach` serves (1 MiB requests, all cores).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/wait.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "../geli/cli.h"
#include "bench.h"
#include "stats.h"
#include "study.h"
#include "geli.h"

/* The ciphers and key lengths FreeBSD offered, in the studies' order. */
static const struct config ciphers[] = {
	{ "raw", 0, 0, 0, 0, "ciphers" },
	{ "AES-XTS", GELI_ALGO_AES_XTS, 128, 0, 0, "ciphers" },
	{ "AES-XTS", GELI_ALGO_AES_XTS, 256, 0, 0, "ciphers" },
	{ "AES-CBC", GELI_ALGO_AES_CBC, 128, 0, 0, "ciphers" },
	{ "AES-CBC", GELI_ALGO_AES_CBC, 192, 0, 0, "ciphers" },
	{ "AES-CBC", GELI_ALGO_AES_CBC, 256, 0, 0, "ciphers" },
	{ "CAMELLIA-CBC", GELI_ALGO_CAMELLIA_CBC, 128, 0, 0, "ciphers" },
	{ "CAMELLIA-CBC", GELI_ALGO_CAMELLIA_CBC, 256, 0, 0, "ciphers" },
	{ "Blowfish-CBC", GELI_ALGO_BLOWFISH_CBC, 128, 0, 0, "ciphers" },
	{ "Blowfish-CBC", GELI_ALGO_BLOWFISH_CBC, 448, 0, 0, "ciphers" },
	{ "3DES-CBC", GELI_ALGO_3DES_CBC, 192, 0, 0, "ciphers" },
	{ "NULL", GELI_ALGO_NULL, 512, 0, 0, "ciphers" },
};
#define NCIPHERS (sizeof(ciphers) / sizeof(ciphers[0]))

static const unsigned hmacs[] = { 0, GELI_ALGO_HMAC_MD5, GELI_ALGO_HMAC_SHA1,
	GELI_ALGO_HMAC_RMD160, GELI_ALGO_HMAC_SHA256, GELI_ALGO_HMAC_SHA384,
	GELI_ALGO_HMAC_SHA512 };


static const struct bench_opts *cur_opts;	/* for the I/O helpers */

struct sample {
	double wr, rd, cpu;	/* MB/s, MB/s, % of all CPUs */
};

/* With --attached the daemon's CPU counts too: its PID, or 0. */
static pid_t daemon_pid;

static double
cpu_seconds(void)
{
	struct rusage ru;
	double t;

	getrusage(RUSAGE_SELF, &ru);
	t = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	    (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	if (daemon_pid > 0) {
		char path[64], line[1024], *p;
		unsigned long long ut = 0, st = 0;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/stat", (int)daemon_pid);
		f = fopen(path, "r");
		if (f != NULL) {
			/* Fields 14 and 15, after the ")" that ends the name. */
			if (fgets(line, sizeof(line), f) != NULL &&
			    (p = strrchr(line, ')')) != NULL &&
			    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
			    &ut, &st) == 2)
				t += (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
			fclose(f);
		}
	}
	return t;
}

/* The I/O of one direction for `seconds`, sequential requests. */
typedef ssize_t (*io_fn)(void *arg, uint8_t *buf, size_t len, uint64_t off);
enum phase { PHASE_WRITE, PHASE_READ };

/* On a real target: writes end on the device, reads start from it. */
static int target_fd = -1;

/*
 * One phase over [0, size); for the write phase *reached is how far it got
 * (the read phase stays within it: integrity volumes are unreadable beyond).
 */
static double
timed_io(io_fn fn, void *arg, enum phase ph, uint8_t *buf, uint64_t size,
    double seconds, double *cpu, uint64_t *reached)
{
	const size_t bs = cur_opts != NULL && cur_opts->bs != 0 ? cur_opts->bs : 1 << 20;
	uint64_t bytes = 0, off = 0, top = 0;
	double t0 = now(), c0 = cpu_seconds(), t;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	do {
		if (fn(arg, buf, bs, off) != (ssize_t)bs)
			return -1;
		bytes += bs;
		off += bs;
		if (off > top)
			top = off;
		t = now();
		/* Memory wraps around; a real target is passed over once, so
		 * that no block is served from the page cache. */
		if (off + bs > size) {
			if (cur_opts != NULL && cur_opts->target != NULL)
				break;
			off = 0;
		}
	} while (t - t0 < seconds);
	if (target_fd >= 0 && ph == PHASE_WRITE) {
		/* The time to get the writes onto the device counts; writes
		 * that did not get there are a failed phase. */
		if (fdatasync(target_fd) != 0)
			return -1;
		t = now();
		/* Advice only: at worst the read phase finds pages cached. */
		(void)posix_fadvise(target_fd, 0, 0, POSIX_FADV_DONTNEED);
	}
	if (reached != NULL)
		*reached = top;
	*cpu = 100.0 * (cpu_seconds() - c0) / ((t - t0) * (double)(ncpu > 0 ? ncpu : 1));
	return (double)bytes / (t - t0) / 1e6;
}

struct raw { int fd; };

static ssize_t
raw_write(void *a, uint8_t *buf, size_t len, uint64_t off)
{
	return pwrite(((struct raw *)a)->fd, buf, len, (off_t)off);
}

static ssize_t
raw_read(void *a, uint8_t *buf, size_t len, uint64_t off)
{
	return pread(((struct raw *)a)->fd, buf, len, (off_t)off);
}

static ssize_t
vol_write(void *a, uint8_t *buf, size_t len, uint64_t off)
{
	return geli_volume_write(a, buf, len, off);
}

static ssize_t
vol_read(void *a, uint8_t *buf, size_t len, uint64_t off)
{
	return geli_volume_read(a, buf, len, off);
}

/*
 * The provider of one measurement: --target (an existing file or device,
 * used from offset 0; its data is overwritten), or a memfd with its pages
 * allocated.
 */
static int
mem_provider(uint64_t size, struct geli_provider **p, int *fdout)
{
	char path[64];
	int fd, error;

	if (cur_opts != NULL && cur_opts->target != NULL) {
		/* O_DIRECT where it works, else the page cache (see timed_io). */
		error = geli_provider_open_direct(cur_opts->target, true, p);
		if (error == -EINVAL)
			error = geli_provider_open(cur_opts->target, true, p);
		if (error != 0)
			return error;
		if (geli_provider_mediasize(*p) < size) {
			geli_provider_close(*p);
			return -ENOSPC;
		}
		if (fdout != NULL)
			*fdout = dup(geli_provider_fd(*p));
		return 0;
	}
	fd = memfd_create("geli-bench", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)size) != 0 || posix_fallocate(fd, 0, (off_t)size) != 0) {
		close(fd);
		return -ENOMEM;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	error = geli_provider_open(path, true, p);
	if (fdout != NULL)
		*fdout = fd;
	else
		close(fd);
	return error;
}

static int
sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int
sh(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;
	int r;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	r = system(cmd);
	return WIFEXITED(r) ? WEXITSTATUS(r) : -1;
}

/*
 * --attached: the same measurement end to end, through the file that
 * `geli init` + `geli attach` make of a provider in memory (/dev/shm).
 */
static int
measure_attached(const struct config *c, const struct bench_opts *o, uint8_t *buf,
    struct sample *s)
{
	char dir[] = "/dev/shm/geli-bench.XXXXXX", eli[128], aopt[64] = "";
	uint32_t S = c->sectorsize != 0 ? c->sectorsize : o->sectorsize;
	uint64_t reached, psize = o->size * 2 + S;
	double cw, cr;
	struct raw r;
	int error = 0;

	if (mkdtemp(dir) == NULL)
		return -errno;
	if (c->aalgo != 0)
		snprintf(aopt, sizeof(aopt), "-a '%s'", geli_algo_name(c->aalgo));
	snprintf(eli, sizeof(eli), "%s/run/prov.eli", dir);
	if (sh("printf 'bench\\n' > %s/pass && truncate -s %ju %s/prov && "
	    "GELI_RUNDIR=%s/run /proc/%d/exe init -B none -i 1 -e '%s' -l %u -s %u %s "
	    "-J %s/pass %s/prov >/dev/null 2>&1 && "
	    "GELI_RUNDIR=%s/run /proc/%d/exe attach -j %s/pass %s/prov",
	    dir, (uintmax_t)psize, dir, dir, (int)getpid(), c->label, c->keylen, S,
	    aopt, dir, dir, dir, (int)getpid(), dir, dir) != 0) {
		error = -EIO;
		goto out;
	}
	char pidf[128];
	FILE *pf;
	snprintf(pidf, sizeof(pidf), "%s/run/prov.pid", dir);
	pf = fopen(pidf, "r");
	if (pf != NULL) {
		int pid = 0;
		if (fscanf(pf, "%d", &pid) == 1)
			daemon_pid = pid;
		fclose(pf);
	}
	r.fd = open(eli, O_RDWR);
	if (r.fd < 0) {
		error = -errno;
	} else {
		uint64_t size = o->size;
		s->wr = timed_io(raw_write, &r, PHASE_WRITE, buf, size, o->seconds, &cw, &reached);
		s->rd = timed_io(raw_read, &r, PHASE_READ, buf, reached, o->seconds, &cr, NULL);
		s->cpu = (cw + cr) / 2;	/* this process and the daemon */
		close(r.fd);
		if (s->wr < 0 || s->rd < 0)
			error = -EIO;
	}
	daemon_pid = 0;
	sh("GELI_RUNDIR=%s/run /proc/%d/exe detach prov >/dev/null 2>&1", dir,
	    (int)getpid());
out:
	sh("rm -rf '%s'", dir);
	return error;
}

/* The volume of one measurement, with a random key, on a provider of
 * psize bytes (mem_provider). */
static int
bench_volume(const struct config *c, const struct bench_opts *o, uint64_t psize,
    struct geli_volume **v)
{
	uint32_t S = c->sectorsize != 0 ? c->sectorsize : o->sectorsize;
	struct geli_provider *p;
	struct geli_metadata md;
	uint8_t mkey[GELI_MKEY_DATALEN];
	int error;

	error = mem_provider(psize, &p, NULL);
	if (error != 0)
		return error;
	memset(&md, 0, sizeof(md));
	memcpy(md.magic, GELI_MAGIC, sizeof(GELI_MAGIC));
	md.version = GELI_VERSION;
	md.flags = GELI_FLAG_AUTORESIZE | (c->aalgo != 0 ? GELI_FLAG_AUTH : 0);
	md.ealgo = (uint16_t)c->ealgo;
	md.keylen = (uint16_t)c->keylen;
	md.aalgo = (uint16_t)c->aalgo;
	md.sectorsize = S;
	md.provsize = psize;
	geli_random(mkey, sizeof(mkey));
	error = geli_volume_open(p, &md, mkey, 0, o->threads, v);
	geli_wipe(mkey, sizeof(mkey));
	if (error != 0)
		geli_provider_close(p);
	return error;
}

/* --cipher-only: one request's worth of whole sectors transformed in
 * memory, as timed_io's "I/O" (encrypt for writes, decrypt for reads). */
struct xform {
	struct geli_volume *v;
	uint8_t *phys;		/* ciphertext and tags (== buf without integrity) */
	uint8_t *copy;		/* the raw baseline's other buffer */
};

static ssize_t
xf_crypt(struct xform *x, uint8_t *buf, size_t len, bool enc)
{
	size_t n = len / geli_volume_sectorsize(x->v);

	return geli_volume_transform(x->v, 0, n, buf, x->phys, enc) == 0 ?
	    (ssize_t)len : -1;
}

static ssize_t
xf_encrypt(void *a, uint8_t *buf, size_t len, uint64_t off)
{
	(void)off;
	return xf_crypt(a, buf, len, true);
}

static ssize_t
xf_decrypt(void *a, uint8_t *buf, size_t len, uint64_t off)
{
	(void)off;
	return xf_crypt(a, buf, len, false);
}

static ssize_t
xf_copy_out(void *a, uint8_t *buf, size_t len, uint64_t off)
{
	(void)off;
	memcpy(((struct xform *)a)->copy, buf, len);
	return (ssize_t)len;
}

static ssize_t
xf_copy_in(void *a, uint8_t *buf, size_t len, uint64_t off)
{
	(void)off;
	memcpy(buf, ((struct xform *)a)->copy, len);
	return (ssize_t)len;
}

/*
 * What the CPU does per cipher with no provider I/O (as cryptsetup
 * benchmark reports it): the sector transform of the data path on the
 * pool, in place, over one request (--bs) of sectors; the raw baseline is
 * a memory copy of as many bytes.  With integrity, decryption verifies the
 * tags the last encryption made.
 */
static int
measure_cipher(const struct config *c, const struct bench_opts *o, uint8_t *buf,
    struct sample *s)
{
	const size_t bs = o->bs != 0 ? o->bs : 1 << 20;
	uint32_t S = c->sectorsize != 0 ? c->sectorsize : o->sectorsize;
	struct xform x = { NULL, NULL, NULL };
	double cw, cr;
	int error = 0;

	if (c->ealgo == 0) {
		x.copy = aligned_alloc(4096, bs);
		if (x.copy == NULL)
			return -ENOMEM;
		s->wr = timed_io(xf_copy_out, &x, PHASE_WRITE, buf, bs, o->seconds, &cw, NULL);
		s->rd = timed_io(xf_copy_in, &x, PHASE_READ, buf, bs, o->seconds, &cr, NULL);
		free(x.copy);
	} else {
		uint64_t psize = (uint64_t)(bs / S) * S * 2 + S;

		/* Two requests of room: the transform never touches the provider. */
		error = bench_volume(c, o, psize, &x.v);
		if (error != 0)
			return error;
		x.phys = c->aalgo != 0 ? aligned_alloc(4096,
		    bs / S * geli_volume_physical_sectorsize(x.v)) : buf;
		if (x.phys == NULL) {
			geli_volume_close(x.v);
			return -ENOMEM;
		}
		s->wr = timed_io(xf_encrypt, &x, PHASE_WRITE, buf, bs, o->seconds, &cw, NULL);
		s->rd = timed_io(xf_decrypt, &x, PHASE_READ, buf, bs, o->seconds, &cr, NULL);
		if (x.phys != buf)
			free(x.phys);
		geli_volume_close(x.v);
	}
	s->cpu = (cw + cr) / 2;
	return s->wr < 0 || s->rd < 0 ? -EIO : error;
}

static int
measure(const struct config *c, const struct bench_opts *o, uint8_t *buf,
    struct sample *s)
{
	if (o->cipher_only)
		return measure_cipher(c, o, buf, s);
	if (o->attached && c->ealgo != 0)
		return measure_attached(c, o, buf, s);
	struct geli_provider *p;
	struct geli_volume *v;
	double cw, cr;
	int error, fd;

	if (c->ealgo == 0) {
		struct raw r;
		error = mem_provider(o->size, &p, &fd);
		if (error != 0)
			return error;
		r.fd = fd;
		uint64_t top;
		target_fd = o->target != NULL ? fd : -1;
		s->wr = timed_io(raw_write, &r, PHASE_WRITE, buf, o->size, o->seconds, &cw, &top);
		s->rd = timed_io(raw_read, &r, PHASE_READ, buf, top, o->seconds, &cr, NULL);
		target_fd = -1;
		s->cpu = (cw + cr) / 2;
		close(fd);
		geli_provider_close(p);
		return s->wr < 0 || s->rd < 0 ? -EIO : 0;
	}
	uint32_t S = c->sectorsize != 0 ? c->sectorsize : o->sectorsize;
	uint64_t reached, psize = o->size + S;

	/* With integrity the provider holds the tags too (§7.1). */
	if (c->aalgo != 0)
		psize = o->size / S * ((S - 1) / ((512 - geli_hashlen(c->aalgo)) / 16 * 16) + 1) * 512 + 512;
	error = bench_volume(c, o, psize, &v);
	if (error != 0)
		return error;
	p = geli_volume_provider(v);
	/* Reads stay within what was written: integrity volumes fail
	 * verification elsewhere (as on FreeBSD). */
	target_fd = o->target != NULL ? geli_provider_fd(p) : -1;
	s->wr = timed_io(vol_write, v, PHASE_WRITE, buf, geli_volume_size(v), o->seconds, &cw,
	    &reached);
	s->rd = timed_io(vol_read, v, PHASE_READ, buf, reached, o->seconds, &cr, NULL);
	target_fd = -1;
	s->cpu = (cw + cr) / 2;
	geli_volume_close(v);
	return s->wr < 0 || s->rd < 0 ? -EIO : 0;
}

static void
usage(void)
{
	fprintf(stderr, "usage: geli bench " BENCH_USAGE "\n");
	exit(1);
}

static int
bad(const char *what, const char *val)
{
	fprintf(stderr, "geli: Invalid value for --%s: %s.\n", what, val);
	return 1;
}

/* The measurements the options ask for; configs[0] is the raw baseline. */
static int
plan(const struct bench_opts *o, struct config *cfg)
{
	int n = 0;

	cfg[n++] = (struct config){ "raw", 0, 0, 0, 0, "raw" };
	if (o->integrity) {
		/* AES-XTS-128 (or --ealgo/--keylen) with every HMAC and none. */
		const struct config *base = &ciphers[1];
		for (size_t c = 1; c < NCIPHERS; c++)
			if ((o->ealgo == 0 || ciphers[c].ealgo == o->ealgo) &&
			    (o->keylen == 0 || ciphers[c].keylen == o->keylen)) {
				base = &ciphers[c];
				break;
			}
		for (int z = 0; z < o->nsizes; z++)
			for (size_t h = 0; h < sizeof(hmacs) / sizeof(hmacs[0]); h++) {
				cfg[n] = *base;
				cfg[n].aalgo = hmacs[h];
				cfg[n].sectorsize = o->sizes[z];
				cfg[n++].study = "integrity";
			}
		return n;
	}
	for (int z = 0; z < o->nsizes; z++)
		for (size_t c = 1; c < NCIPHERS; c++) {
			if ((o->ealgo != 0 && ciphers[c].ealgo != o->ealgo) ||
			    (o->keylen != 0 && ciphers[c].keylen != o->keylen))
				continue;
			cfg[n] = ciphers[c];
			cfg[n].sectorsize = o->sizes[z];
			cfg[n++].study = o->nsizes > 1 ? "sectorsize" : "ciphers";
		}
	return n;
}

/*
 * --disk: what FreeBSD's diskinfo -t and -c report, read-only: sequential
 * transfer rates at the start, middle and end of the device, and the
 * per-command overhead (time of one small read beyond its transfer time).
 */
static int
bench_disk(const struct bench_opts *o)
{
	const size_t bs = 1 << 20, small = 4096;
	uint64_t size, span, at[3];
	const char *where[3] = { "outside", "middle", "inside" };
	double rate[3], t0, t = 0, overhead, per_cmd;
	struct geli_provider *p;
	bool direct = true;
	uint8_t *buf;
	int fd, error, n;

	error = geli_provider_open(o->disk, false, &p);
	if (error != 0) {
		fprintf(stderr, "geli: Cannot open %s: %s.\n", o->disk, strerror(-error));
		return 1;
	}
	size = geli_provider_mediasize(p);
	geli_provider_close(p);
	span = size / 10 < (100u << 20) ? size / 10 / bs * bs : 100u << 20;
	if (span < 4 * bs) {
		fprintf(stderr, "geli: %s is too small for a benchmark.\n", o->disk);
		return 1;
	}
	/* O_DIRECT where the file system allows it, else the page cache
	 * dropped before each pass. */
	fd = open(o->disk, O_RDONLY | O_DIRECT | O_CLOEXEC);
	if (fd < 0) {
		direct = false;
		fd = open(o->disk, O_RDONLY | O_CLOEXEC);
	}
	if (fd < 0 || (buf = aligned_alloc(4096, bs)) == NULL) {
		fprintf(stderr, "geli: Cannot open %s: %s.\n", o->disk, strerror(errno));
		return 1;
	}
	at[0] = 0;
	at[1] = size / 2 / bs * bs;
	at[2] = (size - span) / bs * bs;
	for (int k = 0; k < 3; k++) {
		/* Advice only (and the device's own cache is not ours to
		 * drop): at worst a rate is too high. */
		if (!direct)
			(void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		t0 = now();
		for (uint64_t off = 0; off < span; off += bs)
			if (pread(fd, buf, bs, (off_t)(at[k] + off)) != (ssize_t)bs) {
				fprintf(stderr, "geli: Read error on %s: %s.\n", o->disk,
				    strerror(errno));
				return 1;
			}
		rate[k] = (double)span / (now() - t0) / 1e6;
	}
	/* Command overhead: small reads at one place, minus their transfer. */
	n = 0;
	t0 = now();
	do {
		if (!direct)	/* advice, as above */
			(void)posix_fadvise(fd, 0, (off_t)small, POSIX_FADV_DONTNEED);
		if (pread(fd, buf, small, 0) != (ssize_t)small)
			break;
		n++;
		t = now();
	} while (t - t0 < o->seconds && n < 100000);
	per_cmd = (t - t0) / (n > 0 ? n : 1) * 1e6;
	overhead = per_cmd - (double)small / (rate[0] * 1e6) * 1e6;
	close(fd);
	free(buf);
	if (o->json) {
		printf("{\n  \"results\": [\n");
		for (int k = 0; k < 3; k++) {
			printf("    {\"study\": \"disk\", \"target\": ");
			json_string(o->disk);
			printf(", \"where\": \"%s\", \"offset\": %ju, \"bytes\": %ju, "
			    "\"read_MBps\": %.1f, \"direct\": %s},\n", where[k],
			    (uintmax_t)at[k], (uintmax_t)span, rate[k], direct ? "true" : "false");
		}
		printf("    {\"study\": \"disk\", \"target\": ");
		json_string(o->disk);
		printf(", \"where\": \"command\", \"reads\": %d, \"usec_per_read\": %.2f, "
		    "\"overhead_usec\": %.2f, \"direct\": %s}\n  ]\n}\n", n, per_cmd,
		    overhead, direct ? "true" : "false");
		return 0;
	}
	printf("%s\n\t%ju\t# mediasize in bytes\n\n", o->disk, (uintmax_t)size);
	printf("Transfer rates (%s):\n", direct ? "O_DIRECT" : "page cache dropped");
	for (int k = 0; k < 3; k++)
		printf("\t%-8s %10ju kbytes in %9.6f sec = %10.0f kbytes/sec\n", where[k],
		    (uintmax_t)(span >> 10), (double)span / (rate[k] * 1e6),
		    rate[k] * 1e6 / 1024);
	printf("\nCommand overhead:\n\t%d reads of %zu bytes: %.3f usec/read, "
	    "%.3f usec/command beyond the transfer\n", n, small, per_cmd, overhead);
	return 0;
}


/* ---- --pool: ZFS on attached providers ------------------------------------ */

/*
 * LAYOUT is NxKIND[:WIDTH]: N vdevs of KIND (stripe, mirror, raidz, raidz2,
 * raidz3), WIDTH providers each (defaults 1, 2, 3, 4, 5): the studies'
 * 4xmirror, 2xraidz2 and 1xraidz2:8.
 */
static int
parse_layout(const char *s, int *nvdev, char *kind, size_t klen, int *width)
{
	char k[16];
	int n, w = 0, used = 0;

	if (sscanf(s, "%dx%15[a-z0-9]%n", &n, k, &used) != 2)
		return -1;
	if (s[used] == ':' && sscanf(s + used + 1, "%d", &w) != 1)
		return -1;
	if (strcmp(k, "stripe") == 0)
		w = w ? w : 1;
	else if (strcmp(k, "mirror") == 0)
		w = w ? w : 2;
	else if (strcmp(k, "raidz") == 0 || strcmp(k, "raidz1") == 0)
		w = w ? w : 3;
	else if (strcmp(k, "raidz2") == 0)
		w = w ? w : 4;
	else if (strcmp(k, "raidz3") == 0)
		w = w ? w : 5;
	else
		return -1;
	if (n < 1 || w < 1 || n * w > 32)
		return -1;
	snprintf(kind, klen, "%s", k);
	*nvdev = n;
	*width = w;
	return 0;
}

/* bonnie++'s block phases on one file: write, rewrite, read (MB/s). */
static int
pool_phases(const char *file, uint64_t size, uint8_t *buf, double *w, double *rw,
    double *r)
{
	const size_t bs = 1 << 20;
	double t0;
	int fd;

	fd = open(file, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return -errno;
	t0 = now();
	for (uint64_t off = 0; off < size; off += bs)
		if (pwrite(fd, buf, bs, (off_t)off) != (ssize_t)bs)
			goto fail;
	if (fsync(fd) != 0)
		goto fail;
	*w = (double)size / (now() - t0) / 1e6;
	t0 = now();
	for (uint64_t off = 0; off < size; off += bs) {
		if (pread(fd, buf, bs, (off_t)off) != (ssize_t)bs)
			goto fail;
		buf[0] ^= 1;
		if (pwrite(fd, buf, bs, (off_t)off) != (ssize_t)bs)
			goto fail;
	}
	if (fsync(fd) != 0)
		goto fail;
	*rw = (double)size / (now() - t0) / 1e6;
	t0 = now();
	for (uint64_t off = 0; off < size; off += bs)
		if (pread(fd, buf, bs, (off_t)off) != (ssize_t)bs)
			goto fail;
	*r = (double)size / (now() - t0) / 1e6;
	close(fd);
	return 0;
fail:
	close(fd);
	return -EIO;
}

static int
bench_pool(const struct bench_opts *o)
{
	char dir[] = "/dev/shm/geli-pool.XXXXXX", kind[16], vdevs[8192], file[256];
	int nvdev, width, n, error = 0, self = (int)getpid();
	bool started = false;
	unsigned ealgo = o->ealgo ? o->ealgo : GELI_ALGO_AES_XTS;
	unsigned keylen = geli_keylen(ealgo, o->keylen);
	double res[2][3];
	uint64_t fsize;
	uint8_t *buf;
	size_t len;

	if (parse_layout(o->pool, &nvdev, kind, sizeof(kind), &width) != 0) {
		fprintf(stderr, "geli: Invalid pool layout: %s (NxKIND[:WIDTH], KIND one of "
		    "stripe, mirror, raidz, raidz2, raidz3).\n", o->pool);
		return 1;
	}
	if (keylen == 0) {
		fprintf(stderr, "geli: Invalid key length.\n");
		return 1;
	}
	if (geteuid() != 0 || access("/dev/fuse", R_OK | W_OK) != 0 ||
	    sh("command -v zpool >/dev/null && command -v zfs-fuse >/dev/null") != 0) {
		fprintf(stderr, "geli: --pool needs root, /dev/fuse and zfs-fuse (or OpenZFS).\n");
		return 1;
	}
	n = nvdev * width;
	if (mkdtemp(dir) == NULL)
		return 1;
	/* A ZFS that answers is used; otherwise zfs-fuse is started here. */
	if (sh("zpool list >/dev/null 2>&1") != 0) {
		if (sh("zfs-fuse --pidfile %s/zfs.pid --no-kstat-mount >/dev/null 2>&1", dir) != 0 ||
		    sh("for i in $(seq 100); do zpool list >/dev/null 2>&1 && exit 0; sleep 0.1; done; exit 1") != 0) {
			fprintf(stderr, "geli: Cannot start zfs-fuse.\n");
			sh("rm -rf '%s'", dir);
			return 1;
		}
		started = true;
	}
	/* A third of the pool's usable space: data providers per vdev. */
	int data = strcmp(kind, "stripe") == 0 ? width :
	    strcmp(kind, "mirror") == 0 ? 1 :
	    width - (strcmp(kind, "raidz2") == 0 ? 2 : strcmp(kind, "raidz3") == 0 ? 3 : 1);
	fsize = o->size * (uint64_t)(nvdev * (data > 0 ? data : 1)) / 3;
	fsize = fsize / (1 << 20) * (1 << 20);
	if (fsize > (512u << 20))
		fsize = 512u << 20;
	buf = aligned_alloc(4096, 1 << 20);
	geli_random(buf, 1 << 20);
	for (int g = 0; g < 2 && error == 0; g++) {
		/* g 0: the pool on plain memory files; g 1: on GELI providers. */
		len = 0;
		for (int v = 0; v < nvdev; v++) {
			if (strcmp(kind, "stripe") != 0)
				len += (size_t)snprintf(vdevs + len, sizeof(vdevs) - len, " %s", kind);
			for (int i = 0; i < width; i++)
				len += (size_t)snprintf(vdevs + len, sizeof(vdevs) - len,
				    g ? " %s/run/d%d.eli" : " %s/d%d", dir, v * width + i);
		}
		for (int i = 0; i < n; i++)
			sh("rm -f %s/d%d; truncate -s %ju %s/d%d", dir, i,
			    (uintmax_t)(o->size + (64u << 20)), dir, i);
		if (g && (sh("printf 'bench\\n' > %s/pass; cd %s && GELI_RUNDIR=%s/run "
		    "/proc/%d/exe init -B none -i 1 -s %u -e '%s' -l %u -J pass d* >/dev/null 2>&1",
		    dir, dir, dir, self, o->sectorsize, geli_algo_name(ealgo), keylen) != 0 ||
		    sh("cd %s && GELI_RUNDIR=%s/run /proc/%d/exe attach -j pass $(ls d* | grep -v '\\.')",
		    dir, dir, self) != 0)) {
			error = -EIO;
			break;
		}
		if (o->progress)
			fprintf(stderr, "\rgeli bench: pool %s on %s...   ", o->pool,
			    g ? "GELI" : "plain files");
		if (sh("zpool create -f -O compression=off -m %s/mnt gelibench%d %s >/dev/null 2>&1",
		    dir, self, vdevs) != 0) {
			error = -EIO;
		} else {
			snprintf(file, sizeof(file), "%s/mnt/bench", dir);
			error = pool_phases(file, fsize, buf, &res[g][0], &res[g][1], &res[g][2]);
			for (int i = 0; i < 10 && sh("zpool destroy -f gelibench%d >/dev/null 2>&1",
			    self) != 0; i++)
				sleep(1);
		}
		if (g)
			sh("cd %s && GELI_RUNDIR=%s/run /proc/%d/exe detach -f $(ls d* | grep -v '\\.') "
			    ">/dev/null 2>&1", dir, dir, self);
	}
	if (o->progress)
		fprintf(stderr, "\r%70s\r", "");
	if (started)
		sh("kill $(cat %s/zfs.pid) 2>/dev/null; for i in $(seq 50); do "
		    "kill -0 $(cat %s/zfs.pid) 2>/dev/null || break; sleep 0.2; done", dir, dir);
	sh("rm -rf '%s'", dir);
	free(buf);
	if (error != 0) {
		fprintf(stderr, "geli: The pool benchmark failed: %s.\n", strerror(-error));
		return 1;
	}
	if (o->json) {
		printf("{\n  \"results\": [\n");
		for (int g = 0; g < 2; g++) {
			printf("    {\"study\": \"pool\", \"layout\": \"%s\", \"providers\": %d, "
			    "\"ealgo\": ", o->pool, n);
			if (g)
				printf("\"%s\", \"keylen\": %u, \"sectorsize\": %u", geli_algo_name(ealgo),
				    keylen, o->sectorsize);
			else
				printf("null, \"keylen\": null, \"sectorsize\": null");
			printf(", \"aalgo\": null, \"threads\": %u, \"target\": \"zfs\", "
			    "\"file_MiB\": %ju, \"write_MBps\": %.1f, \"rewrite_MBps\": %.1f, "
			    "\"read_MBps\": %.1f, \"runs\": 1}%s\n", o->threads,
			    (uintmax_t)(fsize >> 20), res[g][0], res[g][1], res[g][2], g ? "" : ",");
		}
		printf("  ]\n}\n");
		return 0;
	}
	printf("geli bench: ZFS pool %s (%d providers of %ju MiB in /dev/shm), "
	    "compression=off, a %ju MiB file in 1 MiB blocks (bonnie++'s block phases)\n\n",
	    o->pool, n, (uintmax_t)(o->size >> 20), (uintmax_t)(fsize >> 20));
	printf("%-22s %12s %14s %12s\n", "vdevs", "write MB/s", "rewrite MB/s", "read MB/s");
	printf("%-22s %12.0f %14.0f %12.0f\n", "plain files (raw)", res[0][0], res[0][1], res[0][2]);
	char lab[64];
	snprintf(lab, sizeof(lab), "GELI %s %u", geli_algo_name(ealgo), keylen);
	printf("%-22s %12.0f %14.0f %12.0f\n", lab, res[1][0], res[1][1], res[1][2]);
	printf("%-22s %11.0f%% %13.0f%% %11.0f%%\n", "GELI / raw", 100 * res[1][0] / res[0][0],
	    100 * res[1][1] / res[0][1], 100 * res[1][2] / res[0][2]);
	return 0;
}

/*
 * The same study with AES-NI (and PCLMULQDQ) masked off in OpenSSL's
 * capability vector, which libcrypto reads once at start: so in a child,
 * this program again with OPENSSL_ia32cap set and --csv.  Fills the
 * medians per configuration, in plan order.
 */
static int
run_without_aesni(int argc, char **argv, int ncfg, double *wmed, double *rmed)
{
	char cmd[8192], line[1024];
	size_t n = 0;
	int row = -1;
	FILE *f;

	n += (size_t)snprintf(cmd + n, sizeof(cmd) - n,
	    "OPENSSL_ia32cap='~0x200000200000000' /proc/%d/exe bench --csv --aesni-off",
	    (int)getpid());
	for (int i = 1; i < argc && n < sizeof(cmd); i++) {
		if (strcmp(argv[i], "--no-aesni") == 0 || strcmp(argv[i], "--json") == 0 ||
		    strcmp(argv[i], "--csv") == 0)
			continue;
		/* Options are ours and plain words: quote them anyway. */
		n += (size_t)snprintf(cmd + n, sizeof(cmd) - n, " '%s'", argv[i]);
	}
	if (n >= sizeof(cmd))
		return -E2BIG;
	f = popen(cmd, "r");
	if (f == NULL)
		return -errno;
	while (fgets(line, sizeof(line), f) != NULL) {
		char *field[24], *rest = line, *t;
		int k = 0;

		if (row++ < 0)
			continue;	/* the header */
		/* strsep keeps empty fields (the raw row has several). */
		while ((t = strsep(&rest, ",")) != NULL && k < 24)
			field[k++] = t;
		if (row - 1 < ncfg && k >= 10) {
			wmed[row - 1] = atof(field[8]);	/* write_MBps */
			rmed[row - 1] = atof(field[9]);	/* read_MBps */
		}
	}
	return pclose(f) == 0 && row == ncfg ? 0 : -EIO;
}

/* The backend of the next measurement, also for the geli processes that
 * --attached starts. */
static int
use_backend(const char *name)
{
	int error = geli_crypto_select(name);

	if (error == 0)
		setenv("GELI_CRYPTO", name, 1);
	return error;
}

/* --crypto NAME|all into o->be (default: the one crypto_start chose). */
static int
pick_backends(struct bench_opts *o)
{
	const char *name;

	o->nbe = 0;
	if (o->crypto == NULL) {
		o->be[o->nbe++] = geli_crypto_name();
	} else if (strcmp(o->crypto, "all") == 0) {
		for (unsigned i = 0; (name = geli_crypto_backend(i)) != NULL &&
		    o->nbe < MAXBE; i++)
			o->be[o->nbe++] = name;
	} else {
		for (unsigned i = 0; (name = geli_crypto_backend(i)) != NULL; i++)
			if (strcmp(name, o->crypto) == 0)
				o->be[o->nbe++] = name;
		if (o->nbe == 0) {
			char names[128];
			fprintf(stderr, "geli: Unknown crypto backend --crypto %s (%s).\n",
			    o->crypto, crypto_names(names, sizeof(names), "all"));
			return -1;
		}
	}
	if (o->nbe > 1 && (o->noaesni || o->pool != NULL || o->disk != NULL)) {
		fprintf(stderr, "geli: --crypto all goes with the cipher studies, "
		    "not with --no-aesni, --pool or --disk.\n");
		return -1;
	}
	for (int b = 0; b < o->nbe; b++) {
		int error = use_backend(o->be[b]);
		if (error != 0) {
			fprintf(stderr, "geli: Cannot start the crypto library %s: %s.\n",
			    o->be[b], strerror(-error));
			return -1;
		}
		snprintf(o->bever[b], sizeof(o->bever[b]), "%s", geli_crypto_version());
	}
	return use_backend(o->be[0]);
}

int
bench_main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "runs", required_argument, NULL, 'r' },
		{ "seconds", required_argument, NULL, 't' },
		{ "size", required_argument, NULL, 'S' },
		{ "sectorsize", required_argument, NULL, 's' },
		{ "sector-sizes", required_argument, NULL, 'Z' },
		{ "threads", required_argument, NULL, 'T' },
		{ "ealgo", required_argument, NULL, 'e' },
		{ "keylen", required_argument, NULL, 'l' },
		{ "integrity", no_argument, NULL, 'i' },
		{ "json", no_argument, NULL, 'j' },
		{ "csv", no_argument, NULL, 'c' },
		{ "quick", no_argument, NULL, 'q' },
		{ "no-aesni", no_argument, NULL, 'A' },
		{ "svg", required_argument, NULL, 'G' },
		{ "target", required_argument, NULL, 'X' },
		{ "attached", no_argument, NULL, 'a' },
		{ "disk", required_argument, NULL, 'D' },
		{ "pool", required_argument, NULL, 'P' },
		{ "bs", required_argument, NULL, 'B' },
		{ "cipher-only", no_argument, NULL, 'C' },
		{ "crypto", required_argument, NULL, 'K' },
		/* The --no-aesni child's own: mask libgcrypt as well. */
		{ "aesni-off", no_argument, NULL, 'H' },
		{ NULL, 0, NULL, 0 },
	};
	struct bench_opts o = { .runs = 3, .seconds = 0.6, .size = 256ull << 20,
	    .sectorsize = 4096 };
	static struct config cfg[MAXCONFIGS];
	static double wr[MAXBE][MAXCONFIGS][MAXRUNS], rd[MAXBE][MAXCONFIGS][MAXRUNS],
	    cpu[MAXBE][MAXCONFIGS][MAXRUNS];
	char *end, *tok, *save;
	uint8_t *buf;
	int ch, ncfg;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (ch) {
		case 'r':
			o.runs = (int)strtol(optarg, &end, 10);
			if (*end != '\0' || o.runs < 1 || o.runs > MAXRUNS) {
				fprintf(stderr, "geli: Invalid value for --runs: %s (1 to %d).\n",
				    optarg, MAXRUNS);
				return 1;
			}
			break;
		case 't':
			o.seconds = strtod(optarg, &end);
			if (*end != '\0' || o.seconds <= 0 || o.seconds > 60)
				return bad("seconds", optarg);
			break;
		case 'S':
			o.size = strtoull(optarg, &end, 10) << 20;
			if (*end != '\0' || o.size < (4u << 20) || o.size > (64ull << 30)) {
				fprintf(stderr, "geli: Invalid value for --size: %s (4 to 65536 MiB).\n",
				    optarg);
				return 1;
			}
			break;
		case 's':
		case 'Z':
			o.nsizes = 0;
			for (tok = strtok_r(optarg, ",", &save); tok != NULL;
			    tok = strtok_r(NULL, ",", &save)) {
				unsigned long v = strtoul(tok, &end, 10);
				if (*end != '\0' || v < 512 || v > 65536 || (v & (v - 1)) != 0 ||
				    o.nsizes == 8) {
					fprintf(stderr, "geli: Invalid sector size: %s.\n", tok);
					return 1;
				}
				o.sizes[o.nsizes++] = (uint32_t)v;
			}
			if (o.nsizes == 0)
				return bad("sector-sizes", "");
			o.sectorsize = o.sizes[0];
			break;
		case 'T':
			o.threads = (unsigned)strtoul(optarg, &end, 10);
			if (*end != '\0' || o.threads < 1 || o.threads > 256)
				return bad("threads", optarg);
			break;
		case 'e':
			o.ealgo = geli_str2ealgo(optarg);
			if (o.ealgo == GELI_ALGO_NONE) {
				fprintf(stderr, "geli: Invalid encryption algorithm.\n");
				return 1;
			}
			break;
		case 'l':
			o.keylen = (unsigned)strtoul(optarg, &end, 10);
			if (*end != '\0' || o.keylen == 0)
				return bad("keylen", optarg);
			break;
		case 'i':
			o.integrity = true;
			break;
		case 'j':
			o.json = true;
			break;
		case 'c':
			o.csv = true;
			break;
		case 'q':
			o.runs = 1;
			o.seconds = 0.05;
			o.size = 16u << 20;
			break;
		case 'A':
			o.noaesni = true;
			break;
		case 'G':
			o.svg = optarg;
			break;
		case 'X':
			o.target = optarg;
			break;
		case 'a':
			o.attached = true;
			break;
		case 'D':
			o.disk = optarg;
			break;
		case 'P':
			o.pool = optarg;
			break;
		case 'B':
			o.bs = (size_t)strtoul(optarg, &end, 10);
			if (*end == 'k' || *end == 'K')
				o.bs <<= 10, end++;
			else if (*end == 'm' || *end == 'M')
				o.bs <<= 20, end++;
			if (*end != '\0' || o.bs < 4096 || o.bs > (64u << 20) || o.bs % 4096 != 0)
				return bad("bs", optarg);
			break;
		case 'C':
			o.cipher_only = true;
			break;
		case 'K':
			o.crypto = optarg;
			break;
		case 'H':
			o.aesni_off = true;
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
	if (o.json && o.csv) {
		fprintf(stderr, "geli: Options --json and --csv are mutually exclusive.\n");
		return 1;
	}
	if (o.cipher_only && (o.attached || o.target != NULL || o.disk != NULL ||
	    o.pool != NULL)) {
		fprintf(stderr, "geli: --cipher-only measures no I/O: it goes with no "
		    "--attached, --target, --disk or --pool.\n");
		return 1;
	}
	if (o.aesni_off)
		geli_crypto_disable_hwaccel();
	if (crypto_start() != 0 || pick_backends(&o) != 0)
		return 1;
	if (o.nsizes == 0) {
		if (o.integrity) {
			static const uint32_t four[] = { 512, 1024, 2048, 4096 };
			memcpy(o.sizes, four, sizeof(four));
			o.nsizes = 4;
		} else {
			o.sizes[o.nsizes++] = o.sectorsize;
		}
	}
	if (o.threads == 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		o.threads = n > 0 ? (unsigned)n : 1;
	}
	if (o.disk != NULL)
		return bench_disk(&o);
	if (o.pool != NULL) {
		if (o.threads == 0) {
			long nc = sysconf(_SC_NPROCESSORS_ONLN);
			o.threads = nc > 0 ? (unsigned)nc : 1;
		}
		o.progress = isatty(STDERR_FILENO) != 0;
		return bench_pool(&o);
	}
	if (o.attached && (o.target != NULL || geteuid() != 0 ||
	    access("/dev/fuse", R_OK | W_OK) != 0 || access("/dev/shm", W_OK) != 0)) {
		fprintf(stderr, "geli: --attached needs root, /dev/fuse and /dev/shm, "
		    "and no --target.\n");
		return 1;
	}
	if (o.target != NULL) {
		struct geli_provider *tp;
		int e = geli_provider_open(o.target, true, &tp);
		if (e != 0) {
			fprintf(stderr, "geli: Cannot open %s: %s.\n", o.target, strerror(-e));
			return 1;
		}
		/* Everything (tags too) must fit: leave room for integrity. */
		uint64_t have = geli_provider_mediasize(tp);
		geli_provider_close(tp);
		if (o.size > have / 3)
			o.size = have / 3 / (1 << 20) * (1 << 20);
		if (o.size < (4u << 20)) {
			fprintf(stderr, "geli: %s is too small for a benchmark.\n", o.target);
			return 1;
		}
	}
	cur_opts = &o;
	ncfg = plan(&o, cfg);
	if (ncfg == 1) {
		fprintf(stderr, "geli: No cipher matches --ealgo and --keylen.\n");
		return 1;
	}
	o.progress = isatty(STDERR_FILENO) != 0;
	size_t bufsz = o.bs != 0 ? o.bs : 1 << 20;
	buf = aligned_alloc(4096, bufsz);
	if (buf == NULL)
		return 1;
	geli_random(buf, bufsz);

	/* Interleaved: every configuration once per run, raw first, each
	 * backend in turn (raw needs no backend: measured once). */
	for (int r = 0; r < o.runs; r++) {
		for (int c = 0; c < ncfg; c++) {
			for (int b = 0; b < o.nbe; b++) {
				struct sample smp = { 0, 0, 0 };
				if (cfg[c].ealgo == 0 && b > 0) {
					wr[b][c][r] = wr[0][c][r];
					rd[b][c][r] = rd[0][c][r];
					cpu[b][c][r] = cpu[0][c][r];
					continue;
				}
				if (o.progress)
					fprintf(stderr, "\rgeli bench: run %d/%d, %d/%d: %-12s %-3u %-7s   ",
					    r + 1, o.runs, c + 1, ncfg, cfg[c].label, cfg[c].keylen,
					    o.nbe > 1 ? o.be[b] : "");
				int error = use_backend(o.be[b]);
				if (error == 0)
					error = measure(&cfg[c], &o, buf, &smp);
				if (error != 0) {
					fprintf(stderr, "%sgeli: %s %u: %s.\n", o.progress ? "\n" : "",
					    cfg[c].label, cfg[c].keylen, strerror(-error));
					free(buf);
					return 1;
				}
				wr[b][c][r] = smp.wr;
				rd[b][c][r] = smp.rd;
				cpu[b][c][r] = smp.cpu;
			}
		}
	}
	if (o.progress)
		fprintf(stderr, "\r%70s\r", "");
	free(buf);

	static double nwr[MAXCONFIGS], nrd[MAXCONFIGS];
	if (o.noaesni) {
		if (o.progress)
			fprintf(stderr, "geli bench: the same without AES-NI...\r");
		int error = run_without_aesni(argc, argv, ncfg, nwr, nrd);
		if (o.progress)
			fprintf(stderr, "\r%70s\r", "");
		if (error != 0) {
			fprintf(stderr, "geli: The run without AES-NI failed: %s.\n",
			    strerror(-error));
			return 1;
		}
	}

	static struct stat3 W[MAXBE][MAXCONFIGS], R[MAXBE][MAXCONFIGS], U[MAXBE][MAXCONFIGS];
	for (int b = 0; b < o.nbe; b++)
		for (int c = 0; c < ncfg; c++) {
			W[b][c] = stats(wr[b][c], o.runs);
			R[b][c] = stats(rd[b][c], o.runs);
			U[b][c] = stats(cpu[b][c], o.runs);
		}
	if (o.svg != NULL) {
		static double wm[MAXCONFIGS], rm[MAXCONFIGS];
		for (int c = 0; c < ncfg; c++) {
			wm[c] = W[0][c].median;
			rm[c] = R[0][c].median;
		}
		int error = write_svg(o.svg, cfg, ncfg, wm, rm, &o);
		if (error != 0) {
			fprintf(stderr, "geli: Cannot write %s: %s.\n", o.svg, strerror(-error));
			return 1;
		}
	}
	report(&o, cfg, ncfg, W, R, U, nwr, nrd, bufsz);
	return 0;
}
