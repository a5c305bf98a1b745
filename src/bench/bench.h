/* SPDX-License-Identifier: BSD-2-Clause */
/* geli bench: the GELI studies (see bench.c). */
#ifndef GELI_BENCH_H
#define GELI_BENCH_H

/* The options after "geli bench", for geli help and bench's own usage. */
#define BENCH_USAGE "[--integrity] [--cipher-only] [--crypto NAME|all] " \
	"[--no-aesni] [--svg FILE] [--attached] [--target FILE|DEVICE] [--bs SIZE] " \
	"[--disk DEVICE] [--pool LAYOUT] [--sector-sizes LIST] [--ealgo NAME] " \
	"[--keylen BITS] [--runs N] [--seconds S] [--size MiB] " \
	"[--sectorsize BYTES] [--threads N] [--json | --csv] [--quick]"

/* argv[0] is "bench"; returns the exit status. */
int bench_main(int argc, char **argv);

#endif
