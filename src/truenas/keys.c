/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A pool's key material (see truenas.h): key files and the passphrase read
 * straight into locked memory, wiped when freed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keyfiles.h"
#include "truenas.h"
#include "tty.h"

/* A whole small file into locked memory: 0, or -1 with a message. */
static int
read_secret_file(const char *path, uint8_t **out, size_t *len, size_t max)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "re");
	uint8_t *buf;
	size_t n;

	if (f == NULL) {
		tn_warn("Cannot open %s: %s.", path, strerror(errno));
		return -1;
	}
	buf = geli_secure_alloc(max + 1);
	if (buf == NULL) {
		tn_warn("Cannot allocate memory.");
		if (f != stdin)
			fclose(f);
		return -1;
	}
	setvbuf(f, NULL, _IONBF, 0);	/* no copy in stdio's buffer */
	n = fread(buf, 1, max + 1, f);
	if (ferror(f) || n == 0 || n > max) {
		tn_warn("Cannot read %s: %s.", path, ferror(f) ? strerror(errno) :
		    n == 0 ? "it is empty" : "it is too large for a key");
		if (f != stdin)
			fclose(f);
		geli_secure_free(buf);
		return -1;
	}
	if (f != stdin)
		fclose(f);
	*out = buf;
	*len = n;
	return 0;
}

/* The passphrase: -j's first line (FreeNAS's passphrase files have no
 * newline), else typed at the terminal. */
static int
get_passphrase(const struct opts *o, const struct pool *p, char **out)
{
	char *pass = geli_secure_alloc(MAXPASS);
	int error;

	if (pass == NULL) {
		tn_warn("Cannot allocate memory.");
		return -1;
	}
	if (o->passfile != NULL) {
		char msg[4200];

		if (passfiles_read(pass, &o->passfile, 1, msg, sizeof(msg)) != 0) {
			tn_warn("%s", msg);
			geli_secure_free(pass);
			return -1;
		}
	} else {
		char prompt[300];

		snprintf(prompt, sizeof(prompt), "Enter passphrase for pool %s: ",
		    p->name);
		error = tty_read_secret(prompt, pass, MAXPASS);
		if (error != 0) {
			geli_secure_free(pass);
			tn_warn("Pool %s needs its passphrase: give it with -j "
			    "(cannot read it from a terminal: %s).", p->name,
			    strerror(-error));
			return -1;
		}
	}
	*out = pass;
	return 0;
}

void
keys_free(struct keys *k)
{
	geli_secure_free(k->key);
	geli_secure_free(k->pass);
	memset(k, 0, sizeof(*k));
}

/*
 * The key material of pool p: -K (the recovery key, key only), else -k,
 * else the backup's geli/<uuid>.key; the passphrase when the pool has one
 * and ask is set.  0; 1 when there is no key (said in *k->source); -1 on
 * an error, said.
 */
int
get_keys(const struct opts *o, const struct pool *p, bool ask, struct keys *k)
{
	memset(k, 0, sizeof(*k));
	if (o->recovery != NULL || o->keyfile != NULL) {
		k->recovery = o->recovery != NULL;
		k->source = k->recovery ? o->recovery : o->keyfile;
		if (read_secret_file(k->source, &k->key, &k->keylen, 4096) != 0)
			return -1;
	} else if (p->key != NULL) {
		k->key = geli_secure_alloc(POOL_KEYLEN);
		if (k->key == NULL) {
			tn_warn("Cannot allocate memory.");
			return -1;
		}
		memcpy(k->key, p->key, POOL_KEYLEN);
		k->keylen = POOL_KEYLEN;
		k->source = "the backup";
	} else {
		return 1;
	}
	if (p->encrypt == 2 && !k->recovery && (ask || o->passfile != NULL) &&
	    get_passphrase(o, p, &k->pass) != 0) {
		keys_free(k);
		return -1;
	}
	return 0;
}
