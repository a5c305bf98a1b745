/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The message table (common/msg.c): each code of an operation reads as
 * FreeBSD's geli(8) words it, or its kernel where the two differ.
 */
#include "tap.h"

#include "msg.h"

static void
is(enum msg_op op, enum geli_step step, int code, bool kernel,
    const char *want)
{
	struct msg_args a = { .prov = "ada0", .name = "ada0", .file = "bk",
	    .keyno = 1, .version = 8 };
	char buf[1200];

	msg_format(buf, sizeof(buf), op, step, code, kernel, &a);
	tap_ok(strcmp(buf, want) == 0, "%s: %s", kernel ? "kernel" : "userland",
	    want);
	if (strcmp(buf, want) != 0)
		printf("#   got: %s\n", buf);
}

int
main(void)
{
	/* Where the two differ. */
	is(OP_DELKEY, GELI_STEP_NONE, -GELI_ELASTKEY, false, "This is the last "
	    "Master Key. Use '-f' option if you really want to remove it.");
	is(OP_DELKEY, GELI_STEP_NONE, -GELI_ELASTKEY, true, "This is the last "
	    "Master Key. Use '-f' flag if you really want to remove it.");
	is(OP_SETKEY, GELI_STEP_WRITE, -EIO, false,
	    "Cannot write metadata to ada0: Input/output error.");
	is(OP_SETKEY, GELI_STEP_WRITE, -EIO, true,
	    "Cannot store metadata on ada0 (error=5).");
	is(OP_SETKEY, GELI_STEP_READ, -EIO, true,
	    "Cannot read metadata from ada0.");
	is(OP_CONFIGURE, GELI_STEP_WRITE, -EIO, true,
	    "Cannot store metadata on ada0.");
	is(OP_KILL, GELI_STEP_TRASH, -EPERM, false,
	    "Cannot trash metadata on provider ada0: Operation not permitted.");
	is(OP_KILL, GELI_STEP_TRASH, -EPERM, true,
	    "Cannot kill ada0: Operation not permitted.");
	/* A code of the operation's own beats the generic rows. */
	is(OP_SETKEY, GELI_STEP_READ, -GELI_EWRONGKEY, false, "Wrong key for ada0.");
	is(OP_SETKEY, GELI_STEP_NONE, -GELI_EKEYNO, true,
	    "Invalid 'keyno' argument.");
	is(OP_DELKEY, GELI_STEP_NONE, -GELI_EKEYNOTSET, true,
	    "Master Key 1 is not set.");
	is(OP_DELKEY, GELI_STEP_NONE, -GELI_EKEYNOREQ, false,
	    "Key number has to be specified.");
	is(OP_SETKEY, GELI_STEP_NONE, -GELI_EITERMULTI, true, "To be able to use "
	    "'-i' option, only one key can be defined.");
	is(OP_SETKEY, GELI_STEP_NONE, -MSG_ERDONLY, true,
	    "Cannot change keys for read-only provider.");
	is(OP_SETKEY, GELI_STEP_NONE, -MSG_EONETIME, true,
	    "Provider ada0.eli uses a one-time key.");
	is(OP_SUSPEND, GELI_STEP_NONE, -MSG_EONETIME, true, "Device ada0.eli is "
	    "using one-time key, suspend not supported.");
	is(OP_DETACH, GELI_STEP_NONE, -EBUSY, true,
	    "Cannot destroy device ada0.eli (error=16).");
	/* Reading metadata (§9.7). */
	is(OP_READ, GELI_STEP_READ, -GELI_ENOMAGIC, false,
	    "Cannot read metadata from ada0: Invalid argument.");
	is(OP_READ, GELI_STEP_READ, -EBADMSG, false,
	    "Inconsistent provider's ada0 metadata.");
	is(OP_READ, GELI_STEP_READ, -EOPNOTSUPP, false, "Provider's ada0 metadata "
	    "version 8 is too new.\ngeli: The highest supported version is 7.");
	is(OP_READ, GELI_STEP_READ, -GELI_ESHORT, false,
	    "Cannot read metadata from ada0: File too short.");
	is(OP_READ, GELI_STEP_OPEN, -ENOENT, false,
	    "Cannot open ada0: No such file or directory.");
	/* resize, backup, restore, clear. */
	is(OP_RESIZE, GELI_STEP_NONE, -GELI_EOLDSIZE, false,
	    "Invalid oldsize: Out of range.");
	is(OP_RESIZE, GELI_STEP_READ, -EINVAL, false,
	    "Cannot read old metadata: Invalid argument.");
	is(OP_RESIZE, GELI_STEP_READ, -EIO, true,
	    "ada0.eli: Cannot read metadata from ada0 (error=5).");
	is(OP_RESIZE, GELI_STEP_READ, -GELI_ENOMAGIC, true,
	    "ada0.eli: Cannot read metadata from ada0 (error=22).");
	is(OP_BACKUP, GELI_STEP_OPEN, -EACCES, false,
	    "Unable to open bk: Permission denied.");
	is(OP_BACKUP, GELI_STEP_READ, -GELI_ENOMAGIC, false,
	    "Unable to read metadata from ada0: Invalid argument.");
	is(OP_RESTORE, GELI_STEP_WRITE, -GELI_ESIZE, false,
	    "Provider size mismatch: wrong backup file?");
	is(OP_RESTORE, GELI_STEP_WRITE, -GELI_ETOOSMALL, false,
	    "Cannot write metadata to ada0: Provider smaller than one sector.");
	is(OP_CLEAR, GELI_STEP_WRITE, -GELI_ENOMAGIC, false,
	    "Cannot clear metadata on ada0: Invalid argument.");
	/* Records refused before the key derivation (geli_metadata_check). */
	is(OP_ATTACH, GELI_STEP_NONE, -GELI_EEALGO, false,
	    "Invalid or unsupported algorithms.");
	is(OP_ATTACH, GELI_STEP_NONE, -GELI_EAALGO, false,
	    "Invalid or unsupported algorithms.");
	is(OP_ATTACH, GELI_STEP_NONE, -GELI_EKEYLEN, false,
	    "Cannot decrypt Master Key for ada0 (error=22).");
	is(OP_ATTACH, GELI_STEP_NONE, -GELI_ESECTORSIZE, false,
	    "Invalid sector size.");
	is(OP_ATTACH, GELI_STEP_NONE, -GELI_ENOROOM, false,
	    "Provider ada0 is too small.");
	/* geli_unlock's other failures, and its key material. */
	is(OP_ATTACH, GELI_STEP_NONE, -ENOMEM, false,
	    "Cannot decrypt Master Key for ada0 (error=12).");
	is(OP_ATTACH, GELI_STEP_NONE, -GELI_EWRONGKEY, false,
	    "Wrong key for ada0.");
	is(OP_ATTACH, GELI_STEP_NONE, -GELI_ENOKEYMAT, false,
	    "No key components given.");
	is(OP_ATTACH, GELI_STEP_NONE, -GELI_ENOPASSPHRASE, false,
	    "Missing -p flag.");
	is(OP_ATTACH, GELI_STEP_NONE, -GELI_ESIZE, false,
	    "Provider size mismatch.");
	is(OP_RESUME, GELI_STEP_NONE, -GELI_ESIZE, false,
	    "Provider size mismatch.");
	is(OP_SETKEY, GELI_STEP_READ, -GELI_EEALGO, false,
	    "Cannot decrypt Master Key: Invalid argument.");
	is(OP_SETKEY, GELI_STEP_READ, -GELI_EKEYLEN, false,
	    "Cannot decrypt Master Key: Invalid argument.");
	is(OP_RESUME, GELI_STEP_NONE, -GELI_EKEYLEN, false,
	    "Cannot decrypt Master Key for ada0 (error=22).");
	is(OP_RESUME, GELI_STEP_NONE, -GELI_ENOKEYS, false,
	    "No valid keys on ada0.");
	return tap_done();
}
