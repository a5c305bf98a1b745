/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The LUKS2 header of a conversion on the disk itself (docs/reencrypt.md,
 * "To LUKS2"): LUKS2_DISK_HDR bytes right before the provider's GPT
 * partition, over free space or the end of an unused swap partition right
 * before it (a FreeNAS/TrueNAS CORE disk: freebsd-swap, then GELI).  The
 * header is copied there before GELI's record goes; then the partition
 * table is edited through util-linux's libfdisk: the swap partition ends
 * where the header begins, the provider's partition begins at the header,
 * and the kernel is told.  blkid then calls it crypto_LUKS and cryptsetup
 * opens it without a header file.
 */
#include <errno.h>
#include <fcntl.h>
#include <libfdisk/libfdisk.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "reenc.h"
#include "sysblock.h"

/* GPT's swap partitions: FreeBSD's, Linux's. */
static const char *const swap_types[] = {
	"516E7CB5-6ECF-11D6-8FF8-00022D09712B",
	"0657FD6D-A4AB-43C4-84E5-0933C84B4F4F",
};

/* What of a swap partition must stay (LBAs of ss bytes): a mebibyte. */
#define SWAP_MIN_BYTES	(1u << 20)

static bool
is_swap(struct fdisk_partition *pa)
{
	struct fdisk_parttype *t = fdisk_partition_get_type(pa);
	const char *s = t != NULL ? fdisk_parttype_get_string(t) : NULL;

	for (size_t i = 0; s != NULL && i < sizeof(swap_types) /
	    sizeof(swap_types[0]); i++)
		if (strcasecmp(s, swap_types[i]) == 0)
			return true;
	return false;
}

/* Is device dev a swap area the kernel uses (/proc/swaps)? */
static bool
swap_active(dev_t dev)
{
	char line[4200], file[4200];
	struct stat st;
	FILE *f = fopen("/proc/swaps", "re");
	bool found = false;

	if (f == NULL)
		return false;
	while (!found && fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "%4199s", file) == 1 && stat(file, &st) == 0 &&
		    S_ISBLK(st.st_mode) && st.st_rdev == dev)
			found = true;
	fclose(f);
	return found;
}

/*
 * The whole disk's page cache dropped.  What is read through the disk
 * (libfdisk's probe, its table) stays in the disk's own cache while the
 * conversion writes through the partition's; a later write through the
 * disk of part of a cached page (the backup table's first sector shares
 * one with the partition's last ones) would write the page's stale rest
 * back over the converted data, GELI's record among it.  So the cache goes
 * after each use of the disk and before each write through it.
 */
static void
drop_cache(const char *disk)
{
	int fd = open(disk, O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		(void)ioctl(fd, BLKFLSBUF, 0);
		close(fd);
	}
}

/* The partition table of pl->disk, read-only or not, in *cxt; 0, or -1
 * with why. */
static int
table_open(struct luks2_place *pl, bool rw, struct fdisk_context **cxt,
    char *why, size_t len)
{
	int error;

	if ((*cxt = fdisk_new_context()) == NULL) {
		snprintf(why, len, "cannot allocate memory");
		return -1;
	}
	drop_cache(pl->disk);
	fdisk_disable_dialogs(*cxt, 1);
	if ((error = fdisk_assign_device(*cxt, pl->disk, rw ? 0 : 1)) != 0) {
		snprintf(why, len, "cannot read the partition table of %s: %s",
		    pl->disk, strerror(-error));
		goto fail;
	}
	if (!fdisk_is_labeltype(*cxt, FDISK_DISKLABEL_GPT)) {
		snprintf(why, len, "%s has no GPT partition table", pl->disk);
		goto fail;
	}
	pl->ss = fdisk_get_sector_size(*cxt);
	if (pl->ss == 0 || LUKS2_DISK_HDR % pl->ss != 0) {
		snprintf(why, len, "%s has sectors of %lu bytes", pl->disk,
		    pl->ss);
		goto fail;
	}
	return 0;
fail:
	fdisk_unref_context(*cxt);
	*cxt = NULL;
	return -1;
}

/* Partition num and the used one that ends last before it (none: *prev
 * NULL), from table tb. */
