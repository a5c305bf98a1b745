/* SPDX-License-Identifier: BSD-2-Clause */
/* geli backup / restore (§9.10). */
#include "cli.h"

void
cmd_backup(struct opts *o, int argc, char **argv)
{
	struct msg_args a = { 0 };
	struct geli_provider *p;
	enum geli_step step;
	int error;

	(void)o;
	if (argc != 2) {
		req_error("Invalid number of arguments.");
		return;
	}
	a.prov = argv[0];
	a.file = argv[1];
	error = prov_open(a.prov, false, &p);
	if (error != 0) {
		req_msg(OP_BACKUP, GELI_STEP_NONE, error, &a);
		return;
	}
	error = geli_backup(p, a.file, &step);
	if (error != 0)
		req_msg(OP_BACKUP, step, error, &a);
	geli_provider_close(p);
}

void
cmd_restore(struct opts *o, int argc, char **argv)
{
	struct msg_args a = { 0 };
	struct geli_metadata md;
	struct geli_provider *p = NULL;
	struct mdsrc src;
	int error;

	if (argc != 2) {
		req_error("Invalid number of arguments.");
		return;
	}
	a.file = argv[0];
	a.prov = argv[1];
	if (mdsrc_open(&src, a.file, false, false, &md) != 0)
		return;
	mdsrc_close(&src);
	error = prov_open(a.prov, true, &p);
	if (error != 0) {
		req_msg(OP_RESTORE, GELI_STEP_NONE, error, &a);
		goto out;
	}
	error = geli_restore(p, &md, opt_bool(o, 'f') ? GELI_ADMIN_FORCE : 0);
	if (error != 0)
		req_msg(OP_RESTORE, GELI_STEP_WRITE, error, &a);
	geli_provider_close(p);
out:
	geli_wipe(&md, sizeof(md));
}
