/* SPDX-License-Identifier: BSD-2-Clause */
/* FreeBSD's messages for libgeli's codes (see msg.h). */
#include <stdio.h>
#include <string.h>

#include "msg.h"

#define ANY_STEP (-1)
#define ANY_CODE 0	/* any code no earlier row of the operation took */

struct row {
	enum msg_op op;
	int step;		/* enum geli_step or ANY_STEP */
	int code;		/* negative code or ANY_CODE */
	const char *user;	/* geli(8)'s words */
	const char *kernel;	/* GEOM_ELI's words; NULL: the same */
};

/*
 * Rows are looked up by find(), below.  Blanks:
 * {prov} {name} {file} {keyno} {version} {maxversion}, {err} (the code's
 * text) and {errno} (its number, as the kernel prints "error=%d").
 */
static const struct row rows[] = {
	/* Reading metadata (§9.7). */
	{ OP_READ, GELI_STEP_OPEN, ANY_CODE, "Cannot open {prov}: {err}.", NULL },
	{ OP_READ, ANY_STEP, -GELI_EINPROGRESS,
	  "Provider {prov} is being converted: run 'geli reencrypt {prov}' "
	  "to finish.", NULL },
	{ OP_READ, ANY_STEP, -EOPNOTSUPP,
	  "Provider's {prov} metadata version {version} is too new.\n"
	  "geli: The highest supported version is {maxversion}.", NULL },
	{ OP_READ, ANY_STEP, -EBADMSG,
	  "Inconsistent provider's {prov} metadata.", NULL },
	{ OP_READ, ANY_STEP, -EINVAL,
	  "Inconsistent provider's {prov} metadata.", NULL },
	{ OP_READ, ANY_STEP, ANY_CODE, "Cannot read metadata from {prov}: {err}.",
	  "Cannot read metadata from {prov}." },

	/* setkey (§9.6). */
	{ OP_SETKEY, ANY_STEP, -GELI_EITERATIONS,
	  "Invalid number of iterations.", NULL },
	{ OP_SETKEY, ANY_STEP, -GELI_EITERMULTI, "To be able to use '-i' option, "
	  "only one key can be defined.", NULL },
	{ OP_SETKEY, ANY_STEP, -GELI_EITERSLOT, "Only already defined key can be "
	  "changed when '-i' option is used.", NULL },
	{ OP_SETKEY, ANY_STEP, -MSG_ERDONLY,
	  "Cannot change keys for read-only provider.", NULL },
	{ OP_SETKEY, ANY_STEP, -GELI_ECRYPTO, "Cannot encrypt Master Key: {err}.",
	  "Cannot store metadata on {prov} (error={errno})." },
	/* Detached, reading is decrypting the old key too. */
	{ OP_SETKEY, GELI_STEP_READ, ANY_CODE,
	  "Cannot decrypt Master Key: {err}.",
	  "Cannot read metadata from {prov}." },

	/*
	 * Metadata no key can open (geli_metadata_check): the slot cipher
	 * of the userland's g_eli_mkey_decrypt_any fails with EINVAL.
	 */
	{ OP_SETKEY, ANY_STEP, -GELI_EEALGO,
	  "Cannot decrypt Master Key: Invalid argument.", NULL },
	{ OP_SETKEY, ANY_STEP, -GELI_EKEYLEN,
	  "Cannot decrypt Master Key: Invalid argument.", NULL },

	/* delkey (§9.8). */
	{ OP_DELKEY, ANY_STEP, -GELI_EKEYNOREQ,
	  "Key number has to be specified.", NULL },
	{ OP_DELKEY, ANY_STEP, -GELI_EKEYNOTSET,
	  "Master Key {keyno} is not set.", NULL },
	{ OP_DELKEY, ANY_STEP, -GELI_ELASTKEY,
	  "This is the last Master Key. Use '-f' option if you really want to "
	  "remove it.",
	  "This is the last Master Key. Use '-f' flag if you really want to "
	  "remove it." },
	{ OP_DELKEY, ANY_STEP, -MSG_ERDONLY,
	  "Cannot delete keys for read-only provider.", NULL },
	{ OP_DELKEY, ANY_STEP, -GELI_ERANDOM, "Cannot get random bytes.",
	  "Cannot store metadata on {prov} (error={errno})." },

	/* configure (§9.5). */
	{ OP_CONFIGURE, ANY_STEP, -MSG_ERDONLY, "Cannot change configuration "
	  "of read-only provider {prov}.", NULL },
	{ OP_CONFIGURE, GELI_STEP_READ, ANY_CODE, "Cannot read metadata from "
	  "{prov}: {err}.", "Cannot read metadata from {prov}." },
	{ OP_CONFIGURE, ANY_STEP, ANY_CODE, "Cannot write metadata to {prov}: "
	  "{err}.", "Cannot store metadata on {prov}." },

	/* kill (§9.9). */
	{ OP_KILL, GELI_STEP_OPEN, ANY_CODE,
	  "Cannot open provider {prov}: {err}.", NULL },
	{ OP_KILL, ANY_STEP, -GELI_ETOOSMALL, "Cannot obtain media size or "
	  "sector size for provider {prov}: Invalid argument.", NULL },
	{ OP_KILL, ANY_STEP, ANY_CODE,
	  "Cannot trash metadata on provider {prov}: {err}.",
	  "Cannot kill {name}: {err}." },

	/* resize (§8.5) and the kernel's AUTORESIZE (§8.4). */
	{ OP_RESIZE, GELI_STEP_OPEN, ANY_CODE, "Cannot open {prov}: {err}.", NULL },
	{ OP_RESIZE, ANY_STEP, -GELI_EOLDSIZE,
	  "Invalid oldsize: Out of range.", NULL },
	{ OP_RESIZE, ANY_STEP, -GELI_ESIZE, "Provider size mismatch at oldsize.",
	  "{name}.eli: Provider size mismatch at oldsize." },
	{ OP_RESIZE, GELI_STEP_READ, -EOPNOTSUPP,
	  "Provider's {prov} metadata version {version} is too new.\n"
	  "geli: The highest supported version is {maxversion}.",
	  "{name}.eli: Cannot read metadata from {prov} (error={errno})." },
	{ OP_RESIZE, GELI_STEP_READ, -GELI_ENOMAGIC,
	  "Inconsistent provider's {prov} metadata.",
	  "{name}.eli: Cannot read metadata from {prov} (error={errno})." },
	{ OP_RESIZE, GELI_STEP_READ, -EBADMSG,
	  "Inconsistent provider's {prov} metadata.",
	  "{name}.eli: Cannot read metadata from {prov} (error={errno})." },
	{ OP_RESIZE, GELI_STEP_READ, ANY_CODE, "Cannot read old metadata: {err}.",
	  "{name}.eli: Cannot read metadata from {prov} (error={errno})." },
	{ OP_RESIZE, GELI_STEP_TRASH, ANY_CODE,
	  "Cannot trash metadata on provider {prov}: {err}.",
	  "{name}.eli: Cannot trash metadata on {prov} (error={errno})." },
	{ OP_RESIZE, ANY_STEP, ANY_CODE, "Cannot write metadata to {prov}: {err}.",
	  "{name}.eli: Cannot store metadata on {prov} (error={errno})." },

	/* backup, restore (§9.10), clear (§9.14). */
	{ OP_BACKUP, GELI_STEP_NONE, ANY_CODE,
	  "Cannot get informations about {prov}: {err}.", NULL },
	{ OP_BACKUP, GELI_STEP_READ, ANY_CODE,
	  "Unable to read metadata from {prov}: {err}.", NULL },
	{ OP_BACKUP, GELI_STEP_OPEN, ANY_CODE, "Unable to open {file}: {err}.",
	  NULL },
	{ OP_BACKUP, ANY_STEP, ANY_CODE, "Unable to write to {file}: {err}.", NULL },
	{ OP_RESTORE, ANY_STEP, -GELI_ESIZE,
	  "Provider size mismatch: wrong backup file?", NULL },
	{ OP_RESTORE, GELI_STEP_NONE, ANY_CODE,
	  "Cannot get informations about {prov}: {err}.", NULL },
	{ OP_RESTORE, ANY_STEP, ANY_CODE, "Cannot write metadata to {prov}: {err}.",
	  NULL },
	{ OP_CLEAR, ANY_STEP, ANY_CODE, "Cannot clear metadata on {prov}: {err}.",
	  NULL },

	/* geli search: reading the device it scans (not FreeBSD's: no such verb). */
	{ OP_SEARCH, GELI_STEP_OPEN, ANY_CODE, "Cannot open {prov}: {err}.", NULL },
	{ OP_SEARCH, ANY_STEP, ANY_CODE, "Cannot read {prov}: {err}.", NULL },

	/* The runtime verbs of an attached provider (§9.3, §9.11). */
	{ OP_SUSPEND, ANY_STEP, -MSG_EONETIME, "Device {name}.eli is using "
	  "one-time key, suspend not supported.", NULL },
	{ OP_SUSPEND, ANY_STEP, -MSG_EALREADY,
	  "Device {name}.eli already suspended.", NULL },
	{ OP_RESUME, ANY_STEP, -MSG_ENOTSUSPENDED,
	  "Device {name}.eli is not suspended.", NULL },
	{ OP_RESUME, GELI_STEP_READ, ANY_CODE, "Cannot read metadata from "
	  "{prov}: {err}.", "Cannot read metadata from {prov}." },
	{ OP_RESUME, ANY_STEP, -GELI_EWRONGKEY, "Wrong key for {prov}.", NULL },
	{ OP_RESUME, ANY_STEP, ANY_CODE, "Cannot resume {name}.eli: {err}.", NULL },
	/* The kernel's slot decryption fails as the userland's does. */
	{ OP_RESUME, ANY_STEP, -GELI_EEALGO,
	  "Cannot decrypt Master Key for {prov} (error={errno}).", NULL },
	{ OP_RESUME, ANY_STEP, -GELI_EKEYLEN,
	  "Cannot decrypt Master Key for {prov} (error={errno}).", NULL },
	{ OP_DETACH, ANY_STEP, ANY_CODE,
	  "Cannot destroy device {name}.eli (error={errno}).", NULL },

	/*
	 * attach (§9.2): the kernel's eli_metadata_crypto_supported, then its
	 * slot decryption (g_eli_ctl_attach); FreeBSD has no check of the
	 * sector size at attach, these are init's and onetime's words.
	 */
	{ OP_ATTACH, ANY_STEP, -GELI_EEALGO,
	  "Invalid or unsupported algorithms.", NULL },
	{ OP_ATTACH, ANY_STEP, -GELI_EAALGO,
	  "Invalid or unsupported algorithms.", NULL },
	{ OP_ATTACH, ANY_STEP, -GELI_EKEYLEN,
	  "Cannot decrypt Master Key for {prov} (error={errno}).", NULL },
	{ OP_ATTACH, ANY_STEP, -GELI_ESECTORSIZE, "Invalid sector size.", NULL },
	{ OP_ATTACH, ANY_STEP, -GELI_ENOROOM, "Provider {prov} is too small.",
	  NULL },
	/* Whatever else geli_unlock met on its way to the Master Key. */
	{ OP_ATTACH, ANY_STEP, ANY_CODE,
	  "Cannot decrypt Master Key for {prov} (error={errno}).", NULL },

	/* Any operation. */
	{ OP_ANY, ANY_STEP, -GELI_EWRONGKEY, "Wrong key for {prov}.", NULL },
	{ OP_ANY, ANY_STEP, -GELI_ENOKEYS, "No valid keys on {prov}.", NULL },
	{ OP_ANY, ANY_STEP, -GELI_ESIZE, "Provider size mismatch.", NULL },
	/* geli_unlock's refusals of key material (§4.2). */
	{ OP_ANY, ANY_STEP, -GELI_ENOKEYMAT, "No key components given.", NULL },
	{ OP_ANY, ANY_STEP, -GELI_ENOPASSPHRASE, "Missing -p flag.", NULL },
	{ OP_ANY, ANY_STEP, -GELI_EKEYNO, "Invalid 'keyno' argument.", NULL },
	{ OP_ANY, ANY_STEP, -MSG_EONETIME,
	  "Provider {name}.eli uses a one-time key.", NULL },
	{ OP_ANY, ANY_STEP, -MSG_ESUSPENDED,
	  "Device {name}.eli is suspended.", NULL },
	/* Online conversions (geli reencrypt; not FreeBSD's). */
	{ OP_ANY, ANY_STEP, -MSG_ECONVERTING, "Provider {prov} is being "
	  "converted: let 'geli reencrypt' finish, or detach it, first.", NULL },
	{ OP_ANY, ANY_STEP, -MSG_ECONVERTED, "Provider {prov} was converted: "
	  "detach it and attach it again first.", NULL },
	{ OP_ANY, GELI_STEP_READ, ANY_CODE,
	  "Cannot read metadata from {prov}: {err}.",
	  "Cannot read metadata from {prov}." },
	{ OP_ANY, ANY_STEP, ANY_CODE, "Cannot write metadata to {prov}: {err}.",
	  "Cannot store metadata on {prov} (error={errno})." },
};

