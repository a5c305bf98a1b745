/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * geli bench: the classic GELI study on in-memory providers, as FreeBSD's
 * users ran it with dd on md(4) disks: a raw (no encryption) baseline and
 * every cipher and key length FreeBSD offered, write and read MB/s, percent
 * of raw, CPU.  Baseline and encrypted runs are interleaved in one process;
 * each figure is the median of --runs runs.
 *
 * This file is the study's plan and its course: the options, the
 * configurations they ask for, the crypto backends, the interleaved runs;
 * one measurement is measure.c's, the report report.c's, --disk disk.c's
 * and --pool pool.c's.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "accel.h"
#include "cryptosel.h"
#include "bench.h"
#include "geli.h"
#include "spawn.h"
#include "stats.h"
#include "study.h"

/* The ciphers and key lengths FreeBSD offered, in the studies' order. */
static const struct config ciphers[] = {
	{ "raw", 0, 0, 0, 0, "ciphers", BASE_NONE },
	{ "AES-XTS", GELI_ALGO_AES_XTS, 128, 0, 0, "ciphers", BASE_NONE },
	{ "AES-XTS", GELI_ALGO_AES_XTS, 256, 0, 0, "ciphers", BASE_NONE },
	{ "AES-CBC", GELI_ALGO_AES_CBC, 128, 0, 0, "ciphers", BASE_NONE },
	{ "AES-CBC", GELI_ALGO_AES_CBC, 192, 0, 0, "ciphers", BASE_NONE },
	{ "AES-CBC", GELI_ALGO_AES_CBC, 256, 0, 0, "ciphers", BASE_NONE },
	{ "CAMELLIA-CBC", GELI_ALGO_CAMELLIA_CBC, 128, 0, 0, "ciphers", BASE_NONE },
	{ "CAMELLIA-CBC", GELI_ALGO_CAMELLIA_CBC, 256, 0, 0, "ciphers", BASE_NONE },
	{ "Blowfish-CBC", GELI_ALGO_BLOWFISH_CBC, 128, 0, 0, "ciphers", BASE_NONE },
	{ "Blowfish-CBC", GELI_ALGO_BLOWFISH_CBC, 448, 0, 0, "ciphers", BASE_NONE },
	{ "3DES-CBC", GELI_ALGO_3DES_CBC, 192, 0, 0, "ciphers", BASE_NONE },
	{ "NULL", GELI_ALGO_NULL, 512, 0, 0, "ciphers", BASE_NONE },
};
#define NCIPHERS (sizeof(ciphers) / sizeof(ciphers[0]))

static const unsigned hmacs[] = { 0, GELI_ALGO_HMAC_MD5, GELI_ALGO_HMAC_SHA1,
	GELI_ALGO_HMAC_RMD160, GELI_ALGO_HMAC_SHA256, GELI_ALGO_HMAC_SHA384,
	GELI_ALGO_HMAC_SHA512 };

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

	cfg[n++] = (struct config){ "raw", 0, 0, 0, 0, "raw", BASE_NONE };
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
	/* Through geli attach's file: FUSE's own share beside raw. */
	if (o->baselines && o->attached)
		cfg[n++] = (struct config){ "FUSE passthrough", 0, 0, 0, 0,
		    "baselines", BASE_FUSE };
	for (int z = 0; z < o->nsizes; z++)
		for (size_t c = 1; c < NCIPHERS; c++) {
			if ((o->ealgo != 0 && ciphers[c].ealgo != o->ealgo) ||
			    (o->keylen != 0 && ciphers[c].keylen != o->keylen))
				continue;
			cfg[n] = ciphers[c];
			cfg[n].sectorsize = o->sizes[z];
			cfg[n++].study = o->nsizes > 1 ? "sectorsize" : "ciphers";
			/* The sector transform beside its library alone and
			 * `openssl speed` (a cipher that has a name there). */
			if (!o->baselines || !o->cipher_only ||
			    ciphers[c].ealgo == GELI_ALGO_NULL)
				continue;
			cfg[n] = cfg[n - 1];
			cfg[n].study = "baselines";
			cfg[n++].base = BASE_BACKEND;
			cfg[n] = cfg[n - 1];
			cfg[n++].base = BASE_OPENSSL;
			/* Where AES-CBC has an accelerator (in this build, on
			 * this CPU: the same in --no-aesni's child), the data
			 * path without it. */
			if (ciphers[c].ealgo == GELI_ALGO_AES_CBC &&
			    gc_accel_name() != NULL) {
				cfg[n] = cfg[n - 1];
				cfg[n++].base = BASE_NOACCEL;
			}
		}
	return n;
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
	static const char *const env[] = { "OPENSSL_ia32cap=~0x200000200000000", NULL };
	const char *args[128];
	struct spawn s = { .argv = args, .env = env };
	char line[1024];
	int row = -1, k = 0;
	FILE *f;
	pid_t pid;

	args[k++] = self_exe();
	args[k++] = "bench";
	args[k++] = "--csv";
	args[k++] = "--aesni-off";
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--no-aesni") == 0 || strcmp(argv[i], "--json") == 0 ||
		    strcmp(argv[i], "--csv") == 0)
			continue;
		if (k == (int)(sizeof(args) / sizeof(args[0])) - 1)
			return -E2BIG;
		args[k++] = argv[i];
	}
	args[k] = NULL;
	pid = spawn_start(&s, &f);
	if (pid < 0)
		return (int)pid;
	while (fgets(line, sizeof(line), f) != NULL) {
		char *field[24], *rest = line, *t;
		int n = 0;

		if (row++ < 0)
			continue;	/* the header */
		/* strsep keeps empty fields (the raw row has several). */
		while ((t = strsep(&rest, ",")) != NULL && n < 24)
			field[n++] = t;
		if (row - 1 < ncfg && n >= 10) {
			wmed[row - 1] = atof(field[8]);	/* write_MBps */
			rmed[row - 1] = atof(field[9]);	/* read_MBps */
		}
	}
	fclose(f);
	return spawn_wait(pid) == 0 && row == ncfg ? 0 : -EIO;
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


