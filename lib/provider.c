/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Providers: a regular file or a block device holding a GELI volume, with
 * the metadata in its last sector (§1.1).  The sector size P is the
 * device's logical sector size; for a regular file 512, unless the file
 * says otherwise (GELI_XATTR_SECTORSIZE: the .eli file of an attached
 * provider, so that a provider stacked on it takes the GELI sector size).
 */
#include <fcntl.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "geli.h"
#include "internal.h"

struct geli_provider {
	int fd;				/* -1 for a provider of operations */
	const struct geli_provider_ops *ops;
	void *opaque;
	bool blockdev;
	bool direct;			/* opened with O_DIRECT */
	uint64_t mediasize;
	uint32_t sectorsize;
};

/* The sector size a regular file says it has (an attached .eli file does),
 * or 512. */
static uint32_t
file_sectorsize(int fd)
{
	char v[16];
	ssize_t n = fgetxattr(fd, GELI_XATTR_SECTORSIZE, v, sizeof(v) - 1);
	unsigned long ss;
	char *end;

	if (n <= 0)
		return 512;
	v[n] = '\0';
	ss = strtoul(v, &end, 10);
	if (*end != '\0' || ss < 512 || ss > 65536 || (ss & (ss - 1)) != 0)
		return 512;
	return (uint32_t)ss;
}

/*
 * flock(fd, lock) without waiting, but on a block device for up to 3 s:
 * udev takes a shared lock on a disk while it probes it (systemd's "block
 * device locking"), after every close of a writer, so a provider attached
 * again just after its detach found it taken (seen: one attach in three in
 * a guest with udev, "Operation not permitted").  A holder that stays (an
 * attached provider's daemon) is still refused, 3 s later.
 */
static int
provider_lock(int fd, int lock, bool blockdev)
{
	for (int i = 0; ; i++) {
		if (flock(fd, lock | LOCK_NB) == 0)
			return 0;
		if (errno != EWOULDBLOCK || !blockdev || i == 300)
			return -1;
		usleep(10000);
	}
}

/*
 * lock: LOCK_SH for a writer, LOCK_EX for the holder of an attached
 * provider, 0 for none.  A lock that cannot be had is -EPERM, the error of
 * FreeBSD's exclusive open.
 */
static int
provider_open(const char *path, int flags, int lock, struct geli_provider **out)
{
	struct geli_provider *p;
	struct stat st;
	uint64_t size;
	int ssz, error;

	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return -ENOMEM;
	/* O_NONBLOCK: a FIFO or a terminal must not hang the open; it is
	 * refused below, and cleared for what is kept. */
	p->fd = open(path, flags | O_CLOEXEC | O_NONBLOCK);
	if (p->fd < 0)
		goto fail;
	if (fstat(p->fd, &st) != 0)
		goto fail;
	if (S_ISBLK(st.st_mode)) {
		if (ioctl(p->fd, BLKGETSIZE64, &size) != 0 ||
		    ioctl(p->fd, BLKSSZGET, &ssz) != 0)
			goto fail;
		p->blockdev = true;
		p->mediasize = size;
		p->sectorsize = (uint32_t)ssz;
	} else if (S_ISREG(st.st_mode)) {
		p->mediasize = (uint64_t)st.st_size;
		p->sectorsize = file_sectorsize(p->fd);
	} else {
		errno = ENOTBLK;
		goto fail;
	}
	if (fcntl(p->fd, F_SETFL, fcntl(p->fd, F_GETFL) & ~O_NONBLOCK) != 0)
		goto fail;
	p->direct = (flags & O_DIRECT) != 0;
	if (lock != 0 && provider_lock(p->fd, lock, p->blockdev) != 0) {
		if (errno == EWOULDBLOCK)
			errno = EPERM;
		goto fail;
	}
	*out = p;
	return 0;
fail:
	error = -errno;
	if (p->fd >= 0)
		close(p->fd);
	free(p);
	return error;
}

int
geli_provider_open_ops(const struct geli_provider_ops *ops, void *opaque,
    uint64_t mediasize, uint32_t sectorsize, struct geli_provider **out)
{
	struct geli_provider *p;

	if (ops == NULL || ops->pread == NULL || sectorsize < 512 ||
	    (sectorsize & (sectorsize - 1)) != 0)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return -ENOMEM;
	p->fd = -1;
	p->ops = ops;
	p->opaque = opaque;
	p->mediasize = mediasize;
	p->sectorsize = sectorsize;
	*out = p;
	return 0;
}

int
geli_provider_query_size(struct geli_provider *p, uint64_t *size)
{
	struct stat st;

	if (p->ops != NULL) {
		*size = p->mediasize;
		return 0;
	}
	if (p->blockdev)
		return ioctl(p->fd, BLKGETSIZE64, size) == 0 ? 0 : -errno;
	if (fstat(p->fd, &st) != 0)
		return -errno;
	*size = (uint64_t)st.st_size;
	return 0;
}

