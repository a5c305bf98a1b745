/* SPDX-License-Identifier: BSD-2-Clause */
/* geli bench: the GELI studies (see bench.c). */
#ifndef GELI_BENCH_H
#define GELI_BENCH_H

#include <stddef.h>
#include <stdint.h>

/* The options after "geli bench", for geli help and bench's own usage. */
#define BENCH_USAGE "[--integrity] [--cipher-only] [--baselines] [--crypto NAME|all] " \
	"[--no-aesni] [--svg FILE] [--attached] [--target FILE|DEVICE] [--bs SIZE] " \
	"[--disk DEVICE] [--pool LAYOUT] [--sector-sizes LIST] [--ealgo NAME] " \
	"[--keylen BITS] [--runs N] [--seconds S] [--size MiB] " \
	"[--sectorsize BYTES] [--threads N] [--json | --csv] [--quick]"

/* argv[0] is "bench"; returns the exit status. */
int bench_main(int argc, char **argv);

/* ---- Option values (args.c): 0, or -1 when not valid ---------------------- */

#define BENCH_MAXPROV 32	/* providers in a pool */

/* --size MiB: 4 to 65536 MiB, into bytes. */
int bench_parse_mib(const char *s, uint64_t *bytes);
/* --bs SIZE[k|m]: a multiple of 4096 from 4 KiB to 64 MiB, in bytes. */
int bench_parse_bs(const char *s, size_t *bytes);
/* --sector-sizes LIST (cut in place): at most max powers of two from 512
 * to 65536; *bad is the token refused ("" for an empty list). */
int bench_parse_sizes(char *list, uint32_t *sizes, int max, int *n,
    const char **bad);
/*
 * --pool LAYOUT, NxKIND[:WIDTH]: N vdevs of KIND (stripe, mirror, raidz,
 * raidz2, raidz3), WIDTH providers each (defaults 1, 2, 3, 4, 5), at most
 * BENCH_MAXPROV providers in all.
 */
int bench_parse_layout(const char *s, int *nvdev, char *kind, size_t klen,
    int *width);

#endif
