/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * geli attach and geli onetime (§9.2, §9.4): a Master Key, decrypted from a
 * slot or made at random, handed to a daemon of the provider's own
 * (src/attach, reached through frontends.h) that serves it decrypted.  Both
 * start it through launch().
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "frontends.h"

/*
 * -b, else GELI_BACKEND: the back end asked for (when neither says, ublk
 * where the daemon finds it, else FUSE); -1 when it names none.
 */
static int
backend_asked(struct opts *o)
{
	const char *v = opt_str(o, 'b');

	if (*v == '\0' && (v = getenv("GELI_BACKEND")) == NULL)
		v = "";
	if (strcmp(v, "fuse") == 0)
		return ATTACH_FUSE;
	if (*v == '\0' || strcmp(v, "auto") == 0)
		return ATTACH_AUTO;
	if (strcmp(v, "ublk") == 0)
		return ATTACH_UBLK;
	req_error("Invalid back end: %s (fuse, ublk or auto).", v);
	return -1;
}

/* -L and -b before anything is asked or read: only root makes loop
 * devices (an ordinary user's ublk device is the daemon's to try). */
static bool
loop_allowed(struct opts *o)
{
	int b = backend_asked(o);

	if (b < 0)
		return false;
	if (geteuid() == 0 || !opt_bool(o, 'L'))
		return true;
	req_error("Cannot create a loop device: -L needs root.");
	return false;
}

/* GELI_MMAP=0: the daemon reads the provider with pread only. */
static bool
mmap_off(void)
{
	const char *v = getenv("GELI_MMAP");

	return v != NULL && strcmp(v, "0") == 0;
}

/*
 * Serve prov with r (its metadata, flags and slot filled in) and mkey: the
 * run directory, the turn (rundir_lock) from the stale-file check until the
 * daemon answers, and the daemon.  Errors go to the request error.
 */
static void
launch(struct opts *o, struct attach_req *r, const char *prov,
    const uint8_t *mkey)
{
	struct attach_result *res;
	char name[256], path[4096], buf[4096];
	int lk;

	attach_name_of(prov, name, sizeof(name));
	if (attached_rundir() != 0)
		return;
	res = calloc(1, sizeof(*res));
	if (res == NULL) {
		req_error("Cannot allocate memory.");
		return;
	}
	lk = rundir_lock();
	/* A daemon of this name that no longer answers is ending (detach -l
	 * or -d at the last close): the provider is free once it is gone. */
	struct daemon_ref old = daemon_ref(NULL, name);
	int st = ctl_status(name, NULL);
	if (old.pid != 0 && (st == -ENOENT || st == -ECONNREFUSED))
		daemon_wait_gone(old, name);
	/* (the daemon knows whether the device is one that waits) */
	r->ublk_waiting = waiting_ublk(name);
	rundir_clean_stale(name);
	if (rundir_entry(NULL, name, RUNDIR_CTL, path, sizeof(path)) == 0 &&
	    access(path, F_OK) == 0) {
		req_error("Provider %s.eli already exists.", name);
		goto out;
	}
	/* The daemon runs in /: it needs the absolute path. */
	if (realpath(prov_path(prov, buf, sizeof(buf)), path) == NULL) {
		req_error("Cannot open %s: %s.", prov, strerror(errno));
		goto out;
	}
	r->prov = prov;
	r->provpath = path;
	r->name = name;
	r->loop = opt_bool(o, 'L');
	r->backend = (enum attach_backend)backend_asked(o);
	r->nomap = mmap_off();
	if (geli_frontends.launch(r, mkey, res) != 0) {
		req_error("%s", res->msg);
		goto out;
	}
	if (res->unlocked)
		warn_unlocked();
	if (verbose && res->note[0] != '\0')
		fprintf(stderr, "geli: %s\n", res->note);
	if (verbose && !(r->flags & GELI_FLAG_ONETIME))
		printf("Attached to %s.\n", prov);
	if (r->loop)
		printf("%s\n", res->loopdev);
out:
	rundir_unlock(lk);
	free(res);
}

/* ---- attach ------------------------------------------------------------------------ */

/*
 * prov's record md is marked: a conversion goes on in the daemon, with the
 * journal in its default place, when it is one an attached provider can do
 * (a new Master Key, decryption, LUKS2: whose daemon converts to the last
 * sector and waits for geli reencrypt to end it).  md becomes the old
 * record the key opens.
 */
static int
attach_marked(struct opts *o, const char *prov, struct attach_req *r)
{
	struct msg_args a = { .prov = prov, .version = r->md.version };
	struct geli_reenc_info info;
	uint8_t uuid[16];
	int error;

	if (geli_reenc_uuid(&r->md, uuid) != 0 ||
	    reenc_journal_path(uuid, false, r->journal, sizeof(r->journal)) != 0) {
		req_msg(OP_READ, GELI_STEP_READ, -GELI_EINPROGRESS, &a);
		return -1;
	}
	error = geli_reenc_peek(r->journal, &info);
	if (error == 0 && memcmp(info.uuid, uuid, 16) != 0)
		error = -GELI_EJOURNAL;
	/* -E goes on offline only. */
	if (error == 0 && info.kind == GELI_REENC_ENCRYPT)
		error = -GELI_EINPROGRESS;
	geli_wipe(&info, sizeof(info));
	if (error == -GELI_EINPROGRESS || (error == 0 && opt_bool(o, 'r'))) {
		req_msg(OP_READ, GELI_STEP_READ, -GELI_EINPROGRESS, &a);
		return -1;
	}
	if (error != 0) {
		req_error("Provider %s is being converted, and its journal %s "
		    "cannot be used: %s. Run 'geli reencrypt' on it (with -F "
		    "if the journal is elsewhere).", prov, r->journal,
		    geli_strerror(error));
		return -1;
	}
	r->md.version &= 0xffffu;
	return 0;
}