static const char *
code_text(int code)
{
	/* FreeBSD's g_metadata_read says EINVAL where we know "no magic". */
	if (code == -GELI_ENOMAGIC)
		return strerror(EINVAL);
	if (code <= -MSG_ERDONLY)
		return "Invalid request";
	return geli_strerror(code);
}

static int
code_errno(int code)
{
	return -code < GELI_ENOMAGIC ? -code : EINVAL;
}

/* A code of the operation's own, then one any operation has, then the
 * operation's catch-all, then the last resort. */
static const struct row *
find(enum msg_op op, enum geli_step step, int code)
{
	static const struct { bool own, exact; } order[] = {
		{ true, true }, { false, true }, { true, false }, { false, false },
	};

	for (size_t k = 0; k < sizeof(order) / sizeof(order[0]); k++) {
		enum msg_op want = order[k].own ? op : OP_ANY;

		for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
			const struct row *r = &rows[i];

			if (r->op == want &&
			    (r->step == ANY_STEP || r->step == (int)step) &&
			    r->code == (order[k].exact ? code : ANY_CODE))
				return r;
		}
	}
	return &rows[sizeof(rows) / sizeof(rows[0]) - 1];
}

const char *
msg_format(char *buf, size_t len, enum msg_op op, enum geli_step step,
    int code, bool kernel, const struct msg_args *a)
{
	const struct row *r = find(op, step, code);
	const char *t = kernel && r->kernel != NULL ? r->kernel : r->user;
	static const struct msg_args none;
	size_t n = 0;

	if (a == NULL)
		a = &none;
	while (*t != '\0' && n + 1 < len) {
		const char *end = *t == '{' ? strchr(t, '}') : NULL;
		char word[32], val[64];
		const char *v = NULL;

		if (end == NULL || end - t > (int)sizeof(word)) {
			buf[n++] = *t++;
			continue;
		}
		snprintf(word, sizeof(word), "%.*s", (int)(end - t - 1), t + 1);
		if (strcmp(word, "prov") == 0)
			v = a->prov;
		else if (strcmp(word, "name") == 0)
			v = a->name;
		else if (strcmp(word, "file") == 0)
			v = a->file;
		else if (strcmp(word, "err") == 0)
			v = code_text(code);
		else if (strcmp(word, "keyno") == 0)
			v = (snprintf(val, sizeof(val), "%d", a->keyno), val);
		else if (strcmp(word, "errno") == 0)
			v = (snprintf(val, sizeof(val), "%d", code_errno(code)),
			    val);
		else if (strcmp(word, "version") == 0)
			v = (snprintf(val, sizeof(val), "%u", a->version), val);
		else if (strcmp(word, "maxversion") == 0)
			v = (snprintf(val, sizeof(val), "%u", GELI_VERSION),
			    val);
		n += (size_t)snprintf(buf + n, len - n, "%s", v != NULL ? v : "");
		if (n >= len)
			n = len - 1;
		t = end + 1;
	}
	buf[n] = '\0';
	return buf;
}

const char *
msg_reenc_kind(unsigned kind)
{
	static const char *const words[] = {
		[GELI_REENC_REKEY] = "a new Master Key",
		[GELI_REENC_ENCRYPT] = "encryption",
		[GELI_REENC_DECRYPT] = "decryption",
		[GELI_REENC_LUKS2] = "conversion to LUKS2",
	};

	return kind < sizeof(words) / sizeof(words[0]) && words[kind] != NULL ?
	    words[kind] : "";
}
