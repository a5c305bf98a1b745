/* SPDX-License-Identifier: BSD-2-Clause */
/* The GPT partitions of this machine's disks, as libblkid reads them. */
#ifndef GELI_TRUENAS_DISKS_H
#define GELI_TRUENAS_DISKS_H

#include <stdbool.h>
#include <stddef.h>

/* FreeBSD's GPT partition types (gpart(8): freebsd-zfs, freebsd-swap). */
#define GPT_FREEBSD_ZFS		"516e7cba-6ecf-11d6-8ff8-00022d09712b"
#define GPT_FREEBSD_SWAP	"516e7cb5-6ecf-11d6-8ff8-00022d09712b"

struct part {
	char dev[96];		/* /dev/sdb2 */
	char name[64];		/* sdb2: the name geli attaches it as */
	char uuid[40];		/* its PARTUUID (GPT unique GUID), lower case */
	char type[40];		/* its GPT type GUID, lower case */
	bool claimed;		/* matched to a provider already */
};

/*
 * The partitions of the given disks (whole-disk devices, or partitions
 * whose disk is meant; NULL or none: every disk in /sys/block) into *out
 * (free()), their count in *n.  Only partition tables are read: the
 * partitions themselves are never opened.  0, or -errno.
 */
int parts_list(const char *const *disks, size_t ndisks, struct part **out,
    size_t *n);
/* The partition of parts[0..n) not yet claimed whose PARTUUID is uuid (in
 * any case; a ".eli" after it, as 13.0 stored some, left out), or NULL. */
struct part *parts_by_uuid(struct part *parts, size_t n, const char *uuid);

#endif
