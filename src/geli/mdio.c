/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Reading metadata for the verbs, with geli(8)'s messages (§9.7): libgeli's
 * metadata store reads a provider's last sector or a backup file, and the
 * message table (msg.h) words its codes.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "msg.h"

void
req_msg(enum msg_op op, enum geli_step step, int code,
    const struct msg_args *a)
{
	char buf[1200];

	req_error("%s", msg_format(buf, sizeof(buf), op, step, code, false, a));
}

unsigned
raw_md_version(const uint8_t *rec)
{
	return (unsigned)rec[16] | (unsigned)rec[17] << 8 |
	    (unsigned)rec[18] << 16 | (unsigned)rec[19] << 24;
}

int
prov_open(const char *name, bool writable, struct geli_provider **p)
{
	char buf[4096];

	return geli_provider_open(prov_path(name, buf, sizeof(buf)), writable,
	    p);
}

#define MDSRC_MARKED	0x100	/* beside GELI_MDS_*: accept a marked record */

static int
mdsrc_open_any(struct mdsrc *src, const char *name, bool writable,
    bool to_stderr, unsigned flags, struct geli_metadata *md)
{
	struct msg_args a = { .prov = name };
	char pbuf[4096], msg[1200];
	const char *path;
	enum geli_step step;
	int error;

	memset(src, 0, sizeof(*src));
	src->name = name;
	path = prov_path(name, pbuf, sizeof(pbuf));
	flags |= writable ? GELI_MDS_WRITABLE : 0;
	/* A backup file that cannot be opened is "Cannot open"; a provider
	 * that cannot be opened, "Cannot read metadata from". */
	step = !(flags & GELI_MDS_PROVIDER) && geli_is_backup_file(path) ?
	    GELI_STEP_OPEN : GELI_STEP_READ;
	error = geli_mdstore_open(path, flags & ~MDSRC_MARKED, &src->store);
	if (error == 0) {
		step = GELI_STEP_READ;
		src->prov = geli_mdstore_provider(src->store);
		error = geli_mdstore_read(src->store, md);
	}
	if (error == 0)
		return 0;
	if (error == -GELI_EINPROGRESS && (flags & MDSRC_MARKED))
		return 1;
	a.version = md->version;
	msg_format(msg, sizeof(msg), OP_READ, step, error, false, &a);
	if (to_stderr) {
		fflush(stdout);
		fprintf(stderr, "%s\n", msg);
	} else {
		req_error("%s", msg);
	}
	mdsrc_close(src);
	return -1;
}

int
mdsrc_open(struct mdsrc *src, const char *name, bool writable,
    bool to_stderr, struct geli_metadata *md)
{
	return mdsrc_open_any(src, name, writable, to_stderr, 0, md);
}

int
mdsrc_open_marked(struct mdsrc *src, const char *name,
    struct geli_metadata *md)
{
	return mdsrc_open_any(src, name, false, true, MDSRC_MARKED, md);
}

int
mdsrc_open_provider(struct mdsrc *src, const char *name, bool writable,
    struct geli_metadata *md)
{
	return mdsrc_open_any(src, name, writable, false, GELI_MDS_PROVIDER, md);
}

int
mdsrc_open_provider_marked(struct mdsrc *src, const char *name,
    struct geli_metadata *md)
{
	return mdsrc_open_any(src, name, false, false,
	    GELI_MDS_PROVIDER | MDSRC_MARKED, md);
}

void
mdsrc_close(struct mdsrc *src)
{
	geli_mdstore_close(src->store);
	src->store = NULL;
	src->prov = NULL;
}
