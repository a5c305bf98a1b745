/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * nbdkit-geli-filter: a GELI provider served decrypted.  The plugin below
 * holds the provider (metadata in its last sector); clients see the .eli.
 *
 * One volume for the whole server, opened in .after_fork through a shared
 * context into the plugin (nbdkit_next_context_open): the keys are derived
 * once, not per connection, every connection shares the volume's range
 * locks (two clients writing parts of one GELI sector cannot lose either
 * part) and its worker pool, and a flush on one connection flushes what all
 * of them wrote (multi-conn).  The .open of a connection opens nothing
 * below: every call goes to the shared context.
 */
#define NBDKIT_API_VERSION 2
#include <nbdkit-filter.h>

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter.h"
#include "geli.h"
#include "keyfiles.h"
#include "msg.h"

/* ---- Parameters (.config): nothing but names and counts before the fork - */

static char *password;		/* secure memory; NULL: none given */
static char **keyfiles;
static size_t nkeyfiles;
static int keyno = -1;		/* -1: every slot in turn */
bool readonly;
static unsigned workers = 1;	/* the volume's threads, the caller included */
static uint32_t psize;		/* the provider's sector size; 0: ask */
static char *provname;		/* the plugin's file=, for messages */
static int thread_model = NBDKIT_THREAD_MODEL_PARALLEL;

/* ---- The served volume (.after_fork to .cleanup) ----------------------- */

nbdkit_next *below;	/* the shared context into the plugin */
struct geli_volume *vol;

const char *
prov(void)
{
	return provname != NULL ? provname : "the export";
}

/* The message of the geli command for code (negative) at op. */
static void
geli_msg(enum msg_op op, int code)
{
	struct msg_args a = { .prov = prov(), .keyno = keyno };
	char buf[512];

	nbdkit_error("%s", msg_format(buf, sizeof(buf), op, GELI_STEP_NONE,
	    code, false, &a));
}

static int
set_password(const char *value)
{
	char *pw = NULL;
	size_t len;

	if (password != NULL) {
		nbdkit_error("password given twice");
		return -1;
	}
	if (nbdkit_read_password(value, &pw) == -1)
		return -1;
	len = strlen(pw);
	/* nbdkit may fork its server after .config: the copy must survive. */
	password = geli_secure_alloc_inherited(len + 1);
	if (password != NULL)
		memcpy(password, pw, len + 1);
	geli_wipe(pw, len);
	free(pw);
	if (password == NULL) {
		nbdkit_error("Cannot allocate memory.");
		return -1;
	}
	return 0;
}

static int
geli_config(nbdkit_next_config *next, nbdkit_backend *nxdata,
    const char *key, const char *value)
{
	int64_t n;
	int r;

	if (strcmp(key, "password") == 0)
		return set_password(value);
	if (strcmp(key, "keyfile") == 0) {
		char **k = realloc(keyfiles, (nkeyfiles + 1) * sizeof(*k));

		if (k == NULL || (k[nkeyfiles] = strdup(value)) == NULL) {
			if (k != NULL)
				keyfiles = k;
			nbdkit_error("Cannot allocate memory.");
			return -1;
		}
		keyfiles = k;
		nkeyfiles++;
		return 0;
	}
	if (strcmp(key, "keyno") == 0) {
		if (nbdkit_parse_int("keyno", value, &r) == -1)
			return -1;
		if (r < 0 || r >= GELI_MAXMKEYS) {
			nbdkit_error("Invalid 'keyno' argument.");
			return -1;
		}
		keyno = r;
		return 0;
	}
	if (strcmp(key, "readonly") == 0) {
		if ((r = nbdkit_parse_bool(value)) == -1)
			return -1;
		readonly = r;
		return 0;
	}
	if (strcmp(key, "workers") == 0) {
		unsigned u;

		if (nbdkit_parse_unsigned("workers", value, &u) == -1)
			return -1;
		if (u < 1 || u > 64) {
			nbdkit_error("workers must be 1 to 64");
			return -1;
		}
		workers = u;
		return 0;
	}
	if (strcmp(key, "psize") == 0) {
		n = nbdkit_parse_size(value);
		if (n == -1)
			return -1;
		if (n < 512 || n > 65536 || (n & (n - 1)) != 0) {
			nbdkit_error("psize must be a power of two from 512 "
			    "to 65536");
			return -1;
		}
		psize = (uint32_t)n;
		return 0;
	}
	/* The plugin's file (the file plugin), named as given in messages,
	 * as geli names a provider. */
	if (strcmp(key, "file") == 0) {
		free(provname);
		provname = strdup(value);
	}
	return next(nxdata, key, value);
}

