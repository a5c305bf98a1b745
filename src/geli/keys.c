/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Key components from the command line (§4.2): keyfiles (-k/-K, used raw,
 * in order, "-" = stdin), passfiles (-j/-J, first line of each, joined) or a
 * passphrase typed at the terminal with echo off.  Every copy of a secret
 * lives in geli_secure_alloc() memory and is wiped.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "keyfiles.h"
#include "tty.h"

#define PASSBUF (GELI_MAX_PASSLEN + 1)
/*
 * Counts above this take more than a few seconds anywhere (the calibration
 * of §4.4 aims at 2 s, about 2.3 million here): say so before PBKDF2 runs.
 * FreeBSD accepts any count and prints nothing.
 */
#define SLOW_ITERATIONS 10000000

struct keysrc {
	bool isnew;
	bool nopass;
	const char *const *passfiles;
	int npassfiles;
	struct geli_ukey_ctx *ctx;
	unsigned nkeyfiles;
	char *pass;		/* secure; cached for further providers */
	bool cached;
};

int
keysrc_new(struct opts *o, bool isnew, struct keysrc **out)
{
	const char *const *keyfiles;
	struct keysrc *ks;
	char msg[4200];
	int nkeyfiles;

	ks = calloc(1, sizeof(*ks));
	if (ks == NULL) {
		req_error("Cannot allocate memory.");
		return -1;
	}
	ks->isnew = isnew;
	ks->nopass = opt_bool(o, isnew ? 'P' : 'p');
	ks->npassfiles = opt_multi(o, isnew ? 'J' : 'j', &ks->passfiles);
	nkeyfiles = opt_multi(o, isnew ? 'K' : 'k', &keyfiles);
	ks->pass = geli_secure_alloc(PASSBUF);
	if (ks->pass == NULL ||
	    geli_ukey_new(&ks->ctx) != 0) {
		req_error("Cannot allocate memory.");
		keysrc_free(ks);
		return -1;
	}
	if (keyfiles_read(ks->ctx, keyfiles, (size_t)nkeyfiles, msg,
	    sizeof(msg)) != 0) {
		req_error("%s", msg);
		keysrc_free(ks);
		return -1;
	}
	ks->nkeyfiles = (unsigned)nkeyfiles;
	if (nkeyfiles == 0 && ks->nopass) {
		req_error("No key components given.");
		keysrc_free(ks);
		return -1;
	}
	*out = ks;
	return 0;
}

/* The first line of each passfile, joined into ks->pass. */
static int
read_passfiles(struct keysrc *ks)
{
	char msg[4200];

	if (passfiles_read(ks->pass, ks->passfiles, (size_t)ks->npassfiles, msg,
	    sizeof(msg)) != 0) {
		req_error("%s", msg);
		return -1;
	}
	return 0;
}

static int
prompt_passphrase(struct keysrc *ks)
{
	char *again;
	int error;

	for (;;) {
		error = tty_read_secret(ks->isnew ? "Enter new passphrase: " :
		    "Enter passphrase: ", ks->pass, PASSBUF);
		if (error != 0) {
			geli_wipe(ks->pass, PASSBUF);
			req_error("Cannot read passphrase: %s.",
			    strerror(-error));
			return -1;
		}
		if (!ks->isnew)
			return 0;
		again = geli_secure_alloc(PASSBUF);
		if (again == NULL) {
			req_error("Cannot allocate memory.");
			return -1;
		}
		error = tty_read_secret("Reenter new passphrase: ", again, PASSBUF);
		if (error != 0) {
			geli_secure_free(again);
			geli_wipe(ks->pass, PASSBUF);
			req_error("Cannot read passphrase: %s.",
			    strerror(-error));
			return -1;
		}
		bool same = strlen(again) == strlen(ks->pass) &&
		    geli_ct_equal(again, ks->pass, strlen(again));
		geli_secure_free(again);
		if (same)
			return 0;
		geli_wipe(ks->pass, PASSBUF);
		fprintf(stderr, "They didn't match.\n");
	}
}

int
keysrc_keymat(struct keysrc *ks, const struct geli_metadata *md,
    struct geli_keymat *km)
{
	*km = (struct geli_keymat){ .keyfiles = ks->ctx,
	    .nkeyfiles = ks->nkeyfiles };
	if (ks->nopass) {
		if (ks->npassfiles > 0) {
			req_error("Options -%c and -%c are mutually exclusive.",
			    ks->isnew ? 'J' : 'j', ks->isnew ? 'P' : 'p');
			return -1;
		}
		return 0;
	}
	if (!ks->isnew && md->iterations == -1) {
		req_error("Missing -p flag.");
		return -1;
	}
	if (!ks->cached) {
		if (ks->npassfiles > 0) {
			if (read_passfiles(ks) != 0)
				return -1;
		} else if (prompt_passphrase(ks) != 0) {
			return -1;
		}
		ks->cached = true;
	}
	if (md->iterations > SLOW_ITERATIONS)
		warnmsg("Deriving the key from the passphrase (%d iterations); "
		    "this may take a while.", (int)md->iterations);
	km->passphrase = ks->pass;
	km->passlen = strlen(ks->pass);
	return 0;
}

int
keysrc_ukey(struct keysrc *ks, struct geli_metadata *md, uint8_t *ukey)
{
	struct geli_keymat km;
	int error, it;

	if (keysrc_keymat(ks, md, &km) != 0)
		return -1;
	/* -1 means "choose a sane value for me": about 2 s of CPU (§4.4). */
	if (km.passphrase != NULL && md->iterations == -1) {
		if (verbose)
			printf("Calculating number of iterations...\n");
		it = geli_pbkdf2_calibrate(2000000);
		if (it <= 0) {
			req_error("Cannot calculate iterations: %s.",
			    strerror(-it));
			return -1;
		}
		md->iterations = it;
		if (verbose)
			printf("Done, using %d iterations.\n", it);
	}
	error = geli_ukey_final(ks->ctx, md, km.passphrase, km.passlen, ukey);
	if (error != 0) {
		req_error("Cannot generate key: %s.", strerror(-error));
		return -1;
	}
	return 0;
}

char *
read_passphrase(const char *const *passfiles, int npassfiles)
{
	struct keysrc ks = { .passfiles = passfiles, .npassfiles = npassfiles };
	char *pass = NULL;

	ks.pass = geli_secure_alloc(PASSBUF);
	if (ks.pass == NULL)
		req_error("Cannot allocate memory.");
	else if ((npassfiles > 0 ? read_passfiles(&ks) :
	    prompt_passphrase(&ks)) == 0)
		pass = ks.pass, ks.pass = NULL;
	geli_secure_free(ks.pass);
	return pass;
}

void
keysrc_free(struct keysrc *ks)
{
	if (ks == NULL)
		return;
	geli_ukey_free(ks->ctx);
	geli_secure_free(ks->pass);
	free(ks);
}
