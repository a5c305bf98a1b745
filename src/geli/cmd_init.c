/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * geli init / label (§9.1): new metadata with a random salt and Master Key,
 * slot 0 encrypted with the user key, written to the last sector, and a
 * backup of that sector (§8.6).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define BACKUP_DIR "/var/backups/"

int
init_template(struct opts *o, struct geli_metadata *md)
{
	intmax_t val;
	unsigned version;

	memset(md, 0, sizeof(*md));
	memcpy(md->magic, GELI_MAGIC, sizeof(GELI_MAGIC));
	val = opt_num(o, 'V');
	if (val == -1) {
		version = GELI_VERSION;
	} else if (val < 0 || val > GELI_VERSION) {
		req_error("Invalid version specified should be between %u and %u.",
		    0, GELI_VERSION);
		return -1;
	} else {
		version = (unsigned)val;
	}
	md->version = version;
	md->flags = GELI_FLAG_AUTORESIZE;
	if (opt_bool(o, 'b'))
		md->flags |= GELI_FLAG_BOOT;
	if (opt_bool(o, 'g'))
		md->flags |= GELI_FLAG_GELIBOOT;
	if (opt_bool(o, 'd'))
		md->flags |= GELI_FLAG_GELIDISPLAYPASS;
	if (opt_bool(o, 'T'))
		md->flags |= GELI_FLAG_NODELETE;
	if (opt_bool(o, 'R'))
		md->flags &= ~GELI_FLAG_AUTORESIZE;

	if (parse_algorithms(o, PARAMS_INIT, md) != 0)
		return -1;
	val = opt_num(o, 'i');
	if (val != -1 && opt_bool(o, 'P')) {
		req_error("Options -i and -P are mutually exclusive.");
		return -1;
	}
	if (val < -1 || val > INT32_MAX) {
		req_error("Invalid number of iterations.");
		return -1;
	}
	md->iterations = (int32_t)val;
	warn_sectorsize(o);
	md->keys = 0x01;
	return 0;
}

/*
 * The default backup directory: FreeBSD's for root.  For anyone else, for
 * whom /var/backups is not writable, one of theirs (made 0700): XDG's state
 * directory, $XDG_STATE_HOME/geli/, else $HOME/.local/state/geli/.
 */
static const char *
backup_dir(void)
{
	static char buf[4096];
	const char *x = getenv("XDG_STATE_HOME"), *h = getenv("HOME");
	int n;

	if (geteuid() == 0)
		return BACKUP_DIR;
	if (x != NULL && *x == '/')
		n = snprintf(buf, sizeof(buf), "%s/geli/", x);
	else if (h != NULL && *h == '/')
		n = snprintf(buf, sizeof(buf), "%s/.local/state/geli/", h);
	else
		return BACKUP_DIR;
	if (n < 0 || (size_t)n >= sizeof(buf))
		return BACKUP_DIR;
	/* A failure shows when the backup cannot be written there. */
	(void)make_dirs(buf, 0700);
	return buf;
}

char *
backup_name(const char *opt, const char *prov, int nargs)
{
	const char *s;
	char *p, *out = NULL;
	int r;

	/* The name without /dev/, and (unlike FreeBSD) with / -> _ so that a
	 * path substituted for PROV does not name directories. */
	p = strdup(prov_shortname(prov));
	if (p == NULL)
		return NULL;
	for (char *c = p; *c != '\0'; c++)
		if (*c == '/')
			*c = '_';
	if (*opt == '\0')
		r = asprintf(&out, "%s%s.eli", backup_dir(), p);
	else if (nargs == 1 || strcmp(opt, "none") == 0)
		r = asprintf(&out, "%s", opt);
	else if ((s = strstr(opt, "PROV")) != NULL)
		r = asprintf(&out, "%.*s%s%s", (int)(s - opt), opt, p, s + 4);
	else
		r = asprintf(&out, "%s-%s", opt, p);
	free(p);
	return r < 0 ? NULL : out;
}

void
backup_notice(const char *prov, const char *file)
{
	printf("\nMetadata backup for provider %s can be found in %s\n", prov,
	    file);
	printf("and can be restored with the following command:\n");
	printf("\n\t# geli restore %s %s\n\n", file, prov);
}