static struct fdisk_partition *
neighbours(struct fdisk_table *tb, unsigned num, struct fdisk_partition **prev)
{
	struct fdisk_partition *me = NULL, *pa;

	*prev = NULL;
	for (size_t i = 0; i < fdisk_table_get_nents(tb); i++) {
		pa = fdisk_table_get_partition(tb, i);
		if (pa != NULL && fdisk_partition_is_used(pa) &&
		    fdisk_partition_get_partno(pa) + 1 == num)
			me = pa;
	}
	if (me == NULL)
		return NULL;
	for (size_t i = 0; i < fdisk_table_get_nents(tb); i++) {
		pa = fdisk_table_get_partition(tb, i);
		if (pa == NULL || pa == me || !fdisk_partition_is_used(pa) ||
		    fdisk_partition_get_end(pa) >= fdisk_partition_get_start(me))
			continue;
		if (*prev == NULL || fdisk_partition_get_end(pa) >
		    fdisk_partition_get_end(*prev))
			*prev = pa;
	}
	return me;
}

/* The table's view of pl's partition and what is before it, with sysfs's
 * place of it as at (in 512-byte units; the partition as the kernel has
 * it). */
static int
place_read(struct fdisk_context *cxt, struct luks2_place *pl, uint64_t at,
    char *why, size_t len)
{
	struct fdisk_partition *me, *prev;
	struct fdisk_table *tb = NULL;
	uint64_t hdr = LUKS2_DISK_HDR / pl->ss, lo, need, keep;
	int rc = 0;

	if (fdisk_get_partitions(cxt, &tb) != 0 ||
	    (me = neighbours(tb, pl->num, &prev)) == NULL) {
		snprintf(why, len, "partition %u of %s is not in its table",
		    pl->num, pl->disk);
		rc = -1;
		goto out;
	}
	pl->start = fdisk_partition_get_start(me);
	pl->size = fdisk_partition_get_size(me);
	if (pl->start * pl->ss != at * 512) {
		snprintf(why, len, "the partition table of %s does not say "
		    "what the kernel has of %s", pl->disk, pl->part);
		rc = -1;
		goto out;
	}
	lo = prev != NULL ? fdisk_partition_get_end(prev) + 1 :
	    fdisk_get_first_lba(cxt);
	pl->swapnum = 0;
	if (pl->start >= lo && pl->start - lo >= hdr)
		goto out;	/* free space */
	need = hdr - (pl->start > lo ? pl->start - lo : 0);
	if (prev == NULL || !is_swap(prev)) {
		snprintf(why, len, "there are not %u MiB of free space or a "
		    "swap partition right before %s", LUKS2_DISK_HDR >> 20,
		    pl->part);
		rc = 1;
		goto out;
	}
	keep = fdisk_partition_get_size(prev);
	if (keep < need || (keep - need) * pl->ss < SWAP_MIN_BYTES) {
		snprintf(why, len, "the swap partition before %s is smaller "
		    "than %u MiB", pl->part, (LUKS2_DISK_HDR + SWAP_MIN_BYTES)
		    >> 20);
		rc = 1;
		goto out;
	}
	pl->swapnum = (unsigned)fdisk_partition_get_partno(prev) + 1;
	pl->swapsize = keep - need;
out:
	fdisk_unref_table(tb);
	return rc;
}

/* The kernel's name of the swap partition, in pl->swap, and whether it is
 * in use; 0, or -1 with the request error. */
static int
swap_free(struct luks2_place *pl, const char *prov)
{
	char name[64];
	struct stat st;
	int fd;

	if (sysblock_part_name("/sys", pl->diskname, pl->swapnum, name,
	    sizeof(name)) != 0)
		snprintf(name, sizeof(name), "%s", "?");
	snprintf(pl->swap, sizeof(pl->swap), "/dev/%s", name);
	if (stat(pl->swap, &st) == 0 && S_ISBLK(st.st_mode) &&
	    swap_active(st.st_rdev)) {
		req_error("The swap partition %s before %s is in use: run "
		    "'swapoff %s' (and take it out of /etc/fstab), or name a "
		    "header file with -H.", pl->swap, prov, pl->swap);
		return -1;
	}
	fd = open(pl->swap, O_RDONLY | O_EXCL | O_CLOEXEC);
	if (fd < 0 && errno == EBUSY) {
		req_error("The swap partition %s before %s is in use: name a "
		    "header file with -H.", pl->swap, prov);
		return -1;
	}
	if (fd >= 0)
		close(fd);
	return 0;
}