static int
geli_get_ready(int model)
{
	thread_model = model;
	return 0;
}

/* ---- Keys --------------------------------------------------------------- */

/*
 * The Master Key of md on p into mkey (geli_unlock), from the keyfiles and
 * the passphrase: a volume made without a passphrase (iterations -1) takes
 * none.
 */
static int
master_key(struct geli_provider *p, const struct geli_metadata *md,
    uint8_t *mkey)
{
	struct geli_ukey_ctx *ctx = NULL;
	char msg[4200];
	bool pass = md->iterations != -1;
	int error, used;

	if (pass && password == NULL) {
		nbdkit_error("%s needs a passphrase: give password=...",
		    prov());
		return -1;
	}
	if (geli_ukey_new(&ctx) != 0) {
		nbdkit_error("Cannot allocate memory.");
		return -1;
	}
	if (keyfiles_read(ctx, (const char *const *)keyfiles, nkeyfiles, msg,
	    sizeof(msg)) != 0) {
		nbdkit_error("%s", msg);
		geli_ukey_free(ctx);
		return -1;
	}
	struct geli_keymat km = { .keyfiles = ctx,
	    .nkeyfiles = (unsigned)nkeyfiles,
	    .passphrase = pass ? password : NULL,
	    .passlen = pass ? strlen(password) : 0 };
	error = geli_unlock(p, md, &km, keyno, 0, mkey, &used);
	geli_ukey_free(ctx);
	if (error == -GELI_ENOKEYMAT)
		nbdkit_error("%s has no passphrase: give keyfile=...", prov());
	else if (error != 0)
		geli_msg(OP_ATTACH, error);
	else
		nbdkit_debug("geli: %s opened with key %d", prov(), used);
	return error == 0 ? 0 : -1;
}

/* ---- The volume --------------------------------------------------------- */

static uint32_t
provider_sectorsize(void)
{
	uint32_t min = 0, pref = 0, max = 0;

	if (psize != 0)
		return psize;
	/* A plugin that names a minimum block size has sectors of it. */
	if (below->block_size(below, &min, &pref, &max) == 0 &&
	    min >= 512 && min <= 65536 && (min & (min - 1)) == 0)
		return min;
	return 512;
}

static int
open_volume(void)
{
	struct geli_provider *p = NULL;
	struct geli_metadata md;
	uint8_t *mkey = NULL;
	int64_t size;
	bool rw;
	int error = -1, r;

	size = below->get_size(below);
	if (size == -1)
		return -1;
	rw = !readonly && below->can_write(below) == 1;
	r = geli_provider_open_ops(rw ? &below_rw : &below_ro, below,
	    (uint64_t)size, provider_sectorsize(), &p);
	if (r != 0) {
		nbdkit_error("Cannot open %s: %s.", prov(), strerror(-r));
		return -1;
	}
	r = geli_provider_read_metadata(p, &md);
	if (r != 0) {
		struct msg_args a = { .prov = prov(), .version = md.version };
		char buf[512];

		nbdkit_error("%s", msg_format(buf, sizeof(buf), OP_READ,
		    GELI_STEP_NONE, r, false, &a));
		goto out;
	}
	/* attach's refusals, before any work with keys (§9.2, §8.2). */
	r = geli_unlock_check(p, &md, keyno, 0);
	if (r != 0) {
		geli_msg(OP_ATTACH, r);
		goto out;
	}
	mkey = geli_secure_alloc(GELI_MKEY_DATALEN);
	if (mkey == NULL) {
		nbdkit_error("Cannot allocate memory.");
		goto out;
	}
	if (master_key(p, &md, mkey) != 0)
		goto out;
	r = geli_volume_open(p, &md, mkey, rw ? 0 : GELI_VOLUME_READONLY,
	    serial ? 1 : workers, &vol);
	p = NULL;	/* the volume's now, or closed */
	if (r != 0) {
		nbdkit_error("Cannot attach %s: %s.", prov(), strerror(-r));
		goto out;
	}
	nbdkit_debug("geli: %s: %s %u bits, sector size %u, %" PRIu64
	    " bytes%s, %s", prov(), geli_algo_name(md.ealgo), md.keylen,
	    md.sectorsize, geli_volume_size(vol), rw ? "" : ", read-only",
	    geli_crypto_version());
	error = 0;
out:
	geli_secure_free(mkey);
	geli_wipe(&md, sizeof(md));
	geli_provider_close(p);
	return error;
}

