/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The metadata-changing verbs (§9): setkey, delkey, configure, kill,
 * resize, backup, restore, clear.  Each rule lives here once; geli's
 * command line (detached providers) and the attach daemon (attached ones)
 * call these and only turn the codes into FreeBSD's messages.  Where
 * FreeBSD's kernel and userland do a thing differently, GELI_ADMIN_KERNEL
 * picks the kernel's way.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "geli.h"
#include "mdstore.h"

static const char *const errtext[GELI_ELAST - GELI_ENOMAGIC] = {
	[GELI_ENOMAGIC - GELI_ENOMAGIC] = "No GELI metadata",
	[GELI_ETOOSMALL - GELI_ENOMAGIC] = "Provider smaller than one sector",
	[GELI_ESHORT - GELI_ENOMAGIC] = "File too short",
	[GELI_ENOKEYS - GELI_ENOMAGIC] = "No valid keys",
	[GELI_EKEYNO - GELI_ENOMAGIC] = "Invalid key number",
	[GELI_EKEYNOREQ - GELI_ENOMAGIC] = "Key number required",
	[GELI_EKEYNOTSET - GELI_ENOMAGIC] = "Master Key not set",
	[GELI_ELASTKEY - GELI_ENOMAGIC] = "Last Master Key",
	[GELI_EITERATIONS - GELI_ENOMAGIC] = "Invalid number of iterations",
	[GELI_EITERMULTI - GELI_ENOMAGIC] = "Iterations shared by two keys",
	[GELI_EITERSLOT - GELI_ENOMAGIC] = "Iterations of another key",
	[GELI_ESIZE - GELI_ENOMAGIC] = "Provider size mismatch",
	[GELI_EOLDSIZE - GELI_ENOMAGIC] = "Old size out of range",
	[GELI_EFLAGS - GELI_ENOMAGIC] = "Not a configurable flag",
	[GELI_ERANDOM - GELI_ENOMAGIC] = "Random source failed",
	[GELI_ECRYPTO - GELI_ENOMAGIC] = "Crypto library failed",
	[GELI_EEALGO - GELI_ENOMAGIC] = "Unknown or unsupported encryption "
	    "algorithm",
	[GELI_EKEYLEN - GELI_ENOMAGIC] = "Invalid key length",
	[GELI_EAALGO - GELI_ENOMAGIC] = "Unknown or unsupported "
	    "authentication algorithm",
	[GELI_ESECTORSIZE - GELI_ENOMAGIC] = "Invalid sector size",
	[GELI_ENOROOM - GELI_ENOMAGIC] = "Provider too small for one sector",
	[GELI_ENOKEYMAT - GELI_ENOMAGIC] = "No key components given",
	[GELI_ENOPASSPHRASE - GELI_ENOMAGIC] = "No passphrase on this provider",
	[GELI_EINPROGRESS - GELI_ENOMAGIC] = "Conversion in progress",
	[GELI_EJOURNAL - GELI_ENOMAGIC] = "Not the journal of this provider",
	[GELI_EJOURNALAUTH - GELI_ENOMAGIC] = "Journal fails authentication",
	[GELI_EJOURNALEXISTS - GELI_ENOMAGIC] = "Journal file exists",
};
/* test_admin checks that every code has a text of its own. */

const char *
geli_strerror(int code)
{
	if (code < 0)
		code = -code;
	if (code >= GELI_ENOMAGIC && code < GELI_ELAST &&
	    errtext[code - GELI_ENOMAGIC] != NULL)
		return errtext[code - GELI_ENOMAGIC];
	return strerror(code);
}

/* ---- Keys --------------------------------------------------------------- */

int
geli_setkey_check(const struct geli_metadata *md, int keyno,
    int64_t iterations, int32_t *newcount)
{
	if (keyno < 0 || keyno >= GELI_MAXMKEYS)
		return -GELI_EKEYNO;
	if (iterations < -1 || iterations > INT32_MAX)
		return -GELI_EITERATIONS;
	/* Salt and count are shared by both slots (§4.5): a count may change
	 * only when the key being replaced is the only one. */
	if (iterations != -1 && md->iterations != -1 &&
	    iterations != md->iterations) {
		if (__builtin_popcount(md->keys & 0xff) != 1)
			return -GELI_EITERMULTI;
		if (md->keys != (1u << keyno))
			return -GELI_EITERSLOT;
	}
	*newcount = iterations != -1 ? (int32_t)iterations : md->iterations;
	return 0;
}

int
geli_setkey(struct geli_mdstore *s, struct geli_metadata *md, int keyno,
    int64_t iterations, const uint8_t *mkey, const uint8_t *ukey)
{
	struct geli_metadata nmd = *md;
	int error;

	error = geli_setkey_check(md, keyno, iterations, &nmd.iterations);
	if (error != 0)
		return error;
	if (geli_mkey_encrypt(nmd.ealgo, nmd.keylen, ukey, mkey,
	    nmd.mkeys + keyno * GELI_MKEYLEN) != 0) {
		geli_wipe(&nmd, sizeof(nmd));
		return -GELI_ECRYPTO;
	}
	nmd.keys |= (uint8_t)(1u << keyno);
	error = geli_mdstore_write(s, &nmd);
	if (error == 0)
		*md = nmd;
	geli_wipe(&nmd, sizeof(nmd));
	return error;
}

