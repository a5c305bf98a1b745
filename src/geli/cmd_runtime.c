/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The verbs of an attached provider's life (§9.3, §9.11): detach (waiting
 * until its daemon is gone, as FreeBSD's detach returns once the provider
 * is closed), suspend and resume, each a request to its daemon.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "frontends.h"

/* ---- detach ------------------------------------------------------------------------ */

/*
 * arg names a provider whose daemon died whole and left its ublk device
 * waiting for a server (the next attach would take it back): the device
 * deleted, what waited on it ended with errors, the run directory's
 * entries removed.  False where there is no such device.
 */
static bool
detach_waiting(const char *arg)
{
	char name[256];
	int32_t id;
	size_t l;
	int lk;
	bool done = false;

	attach_name_of(arg, name, sizeof(name));
	lk = rundir_lock();
	if ((id = waiting_ublk(name)) < 0 && (l = strlen(name)) > 4 &&
	    strcmp(name + l - 4, ".eli") == 0) {
		name[l - 4] = '\0';
		id = waiting_ublk(name);
	}
	if (id >= 0 && geli_frontends.release != NULL &&
	    geli_frontends.release((uint32_t)id) == 0) {
		rundir_clean_stale(name);
		done = true;
	}
	rundir_unlock(lk);
	return done;
}

void
cmd_detach(struct opts *o, int argc, char **argv)
{
	struct ctl_request req;
	enum ctl_outcome outcome;
	char name[256];

	if (argc <= 0) {
		req_error("Missing device(s).");
		return;
	}
	ctl_request_init(&req, CTL_DETACH);
	req.flags = (opt_bool(o, 'f') ? CTL_F_FORCE : 0) |
	    (opt_bool(o, 'l') ? CTL_F_LAST : 0);
	for (int i = 0; i < argc && !req_failed(); i++) {
		if (!attached_name(argv[i], name, sizeof(name))) {
			if (detach_waiting(argv[i]))
				continue;
			req_error("No such device: %s.", argv[i]);
			return;
		}
		struct daemon_ref d = daemon_ref(NULL, name);

		if (attached_request(name, &req, &outcome) == 0 &&
		    outcome == CTL_DETACHED)
			daemon_wait_gone(d, name);
	}
}

/* ---- suspend, resume ------------------------------------------------------------------ */

void
cmd_suspend(struct opts *o, int argc, char **argv)
{
	struct ctl_request req;
	char name[256], **names;
	int n;

	ctl_request_init(&req, CTL_SUSPEND);
	if (opt_bool(o, 'a')) {
		n = attached_names(&names);
		for (int i = 0; i < n; i++)
			if (!geli_name_suspended(names[i]))
				(void)attached_request(names[i], &req, NULL);
		rundir_names_free(names, n);
		return;
	}
	if (argc == 0) {
		req_error("Too few arguments.");
		return;
	}
	for (int i = 0; i < argc && !req_failed(); i++) {
		if (!attached_name(argv[i], name, sizeof(name))) {
			req_error("No such device: %s.", argv[i]);
			return;
		}
		(void)attached_request(name, &req, NULL);
	}
}

/*
 * The provider device name serves, as arg names it when arg is that
 * provider (messages then say what was given), else as the daemon has it.
 */
static const char *
served_provider(const char *arg, const char *name, char *buf, size_t len)
{
	char rp1[4096], rp2[4096], pbuf[4096];
	struct ctl_status *st;
	const char *p = arg;

	st = malloc(sizeof(*st));
	if (st == NULL)
		return arg;
	if (ctl_status(name, st) == 0 &&
	    !(realpath(prov_path(arg, pbuf, sizeof(pbuf)), rp1) != NULL &&
	    realpath(st->provpath, rp2) != NULL && strcmp(rp1, rp2) == 0)) {
		snprintf(buf, len, "%s", st->provpath);
		p = buf;
	}
	free(st);
	return p;
}

void
cmd_resume(struct opts *o, int argc, char **argv)
{
	struct geli_metadata md;
	struct ctl_request *req;
	struct keysrc *ks = NULL;
	struct mdsrc src;
	struct msg_args a = { 0 };
	char name[256], prov[1024];
	int error;

	if (argc != 1) {
		req_error("Invalid number of arguments.");
		return;
	}
	if (!attached_name(argv[0], name, sizeof(name))) {
		req_error("No such device: %s.", argv[0]);
		return;
	}
	if (!geli_name_suspended(name)) {
		req_error("Device %s.eli is not suspended.", name);
		return;
	}
	/* The metadata of the provider the daemon serves: a device name
	 * ("x", "x.eli") is no path to it. */
	if (mdsrc_open_provider(&src, served_provider(argv[0], name, prov,
	    sizeof(prov)), false, &md) != 0)
		return;
	/*
	 * The kernel's checks before it decrypts a slot (g_eli_ctl_resume),
	 * made before the user key: the size, then only md_keys and the
	 * slots' cipher; the device keeps the rest of what it was attached
	 * with.
	 */
	error = geli_unlock_check(src.prov, &md, -1, GELI_UNLOCK_SLOTS);
	mdsrc_close(&src);
	a.prov = argv[0];
	if (error != 0) {
		req_msg(OP_RESUME, GELI_STEP_NONE, error, &a);
		geli_wipe(&md, sizeof(md));
		return;
	}
	/* The request holds the user key: locked memory. */
	req = geli_secure_alloc(sizeof(*req));
	if (req == NULL) {
		req_error("Cannot allocate memory.");
		return;
	}
	ctl_request_init(req, CTL_RESUME);
	req->keylen = GELI_USERKEYLEN;
	if (keysrc_new(o, false, &ks) == 0) {
		keysrc_for(ks, argv[0]);	/* named in the agents' question */
		if (keysrc_ukey(ks, &md, req->key) == 0 &&
		    attached_request(name, req, NULL) == 0 && verbose)
			printf("Resumed %s.\n", argv[0]);
	}
	keysrc_free(ks);
	geli_secure_free(req);
	geli_wipe(&md, sizeof(md));
}
