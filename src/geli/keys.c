/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Key components from the command line (§4.2): keyfiles (-k/-K, used raw,
 * in order, "-" = stdin), passfiles (-j/-J, first line of each, joined) or a
 * passphrase typed at the terminal with echo off, or asked through
 * systemd's password agents (askpass.h) without a terminal or with
 * GELI_ASKPASS=agent.  Every copy of a secret lives in geli_secure_alloc()
 * memory and is wiped.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "askpass.h"
#include "cli.h"
#include "keyfiles.h"
#include "tty.h"

#define PASSBUF (GELI_MAX_PASSLEN + 1)
#define ANSWERS (16 * PASSBUF)	/* the agents' cached passphrases */
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
	/* Through the agents: the provider asked about, the answers (each
	 * ended by a NUL; secure), the one in pass, the questions asked. */
	const char *prov;
	char *answers;
	int nanswers, answer, asked;
	bool cache_tried;
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

/* ---- Through systemd's password agents --------------------------------------- */

/* GELI_ASKPASS: "agent", "tty", or unset (the terminal, else the agents):
 * are the agents to be asked, after the terminal failed with tty_error (0:
 * before it is tried)? */
static bool
agent_wanted(int tty_error)
{
	const char *m = getenv("GELI_ASKPASS");

	if (m != NULL && strcmp(m, "agent") == 0)
		return true;
	if (m != NULL && strcmp(m, "tty") == 0)
		return false;
	/* No terminal to ask at (ENXIO), or none at all. */
	return tty_error == -ENXIO || tty_error == -ENOENT ||
	    tty_error == -ENOTTY;
}

static int
tries_allowed(void)
{
	const char *t = getenv("GELI_ASKPASS_TRIES");
	int n = t != NULL ? atoi(t) : 1;

	return n < 1 ? 1 : n;
}

/* Answer i (0-based) of ks->answers into ks->pass. */
static void
take_answer(struct keysrc *ks, int i)
{
	const char *a = ks->answers;

	for (int k = 0; k < i; k++)
		a += strlen(a) + 1;
	geli_wipe(ks->pass, PASSBUF);
	snprintf(ks->pass, PASSBUF, "%s", a);
	ks->answer = i;
}

/*
 * Through the agents, for ks->prov: first the passphrases cached under the
 * key name (GELI_ASKPASS_KEYNAME, default "geli"; empty: no cache), then a
 * question, whose answer the agents cache.  A new passphrase is asked twice
 * and never cached.
 */
static int
agent_passphrase(struct keysrc *ks)
{
	const char *kn = getenv("GELI_ASKPASS_KEYNAME");
	char id[1100], msg[1200], *again = NULL;
	struct askpass a = { .id = id, .message = msg };
	int n;

	if (ks->answers == NULL &&
	    (ks->answers = geli_secure_alloc(ANSWERS)) == NULL) {
		req_error("Cannot allocate memory.");
		return -1;
	}
	if (kn == NULL)
		kn = "geli";
	if (!ks->isnew && !ks->cache_tried && *kn != '\0') {
		ks->cache_tried = true;
		n = askpass_cached(kn, ks->answers, ANSWERS);
		if (n > 0) {
			ks->nanswers = n;
			take_answer(ks, 0);
			return 0;
		}
	}
	snprintf(id, sizeof(id), "geli:%s", ks->prov != NULL ? ks->prov : "");
	snprintf(msg, sizeof(msg), "Enter %spassphrase%s%s:",
	    ks->isnew ? "new " : "", ks->prov != NULL ? " for " : "",
	    ks->prov != NULL ? ks->prov : "");
	if (!ks->isnew && *kn != '\0')
		a.keyname = kn;
	n = askpass_agent(&a, ks->answers, ANSWERS);
	ks->asked++;
	if (n > 0 && ks->isnew) {
		snprintf(msg, sizeof(msg), "Reenter new passphrase%s%s:",
		    ks->prov != NULL ? " for " : "",
		    ks->prov != NULL ? ks->prov : "");
		if ((again = geli_secure_alloc(ANSWERS)) == NULL)
			n = -ENOMEM;
		else if (askpass_agent(&a, again, ANSWERS) != 1 ||
		    strlen(again) != strlen(ks->answers) ||
		    !geli_ct_equal(again, ks->answers, strlen(again)))
			n = -EINVAL;
		geli_secure_free(again);
	}
	if (n <= 0) {
		geli_wipe(ks->answers, ANSWERS);
		req_error("Cannot read passphrase: %s.", n == -EINVAL ?
		    "they didn't match" : n == 0 ? "no answer" :
		    strerror(-n));
		return -1;
	}
	ks->nanswers = n;
	take_answer(ks, 0);
	return 0;
}

bool
keysrc_again(struct keysrc *ks)
{
	if (ks->answers == NULL || ks->isnew)
		return false;
	if (ks->answer + 1 < ks->nanswers) {
		take_answer(ks, ks->answer + 1);
		return true;
	}
	if (ks->asked >= tries_allowed())
		return false;
	ks->cached = false;	/* keysrc_keymat asks again */
	return true;
}

void
keysrc_for(struct keysrc *ks, const char *prov)
{
	ks->prov = prov;
	ks->asked = 0;		/* its own tries; the cache first */
	ks->cache_tried = false;
}

/* ---- At the terminal ------------------------------------------------------- */

static int
prompt_passphrase(struct keysrc *ks)
{
	char *again;
	int error;

	if (ks->answers != NULL)	/* the agents answered before */
		return agent_passphrase(ks);
	for (;;) {
		if (agent_wanted(0))
			return agent_passphrase(ks);
		error = tty_read_secret(ks->isnew ? "Enter new passphrase: " :
		    "Enter passphrase: ", ks->pass, PASSBUF);
		/* Without a terminal, the key that opens a provider (a
		 * service at boot); a new one is set where it can be typed. */
		if (error != 0 && !ks->isnew && agent_wanted(error))
			return agent_passphrase(ks);
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
	geli_secure_free(ks->answers);
	free(ks);
}
