/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Partitions by their GPT identity (see disks.h): each disk's table read
 * with libblkid's low-level probe (no cache file written), each partition
 * named by the kernel's entry under /sys/block/<disk>/ whose "partition"
 * file holds its number.
 */
#include <blkid/blkid.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "disks.h"
#include "sysblock.h"

static void
lower_copy(char *dst, size_t len, const char *src)
{
	size_t i = 0;

	for (; src != NULL && src[i] != '\0' && i + 1 < len; i++)
		dst[i] = (char)tolower((unsigned char)src[i]);
	dst[i] = '\0';
}

static int
add_disk(const char *disk, struct part **out, size_t *n)
{
	char dev[PATH_MAX];
	blkid_probe pr;
	blkid_partlist ls;
	int np;

	snprintf(dev, sizeof(dev), "/dev/%s", disk);
	pr = blkid_new_probe_from_filename(dev);
	if (pr == NULL)
		return 0;	/* an empty loop device, a disk we may not read */
	blkid_probe_enable_superblocks(pr, 0);
	blkid_probe_enable_partitions(pr, 1);
	ls = blkid_probe_get_partitions(pr);
	np = ls != NULL ? blkid_partlist_numof_partitions(ls) : 0;
	for (int i = 0; i < np; i++) {
		blkid_partition par = blkid_partlist_get_partition(ls, i);
		struct part *q, *grown;
		char name[64];

		if (par == NULL || sysblock_part_name("/sys", disk,
		    (unsigned)blkid_partition_get_partno(par), name,
		    sizeof(name)) != 0)
			continue;
		grown = realloc(*out, (*n + 1) * sizeof(**out));
		if (grown == NULL) {
			blkid_free_probe(pr);
			return -ENOMEM;
		}
		*out = grown;
		q = &grown[(*n)++];
		memset(q, 0, sizeof(*q));
		snprintf(q->dev, sizeof(q->dev), "/dev/%s", name);
		snprintf(q->name, sizeof(q->name), "%s", name);
		lower_copy(q->uuid, sizeof(q->uuid), blkid_partition_get_uuid(par));
		lower_copy(q->type, sizeof(q->type),
		    blkid_partition_get_type_string(par));
	}
	blkid_free_probe(pr);
	return 0;
}

int
parts_list(const char *const *disks, size_t ndisks, struct part **out,
    size_t *n)
{
	int rc = 0;

	*out = NULL;
	*n = 0;
	if (disks != NULL && ndisks > 0) {
		for (size_t i = 0; i < ndisks && rc == 0; i++) {
			char disk[NAME_MAX + 1];

			rc = sysblock_disk_of("/sys", disks[i], disk, sizeof(disk));
			if (rc == 0)
				rc = add_disk(disk, out, n);
		}
		return rc;
	}
	DIR *d = opendir("/sys/block");
	struct dirent *de;

	if (d == NULL)
		return -errno;
	while (rc == 0 && (de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			rc = add_disk(de->d_name, out, n);
	closedir(d);
	return rc;
}

struct part *
parts_by_uuid(struct part *parts, size_t n, const char *uuid)
{
	char want[40];

	lower_copy(want, sizeof(want), uuid);
	want[strcspn(want, ".")] = '\0';
	for (size_t i = 0; i < n; i++)
		if (!parts[i].claimed && strcmp(parts[i].uuid, want) == 0)
			return &parts[i];
	return NULL;
}