/* The options after "geli bench" into o (its defaults already set): 0, or
 * the exit status when they are wrong. */
static int
parse_options(int argc, char **argv, struct bench_opts *o)
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
		{ "baselines", no_argument, NULL, 'b' },
		{ "crypto", required_argument, NULL, 'K' },
		/* The --no-aesni child's own: mask libgcrypt as well. */
		{ "aesni-off", no_argument, NULL, 'H' },
		{ NULL, 0, NULL, 0 },
	};
	const char *tok;
	char *end;
	int ch;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (ch) {
		case 'r':
			o->runs = (int)strtol(optarg, &end, 10);
			if (*end != '\0' || o->runs < 1 || o->runs > MAXRUNS) {
				fprintf(stderr, "geli: Invalid value for --runs: %s (1 to %d).\n",
				    optarg, MAXRUNS);
				return 1;
			}
			break;
		case 't':
			o->seconds = strtod(optarg, &end);
			if (*end != '\0' || o->seconds <= 0 || o->seconds > 60)
				return bad("seconds", optarg);
			break;
		case 'S':
			if (bench_parse_mib(optarg, &o->size) != 0) {
				fprintf(stderr, "geli: Invalid value for --size: %s (4 to 65536 MiB).\n",
				    optarg);
				return 1;
			}
			break;
		case 's':
		case 'Z':
			if (bench_parse_sizes(optarg, o->sizes, 8, &o->nsizes,
			    &tok) != 0) {
				if (*tok == '\0')
					return bad("sector-sizes", "");
				fprintf(stderr, "geli: Invalid sector size: %s.\n", tok);
				return 1;
			}
			o->sectorsize = o->sizes[0];
			break;
		case 'T':
			o->threads = (unsigned)strtoul(optarg, &end, 10);
			if (*end != '\0' || o->threads < 1 || o->threads > 256)
				return bad("threads", optarg);
			break;
		case 'e':
			o->ealgo = geli_str2ealgo(optarg);
			if (o->ealgo == GELI_ALGO_NONE) {
				fprintf(stderr, "geli: Invalid encryption algorithm.\n");
				return 1;
			}
			break;
		case 'l':
			o->keylen = (unsigned)strtoul(optarg, &end, 10);
			if (*end != '\0' || o->keylen == 0)
				return bad("keylen", optarg);
			break;
		case 'i':
			o->integrity = true;
			break;
		case 'j':
			o->json = true;
			break;
		case 'c':
			o->csv = true;
			break;
		case 'q':
			o->runs = 1;
			o->seconds = 0.05;
			o->size = 16u << 20;
			break;
		case 'A':
			o->noaesni = true;
			break;
		case 'G':
			o->svg = optarg;
			break;
		case 'X':
			o->target = optarg;
			break;
		case 'a':
			o->attached = true;
			break;
		case 'D':
			o->disk = optarg;
			break;
		case 'P':
			o->pool = optarg;
			break;
		case 'B':
			if (bench_parse_bs(optarg, &o->bs) != 0)
				return bad("bs", optarg);
			break;
		case 'C':
			o->cipher_only = true;
			break;
		case 'b':
			o->baselines = true;
			break;
		case 'K':
			o->crypto = optarg;
			break;
		case 'H':
			o->aesni_off = true;
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
	if (o->json && o->csv) {
		fprintf(stderr, "geli: Options --json and --csv are mutually exclusive.\n");
		return 1;
	}
	if (o->baselines && !o->cipher_only && !o->attached) {
		fprintf(stderr, "geli: --baselines goes with --cipher-only or "
		    "--attached.\n");
		return 1;
	}
	if (o->cipher_only && (o->attached || o->target != NULL || o->disk != NULL ||
	    o->pool != NULL)) {
		fprintf(stderr, "geli: --cipher-only measures no I/O: it goes with no "
		    "--attached, --target, --disk or --pool.\n");
		return 1;
	}
	return 0;
}