size_t
provider_buffer_align(const struct geli_provider *p)
{
	/* O_DIRECT: the logical block size, at most a page; a page is safe. */
	return p->direct ? 4096 : 512;
}

void
provider_set_mediasize(struct geli_provider *p, uint64_t size)
{
	p->mediasize = size;
}

int
geli_provider_open(const char *path, bool writable, struct geli_provider **out)
{
	return provider_open(path, writable ? O_RDWR : O_RDONLY,
	    writable ? LOCK_SH : 0, out);
}

int
geli_provider_open_direct(const char *path, bool writable,
    struct geli_provider **out)
{
	return provider_open(path, (writable ? O_RDWR : O_RDONLY) | O_DIRECT,
	    writable ? LOCK_SH : 0, out);
}

int
geli_provider_open_exclusive(const char *path, struct geli_provider **out)
{
	return provider_open(path, O_RDWR, LOCK_EX, out);
}

void
geli_provider_close(struct geli_provider *p)
{
	if (p == NULL)
		return;
	if (p->fd >= 0)
		close(p->fd);
	free(p);
}

uint64_t
geli_provider_mediasize(const struct geli_provider *p)
{
	return p->mediasize;
}

uint32_t
geli_provider_sectorsize(const struct geli_provider *p)
{
	return p->sectorsize;
}

int
geli_provider_fd(const struct geli_provider *p)
{
	return p->fd;
}

/* Whole-buffer transfer, retrying short reads/writes and EINTR. */
static int
provider_io(struct geli_provider *p, void *buf, size_t len, uint64_t off,
    bool write)
{
	uint8_t *b = buf;
	struct stat st;
	ssize_t n;

	if (p->ops != NULL) {
		/* What lies past the end is not the provider's. */
		if (off > p->mediasize || len > p->mediasize - off)
			return -EIO;
		if (write && p->ops->pwrite == NULL)
			return -EROFS;
		return write ? p->ops->pwrite(p->opaque, buf, len, off) :
		    p->ops->pread(p->opaque, buf, len, off);
	}

	/*
	 * A regular file cut short under us would grow back with a hole
	 * where a write past its end lands, and the hole would read back as
	 * "data".  A disk has the size it has: such a write is an I/O error.
	 * Nothing GELI writes lies past the provider's end.
	 */
	if (write && !p->blockdev) {
		if (fstat(p->fd, &st) != 0)
			return -errno;
		if (off + len > (uint64_t)st.st_size)
			return -EIO;
	}
	while (len > 0) {
		n = write ? pwrite(p->fd, b, len, (off_t)off) :
		    pread(p->fd, b, len, (off_t)off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		b += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

int
geli_provider_pread(struct geli_provider *p, void *buf, size_t len,
    uint64_t off)
{
	return provider_io(p, buf, len, off, false);
}

int
geli_provider_pwrite(struct geli_provider *p, const void *buf, size_t len,
    uint64_t off)
{
	return provider_io(p, (void *)(uintptr_t)buf, len, off, true);
}

int
geli_provider_flush(struct geli_provider *p)
{
	if (p->ops != NULL)
		return p->ops->flush != NULL ? p->ops->flush(p->opaque) : 0;
	return fsync(p->fd) == 0 ? 0 : -errno;
}

int
geli_provider_discard(struct geli_provider *p, uint64_t off, uint64_t len)
{
	uint64_t range[2] = { off, len };

	if (off > p->mediasize || len > p->mediasize - off)
		return -EIO;
	if (len == 0)
		return 0;
	if (p->ops != NULL)
		return p->ops->discard != NULL ?
		    p->ops->discard(p->opaque, off, len) : -EOPNOTSUPP;
	if (p->blockdev)
		return ioctl(p->fd, BLKDISCARD, range) == 0 ? 0 : -errno;
	return fallocate(p->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
	    (off_t)off, (off_t)len) == 0 ? 0 : -errno;
}

int
provider_punch(struct geli_provider *p, uint64_t off, uint64_t len)
{
	if (off > p->mediasize || len > p->mediasize - off)
		return -EIO;
	if (len == 0)
		return 0;
	if (p->ops != NULL)
		return -EOPNOTSUPP;
	/* On a block device: a zeroing that may unmap, or EOPNOTSUPP. */
	return fallocate(p->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
	    (off_t)off, (off_t)len) == 0 ? 0 : -errno;
}

int
geli_provider_read_last(struct geli_provider *p, void *sector)
{
	if (p->mediasize < p->sectorsize)
		return -ENOSPC;
	return geli_provider_pread(p, sector, p->sectorsize,
	    p->mediasize - p->sectorsize);
}

int
geli_provider_write_last(struct geli_provider *p, const void *sector)
{
	int error;

	if (p->mediasize < p->sectorsize)
		return -ENOSPC;
	error = geli_provider_pwrite(p, sector, p->sectorsize,
	    p->mediasize - p->sectorsize);
	if (error == 0)
		error = geli_provider_flush(p);
	return error;
}
