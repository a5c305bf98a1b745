/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Before geli reencrypt -E writes a byte: what is on the plain provider
 * (libblkid's probe: file systems, RAID and ZFS labels, partition tables),
 * and whether it uses the bytes the conversion takes, those from the end
 * of the new data area on (the metadata sector among them).  libblkid 2.38
 * gives no file system sizes, so the size of each kind that can be shrunk
 * to make room is read from its superblock here.
 */
#include <blkid.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static uint64_t
le(const uint8_t *p, int n)
{
	uint64_t v = 0;

	while (n-- > 0)
		v = v << 8 | p[n];
	return v;
}

static uint64_t
be(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

/* The bytes a file system of type spans from offset 0 (0: unknown). */
static uint64_t
fs_size(int fd, const char *type)
{
	uint8_t b[4096];

	if (strncmp(type, "ext", 3) == 0) {
		/* Superblock at 1024: blocks (lo 4, hi 0x150 with 64bit),
		 * log2(block size) - 10 at 24, incompat features at 0x60. */
		if (pread(fd, b, 1024, 1024) != 1024)
			return 0;
		uint64_t blocks = le(b + 4, 4);
		if (le(b + 0x60, 4) & 0x80)
			blocks |= le(b + 0x150, 4) << 32;
		return blocks << (10 + le(b + 24, 4));
	}
	if (strcmp(type, "xfs") == 0) {
		/* sb_blocksize at 4, sb_dblocks at 8, big-endian. */
		if (pread(fd, b, 16, 0) != 16)
			return 0;
		return be(b + 4, 4) * be(b + 8, 8);
	}
	if (strcmp(type, "btrfs") == 0) {
		/* The superblock at 64 KiB: this device's total_bytes in its
		 * dev_item (0xc9 + 8). */
		if (pread(fd, b, 4096, 65536) != 4096)
			return 0;
		return le(b + 0xc9 + 8, 8);
	}
	if (strcmp(type, "swap") == 0) {
		/* last_page at 1028, in pages of the header's size. */
		if (pread(fd, b, 8, 1024) != 8)
			return 0;
		return (le(b + 4, 4) + 1) * (uint64_t)sysconf(_SC_PAGE_SIZE);
	}
	if (strcmp(type, "vfat") == 0) {
		/* BPB: bytes per sector at 11, total sectors at 19 or 32. */
		if (pread(fd, b, 64, 0) != 64)
			return 0;
		uint64_t n = le(b + 19, 2) ? le(b + 19, 2) : le(b + 32, 4);
		return n * le(b + 11, 2);
	}
	return 0;
}

/* The end of the last partition of a table (0: none). */
static uint64_t
parts_end(blkid_probe pr)
{
	blkid_partlist ls = blkid_probe_get_partitions(pr);
	uint64_t end = 0, e;
	int n = ls != NULL ? blkid_partlist_numof_partitions(ls) : 0;

	for (int i = 0; i < n; i++) {
		blkid_partition pt = blkid_partlist_get_partition(ls, i);
		e = (uint64_t)(blkid_partition_get_start(pt) +
		    blkid_partition_get_size(pt)) * 512;
		if (e > end)
			end = e;
	}
	return end;
}

/* Is [keep, N) all zeros? */
static bool
tail_zero(int fd, uint64_t keep, uint64_t N)
{
	uint8_t b[65536];

	for (uint64_t off = keep; off < N;) {
		size_t n = N - off < sizeof(b) ? (size_t)(N - off) : sizeof(b);
		if (pread(fd, b, n, (off_t)off) != (ssize_t)n)
			return false;
		for (size_t i = 0; i < n; i++)
			if (b[i] != 0)
				return false;
		off += n;
	}
	return true;
}

int
plain_check(const char *prov, const char *path, uint64_t keep, bool force)
{
	const char *type = NULL, *ptype = NULL;
	blkid_probe pr;
	uint64_t N, end = 0;
	int fd, rc, error = -1;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || (pr = blkid_new_probe()) == NULL ||
	    blkid_probe_set_device(pr, fd, 0, 0) != 0) {
		req_error("Cannot look at %s: %s.", prov, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	N = (uint64_t)blkid_probe_get_size(pr);
	blkid_probe_enable_superblocks(pr, 1);
	blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE |
	    BLKID_SUBLKS_USAGE);
	blkid_probe_enable_partitions(pr, 1);
	blkid_probe_set_partitions_flags(pr, BLKID_PARTS_ENTRY_DETAILS);
	rc = blkid_do_safeprobe(pr);
	if (rc == -2) {
		req_error("%s holds more than one kind of signature (blkid -p "
		    "shows them): refusing to guess.", prov);
		goto out;
	}
	if (rc == 0) {
		(void)blkid_probe_lookup_value(pr, "TYPE", &type, NULL);
		(void)blkid_probe_lookup_value(pr, "PTTYPE", &ptype, NULL);
	}
	if (type != NULL && (strcmp(type, "zfs_member") == 0 ||
	    strcmp(type, "linux_raid_member") == 0 ||
	    strcmp(type, "LVM2_member") == 0)) {
		/* Labels at the end, or a size only their tools know. */
		if (strcmp(type, "zfs_member") == 0)
			req_error("%s is a ZFS pool member, whose labels fill its "
			    "last 512 KiB: convert the providers under the pool "
			    "instead (docs/reencrypt.md).", prov);
		else
			req_error("%s is a %s: its last sector may be in use.",
			    prov, type);
		goto out;
	}
	if (ptype != NULL && strcmp(ptype, "gpt") == 0) {
		req_error("%s holds a GPT partition table, whose backup is in "
		    "its last sector: encrypt its partitions instead.", prov);
		goto out;
	}
	if (type != NULL)
		end = fs_size(fd, type);
	else if (ptype != NULL)
		end = parts_end(pr);
	if ((type != NULL || ptype != NULL) && end == 0 && !force) {
		req_error("Cannot tell how much of %s the %s uses: -f if it "
		    "ends %ju bytes or more before the end.", prov,
		    type != NULL ? type : ptype, (uintmax_t)(N - keep));
		goto out;
	}
	if (end > keep) {
		req_error("The %s on %s uses its last %ju bytes, which the "
		    "conversion needs: shrink it to %ju bytes first.",
		    type != NULL ? type : "partition table", prov,
		    (uintmax_t)(end - keep), (uintmax_t)keep);
		goto out;
	}
	if (type == NULL && ptype == NULL && !force && !tail_zero(fd, keep, N)) {
		req_error("Unknown data in the last %ju bytes of %s, which the "
		    "conversion needs: -f if they are not in use.",
		    (uintmax_t)(N - keep), prov);
		goto out;
	}
	error = 0;
out:
	blkid_free_probe(pr);
	close(fd);
	return error;
}
