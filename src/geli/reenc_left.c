/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What a stopped geli reencrypt can leave beside a provider that is not
 * (or no longer) marked as being converted, found and removed by the same
 * command again (docs/reencrypt.md, "The recovery rule of each state"): the
 * journal of a conversion that ended, or of one that never marked the
 * provider; for a conversion to LUKS2, the header of a start that never
 * marked it.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "reenc.h"

/* A file of nothing but zeros (none at all included), of 64 KiB at most. */
static bool
empty_file(const char *path)
{
	uint8_t b[65536];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	n = read(fd, b, sizeof(b));
	if (n >= 0 && (size_t)n == sizeof(b) && read(fd, b, 1) != 0)
		n = -1;		/* larger */
	close(fd);
	for (ssize_t i = 0; i < n; i++)
		if (b[i] != 0)
			return false;
	return n >= 0;
}

/*
 * Whether journal info (peeked) is of a conversion that never marked the
 * provider (record cur): made, and the power went before the mark.
 */
static bool
journal_unused(const struct geli_reenc_info *info, uint64_t N,
    const struct geli_metadata *cur)
{
	return !info->prepared && info->done == 0 &&
	    (info->kind == GELI_REENC_ENCRYPT ? cur == NULL &&
	    info->to.provsize == N : cur != NULL &&
	    geli_metadata_same(cur, &info->from));
}

/*
 * -F names a journal that is there while the provider (record cur, NULL
 * when it holds none) is not being converted: the journal of a conversion
 * that ended before its file was removed (1: removed now, nothing to do),
 * or of one that never marked the provider (removed; 0: go on).  Any
 * other journal stays, and the start refuses to overwrite it.
 */
int
journal_left(const char *prov, struct geli_provider *p,
    const struct geli_metadata *cur, const char *jpath)
{
	struct geli_reenc_info info;
	uint64_t N = geli_provider_mediasize(p);
	bool ended, unused;

	if (geli_reenc_peek(jpath, &info) != 0) {
		/* Made, and the power went before its header was written. */
		if (!empty_file(jpath) || unlink(jpath) != 0)
			return 0;
		warnmsg("The journal %s had not been used on %s: replaced.",
		    jpath, prov);
		return 0;
	}
	ended = info.kind == GELI_REENC_DECRYPT ? cur == NULL &&
	    info.done == info.total && info.from.provsize == N :
	    cur != NULL && geli_metadata_same(cur, &info.to);
	unused = journal_unused(&info, N, cur);
	geli_wipe(&info, sizeof(info));
	if (!ended && !unused)
		return 0;
	if (unlink(jpath) != 0)
		return 0;
	if (ended)
		warnmsg("The conversion of %s had ended: its journal %s is "
		    "removed.", prov, jpath);
	else
		warnmsg("The journal %s had not been used on %s: replaced.",
		    jpath, prov);
	return ended ? 1 : 0;
}

int
luks2_left(struct opts *o, const char *prov, struct geli_provider *p,
    const struct geli_metadata *cur)
{
	struct geli_reenc_info info;
	char hdr[4200], jpath[4200];
	uint8_t uuid[16] = { 0 };
	uint64_t offset;
	int rc = 0;

	/* The journal: -F, else the one the header's UUID (-H) names. */
	if (*opt_str(o, 'F') == '\0' && (*opt_str(o, 'H') == '\0' ||
	    luks2_header_path(o, uuid, hdr, sizeof(hdr)) != 0 ||
	    luks2_header_info(hdr, uuid, &offset) != 0))
		return 0;
	if (reenc_journal_of(o, uuid, jpath, sizeof(jpath)) != 0 ||
	    geli_reenc_peek(jpath, &info) != 0)
		return 0;
	/* A conversion to LUKS2 whose header is there, of its UUID. */
	if (info.kind != GELI_REENC_LUKS2 || luks2_header_path(o, info.uuid,
	    hdr, sizeof(hdr)) != 0 || luks2_header_info(hdr, uuid,
	    &offset) != 0 || memcmp(info.uuid, uuid, 16) != 0) {
		/* not this header's */
	} else if (cur == NULL && info.done == info.total) {
		/* GELI's record zeroed: only the end does that. */
		if (unlink(jpath) == 0) {
			warnmsg("The conversion of %s had ended: its journal "
			    "%s is removed.", prov, jpath);
			rc = 1;
		}
	} else if (journal_unused(&info, geli_provider_mediasize(p), cur) &&
	    unlink(jpath) == 0) {
		/* Nothing refers to the header: no sector is under its key. */
		(void)unlink(hdr);
		warnmsg("The journal %s and the LUKS2 header %s had not been "
		    "used on %s: replaced.", jpath, hdr, prov);
	}
	geli_wipe(&info, sizeof(info));
	return rc;
}
