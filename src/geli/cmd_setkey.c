/* SPDX-License-Identifier: BSD-2-Clause */
/* geli setkey / delkey on a detached provider or a backup file (§9.6, §9.8). */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static void
setkey_detached(struct opts *o, struct mdsrc *src, struct geli_metadata *md)
{
	struct msg_args a = { .prov = src->name };
	struct geli_metadata nmd;
	struct geli_keymat km;
	struct keysrc *ks = NULL;
	uint8_t *ukey, *mkey;
	intmax_t val;
	int error, nkey;

	ukey = geli_secure_alloc(GELI_USERKEYLEN);
	mkey = geli_secure_alloc(GELI_MKEY_DATALEN);
	if (ukey == NULL || mkey == NULL) {
		req_error("Cannot allocate memory.");
		goto out;
	}
	/*
	 * FreeBSD's setkey looks at nothing but the slots: a cipher they
	 * cannot be decrypted with fails after the user key was made.  Here
	 * it fails before (a hostile record may ask for any number of
	 * iterations), with the same words.  The old key opens any slot.
	 */
	error = geli_unlock_check(NULL, md, -1, GELI_UNLOCK_SLOTS);
	if (error == 0 && keysrc_new(o, false, &ks) != 0)
		goto out;
	/* Asked through the agents, a wrong passphrase is asked again. */
	if (error == 0) {
		keysrc_for(ks, src->name);
		do {
			if (keysrc_keymat(ks, md, &km) != 0)
				goto out;
			error = geli_unlock(NULL, md, &km, -1,
			    GELI_UNLOCK_SLOTS, mkey, &nkey);
		} while (error == -GELI_EWRONGKEY && keysrc_again(ks));
	}
	keysrc_free(ks);
	ks = NULL;
	if (error != 0) {
		req_msg(OP_SETKEY, GELI_STEP_READ, error, &a);
		goto out;
	}
	if (verbose)
		printf("Decrypted Master Key %d.\n", nkey);
	/* The target: -n, else the slot that just opened. */
	val = opt_num(o, 'n');
	if (val != -1)
		nkey = val < 0 || val >= GELI_MAXMKEYS ? GELI_MAXMKEYS :
		    (int)val;
	/* The new key is made for the count the slot will have. */
	nmd = *md;
	error = geli_setkey_check(md, nkey, opt_num(o, 'i'), &nmd.iterations);
	if (error == 0 && (keysrc_new(o, true, &ks) != 0 ||
	    keysrc_ukey(ks, &nmd, ukey) != 0))
		goto out;
	if (error == 0)
		error = geli_setkey(src->store, md, nkey, nmd.iterations, mkey,
		    ukey);
	if (error != 0)
		req_msg(OP_SETKEY, GELI_STEP_WRITE, error, &a);
out:
	geli_wipe(&nmd, sizeof(nmd));
	keysrc_free(ks);
	geli_secure_free(ukey);
	geli_secure_free(mkey);
}

/*
 * Attached: no old key; the daemon encrypts its Master Key with the new user
 * key (computed here from the metadata on disk) and checks the -i rules.
 */
static void
setkey_attached(struct opts *o, const char *name, struct geli_metadata *md)
{
	struct msg_args a = { .prov = name };
	struct ctl_request *req;
	struct keysrc *ks = NULL;
	intmax_t val = opt_num(o, 'i'), keyno = opt_num(o, 'n');
	int32_t old = md->iterations;

	if (val < -1 || val > INT32_MAX) {
		req_msg(OP_SETKEY, GELI_STEP_NONE, -GELI_EITERATIONS, &a);
		return;
	}
	if (keyno < -1 || keyno >= GELI_MAXMKEYS) {
		req_msg(OP_SETKEY, GELI_STEP_NONE, -GELI_EKEYNO, &a);
		return;
	}
	if (val != -1)
		md->iterations = (int32_t)val;
	/* The request holds the new user key: locked memory. */
	req = geli_secure_alloc(sizeof(*req));
	if (req == NULL) {
		req_error("Cannot allocate memory.");
		return;
	}
	ctl_request_init(req, CTL_SETKEY);
	req->keylen = GELI_USERKEYLEN;
	if (keysrc_new(o, true, &ks) == 0 &&
	    keysrc_ukey(ks, md, req->key) == 0) {
		/* A count calibrated here goes to the daemon as if given. */
		if (val == -1 && md->iterations != old)
			val = md->iterations;
		req->keyno = (int32_t)keyno;
		req->iterations = val;
		(void)attached_request(name, req, NULL);
	}
	keysrc_free(ks);
	geli_secure_free(req);
}

void
cmd_setkey(struct opts *o, int argc, char **argv)
{
	struct geli_metadata md;
	struct mdsrc src;
	char name[256];
	bool attached;

	if (argc != 1) {
		req_error("Invalid number of arguments.");
		return;
	}
	attached = attached_name(argv[0], name, sizeof(name));
	if (mdsrc_open(&src, argv[0], !attached, false, &md) != 0)
		return;
	if (attached) {
		mdsrc_close(&src);
		setkey_attached(o, name, &md);
	} else {
		setkey_detached(o, &src, &md);
		mdsrc_close(&src);
	}
	geli_wipe(&md, sizeof(md));
	if (!req_failed())
		printf("Note, that the master key encrypted with old keys "
		    "and/or passphrase may still exist in a metadata backup "
		    "file.\n");
}

void
cmd_delkey(struct opts *o, int argc, char **argv)
{
	struct msg_args a = { 0 };
	struct geli_metadata md;
	struct mdsrc src;
	char name[256];
	int error;

	if (argc != 1) {
		req_error("Invalid number of arguments.");
		return;
	}
	if (attached_name(argv[0], name, sizeof(name))) {
		struct ctl_request req;

		ctl_request_init(&req, CTL_DELKEY);
		if (opt_num(o, 'n') < -1 || opt_num(o, 'n') >= GELI_MAXMKEYS) {
			req_msg(OP_DELKEY, GELI_STEP_NONE, -GELI_EKEYNO, &a);
			return;
		}
		req.keyno = (int32_t)opt_num(o, 'n');
		req.flags = (opt_bool(o, 'a') ? CTL_F_ALL : 0) |
		    (opt_bool(o, 'f') ? CTL_F_FORCE : 0);
		(void)attached_request(name, &req, NULL);
		return;
	}
	if (mdsrc_open(&src, argv[0], true, false, &md) != 0)
		return;
	a.prov = argv[0];
	a.keyno = opt_num(o, 'n') < -1 || opt_num(o, 'n') >= GELI_MAXMKEYS ?
	    GELI_MAXMKEYS : (int)opt_num(o, 'n');
	error = geli_delkey(src.store, &md, a.keyno,
	    (opt_bool(o, 'a') ? GELI_ADMIN_ALL : 0) |
	    (opt_bool(o, 'f') ? GELI_ADMIN_FORCE : 0));
	if (error != 0)
		req_msg(OP_DELKEY, GELI_STEP_WRITE, error, &a);
	mdsrc_close(&src);
	geli_wipe(&md, sizeof(md));
}
