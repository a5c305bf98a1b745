/* SPDX-License-Identifier: BSD-2-Clause */
/* Block devices as the kernel's sysfs describes them: a partition's disk,
 * number and place, a disk's partition of a number.  sys is sysfs's mount
 * point ("/sys"; a tree of the same shape in the unit test). */
#ifndef GELI_COMMON_SYSBLOCK_H
#define GELI_COMMON_SYSBLOCK_H

#include <stdint.h>
#include <sys/types.h>

struct sysblock_part {
	char disk[64];		/* the whole disk's name: "sdb", "loop0" */
	unsigned num;		/* the partition's number, from 1 */
	uint64_t start, size;	/* in 512-byte units, as sysfs counts */
};

/* The partition that device dev is; 0, -ENOTBLK where dev is not a
 * partition (a whole disk, a file's device), or another -errno. */
int sysblock_part_of(const char *sys, dev_t dev, struct sysblock_part *out);
/* The kernel's name of partition num of disk ("sdb" 2: "sdb2", "loop0" 1:
 * "loop0p1"); 0 or -errno (-ENOENT: no such partition). */
int sysblock_part_name(const char *sys, const char *disk, unsigned num,
    char *out, size_t len);
/* Partition num of disk as the kernel has it: its start and size in
 * 512-byte units; 0 or -errno (-ENOENT: no such partition). */
int sysblock_part_place(const char *sys, const char *disk, unsigned num,
    uint64_t *start, uint64_t *size);
/* The disk of a device name or path: itself when sysfs has it as a disk,
 * else the disk its partition is on; 0 or -errno. */
int sysblock_disk_of(const char *sys, const char *arg, char *out, size_t len);

#endif
