/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * FreeBSD's messages for the codes of libgeli's administration functions,
 * in one table.  Where geli(8) (the userland, for detached providers) and
 * the GEOM_ELI kernel class (for attached ones) word a failure
 * differently, the table keeps both: the command line asks for the
 * userland's words, the attach daemon for the kernel's.
 */
#ifndef GELI_MSG_H
#define GELI_MSG_H

#include <stdbool.h>
#include <stddef.h>

#include "geli.h"

/* What was being done. */
enum msg_op {
	OP_READ,	/* reading a provider's or backup's metadata */
	OP_SETKEY, OP_DELKEY, OP_CONFIGURE, OP_KILL, OP_RESIZE, OP_BACKUP,
	OP_RESTORE, OP_CLEAR, OP_SUSPEND, OP_RESUME, OP_DETACH,
	OP_ATTACH,	/* attach's unlock: refusals, wrong key (§9.2) */
	OP_SEARCH,	/* geli search's scan of a device */
	OP_ANY		/* table rows only: any operation */
};

/* Failures of an attached provider's state, beside libgeli's codes. */
enum msg_code {
	MSG_ERDONLY = 1100,	/* attached read-only */
	MSG_EONETIME,		/* attached with a one-time key */
	MSG_ESUSPENDED,		/* suspended */
	MSG_ENOTSUSPENDED,	/* resume of a device that is not suspended */
	MSG_EALREADY,		/* suspend of a suspended device */
	MSG_ECONVERTING,	/* an online conversion is under way */
	MSG_ECONVERTED,		/* converted online: the record changed */
};

/* The words that fill a message's blanks. */
struct msg_args {
	const char *prov;	/* the provider (or file) as named */
	const char *name;	/* the attached name, without .eli */
	const char *file;	/* the other file (a backup) */
	int keyno;
	unsigned version;	/* a metadata version found too new */
};

/*
 * The message for code (negative, as returned) from op at step, in the
 * kernel's words when kernel, into buf.
 */
const char *msg_format(char *buf, size_t len, enum msg_op op,
    enum geli_step step, int code, bool kernel, const struct msg_args *a);

/* What a conversion of this kind (enum geli_reenc_kind) does, in words: "a
 * new Master Key", "encryption", "decryption"; "" for another value. */
const char *msg_reenc_kind(unsigned kind);

#endif
