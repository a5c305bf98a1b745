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
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "bench.h"
#include "geli.h"

struct config {
	const char *label;
	unsigned ealgo, keylen;	/* ealgo 0: raw, no GELI */
};

static const struct config configs[] = {
	{ "raw", 0, 0 },
	{ "AES-XTS", GELI_ALGO_AES_XTS, 128 },
	{ "AES-XTS", GELI_ALGO_AES_XTS, 256 },
	{ "AES-CBC", GELI_ALGO_AES_CBC, 128 },
	{ "AES-CBC", GELI_ALGO_AES_CBC, 192 },
	{ "AES-CBC", GELI_ALGO_AES_CBC, 256 },
	{ "CAMELLIA-CBC", GELI_ALGO_CAMELLIA_CBC, 128 },
	{ "CAMELLIA-CBC", GELI_ALGO_CAMELLIA_CBC, 256 },
	{ "Blowfish-CBC", GELI_ALGO_BLOWFISH_CBC, 128 },
	{ "Blowfish-CBC", GELI_ALGO_BLOWFISH_CBC, 448 },
	{ "3DES-CBC", GELI_ALGO_3DES_CBC, 192 },
	{ "NULL", GELI_ALGO_NULL, 512 },
};
#define NCONFIGS (sizeof(configs) / sizeof(configs[0]))
#define MAXRUNS 15

struct opts {
	int runs;
	double seconds;
	uint64_t size;		/* bytes of the decrypted provider */
	uint32_t sectorsize;
	unsigned threads;
	bool json, progress;
};

