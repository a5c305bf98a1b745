/* SPDX-License-Identifier: BSD-2-Clause */
/* Timing and summary statistics of geli bench. */
#ifndef GELI_BENCH_STATS_H
#define GELI_BENCH_STATS_H

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define STATS_MAX 16	/* runs summarised at most */

/* Monotonic seconds. */
static inline double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct stat3 { double min, median, max; };

/* Minimum, median and maximum of n values (1..STATS_MAX); v is not changed. */
static inline struct stat3
stats(const double *v, int n)
{
	double s[STATS_MAX];
	struct stat3 r;

	if (n > STATS_MAX)
		n = STATS_MAX;
	memcpy(s, v, sizeof(*v) * (size_t)n);
	qsort(s, (size_t)n, sizeof(*s), cmp_double);
	r.min = s[0];
	r.max = s[n - 1];
	r.median = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	return r;
}

#endif