int
geli_delkey(struct geli_mdstore *s, struct geli_metadata *md, int keyno,
    unsigned flags)
{
	struct geli_metadata nmd = *md;
	uint8_t *slot = nmd.mkeys;
	size_t len = sizeof(nmd.mkeys);
	int error = 0;

	if (!(flags & GELI_ADMIN_ALL)) {
		if (keyno == -1)
			return -GELI_EKEYNOREQ;
		if (keyno < 0 || keyno >= GELI_MAXMKEYS)
			return -GELI_EKEYNO;
		if (!(nmd.keys & (1u << keyno)) && !(flags & GELI_ADMIN_FORCE))
			return -GELI_EKEYNOTSET;
		nmd.keys &= (uint8_t)~(1u << keyno);
		if (nmd.keys == 0 && !(flags & GELI_ADMIN_FORCE))
			return -GELI_ELASTKEY;
		slot += keyno * GELI_MKEYLEN;
		len = GELI_MKEYLEN;
	}
	/* -a keeps md_keys as it is (§5.3).  The kernel writes the metadata
	 * with the slot random GELI_OVERWRITES times, then zeroed; the
	 * userland writes it once, random. */
	for (int i = 0; error == 0; i++) {
		if ((flags & GELI_ADMIN_KERNEL) && i == GELI_OVERWRITES)
			memset(slot, 0, len);
		else if (geli_random(slot, len) != 0)
			error = -GELI_ERANDOM;
		if (error == 0)
			error = geli_mdstore_write(s, &nmd);
		if (!(flags & GELI_ADMIN_KERNEL) || i == GELI_OVERWRITES)
			break;
	}
	if (error == 0)
		*md = nmd;
	geli_wipe(&nmd, sizeof(nmd));
	return error;
}

/* ---- Flags -------------------------------------------------------------- */

int
geli_configure(struct geli_mdstore *s, struct geli_metadata *md, uint32_t set,
    uint32_t clear)
{
	uint32_t flags;
	int error;

	if ((set | clear) & ~GELI_CONFIGURABLE_FLAGS)
		return -GELI_EFLAGS;
	flags = (md->flags | set) & ~clear;
	if (flags == md->flags)
		return 0;
	md->flags = flags;
	error = geli_mdstore_write(s, md);
	return error != 0 ? error : 1;
}

/* ---- Destroying a sector ---------------------------------------------- */

/*
 * Overwrite the sector at off GELI_OVERWRITES times with random data (and
 * once more with zeros for the kernel's way), flushing after each pass.
 * Every pass is tried; the first error is returned.
 */
static int
trash(struct geli_provider *p, uint64_t off, bool zero)
{
	uint32_t P = geli_provider_sectorsize(p);
	uint8_t *sector;
	int error = 0, e;

	sector = malloc(P);
	if (sector == NULL)
		return -ENOMEM;
	for (int i = 0; i < GELI_OVERWRITES + (zero ? 1 : 0); i++) {
		if (i == GELI_OVERWRITES) {
			memset(sector, 0, P);
			e = 0;
		} else {
			e = geli_random(sector, P) != 0 ? -GELI_ERANDOM : 0;
		}
		if (e == 0)
			e = geli_provider_pwrite(p, sector, P, off);
		if (e == 0)
			e = geli_provider_flush(p);
		if (e != 0 && error == 0)
			error = e;
	}
	free(sector);
	return error;
}

int
geli_kill(struct geli_provider *p, unsigned flags)
{
	uint64_t size = geli_provider_mediasize(p);
	uint32_t P = geli_provider_sectorsize(p);

	/* As geli(8): no check that this is a GELI provider. */
	if (size <= P)
		return -GELI_ETOOSMALL;
	return trash(p, size - P, (flags & GELI_ADMIN_KERNEL) != 0);
}

/* ---- Size --------------------------------------------------------------- */

static int
failed(enum geli_step *step, enum geli_step which, int error)
{
	if (step != NULL)
		*step = which;
	return error;
}

