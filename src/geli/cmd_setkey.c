/* geli setkey / delkey on a detached provider or a backup file (§9.6, §9.8). */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static int
popcount8(unsigned v)
{
	return __builtin_popcount(v & 0xff);
}

static void
setkey_detached(struct opts *o, struct mdsrc *src, struct geli_metadata *md)
{
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
	if (md->keys == 0) {
		req_error("No valid keys on %s.", src->name);
		goto out;
	}
	/* The old key opens any slot. */
	if (keysrc_new(o, false, &ks) != 0 || keysrc_ukey(ks, md, ukey) != 0)
		goto out;
	keysrc_free(ks);
	ks = NULL;
	error = geli_mkey_decrypt(md, ukey, -1, mkey, &nkey);
	geli_wipe(ukey, GELI_USERKEYLEN);
	if (error == -GELI_EWRONGKEY) {
		req_error("Wrong key for %s.", src->name);
		goto out;
	} else if (error != 0) {
		req_error("Cannot decrypt Master Key: %s.", strerror(-error));
		goto out;
	}
	if (verbose)
		printf("Decrypted Master Key %d.\n", nkey);

	val = opt_num(o, 'n');
	if (val != -1)
		nkey = val < 0 || val >= GELI_MAXMKEYS ? GELI_MAXMKEYS :
		    (int)val;
	if (nkey >= GELI_MAXMKEYS) {
		req_error("Invalid '%s' argument.", "keyno");
		goto out;
	}
	/* Salt and iterations are shared by both slots (§4.5). */
	val = opt_num(o, 'i');
	if (val < -1 || val > INT32_MAX) {
		req_error("Invalid number of iterations.");
		goto out;
	}
	if (val != -1 && md->iterations == -1) {
		md->iterations = (int32_t)val;
	} else if (val != -1 && val != md->iterations) {
		if (popcount8(md->keys) != 1) {
			req_error("To be able to use '-i' option, only one "
			    "key can be defined.");
			goto out;
		}
		if (md->keys != (1u << nkey)) {
			req_error("Only already defined key can be changed "
			    "when '-i' option is used.");
			goto out;
		}
		md->iterations = (int32_t)val;
	}
	/* The new key. */
	if (keysrc_new(o, true, &ks) != 0 || keysrc_ukey(ks, md, ukey) != 0)
		goto out;
	md->keys |= (uint8_t)(1u << nkey);
	error = geli_mkey_encrypt(md->ealgo, md->keylen, ukey, mkey,
	    md->mkeys + nkey * GELI_MKEYLEN);
	if (error != 0) {
		req_error("Cannot encrypt Master Key: %s.", strerror(-error));
		goto out;
	}
	(void)mdsrc_store(src, md);
out:
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
	struct keysrc *ks = NULL;
	uint8_t *ukey;
	char req[96];
	intmax_t val = opt_num(o, 'i'), keyno = opt_num(o, 'n');
	int32_t old = md->iterations;

	if (val < -1 || val > INT32_MAX) {
		req_error("Invalid number of iterations.");
		return;
	}
	if (val != -1)
		md->iterations = (int32_t)val;
	ukey = geli_secure_alloc(GELI_USERKEYLEN);
	if (ukey == NULL) {
		req_error("Cannot allocate memory.");
		return;
	}
	if (keysrc_new(o, true, &ks) == 0 && keysrc_ukey(ks, md, ukey) == 0) {
		/* A count calibrated here goes to the daemon as if given. */
		if (val == -1 && md->iterations != old)
			val = md->iterations;
		snprintf(req, sizeof(req), "setkey %jd %jd", keyno, val);
		(void)attached_request(name, req, ukey, GELI_USERKEYLEN);
	}
	keysrc_free(ks);
	geli_secure_free(ukey);
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
	struct geli_metadata md;
	struct mdsrc src;
	intmax_t val;
	unsigned nkey;
	char name[256], req[96];

	if (argc != 1) {
		req_error("Invalid number of arguments.");
		return;
	}
	if (attached_name(argv[0], name, sizeof(name))) {
		snprintf(req, sizeof(req), "delkey %jd %d %d", opt_num(o, 'n'),
		    opt_bool(o, 'a'), opt_bool(o, 'f'));
		(void)attached_request(name, req, NULL, 0);
		return;
	}
	if (mdsrc_open(&src, argv[0], true, false, &md) != 0)
		return;
	if (opt_bool(o, 'a')) {
		/* All slots destroyed; md_keys is left as it is (§5.3). */
		if (geli_random(md.mkeys, sizeof(md.mkeys)) != 0) {
			req_error("Cannot get random bytes.");
			goto out;
		}
	} else {
		val = opt_num(o, 'n');
		if (val == -1) {
			req_error("Key number has to be specified.");
			goto out;
		}
		if (val < 0 || val >= GELI_MAXMKEYS) {
			req_error("Invalid '%s' argument.", "keyno");
			goto out;
		}
		nkey = (unsigned)val;
		if (!(md.keys & (1u << nkey)) && !opt_bool(o, 'f')) {
			req_error("Master Key %u is not set.", nkey);
			goto out;
		}
		md.keys &= (uint8_t)~(1u << nkey);
		if (md.keys == 0 && !opt_bool(o, 'f')) {
			req_error("This is the last Master Key. Use '-f' "
			    "option if you really want to remove it.");
			goto out;
		}
		if (geli_random(md.mkeys + nkey * GELI_MKEYLEN,
		    GELI_MKEYLEN) != 0) {
			req_error("Cannot get random bytes.");
			goto out;
		}
	}
	(void)mdsrc_store(&src, &md);
out:
	mdsrc_close(&src);
	geli_wipe(&md, sizeof(md));
}
