/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * geli bench's insides shared by its files: what one measurement is, the
 * options, the measurement (measure.c), the studies of their own (disk.c,
 * pool.c) and the report (report.c: the table, JSON, CSV and SVG).
 */
#ifndef GELI_BENCH_STUDY_H
#define GELI_BENCH_STUDY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "stats.h"

#define MAXRUNS 15	/* <= STATS_MAX */
#define MAXCONFIGS 256	/* 8 sector sizes x 31 rows (--baselines), raw, FUSE */
#define MAXBE 4		/* crypto backends side by side (--crypto all) */

/* What a row measures besides GELI itself (--baselines). */
enum baseline {
	BASE_NONE = 0,
	BASE_OPENSSL,	/* `openssl speed -evp` of the cipher at the sector size */
	BASE_BACKEND,	/* the crypto backend alone: keyed once, IVs given */
	BASE_FUSE,	/* a plain FUSE passthrough of a memory file */
	BASE_NOACCEL,	/* the data path without the AES-CBC accelerator */
};

struct config {
	const char *label;
	unsigned ealgo, keylen;	/* ealgo 0: raw, no GELI */
	unsigned aalgo;		/* 0: no integrity */
	uint32_t sectorsize;	/* 0: --sectorsize */
	const char *study;
	enum baseline base;
};

/* Measured once whatever the backends (--crypto all): raw, and the
 * baselines that use none of ours. */
static inline bool
config_needs_backend(const struct config *c)
{
	return c->ealgo != 0 && c->base != BASE_OPENSSL;
}

struct bench_opts {
	int runs;
	double seconds;
	uint64_t size;		/* bytes of the decrypted provider */
	uint32_t sectorsize;
	unsigned threads;
	bool json, csv, progress, integrity, noaesni;
	bool cipher_only;	/* --cipher-only: the sector transform, no I/O */
	bool aesni_off;		/* the --no-aesni child: libgcrypt masked too */
	const char *crypto;	/* --crypto NAME|all */
	const char *be[MAXBE];	/* the backends measured, be[0] first */
	char bever[MAXBE][64];	/* and their libraries */
	int nbe;
	const char *svg;	/* --svg FILE */
	const char *target;	/* --target FILE|DEVICE: real I/O instead of memory */
	bool attached;		/* --attached: through geli attach's file */
	bool baselines;		/* --baselines: rows to compare the data path with */
	const char *disk;	/* --disk DEVICE: transfer rates, read-only */
	const char *pool;	/* --pool LAYOUT: a ZFS pool on attached providers */
	size_t bs;		/* --bs: request size */
	unsigned ealgo, keylen;	/* filters; 0 = all */
	uint32_t sizes[8];	/* --sector-sizes */
	int nsizes;
};

/* One measurement: write and read MB/s, CPU in % of all CPUs. */
struct sample {
	double wr, rd, cpu;
};

/* ---- The timing core (timing.c) ---------------------------------------------- */

/* The I/O of one direction: one request of len bytes at off. */
typedef ssize_t (*io_fn)(void *arg, uint8_t *buf, size_t len, uint64_t off);
/* What a phase is timed over besides the I/O itself. */
struct meter {
	const struct bench_opts *o;
	int sync_fd;	/* a real target: writes end on the device, reads start from it */
	pid_t daemon;	/* --attached: the daemon, whose CPU counts too; or 0 */
};
/*
 * The write phase, then the read phase within what it wrote: sequential
 * requests of --bs over [0, size) (memory wraps around, a --target is
 * passed over once) for --seconds each; MB/s and CPU into s.
 */
int write_read(const struct meter *m, io_fn wr, io_fn rd, void *arg,
    uint8_t *buf, uint64_t size, struct sample *s);
/* pwrite and pread on a descriptor, as io_fn. */
struct raw { int fd; };
ssize_t raw_write(void *a, uint8_t *buf, size_t len, uint64_t off);
ssize_t raw_read(void *a, uint8_t *buf, size_t len, uint64_t off);

/* A baseline (c->base, --baselines; baselines.c): 0 or -errno. */
int measure_baseline(const struct config *c, const struct bench_opts *o,
    uint8_t *buf, struct sample *s);

/* One configuration measured as o asks (memory, --target, --attached or
 * --cipher-only) with buf (one request, random) as the data; 0 or -errno. */
int measure(const struct config *c, const struct bench_opts *o, uint8_t *buf,
    struct sample *s);
/* --disk and --pool: the exit status. */
int bench_disk(const struct bench_opts *o);
int bench_pool(const struct bench_opts *o);

/* JSON's string syntax for s, on stdout; null for NULL. */
void json_string(const char *s);
/* A bar chart of the medians (write and read MB/s per configuration). */
int write_svg(const char *path, const struct config *cfg, int ncfg,
    const double *wmed, const double *rmed, const struct bench_opts *o);
/* The results as o asks (--json, --csv or the table): medians W (write), R
 * (read) and U (CPU) per backend and configuration; nwr/nrd: --no-aesni's. */
void report(const struct bench_opts *o, const struct config *cfg, int ncfg,
    struct stat3 W[][MAXCONFIGS], struct stat3 R[][MAXCONFIGS],
    struct stat3 U[][MAXCONFIGS], const double *nwr, const double *nrd,
    size_t bufsz);

#endif