static void
attach_one(struct opts *o, struct keysrc *ks, const char *prov)
{
	struct attach_req r;
	struct geli_keymat km;
	struct mdsrc src;
	struct msg_args a = { .prov = prov };
	uint8_t *mkey = NULL;
	intmax_t n = opt_num(o, 'n');
	int keyno = n < -1 || n >= GELI_MAXMKEYS ? GELI_MAXMKEYS : (int)n;
	int error, used;

	memset(&r, 0, sizeof(r));
	error = mdsrc_open_provider_marked(&src, prov, &r.md);
	if (error < 0)
		return;
	if (error == 1 && attach_marked(o, prov, &r) != 0)
		goto out;
	/*
	 * What the kernel would refuse after the user key was made (or
	 * could not attach at all), refused before the passphrase is asked:
	 * a hostile record may ask for any number of iterations.
	 */
	error = geli_unlock_check(src.prov, &r.md, keyno, 0);
	if (error != 0) {
		req_msg(OP_ATTACH, GELI_STEP_NONE, error, &a);
		goto out;
	}
	/* -C: the key is checked, and nothing attached. */
	if (!opt_bool(o, 'C') &&
	    (mkey = geli_secure_alloc(GELI_MKEY_DATALEN)) == NULL) {
		req_error("Cannot allocate memory.");
		goto out;
	}
	/* Asked through the agents, a wrong passphrase is asked again. */
	keysrc_for(ks, prov);
	do {
		if (keysrc_keymat(ks, &r.md, &km) != 0)
			goto out;
		error = geli_unlock(src.prov, &r.md, &km, keyno, 0, mkey,
		    &used);
	} while (error == -GELI_EWRONGKEY && keysrc_again(ks));
	if (error != 0) {
		req_msg(OP_ATTACH, GELI_STEP_NONE, error, &a);
		goto out;
	}
	if (opt_bool(o, 'C'))
		goto out;
	mdsrc_close(&src);
	r.used_key = used;
	r.flags = (opt_bool(o, 'r') ? GELI_FLAG_RO : 0) |
	    (opt_bool(o, 'd') ? GELI_FLAG_WO_DETACH : 0);
	launch(o, &r, prov, mkey);
out:
	mdsrc_close(&src);
	geli_secure_free(mkey);
	geli_wipe(&r.md, sizeof(r.md));
}

void
cmd_attach(struct opts *o, int argc, char **argv)
{
	struct keysrc *ks;
	bool failed = false;

	if (argc <= 0) {
		req_error("Too few arguments.");
		return;
	}
	if (opt_bool(o, 'd') && opt_bool(o, 'r')) {
		req_error("Options -d and -r are mutually exclusive.");
		return;
	}
	if (!loop_allowed(o) || keysrc_new(o, false, &ks) != 0)
		return;
	for (int i = 0; i < argc; i++) {
		attach_one(o, ks, argv[i]);
		if (req_failed()) {
			req_flush_as_warning();
			failed = true;
		}
	}
	keysrc_free(ks);
	if (failed)
		req_error("There was an error with at least one provider.");
}

/* ---- onetime ----------------------------------------------------------------------- */

void
cmd_onetime(struct opts *o, int argc, char **argv)
{
	struct geli_provider *p;
	struct attach_req r;
	uint8_t *mkey;
	uint32_t psize;
	int error;

	if (argc != 1) {
		req_error(argc < 1 ? "Too few arguments." : "Invalid number of arguments.");
		return;
	}
	if (!loop_allowed(o))
		return;
	memset(&r, 0, sizeof(r));
	memcpy(r.md.magic, GELI_MAGIC, sizeof(GELI_MAGIC));
	r.md.version = GELI_VERSION;
	r.flags = GELI_FLAG_ONETIME | GELI_FLAG_AUTORESIZE;
	if (opt_bool(o, 'R'))
		r.flags &= ~GELI_FLAG_AUTORESIZE;
	if (opt_bool(o, 'd'))
		r.flags |= GELI_FLAG_WO_DETACH;
	if (opt_bool(o, 'T'))
		r.flags |= GELI_FLAG_NODELETE;
	if (parse_algorithms(o, PARAMS_ONETIME, &r.md) != 0)
		return;
	r.flags |= r.md.flags & GELI_FLAG_AUTH;
	r.md.flags = r.flags & (GELI_FLAG_AUTH | GELI_FLAG_NODELETE |
	    GELI_FLAG_AUTORESIZE | GELI_FLAG_ONETIME);
	error = prov_open(argv[0], true, &p);
	if (error != 0) {
		req_error("Provider %s is invalid.", argv[0]);
		return;
	}
	psize = geli_provider_sectorsize(p);
	r.md.provsize = geli_provider_mediasize(p);
	geli_provider_close(p);
	if (parse_sectorsize(o, PARAMS_ONETIME, psize, &r.md.sectorsize) != 0)
		return;
	warn_sectorsize(o);
	/* What the volume could not be opened with: a sector larger than
	 * GELI_MAX_SECTORSIZE, or none that fits. */
	error = geli_metadata_check(&r.md, r.md.provsize, psize);
	if (error != 0) {
		struct msg_args a = { .prov = argv[0] };

		req_msg(OP_ATTACH, GELI_STEP_NONE, error, &a);
		return;
	}
	mkey = geli_secure_alloc(GELI_MKEY_DATALEN);
	if (mkey == NULL || geli_random_key(mkey, GELI_MKEY_DATALEN) != 0) {
		geli_secure_free(mkey);
		req_error("Cannot generate a key.");
		return;
	}
	r.used_key = -1;
	launch(o, &r, argv[0], mkey);
	geli_secure_free(mkey);
}
