/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * geli-ublk-owner NAME: udev's IMPORT{program} in 61-geli-ublk.rules, run
 * as root for a ublk node (NAME ublkcN or ublkbN).  For a device an
 * ordinary user made (Linux 6.3+, where /dev/ublk-control is theirs) it
 * prints who, as udev's properties
 *
 *	GELI_UBLK_UID=1000
 *	GELI_UBLK_GID=1000
 *
 * and the rule gives them both nodes: the kernel takes their commands only
 * for a character node they may open, and opens the block device only for
 * its owner.  For root's devices it prints nothing.  Exit status 0, or 1
 * with why on stderr.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ublk.h"

int
main(int argc, char **argv)
{
	uint32_t id, uid, gid;
	char kind, end;
	int error;

	if (argc != 2 || sscanf(argv[1], "ublk%c%" SCNu32 "%c", &kind, &id,
	    &end) != 2 || (kind != 'b' && kind != 'c')) {
		fprintf(stderr, "usage: geli-ublk-owner ublkbN|ublkcN\n");
		return 1;
	}
	error = ublk_owner(id, &uid, &gid);
	if (error < 0) {
		fprintf(stderr, "geli-ublk-owner: %s: %s\n", argv[1],
		    strerror(-error));
		return 1;
	}
	if (error == 0)
		printf("GELI_UBLK_UID=%" PRIu32 "\nGELI_UBLK_GID=%" PRIu32 "\n",
		    uid, gid);
	return 0;
}