/* What the options leave open: the sector sizes and the threads. */
static void
fill_defaults(struct bench_opts *o)
{
	if (o->nsizes == 0) {
		if (o->integrity) {
			static const uint32_t four[] = { 512, 1024, 2048, 4096 };
			memcpy(o->sizes, four, sizeof(four));
			o->nsizes = 4;
		} else {
			o->sizes[o->nsizes++] = o->sectorsize;
		}
	}
	if (o->threads == 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		o->threads = n > 0 ? (unsigned)n : 1;
	}
}

/*
 * Where the cipher studies do their I/O: --attached needs what geli attach
 * needs; --target must hold the measurement (o->size shrinks to fit).
 * 0, or the exit status.
 */
static int
check_io(struct bench_opts *o)
{
	if (o->attached && (o->target != NULL || geteuid() != 0 ||
	    access("/dev/fuse", R_OK | W_OK) != 0 || access("/dev/shm", W_OK) != 0)) {
		fprintf(stderr, "geli: --attached needs root, /dev/fuse and /dev/shm, "
		    "and no --target.\n");
		return 1;
	}
	if (o->target != NULL) {
		struct geli_provider *tp;
		int e = geli_provider_open(o->target, true, &tp);
		if (e != 0) {
			fprintf(stderr, "geli: Cannot open %s: %s.\n", o->target, strerror(-e));
			return 1;
		}
		/* Everything (tags too) must fit: leave room for integrity. */
		uint64_t have = geli_provider_mediasize(tp);
		geli_provider_close(tp);
		if (o->size > have / 3)
			o->size = have / 3 / (1 << 20) * (1 << 20);
		if (o->size < (4u << 20)) {
			fprintf(stderr, "geli: %s is too small for a benchmark.\n", o->target);
			return 1;
		}
	}
	return 0;
}

/* Every run's samples, per backend and configuration. */
struct samples {
	double wr[MAXBE][MAXCONFIGS][MAXRUNS], rd[MAXBE][MAXCONFIGS][MAXRUNS],
	    cpu[MAXBE][MAXCONFIGS][MAXRUNS];
};

/*
 * Interleaved: every configuration once per run, raw first, each backend
 * in turn (raw needs no backend: measured once).  0, or -1 after saying
 * what failed.
 */
static int
run_studies(const struct bench_opts *o, const struct config *cfg, int ncfg,
    uint8_t *buf, struct samples *sm)
{
	for (int r = 0; r < o->runs; r++) {
		for (int c = 0; c < ncfg; c++) {
			for (int b = 0; b < o->nbe; b++) {
				struct sample smp = { 0, 0, 0 };
				if (!config_needs_backend(&cfg[c]) && b > 0) {
					sm->wr[b][c][r] = sm->wr[0][c][r];
					sm->rd[b][c][r] = sm->rd[0][c][r];
					sm->cpu[b][c][r] = sm->cpu[0][c][r];
					continue;
				}
				if (o->progress)
					fprintf(stderr, "\rgeli bench: run %d/%d, %d/%d: %-12s %-3u %-7s   ",
					    r + 1, o->runs, c + 1, ncfg, cfg[c].label, cfg[c].keylen,
					    o->nbe > 1 ? o->be[b] : "");
				int error = use_backend(o->be[b]);
				if (error == 0)
					error = measure(&cfg[c], o, buf, &smp);
				if (error != 0) {
					fprintf(stderr, "%sgeli: %s %u: %s.\n", o->progress ? "\n" : "",
					    cfg[c].label, cfg[c].keylen, strerror(-error));
					return -1;
				}
				sm->wr[b][c][r] = smp.wr;
				sm->rd[b][c][r] = smp.rd;
				sm->cpu[b][c][r] = smp.cpu;
			}
		}
	}
	if (o->progress)
		fprintf(stderr, "\r%70s\r", "");
	return 0;
}

