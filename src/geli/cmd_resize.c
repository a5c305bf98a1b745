/* SPDX-License-Identifier: BSD-2-Clause */
/* geli resize -s oldsize (§8.5) and geli kill of detached providers (§9.9). */
#include <string.h>

#include "cli.h"

void
cmd_resize(struct opts *o, int argc, char **argv)
{
	struct msg_args a = { 0 };
	struct geli_provider *p;
	enum geli_step step = GELI_STEP_NONE;
	intmax_t oldsize;
	int error;

	if (argc != 1) {
		req_error("Invalid number of arguments.");
		return;
	}
	a.prov = argv[0];
	error = prov_open(a.prov, true, &p);
	if (error != 0) {
		req_msg(OP_RESIZE, GELI_STEP_OPEN, error, &a);
		return;
	}
	oldsize = opt_num(o, 's');
	error = oldsize < 0 ? -GELI_EOLDSIZE :
	    geli_resize(p, (uint64_t)oldsize, 0, 0, &step);
	if (error == -EOPNOTSUPP) {
		/* "metadata version %u is too new": the raw LE32 at 16. */
		uint8_t rec[20];
		if (geli_provider_pread(p, rec, sizeof(rec), (uint64_t)oldsize -
		    geli_provider_sectorsize(p)) == 0)
			a.version = raw_md_version(rec);
	}
	if (error != 0)
		req_msg(OP_RESIZE, step, error, &a);
	geli_provider_close(p);
}

/* The daemon stops even when it could not destroy the metadata. */
static void
kill_attached(const char *name, const struct ctl_request *req)
{
	enum ctl_outcome outcome;
	struct daemon_ref d = daemon_ref(NULL, name);

	(void)attached_request(name, req, &outcome);
	if (outcome == CTL_DETACHED)
		daemon_wait_gone(d, name);
}

void
cmd_kill(struct opts *o, int argc, char **argv)
{
	struct msg_args a = { 0 };
	struct ctl_request req;
	struct geli_provider *p;
	char name[256], **names;
	int n, error;

	if (!opt_bool(o, 'a') && argc == 0) {
		req_error("Too few arguments.");
		return;
	}
	/* First the detached providers, then the attached ones. */
	for (int i = 0; i < argc; i++) {
		if (attached_name(argv[i], name, sizeof(name)))
			continue;
		a.prov = argv[i];
		error = prov_open(argv[i], true, &p);
		if (error != 0) {
			req_msg(OP_KILL, GELI_STEP_OPEN, error, &a);
			continue;
		}
		error = geli_kill(p, 0);
		if (error != 0)
			req_msg(OP_KILL, GELI_STEP_TRASH, error, &a);
		geli_provider_close(p);
	}
	ctl_request_init(&req, CTL_KILL);
	for (int i = 0; i < argc; i++)
		if (attached_name(argv[i], name, sizeof(name)))
			kill_attached(name, &req);
	if (opt_bool(o, 'a')) {
		n = attached_names(&names);
		for (int i = 0; i < n; i++)
			kill_attached(names[i], &req);
		rundir_names_free(names, n);
	}
}