/*
 * After nbdkit has forked: the threads of the volume's pool must be made
 * here, and so must the locked pages (locks do not survive a fork).
 */
static int
geli_after_fork(nbdkit_backend *backend)
{
	int error;

	if (geli_protect_dumps() != 0)
		nbdkit_debug("geli: core dumps could not be disabled: %m");
	if (password != NULL) {
		size_t len = strlen(password);
		char *p = geli_secure_alloc(len + 1);

		if (p == NULL) {
			nbdkit_error("Cannot allocate memory.");
			return -1;
		}
		memcpy(p, password, len + 1);
		geli_secure_free(password);
		password = p;
	}
	serial = thread_model != NBDKIT_THREAD_MODEL_PARALLEL;
	below = nbdkit_next_context_open(backend, readonly, "", 1);
	if (below == NULL)
		return -1;
	if (below->prepare(below) == -1)
		return -1;
	error = open_volume();
	/* The keys are in the volume: the passphrase is needed no more. */
	geli_secure_free(password);
	password = NULL;
	return error;
}

static void
geli_cleanup(nbdkit_backend *backend)
{
	(void)backend;
	geli_volume_close(vol);
	vol = NULL;
	if (below != NULL) {
		(void)below->finalize(below);
		nbdkit_next_context_close(below);
		below = NULL;
	}
}

static void
geli_unload(void)
{
	geli_secure_free(password);
	password = NULL;
	for (size_t i = 0; i < nkeyfiles; i++)
		free(keyfiles[i]);
	free(keyfiles);
	free(provname);
}

static int
geli_thread_model(void)
{
	return NBDKIT_THREAD_MODEL_PARALLEL;
}

static struct nbdkit_filter filter = {
	.name = "geli",
	.longname = "nbdkit GELI filter",
	.description = "FreeBSD GELI volumes, decrypted",
	.unload = geli_unload,
	.config = geli_config,
	.config_help =
	    "password=<SECRET>|-|+FILE|-FD  Passphrase (if the volume has one).\n"
	    "keyfile=FILE                   Keyfile (repeatable, in order).\n"
	    "keyno=0|1                      Only this key slot.\n"
	    "readonly=true                  Refuse writes.\n"
	    "psize=N                        Provider sector size (512).\n"
	    "workers=N                      Threads per request (1).",
	.thread_model = geli_thread_model,
	.get_ready = geli_get_ready,
	.after_fork = geli_after_fork,
	.cleanup = geli_cleanup,
	.open = geli_open,
	.get_size = geli_get_size,
	.export_description = geli_export_description,
	.block_size = geli_block_size,
	.can_write = geli_can_write,
	.can_flush = geli_can_flush,
	.is_rotational = geli_is_rotational,
	.can_trim = geli_can_trim,
	.can_zero = geli_can_zero,
	.can_fast_zero = geli_can_fast_zero,
	.can_extents = geli_can_extents,
	.can_fua = geli_can_fua,
	.can_multi_conn = geli_can_multi_conn,
	.can_cache = geli_can_cache,
	.pread = geli_pread,
	.pwrite = geli_pwrite,
	.flush = geli_flush,
	.trim = geli_trim,
	.zero = geli_zero,
};

NBDKIT_REGISTER_FILTER(filter)
