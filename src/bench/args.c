/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * geli bench: the values of its options that are more than one number
 * (sizes with suffixes, lists, pool layouts).  Pure: bench.c and pool.c
 * word the errors; the fuzzer (fuzz/fuzz_opts.c) calls these directly.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

int
bench_parse_mib(const char *s, uint64_t *bytes)
{
	char *end;
	unsigned long long mib;

	/* In range before the shift: 2^44 + 4 MiB is not 4 MiB. */
	mib = strtoull(s, &end, 10);
	if (*end != '\0' || mib < 4 || mib > 65536)
		return -1;
	*bytes = (uint64_t)mib << 20;
	return 0;
}

int
bench_parse_bs(const char *s, size_t *bytes)
{
	char *end;
	size_t bs;

	bs = (size_t)strtoul(s, &end, 10);
	/* No shift past the largest value: it would wrap into range. */
	if (bs > (64u << 20))
		return -1;
	if (*end == 'k' || *end == 'K')
		bs <<= 10, end++;
	else if (*end == 'm' || *end == 'M')
		bs <<= 20, end++;
	if (*end != '\0' || bs < 4096 || bs > (64u << 20) || bs % 4096 != 0)
		return -1;
	*bytes = bs;
	return 0;
}

int
bench_parse_sizes(char *list, uint32_t *sizes, int max, int *n,
    const char **bad)
{
	char *end, *tok, *save;

	*n = 0;
	*bad = "";
	for (tok = strtok_r(list, ",", &save); tok != NULL;
	    tok = strtok_r(NULL, ",", &save)) {
		unsigned long v = strtoul(tok, &end, 10);
		if (*end != '\0' || v < 512 || v > 65536 || (v & (v - 1)) != 0 ||
		    *n == max) {
			*bad = tok;
			return -1;
		}
		sizes[(*n)++] = (uint32_t)v;
	}
	return *n == 0 ? -1 : 0;
}

int
bench_parse_layout(const char *s, int *nvdev, char *kind, size_t klen,
    int *width)
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
	if (n < 1 || w < 1 || n > BENCH_MAXPROV || w > BENCH_MAXPROV ||
	    n * w > BENCH_MAXPROV)
		return -1;
	snprintf(kind, klen, "%s", k);
	*nvdev = n;
	*width = w;
	return 0;
}
