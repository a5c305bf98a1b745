/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The geli program put together: the command line (src/geli) reaches the
 * attach daemon (src/attach) and geli bench (src/bench) through this one
 * table, so that no front end includes another.
 */
#include "attachd.h"
#include "bench.h"
#include "frontends.h"

static const struct frontend_verb verbs[] = {
	{ "bench", BENCH_USAGE, bench_main },
	{ NULL, NULL, NULL },
};

const struct frontends geli_frontends = {
	.launch = attachd_start,
	.release = ublk_release_waiting,
	.verbs = verbs,
};
