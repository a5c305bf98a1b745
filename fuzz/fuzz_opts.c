/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer harness: geli's option and size parsing (src/geli/opts.c) and
 * geli bench's option values (src/bench/args.c).
 *
 * The first byte picks the parser; the rest is its input: for the option
 * parser an argument vector (NUL-separated words after the verb) and the
 * second byte a verb's option table (bit 7: -v allowed), for the others one string.  A number
 * that parses must be the number written: expand_number's value prints
 * and parses back the same; a size is its digits times its suffix, with
 * no wrap-around.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "bench.h"

#define MAXARGS 32
#define MAXLEN 1024

/* Option tables like geli's verbs' (main.c): every type, a required one. */
static const struct opt_spec init_like[] = {
	{ 'a', OPT_STR, "" }, { 'b', OPT_BOOL, NULL }, { 'i', OPT_NUM, "-1" },
	{ 'J', OPT_MULTI, NULL }, { 'l', OPT_NUM, "0" }, { 's', OPT_NUM, "0" },
	{ 'V', OPT_NUM, "-1" }, { 0, 0, NULL }
};
static const struct opt_spec resize_like[] = {
	{ 's', OPT_NUM, NULL }, { 0, 0, NULL }
};
static const struct opt_spec attach_like[] = {
	{ 'C', OPT_BOOL, NULL }, { 'd', OPT_BOOL, NULL },
	{ 'j', OPT_MULTI, NULL }, { 'k', OPT_MULTI, NULL },
	{ 'n', OPT_NUM, "-1" }, { 'p', OPT_BOOL, NULL }, { 0, 0, NULL }
};
static const struct opt_spec *const tables[] = {
	init_like, resize_like, attach_like
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_options(const uint8_t *data, size_t size)
{
	static char words[MAXLEN + 1];
	static struct opts o;
	char *argv[MAXARGS + 2];
	const struct opt_spec *spec;
	struct opt_error err;
	bool verbose = false;
	bool takes_v;
	int argc = 0, n;

	if (size < 1)
		return;
	spec = tables[data[0] % (sizeof(tables) / sizeof(tables[0]))];
	takes_v = data[0] & 0x80;
	data++, size--;
	if (size > MAXLEN)
		size = MAXLEN;
	memcpy(words, data, size);
	words[size] = '\0';
	argv[argc++] = (char *)"verb";
	for (size_t i = 0; i <= size && argc < MAXARGS + 1; ) {
		argv[argc++] = words + i;
		i += strlen(words + i) + 1;
	}
	argv[argc] = NULL;
	memset(&o, 0, sizeof(o));
	n = opts_parse(spec, takes_v, &o, argc, argv, &verbose, &err);
	if (n < 0) {
		if (err.msg[0] == '\0')
			abort();
		return;
	}
	if (n > argc)
		abort();
	for (const struct opt_spec *s = spec; s->ch != 0; s++)
		if (s->type != OPT_BOOL && s->type != OPT_MULTI &&
		    !o.given[(int)s->ch] && s->def == NULL)
			abort();	/* a required option left out */
}

static void
check_number(const char *s)
{
	intmax_t v, back;
	char text[32];

	if (expand_number(s, &v) != 0) {
		if (errno != EINVAL && errno != ERANGE)
			abort();
		return;
	}
	snprintf(text, sizeof(text), "%jd", v);
	if (expand_number(text, &back) != 0 || back != v)
		abort();
}

/* The digits strtoull reads, times mult, exactly; -1 when it wraps. */
static int
reference(const char *s, uint64_t mult, uint64_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || end == s)
		return -1;
	if (__builtin_mul_overflow((uint64_t)v, mult, out))
		return -1;
	return 0;
}

static void
check_bench(int which, char *s)
{
	char kind[16];
	uint32_t sizes[8];
	uint64_t bytes, want;
	size_t bs;
	const char *bad;
	int nvdev, width, n;

	switch (which) {
	case 0:
		if (bench_parse_mib(s, &bytes) == 0 &&
		    (reference(s, 1u << 20, &want) != 0 || want != bytes ||
		    bytes < (4u << 20) || bytes > (64ull << 30)))
			abort();
		break;
	case 1:
		if (bench_parse_bs(s, &bs) == 0) {
			const char *suf = s + strspn(s, " \t\n\v\f\r+-0123456789");
			uint64_t mult = *suf == 'k' || *suf == 'K' ? 1u << 10 :
			    *suf == 'm' || *suf == 'M' ? 1u << 20 : 1;

			if (reference(s, mult, &want) != 0 || want != bs ||
			    bs % 4096 != 0 || bs < 4096 || bs > (64u << 20))
				abort();
		}
		break;
	case 2:
		if (bench_parse_sizes(s, sizes, 8, &n, &bad) == 0) {
			if (n < 1 || n > 8)
				abort();
			for (int i = 0; i < n; i++)
				if (sizes[i] < 512 || sizes[i] > 65536 ||
				    (sizes[i] & (sizes[i] - 1)) != 0)
					abort();
		} else if (bad == NULL) {
			abort();
		}
		break;
	case 3:
		if (bench_parse_layout(s, &nvdev, kind, sizeof(kind),
		    &width) == 0 && (nvdev < 1 || width < 1 ||
		    (int64_t)nvdev * width > BENCH_MAXPROV))
			abort();
		break;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char s[MAXLEN + 1];
	size_t len;

	if (size < 2)
		return 0;
	len = size - 1 < MAXLEN ? size - 1 : MAXLEN;
	memcpy(s, data + 1, len);
	s[len] = '\0';
	switch (data[0] % 6) {
	case 0:
		check_options(data + 1, size - 1);
		break;
	case 1:
		check_number(s);
		break;
	default:
		check_bench(data[0] % 6 - 2, s);
		break;
	}
	return 0;
}