int
geli_resize(struct geli_provider *p, uint64_t oldsize, uint64_t newsize,
    unsigned flags, enum geli_step *step)
{
	uint32_t P = geli_provider_sectorsize(p);
	struct geli_metadata md;
	int error;

	if (step != NULL)
		*step = GELI_STEP_NONE;
	if (newsize == 0)
		newsize = geli_provider_mediasize(p);
	if (oldsize > newsize)
		return -GELI_EOLDSIZE;
	if (oldsize < P)
		return failed(step, GELI_STEP_READ, -EINVAL);
	error = record_read(rec_prov(p), oldsize - P, P, &md);
	if (error == -GELI_ESHORT)
		error = -EIO;
	if (error != 0)
		return failed(step, GELI_STEP_READ, error);
	if (md.provsize != oldsize) {
		error = -GELI_ESIZE;
		goto out;
	}
	/* The metadata is valid and nothing has changed. */
	if (oldsize == newsize)
		goto out;
	md.provsize = newsize;
	error = record_write(rec_prov(p), &md, newsize - P, P);
	if (error != 0) {
		error = failed(step, GELI_STEP_WRITE, error);
		goto out;
	}
	/* Then the old copy: zeroed by the kernel, trashed by the userland. */
	if (flags & GELI_ADMIN_KERNEL) {
		uint8_t *zero = calloc(1, P);
		error = zero == NULL ? -ENOMEM :
		    geli_provider_pwrite(p, zero, P, oldsize - P);
		if (error == 0)
			error = geli_provider_flush(p);
		free(zero);
	} else {
		error = trash(p, oldsize - P, false);
	}
	if (error != 0)
		error = failed(step, GELI_STEP_TRASH, error);
out:
	geli_wipe(&md, sizeof(md));
	return error;
}

/* ---- Backup, restore, clear --------------------------------------------- */

/*
 * A new backup file, mode 0600: sector (len bytes) copied into it, or, when
 * sector is NULL, md encoded into it by the one record writer.  Fsynced;
 * removed again on failure.
 */
static int
backup_write(const char *file, const void *sector, size_t len,
    struct geli_metadata *md, enum geli_step *step)
{
	ssize_t n;
	int fd, error;

	fd = open(file, O_WRONLY | O_TRUNC | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return failed(step, GELI_STEP_OPEN, -errno);
	/* A backup opens the volume with the old keys: 0600 even when the
	 * file was there before (O_CREAT's mode is only for a new one). */
	if (fchmod(fd, 0600) != 0) {
		error = -errno;
		close(fd);
		return failed(step, GELI_STEP_OPEN, error);
	}
	if (sector == NULL) {
		error = record_write(rec_fd(fd), md, 0, len);
	} else {
		n = write(fd, sector, len);
		error = n == (ssize_t)len ? 0 : n < 0 ? -errno : -EIO;
		if (error == 0 && fsync(fd) != 0)
			error = -errno;
	}
	close(fd);
	if (error != 0) {
		unlink(file);
		return failed(step, GELI_STEP_WRITE, error);
	}
	return 0;
}

/* The last sector of p, if it holds the magic (g_metadata_read). */
static int
read_magic_sector(struct geli_provider *p, uint8_t **out)
{
	uint32_t P = geli_provider_sectorsize(p);
	uint8_t *sector;
	int error;

	sector = calloc(1, P);
	if (sector == NULL)
		return -ENOMEM;
	error = geli_provider_read_last(p, sector);
	if (error == -ENOSPC)
		error = -GELI_ETOOSMALL;
	if (error == 0 && !geli_metadata_has_magic(sector, P))
		error = -GELI_ENOMAGIC;
	if (error != 0) {
		free(sector);
		return error;
	}
	*out = sector;
	return 0;
}

int
geli_backup(struct geli_provider *p, const char *file, enum geli_step *step)
{
	uint32_t P = geli_provider_sectorsize(p);
	uint8_t *sector;
	int error;

	if (step != NULL)
		*step = GELI_STEP_NONE;
	error = read_magic_sector(p, &sector);
	if (error != 0)
		return failed(step, GELI_STEP_READ, error);
	error = backup_write(file, sector, P, NULL, step);
	geli_wipe(sector, P);
	free(sector);
	return error;
}

int
geli_backup_metadata(struct geli_metadata *md, uint32_t psize,
    const char *file, enum geli_step *step)
{
	if (step != NULL)
		*step = GELI_STEP_NONE;
	if (psize < GELI_MD_SIZE)
		return -EINVAL;
	return backup_write(file, NULL, psize, md, step);
}

int
geli_restore(struct geli_provider *p, struct geli_metadata *md, unsigned flags)
{
	uint64_t size = geli_provider_mediasize(p);
	uint32_t P = geli_provider_sectorsize(p);

	if (md->provsize != size) {
		if (!(flags & GELI_ADMIN_FORCE))
			return -GELI_ESIZE;
		md->provsize = size;
	}
	if (P < GELI_MD_SIZE || size < P)
		return -GELI_ETOOSMALL;
	return geli_provider_write_metadata(p, md);
}

int
geli_clear(struct geli_provider *p)
{
	uint32_t P = geli_provider_sectorsize(p);
	uint8_t *sector;
	int error;

	error = read_magic_sector(p, &sector);
	if (error == 0) {
		memset(sector, 0, P);
		error = geli_provider_write_last(p, sector);
		free(sector);
	}
	return error;
}