int
luks2_place_find(const char *prov, const char *path, struct luks2_place *pl,
    char *why, size_t len)
{
	struct fdisk_context *cxt = NULL;
	struct sysblock_part sp;
	struct stat st;
	int rc;

	memset(pl, 0, sizeof(*pl));
	if (stat(path, &st) != 0 || !S_ISBLK(st.st_mode) ||
	    sysblock_part_of("/sys", st.st_rdev, &sp) != 0) {
		snprintf(why, len, "%s is not a partition", prov);
		return 0;
	}
	snprintf(pl->diskname, sizeof(pl->diskname), "%s", sp.disk);
	snprintf(pl->disk, sizeof(pl->disk), "/dev/%s", sp.disk);
	snprintf(pl->part, sizeof(pl->part), "%s", path);
	pl->num = sp.num;
	if (table_open(pl, false, &cxt, why, len) != 0)
		return 0;
	rc = place_read(cxt, pl, sp.start, why, len);
	fdisk_unref_context(cxt);
	drop_cache(pl->disk);
	if (rc != 0)
		return 0;
	if (pl->swapnum != 0 && swap_free(pl, prov) != 0)
		return -1;
	return 1;
}

/* n bytes at off of fd, all of them; 0 or -errno. */
static int
pio(int fd, void *buf, size_t n, off_t off, bool wr)
{
	for (size_t done = 0; done < n; ) {
		ssize_t k = wr ? pwrite(fd, (char *)buf + done, n - done,
		    off + (off_t)done) : pread(fd, (char *)buf + done, n - done,
		    off + (off_t)done);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? -errno : -EIO;
		done += (size_t)k;
	}
	return 0;
}

int
luks2_place_copy(const struct luks2_place *pl, const char *hdr)
{
	uint8_t *buf = calloc(2, LUKS2_DISK_HDR);
	off_t at = (off_t)((pl->start - LUKS2_DISK_HDR / pl->ss) * pl->ss);
	int hfd = -1, dfd = -1, error = -ENOMEM;
	ssize_t n;

	if (buf == NULL)
		goto out;
	/* The file may end before its keyslots' area does: zeros there. */
	if ((hfd = open(hdr, O_RDONLY | O_CLOEXEC)) < 0 ||
	    (n = read(hfd, buf, LUKS2_DISK_HDR)) < 0) {
		error = -errno;
		goto out;
	}
	if ((dfd = open(pl->disk, O_RDWR | O_CLOEXEC)) < 0) {
		error = -errno;
		goto out;
	}
	(void)ioctl(dfd, BLKFLSBUF, 0);
	if ((error = pio(dfd, buf, LUKS2_DISK_HDR, at, true)) != 0)
		goto out;
	if (fdatasync(dfd) != 0) {
		error = -errno;
		goto out;
	}
	/* Read back past the page cache's copy. */
	(void)ioctl(dfd, BLKFLSBUF, 0);
	if ((error = pio(dfd, buf + LUKS2_DISK_HDR, LUKS2_DISK_HDR, at,
	    false)) == 0 && memcmp(buf, buf + LUKS2_DISK_HDR,
	    LUKS2_DISK_HDR) != 0)
		error = -EIO;
out:
	if (hfd >= 0)
		close(hfd);
	if (dfd >= 0)
		close(dfd);
	free(buf);
	if (error != 0)
		req_error("Cannot write the LUKS2 header to %s before %s: %s. "
		    "GELI's record stays.", pl->disk, pl->part, strerror(-error));
	return error != 0 ? -1 : 0;
}

/* Does the kernel have partition num of pl's disk at start, size LBAs? */
static bool
kernel_has(const struct luks2_place *pl, unsigned num, uint64_t start,
    uint64_t size)
{
	uint64_t s, n, f = pl->ss / 512;

	return sysblock_part_place("/sys", pl->diskname, num, &s, &n) == 0 &&
	    s == start * f && n == size * f;
}

/* The kernel told of the table's change (libfdisk's BLKPG calls, whose
 * failures it only counts), until it has the partition where the table
 * says: a partition just closed may be open a moment longer (udev's
 * probe of it), so tried again a while. */
static int
tell_kernel(struct fdisk_context *cxt, struct fdisk_table *orig,
    const struct luks2_place *pl)
{
	struct timespec pause = { 0, 100 * 1000 * 1000 };
	uint64_t hdr = LUKS2_DISK_HDR / pl->ss;
	int error;

	for (int i = 0; i < 50; i++) {
		if ((error = fdisk_reread_changes(cxt, orig)) != 0)
			return error;
		if (kernel_has(pl, pl->num, pl->start - hdr, pl->size + hdr))
			return 0;
		nanosleep(&pause, NULL);
	}
	return -EBUSY;
}