/* Initialise one provider; errors go to req_error (the caller reports). */
static void
init_one(struct opts *o, struct keysrc *ks, struct geli_metadata *md,
    const char *prov, int nargs)
{
	struct geli_provider *p = NULL;
	uint8_t *ukey = NULL;
	char *backfile = NULL;
	uint32_t psize;
	bool backed_up = false;
	int error;

	error = prov_open(prov, true, &p);
	if (error == -EPERM) {
		/* Attached: FreeBSD can read its size, not store on it. */
		req_error("Cannot store metadata on %s: %s.", prov,
		    strerror(-error));
		return;
	}
	if (error != 0) {
		req_error("Cannot get information about %s: %s.", prov,
		    strerror(-error));
		return;
	}
	psize = geli_provider_sectorsize(p);
	md->provsize = geli_provider_mediasize(p);
	if (parse_sectorsize(o, PARAMS_INIT, psize, &md->sectorsize) != 0)
		goto out;
	/* At least one GELI sector besides the metadata (not checked by FreeBSD). */
	if (geli_eli_mediasize(md, md->provsize, psize, false) == 0) {
		req_error("Provider %s is too small: %ju bytes.", prov,
		    (uintmax_t)md->provsize);
		goto out;
	}

	/* Different salt and Master Key for each provider. */
	ukey = geli_secure_alloc(GELI_USERKEYLEN);
	if (ukey == NULL) {
		req_error("Cannot allocate memory.");
		goto out;
	}
	error = geli_random(md->salt, sizeof(md->salt));
	if (error == 0)
		error = geli_random_key(md->mkeys, sizeof(md->mkeys));
	if (error != 0) {
		req_error("Cannot get random bytes: %s.", strerror(-error));
		goto out;
	}
	if (keysrc_ukey(ks, md, ukey) != 0)
		goto out;
	/* Slot 0 holds the first 128 random bytes as the Master Key. */
	error = geli_mkey_encrypt(md->ealgo, md->keylen, ukey, md->mkeys,
	    md->mkeys);
	if (error != 0) {
		req_error("Cannot encrypt Master Key: %s.", strerror(-error));
		goto out;
	}

	/*
	 * The backup is the record about to be stored, written first: if it
	 * cannot be made, the provider is left untouched.
	 */
	backfile = backup_name(opt_str(o, 'B'), prov, nargs);
	if (backfile == NULL) {
		req_error("Cannot allocate memory.");
		goto out;
	}
	if (strcmp(backfile, "none") != 0) {
		struct msg_args a = { .prov = prov, .file = backfile };
		enum geli_step step;

		error = geli_backup_metadata(md, psize, backfile, &step);
		if (error != 0) {
			req_msg(OP_BACKUP, step, error, &a);
			goto out;
		}
		backed_up = true;
	}
	error = geli_provider_write_metadata(p, md);
	if (error < 0) {
		req_error("Cannot store metadata on %s: %s.", prov,
		    strerror(-error));
		if (backed_up)
			unlink(backfile);
		goto out;
	}
	if (verbose)
		printf("Metadata value stored on %s.\n", prov);
	if (backed_up)
		backup_notice(prov, backfile);
out:
	free(backfile);
	geli_secure_free(ukey);
	geli_provider_close(p);
}

void
cmd_init(struct opts *o, int argc, char **argv)
{
	struct geli_metadata md;
	struct keysrc *ks;
	bool failed = false;

	if (argc <= 0) {
		req_error("Too few arguments.");
		return;
	}
	if (init_template(o, &md) != 0)
		return;
	if (keysrc_new(o, true, &ks) != 0)
		return;
	for (int i = 0; i < argc; i++) {
		init_one(o, ks, &md, argv[i], argc);
		if (req_failed()) {
			/* This provider's error now; the summary at the end. */
			req_flush_as_warning();
			failed = true;
		}
		geli_wipe(md.salt, sizeof(md.salt));
		geli_wipe(md.mkeys, sizeof(md.mkeys));
	}
	keysrc_free(ks);
	geli_wipe(&md, sizeof(md));
	if (failed)
		req_error("There was an error with at least one provider.");
}