struct sample {
	double wr, rd, cpu;	/* MB/s, MB/s, % of all CPUs */
};

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double
cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	    (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* The I/O of one direction for `seconds`, 1 MiB requests, sequential. */
typedef ssize_t (*io_fn)(void *arg, uint8_t *buf, size_t len, uint64_t off);

static double
timed_io(io_fn fn, void *arg, uint8_t *buf, uint64_t size, double seconds,
    double *cpu)
{
	const size_t bs = 1 << 20;
	uint64_t bytes = 0, off = 0;
	double t0 = now(), c0 = cpu_seconds(), t;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	do {
		if (fn(arg, buf, bs, off) != (ssize_t)bs)
			return -1;
		bytes += bs;
		off = off + bs >= size ? 0 : off + bs;
		t = now();
	} while (t - t0 < seconds);
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

/* A memfd provider with its pages allocated. */
static int
mem_provider(uint64_t size, struct geli_provider **p, int *fdout)
{
	char path[64];
	int fd, error;

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
measure(const struct config *c, const struct opts *o, uint8_t *buf,
    struct sample *s)
{
	struct geli_provider *p;
	struct geli_metadata md;
	struct geli_volume *v;
	uint8_t mkey[GELI_MKEY_DATALEN];
	double cw, cr;
	int error, fd;

	if (c->ealgo == 0) {
		struct raw r;
		error = mem_provider(o->size, &p, &fd);
		if (error != 0)
			return error;
		r.fd = fd;
		s->wr = timed_io(raw_write, &r, buf, o->size, o->seconds, &cw);
		s->rd = timed_io(raw_read, &r, buf, o->size, o->seconds, &cr);
		s->cpu = (cw + cr) / 2;
		close(fd);
		geli_provider_close(p);
		return s->wr < 0 || s->rd < 0 ? -EIO : 0;
	}
	error = mem_provider(o->size + o->sectorsize, &p, NULL);
	if (error != 0)
		return error;
	memset(&md, 0, sizeof(md));
	memcpy(md.magic, GELI_MAGIC, sizeof(GELI_MAGIC));
	md.version = GELI_VERSION;
	md.flags = GELI_FLAG_AUTORESIZE;
	md.ealgo = (uint16_t)c->ealgo;
	md.keylen = (uint16_t)c->keylen;
	md.sectorsize = o->sectorsize;
	md.provsize = o->size + o->sectorsize;
	geli_random(mkey, sizeof(mkey));
	error = geli_volume_open(p, &md, mkey, 0, o->threads, &v);
	geli_wipe(mkey, sizeof(mkey));
	if (error != 0) {
		geli_provider_close(p);
		return error;
	}
	s->wr = timed_io(vol_write, v, buf, geli_volume_size(v), o->seconds, &cw);
	s->rd = timed_io(vol_read, v, buf, geli_volume_size(v), o->seconds, &cr);
	s->cpu = (cw + cr) / 2;
	geli_volume_close(v);
	return s->wr < 0 || s->rd < 0 ? -EIO : 0;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct stat3 { double min, median, max; };

static struct stat3
stats(const double *v, int n)
{
	double s[MAXRUNS];
	struct stat3 r;

	memcpy(s, v, sizeof(*v) * (size_t)n);
	qsort(s, (size_t)n, sizeof(*s), cmp_double);
	r.min = s[0];
	r.max = s[n - 1];
	r.median = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	return r;
}

/* CPU model and the flags the studies cared about. */
static void
cpu_info(char *model, size_t mlen, bool *aes, bool *vaes, bool *avx2)
{
	char line[4096];
	FILE *f = fopen("/proc/cpuinfo", "r");

	snprintf(model, mlen, "unknown");
	*aes = *vaes = *avx2 = false;
	if (f == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL) {
		char *v = strchr(line, ':');
		if (v == NULL)
			continue;
		v += 2;
		v[strcspn(v, "\n")] = '\0';
		if (strncmp(line, "model name", 10) == 0)
			snprintf(model, mlen, "%s", v);
		if (strncmp(line, "flags", 5) == 0) {
			*aes = strstr(v, " aes ") != NULL;
			*vaes = strstr(v, " vaes ") != NULL;
			*avx2 = strstr(v, " avx2 ") != NULL;
			break;
		}
	}
	fclose(f);
}

static void
json_string(const char *s)
{
	putchar('"');
	for (; *s != '\0'; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

static void
usage(void)
{
	fprintf(stderr, "usage: geli bench [--runs N] [--seconds S] [--size MiB] "
	    "[--sectorsize BYTES] [--threads N] [--json] [--quick]\n");
	exit(1);
}

int
bench_main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "runs", required_argument, NULL, 'r' },
		{ "seconds", required_argument, NULL, 't' },
		{ "size", required_argument, NULL, 'S' },
		{ "sectorsize", required_argument, NULL, 's' },
		{ "threads", required_argument, NULL, 'T' },
		{ "json", no_argument, NULL, 'j' },
		{ "quick", no_argument, NULL, 'q' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = { 3, 0.6, 256ull << 20, 4096, 0, false, false };
	static double wr[NCONFIGS][MAXRUNS], rd[NCONFIGS][MAXRUNS], cpu[NCONFIGS][MAXRUNS];
	char *end;
	uint8_t *buf;
	int ch;

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
			if (*end != '\0' || o.seconds <= 0 || o.seconds > 60) {
				fprintf(stderr, "geli: Invalid value for --seconds: %s.\n", optarg);
				return 1;
			}
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
			o.sectorsize = (uint32_t)strtoul(optarg, &end, 10);
			if (*end != '\0' || o.sectorsize < 512 || o.sectorsize > 65536 ||
			    (o.sectorsize & (o.sectorsize - 1)) != 0) {
				fprintf(stderr, "geli: Invalid sector size: %s.\n", optarg);
				return 1;
			}
			break;
		case 'T':
			o.threads = (unsigned)strtoul(optarg, &end, 10);
			if (*end != '\0' || o.threads < 1 || o.threads > 256) {
				fprintf(stderr, "geli: Invalid value for --threads: %s.\n", optarg);
				return 1;
			}
			break;
		case 'j':
			o.json = true;
			break;
		case 'q':
			o.runs = 1;
			o.seconds = 0.05;
			o.size = 16u << 20;
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
	if (o.threads == 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		o.threads = n > 0 ? (unsigned)n : 1;
	}
	o.progress = isatty(STDERR_FILENO) != 0;
	buf = aligned_alloc(4096, 1 << 20);
	if (buf == NULL)
		return 1;
	geli_random(buf, 1 << 20);

	/* Interleaved: every configuration once per run, raw first. */
	for (int r = 0; r < o.runs; r++) {
		for (size_t c = 0; c < NCONFIGS; c++) {
			struct sample s;
			if (o.progress)
				fprintf(stderr, "\rgeli bench: run %d/%d, %-12s %-3u   ", r + 1,
				    o.runs, configs[c].label, configs[c].keylen);
			int error = measure(&configs[c], &o, buf, &s);
			if (error != 0) {
				fprintf(stderr, "%sgeli: %s %u: %s.\n", o.progress ? "\n" : "",
				    configs[c].label, configs[c].keylen, strerror(-error));
				free(buf);
				return 1;
			}
			wr[c][r] = s.wr;
			rd[c][r] = s.rd;
			cpu[c][r] = s.cpu;
		}
	}
	if (o.progress)
		fprintf(stderr, "\r%60s\r", "");
	free(buf);

	struct stat3 raww = stats(wr[0], o.runs), rawr = stats(rd[0], o.runs);
	if (o.json) {
		char model[256];
		bool aes, vaes, avx2;
		struct utsname u;

		cpu_info(model, sizeof(model), &aes, &vaes, &avx2);
		uname(&u);
		printf("{\n  \"machine\": {\"cpu\": ");
		json_string(model);
		printf(", \"aes\": %s, \"vaes\": %s, \"avx2\": %s, \"kernel\": ",
		    aes ? "true" : "false", vaes ? "true" : "false", avx2 ? "true" : "false");
		json_string(u.release);
		printf(", \"openssl\": ");
		json_string(OpenSSL_version(OPENSSL_VERSION));
		printf(", \"cores\": %ld},\n  \"results\": [\n",
		    sysconf(_SC_NPROCESSORS_ONLN));
		for (size_t c = 0; c < NCONFIGS; c++) {
			struct stat3 w = stats(wr[c], o.runs), d = stats(rd[c], o.runs);
			struct stat3 u2 = stats(cpu[c], o.runs);
			printf("    {\"study\": \"ciphers\", \"ealgo\": ");
			if (configs[c].ealgo == 0)
				printf("null, \"keylen\": null");
			else
				printf("\"%s\", \"keylen\": %u", configs[c].label, configs[c].keylen);
			printf(", \"sectorsize\": %u, \"aalgo\": null, \"threads\": %u, "
			    "\"target\": \"memory\", \"legacy\": %s, "
			    "\"write_MBps\": %.1f, \"read_MBps\": %.1f, "
			    "\"write_percent_of_raw\": %.1f, \"read_percent_of_raw\": %.1f, "
			    "\"cpu_percent\": %.1f, \"runs\": %d, "
			    "\"min\": {\"write_MBps\": %.1f, \"read_MBps\": %.1f}, "
			    "\"median\": {\"write_MBps\": %.1f, \"read_MBps\": %.1f}, "
			    "\"max\": {\"write_MBps\": %.1f, \"read_MBps\": %.1f}}%s\n",
			    o.sectorsize, o.threads,
			    geli_algo_is_legacy(configs[c].ealgo) ? "true" : "false",
			    w.median, d.median, 100 * w.median / raww.median,
			    100 * d.median / rawr.median, u2.median, o.runs, w.min, d.min,
			    w.median, d.median, w.max, d.max, c + 1 < NCONFIGS ? "," : "");
		}
		printf("  ]\n}\n");
		return 0;
	}
	printf("geli bench: in-memory providers of %ju MiB, %u-byte sectors, "
	    "1 MiB sequential requests, %u threads, median of %d run%s\n\n",
	    (uintmax_t)(o.size >> 20), o.sectorsize, o.threads, o.runs,
	    o.runs > 1 ? "s" : "");
	printf("%-16s %6s %12s %12s %9s %9s %6s\n", "cipher", "keylen",
	    "write MB/s", "read MB/s", "write %", "read %", "CPU%");
	for (size_t c = 0; c < NCONFIGS; c++) {
		struct stat3 w = stats(wr[c], o.runs), d = stats(rd[c], o.runs);
		struct stat3 u2 = stats(cpu[c], o.runs);
		char name[32], kl[16];

		snprintf(name, sizeof(name), "%s%s", configs[c].ealgo == 0 ?
		    "raw (no GELI)" : configs[c].label,
		    geli_algo_is_legacy(configs[c].ealgo) ? " *" : "");
		snprintf(kl, sizeof(kl), "%u", configs[c].keylen);
		printf("%-16s %6s %12.0f %12.0f %8.0f%% %8.0f%% %5.0f%%\n", name,
		    configs[c].ealgo == 0 ? "-" : kl, w.median, d.median,
		    100 * w.median / raww.median, 100 * d.median / rawr.median, u2.median);
	}
	printf("\n* legacy: current FreeBSD refuses it; geli for Linux reads and writes it.\n"
	    "%% = of the raw baseline, measured in the same process, interleaved.\n"
	    "CPU%% = CPU time of this process over wall time, of all %ld cores.\n",
	    sysconf(_SC_NPROCESSORS_ONLN));
	return 0;
}
