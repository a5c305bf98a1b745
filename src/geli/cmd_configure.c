/* SPDX-License-Identifier: BSD-2-Clause */
/* geli configure of detached providers (§9.5). */
#include <stdio.h>

#include "cli.h"

struct flagopt {
	char on, off;		/* option letters: set / clear */
	uint32_t flag;
	bool inverted;		/* -t/-T: -T sets NODELETE */
	const char *name;	/* for the -v messages */
};

static const struct flagopt flagopts[] = {
	{ 'b', 'B', GELI_FLAG_BOOT, false, "BOOT" },
	{ 'g', 'G', GELI_FLAG_GELIBOOT, false, "GELIBOOT" },
	{ 'd', 'D', GELI_FLAG_GELIDISPLAYPASS, false, "GELIDISPLAYPASS" },
	{ 't', 'T', GELI_FLAG_NODELETE, true, "TRIM disable" },
	{ 'r', 'R', GELI_FLAG_AUTORESIZE, false, "AUTORESIZE" },
};
#define NFLAGOPTS (sizeof(flagopts) / sizeof(flagopts[0]))

/* The on-disk flags set and cleared, written only if that changes them. */
static void
configure_detached(const char *prov, uint32_t set, uint32_t clear)
{
	struct msg_args a = { .prov = prov };
	struct geli_metadata md;
	struct mdsrc src;
	int error;

	if (mdsrc_open(&src, prov, true, false, &md) != 0)
		return;
	for (size_t i = 0; verbose && i < NFLAGOPTS; i++) {
		const struct flagopt *f = &flagopts[i];
		bool on = (set & f->flag) != 0;

		if (((set | clear) & f->flag) && on == ((md.flags & f->flag) != 0))
			printf("%s flag %s for %s.\n", f->name, on ?
			    "already configured" : "not configured", prov);
	}
	error = geli_configure(src.store, &md, set, clear);
	if (error < 0)
		req_msg(OP_CONFIGURE, GELI_STEP_WRITE, error, &a);
	mdsrc_close(&src);
}

void
cmd_configure(struct opts *o, int argc, char **argv)
{
	int want[NFLAGOPTS];
	bool any = false;

	if (argc == 0) {
		req_error("Too few arguments.");
		return;
	}
	for (size_t i = 0; i < NFLAGOPTS; i++) {
		bool on = opt_bool(o, flagopts[i].on);
		bool off = opt_bool(o, flagopts[i].off);

		if (on && off) {
			req_error("Options -%c and -%c are mutually exclusive.",
			    flagopts[i].on, flagopts[i].off);
			return;
		}
		want[i] = on ? 1 : off ? 0 : -1;
		any = any || want[i] >= 0;
	}
	if (!any) {
		req_error("No option given.");
		return;
	}
	/* Attached providers change in memory and on disk (the daemon). */
	uint32_t set = 0, clear = 0;
	for (size_t i = 0; i < NFLAGOPTS; i++) {
		if (want[i] < 0)
			continue;
		if ((want[i] == 1) != flagopts[i].inverted)
			set |= flagopts[i].flag;
		else
			clear |= flagopts[i].flag;
	}
	for (int i = 0; i < argc; i++) {
		struct ctl_request req;
		char name[256];

		if (attached_name(argv[i], name, sizeof(name))) {
			ctl_request_init(&req, CTL_CONFIGURE);
			req.set = set;
			req.clear = clear;
			(void)attached_request(name, &req, NULL);
		} else {
			configure_detached(argv[i], set, clear);
		}
	}
}
