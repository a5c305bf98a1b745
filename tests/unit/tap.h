/* SPDX-License-Identifier: BSD-2-Clause */
/* A tiny TAP producer for the unit tests: "ok N - what" / "not ok N - what". */
#ifndef TAP_H
#define TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tap_n, tap_failed;

static inline void __attribute__((format(printf, 2, 3)))
tap_ok(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", cond ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!cond)
		tap_failed++;
	fflush(stdout);
}

static inline void
tap_hex(const char *label, const unsigned char *p, size_t len)
{
	printf("#   %s: ", label);
	for (size_t i = 0; i < len; i++)
		printf("%02x", p[i]);
	printf("\n");
}

static inline int
tap_unhex(const char *hex, unsigned char *out, size_t max)
{
	size_t n = strlen(hex) / 2;

	if (n > max)
		return -1;
	for (size_t i = 0; i < n; i++) {
		unsigned v;
		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return -1;
		out[i] = (unsigned char)v;
	}
	return (int)n;
}

/* Compare bytes against expected hex; print got/want on a mismatch. */
static inline void __attribute__((format(printf, 4, 5)))
tap_is_hex(const unsigned char *got, size_t len, const char *want_hex,
    const char *fmt, ...)
{
	unsigned char want[1024];
	char desc[256];
	va_list ap;
	int n, ok;

	n = tap_unhex(want_hex, want, sizeof(want));
	ok = n == (int)len && memcmp(got, want, len) == 0;
	va_start(ap, fmt);
	vsnprintf(desc, sizeof(desc), fmt, ap);
	va_end(ap);
	tap_ok(ok, "%s", desc);
	if (!ok) {
		tap_hex("got ", got, len);
		printf("#   want: %s\n", want_hex);
	}
}

static inline int
tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

#endif