int
luks2_place_move(struct luks2_place *pl)
{
	struct fdisk_context *cxt = NULL;
	struct fdisk_partition *pa = NULL;
	struct fdisk_table *orig = NULL;
	uint64_t hdr = LUKS2_DISK_HDR / pl->ss;
	char why[4400];
	int error = 0;

	if (table_open(pl, true, &cxt, why, sizeof(why)) != 0) {
		req_error("Cannot grow %s over its LUKS2 header: %s.", pl->part,
		    why);
		return -1;
	}
	if ((error = fdisk_get_partitions(cxt, &orig)) != 0 ||
	    (pa = fdisk_new_partition()) == NULL)
		goto fail;
	if (pl->swapnum != 0) {
		if ((error = fdisk_partition_set_size(pa, pl->swapsize)) != 0 ||
		    (error = fdisk_set_partition(cxt, pl->swapnum - 1, pa)) != 0)
			goto fail;
		fdisk_unref_partition(pa);
		if ((pa = fdisk_new_partition()) == NULL)
			goto fail;
	}
	if ((error = fdisk_partition_set_start(pa, pl->start - hdr)) != 0 ||
	    (error = fdisk_partition_set_size(pa, pl->size + hdr)) != 0 ||
	    (error = fdisk_set_partition(cxt, pl->num - 1, pa)) != 0 ||
	    (error = fdisk_write_disklabel(cxt)) != 0)
		goto fail;
	if (fsync(fdisk_get_devfd(cxt)) != 0) {
		error = -errno;
		goto fail;
	}
	if ((error = tell_kernel(cxt, orig, pl)) != 0) {
		req_error("The partition table of %s now begins %s at its "
		    "LUKS2 header, but the kernel kept the old one (%s): run "
		    "'partx -u %s', or reboot.", pl->disk, pl->part,
		    strerror(-error), pl->disk);
		error = 1;
	}
	fdisk_unref_partition(pa);
	fdisk_unref_table(orig);
	fdisk_unref_context(cxt);
	drop_cache(pl->disk);
	return error != 0 ? -1 : 0;
fail:
	req_error("Cannot grow %s over its LUKS2 header in the partition table "
	    "of %s: %s.", pl->part, pl->disk, strerror(error < 0 ? -error :
	    ENOMEM));
	fdisk_unref_partition(pa);
	fdisk_unref_table(orig);
	fdisk_unref_context(cxt);
	return -1;
}

/* Do the file hdr's bytes, then zeros, make up buf's n? */
static bool
same_as_file(const char *hdr, const uint8_t *buf, size_t n)
{
	uint8_t b[65536];
	size_t at = 0;
	ssize_t k;
	int fd = open(hdr, O_RDONLY | O_CLOEXEC);
	bool same = fd >= 0;

	while (same && (k = read(fd, b, sizeof(b))) > 0) {
		if (at + (size_t)k > n || memcmp(buf + at, b, (size_t)k) != 0)
			same = false;
		at += (size_t)k;
	}
	if (fd >= 0)
		close(fd);
	for (; same && at < n; at++)
		same = buf[at] == 0;
	return same;
}

int
luks2_complete(struct opts *o, const char *prov, const char *path)
{
	struct luks2_end end = { .ondisk = true, .done = true };
	uint8_t uuid[16], *buf = NULL;
	uint64_t offset;
	char why[4400], tmp[64];
	int fd = -1, rc = 1;

	if (luks2_place_find(prov, path, &end.pl, why, sizeof(why)) != 1)
		return req_failed() ? -1 : 1;
	/* What is before the partition, as a file libcryptsetup reads. */
	drop_cache(end.pl.disk);
	if ((buf = malloc(LUKS2_DISK_HDR)) == NULL ||
	    (fd = open(end.pl.disk, O_RDONLY | O_CLOEXEC)) < 0 ||
	    pio(fd, buf, LUKS2_DISK_HDR, (off_t)((end.pl.start -
	    LUKS2_DISK_HDR / end.pl.ss) * end.pl.ss), false) != 0)
		goto out;
	close(fd);
	if ((fd = memfd_create("luks2-header", MFD_CLOEXEC)) < 0 ||
	    pio(fd, buf, LUKS2_DISK_HDR, 0, true) != 0)
		goto out;
	snprintf(tmp, sizeof(tmp), "/proc/self/fd/%d", fd);
	if (luks2_header_info(tmp, uuid, &offset) != 0 ||
	    offset != LUKS2_DISK_HDR)
		goto out;
	/* The header its conversion wrote, which it keeps to the end. */
	if (luks2_header_path(o, uuid, end.hdr, sizeof(end.hdr)) != 0) {
		rc = -1;
		goto out;
	}
	if (!same_as_file(end.hdr, buf, LUKS2_DISK_HDR))
		goto out;
	rc = 0;
	luks2_finish(o, prov, &end);
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return rc;
}