/* --no-aesni: the child's medians into nwr and nrd.  0, or the exit status. */
static int
run_no_aesni(const struct bench_opts *o, int argc, char **argv, int ncfg,
    double *nwr, double *nrd)
{
	int error;

	if (o->progress)
		fprintf(stderr, "geli bench: the same without AES-NI...\r");
	error = run_without_aesni(argc, argv, ncfg, nwr, nrd);
	if (o->progress)
		fprintf(stderr, "\r%70s\r", "");
	if (error != 0) {
		fprintf(stderr, "geli: The run without AES-NI failed: %s.\n",
		    strerror(-error));
		return 1;
	}
	return 0;
}

/* Minimum, median and maximum of the runs; the chart (--svg) and the
 * report.  The exit status. */
static int
summarise(const struct bench_opts *o, const struct config *cfg, int ncfg,
    const struct samples *sm, const double *nwr, const double *nrd, size_t bufsz)
{
	static struct stat3 W[MAXBE][MAXCONFIGS], R[MAXBE][MAXCONFIGS], U[MAXBE][MAXCONFIGS];

	for (int b = 0; b < o->nbe; b++)
		for (int c = 0; c < ncfg; c++) {
			W[b][c] = stats(sm->wr[b][c], o->runs);
			R[b][c] = stats(sm->rd[b][c], o->runs);
			U[b][c] = stats(sm->cpu[b][c], o->runs);
		}
	if (o->svg != NULL) {
		static double wm[MAXCONFIGS], rm[MAXCONFIGS];
		for (int c = 0; c < ncfg; c++) {
			wm[c] = W[0][c].median;
			rm[c] = R[0][c].median;
		}
		int error = write_svg(o->svg, cfg, ncfg, wm, rm, o);
		if (error != 0) {
			fprintf(stderr, "geli: Cannot write %s: %s.\n", o->svg, strerror(-error));
			return 1;
		}
	}
	report(o, cfg, ncfg, W, R, U, nwr, nrd, bufsz);
	return 0;
}

int
bench_main(int argc, char **argv)
{
	struct bench_opts o = { .runs = 3, .seconds = 0.6, .size = 256ull << 20,
	    .sectorsize = 4096 };
	static struct config cfg[MAXCONFIGS];
	static struct samples sm;
	static double nwr[MAXCONFIGS], nrd[MAXCONFIGS];
	char msg[256];
	size_t bufsz;
	uint8_t *buf;
	int ncfg, status;

	if ((status = parse_options(argc, argv, &o)) != 0)
		return status;
	if (o.aesni_off)
		geli_crypto_disable_hwaccel();
	if (crypto_start(msg, sizeof(msg)) != 0) {
		fprintf(stderr, "geli: %s\n", msg);
		return 1;
	}
	if (pick_backends(&o) != 0)
		return 1;
	fill_defaults(&o);
	if (o.disk != NULL)
		return bench_disk(&o);
	if (o.pool != NULL) {
		o.progress = isatty(STDERR_FILENO) != 0;
		return bench_pool(&o);
	}
	if ((status = check_io(&o)) != 0)
		return status;
	ncfg = plan(&o, cfg);
	if (ncfg == 1) {
		fprintf(stderr, "geli: No cipher matches --ealgo and --keylen.\n");
		return 1;
	}
	o.progress = isatty(STDERR_FILENO) != 0;
	bufsz = o.bs != 0 ? o.bs : 1 << 20;
	buf = aligned_alloc(4096, bufsz);
	if (buf == NULL)
		return 1;
	geli_random(buf, bufsz);
	status = run_studies(&o, cfg, ncfg, buf, &sm);
	free(buf);
	if (status != 0)
		return 1;
	if (o.noaesni && (status = run_no_aesni(&o, argc, argv, ncfg, nwr, nrd)) != 0)
		return status;
	return summarise(&o, cfg, ncfg, &sm, nwr, nrd, bufsz);
}
