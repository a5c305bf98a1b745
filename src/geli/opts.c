/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * geli(8)'s option parsing, as geom(8) does it: the options of a verb by
 * its table (cli.h), numbers through expand_number(3).  Pure: it neither
 * prints nor exits, so main.c words the errors and the fuzzer
 * (fuzz/fuzz_opts.c) calls it directly.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const struct opt_spec *
opt_find(const struct opt_spec *spec, char ch)
{
	for (; spec->ch != 0; spec++)
		if (spec->ch == ch)
			return spec;
	return NULL;
}

int
expand_number(const char *s, intmax_t *out)
{
	char *end;
	intmax_t v;
	int shift;

	errno = 0;
	v = strtoimax(s, &end, 0);
	if (errno != 0)
		return -1;
	if (end == s) {
		errno = EINVAL;
		return -1;
	}
	switch (*end) {
	case '\0': shift = 0; break;
	case 'k': case 'K': shift = 10; break;
	case 'm': case 'M': shift = 20; break;
	case 'g': case 'G': shift = 30; break;
	case 't': case 'T': shift = 40; break;
	case 'p': case 'P': shift = 50; break;
	case 'e': case 'E': shift = 60; break;
	default:
		errno = EINVAL;
		return -1;
	}
	if (shift != 0) {
		end++;
		if (*end == 'b' || *end == 'B')
			end++;
	}
	if (*end != '\0') {
		errno = EINVAL;
		return -1;
	}
	if (shift != 0 && (v > (INTMAX_MAX >> shift) ||
	    v < (INTMAX_MIN >> shift))) {
		errno = ERANGE;
		return -1;
	}
	*out = v * ((intmax_t)1 << shift);
	return 0;
}

static int __attribute__((format(printf, 3, 4)))
fail(struct opt_error *err, bool usage, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	err->usage = usage;
	return -1;
}

static int
opt_set(struct opts *o, const struct opt_spec *s, const char *val,
    struct opt_error *err)
{
	int ch = s->ch;

	if (o->given[ch] && s->type != OPT_MULTI)
		return fail(err, false, "Option '%c' specified twice.", ch);
	o->given[ch] = true;
	switch (s->type) {
	case OPT_BOOL:
		o->flag[ch] = true;
		break;
	case OPT_NUM:
		if (expand_number(val, &o->num[ch]) != 0)
			return fail(err, false,
			    "Invalid value for '%c' argument: %s", ch,
			    strerror(errno));
		break;
	case OPT_STR:
		o->str[ch] = val;
		break;
	case OPT_MULTI:
		if (o->nmulti[ch] >= OPT_MULTI_MAX)
			return fail(err, false, "Too many '%c' options.", ch);
		o->multi[ch][o->nmulti[ch]++] = val;
		break;
	}
	return 0;
}

int
opts_parse(const struct opt_spec *spec, bool takes_v, struct opts *o,
    int argc, char **argv, bool *verbose, struct opt_error *err)
{
	char optstr[64];
	size_t n = 0;
	int ch;

	optstr[n++] = '+';
	optstr[n++] = ':';
	for (const struct opt_spec *s = spec; s->ch != 0; s++) {
		optstr[n++] = s->ch;
		if (s->type != OPT_BOOL)
			optstr[n++] = ':';
	}
	if (takes_v)
		optstr[n++] = 'v';
	optstr[n] = '\0';

	err->msg[0] = '\0';
	err->usage = false;
	o->spec = spec;
	/* 0, not 1: glibc starts afresh (a cluster of a parse before). */
	optind = 0;
	while ((ch = getopt(argc, argv, optstr)) != -1) {
		if (ch == 'v' && takes_v) {
			*verbose = true;
			continue;
		}
		if (ch == ':')
			return fail(err, true,
			    "option requires an argument -- %c", optopt);
		if (ch == '?')
			return fail(err, true, "illegal option -- %c", optopt);
		if (opt_set(o, opt_find(spec, (char)ch), optarg, err) != 0)
			return -1;
	}
	/* Defaults, and required options. */
	for (const struct opt_spec *s = spec; s->ch != 0; s++) {
		if (o->given[(int)s->ch] || s->type == OPT_BOOL ||
		    s->type == OPT_MULTI)
			continue;
		if (s->def == NULL)
			return fail(err, false, "Option '%c' not specified.",
			    s->ch);
		if (s->type != OPT_NUM)
			o->str[(int)s->ch] = s->def;
		/* The defaults are the table's constants: a bad one is a bug. */
		else if (expand_number(s->def, &o->num[(int)s->ch]) != 0)
			return fail(err, false,
			    "Invalid default for option '%c': %s.", s->ch,
			    s->def);
	}
	return optind;
}

bool
opt_bool(const struct opts *o, char ch)
{
	return o->flag[(int)ch];
}

intmax_t
opt_num(const struct opts *o, char ch)
{
	return o->num[(int)ch];
}

const char *
opt_str(const struct opts *o, char ch)
{
	return o->str[(int)ch] != NULL ? o->str[(int)ch] : "";
}

int
opt_multi(const struct opts *o, char ch, const char *const **list)
{
	*list = o->multi[(int)ch];
	return o->nmulti[(int)ch];
}
