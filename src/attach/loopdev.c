/* SPDX-License-Identifier: BSD-2-Clause */
/* Loop devices through the kernel's ioctls (see loopdev.h). */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/loop.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loopdev.h"
#include "proc.h"

int
loop_attach(const char *file, uint32_t bs, bool readonly, struct loopdev *l)
{
	struct loop_config cfg;
	struct stat st;
	int ctl, lfd, ffd, n, error = -EBUSY;

	l->path[0] = '\0';
	l->fd = -1;
	ffd = open(file, (readonly ? O_RDONLY : O_RDWR) | O_CLOEXEC);
	if (ffd < 0)
		return -errno;
	if (fstat(ffd, &st) != 0) {
		error = -errno;
		close(ffd);
		return error;
	}
	l->fdev = (uint64_t)st.st_dev;
	l->fino = (uint64_t)st.st_ino;
	ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl < 0) {
		error = -errno;
		close(ffd);
		return error;
	}
	/* Another process may take the free device first: try again. */
	for (int tries = 0; tries < 16 && error == -EBUSY; tries++) {
		n = ioctl(ctl, LOOP_CTL_GET_FREE);
		if (n < 0) {
			error = -errno;
			break;
		}
		snprintf(l->path, sizeof(l->path), "/dev/loop%d", n);
		lfd = open(l->path, (readonly ? O_RDONLY : O_RDWR) | O_CLOEXEC);
		if (lfd < 0) {
			error = -errno;
			continue;
		}
		memset(&cfg, 0, sizeof(cfg));
		cfg.fd = (uint32_t)ffd;
		cfg.block_size = bs;
		cfg.info.lo_flags = LO_FLAGS_AUTOCLEAR |
		    (readonly ? LO_FLAGS_READ_ONLY : 0);
		snprintf((char *)cfg.info.lo_file_name, LO_NAME_SIZE, "%s", file);
		error = ioctl(lfd, LOOP_CONFIGURE, &cfg) == 0 ? 0 : -errno;
		if (error == 0)
			l->fd = lfd;
		else
			close(lfd);
	}
	if (error != 0)
		l->path[0] = '\0';
	close(ctl);
	close(ffd);
	return error;
}

/*
 * Is the device on fd still backed by l's file?  A loop device removed under
 * us (losetup -d) and set up again for something else keeps its name: it
 * is then not ours to detach, resize or call busy.
 */
static bool
backs(int fd, const struct loopdev *l)
{
	struct loop_info64 info;

	/* Zeroed: tools that do not know the ioctl (valgrind) see it set. */
	memset(&info, 0, sizeof(info));
	return ioctl(fd, LOOP_GET_STATUS64, &info) == 0 &&
	    info.lo_device == l->fdev && info.lo_inode == l->fino;
}

/* The device opened, if it still backs l's file; -ENXIO when it does not. */
static int
open_ours(const struct loopdev *l, int flags)
{
	int fd = open(l->path, flags | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (!backs(fd, l)) {
		close(fd);
		return -ENXIO;
	}
	return fd;
}

int
loop_detach(struct loopdev *l)
{
	int fd, error = 0;

	fd = open_ours(l, O_RDONLY);
	/* The device clears itself at its last close: ours, unless someone
	 * else still holds it (detach -f). */
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
	if (fd < 0)
		return fd;
	for (int tries = 0; tries < 50; tries++) {
		if (ioctl(fd, LOOP_CLR_FD) == 0) {
			error = 0;
			break;
		}
		error = -errno;
		if (error != -EBUSY)
			break;
		usleep(100000);	/* udev may still hold it */
	}
	close(fd);
	return error;
}

int
loop_set_capacity(const struct loopdev *l)
{
	int fd, error;

	fd = open_ours(l, O_RDONLY);
	if (fd < 0)
		return fd;
	error = ioctl(fd, LOOP_SET_CAPACITY, 0) == 0 ? 0 : -errno;
	close(fd);
	return error;
}

enum loop_holder
blkdev_holder(const char *dev, pid_t ignore)
{
	struct stat st;
	int fd;

	/* A mount or another exclusive holder makes O_EXCL fail. */
	fd = open(dev, O_RDONLY | O_EXCL | O_CLOEXEC);
	if (fd < 0)
		return errno == EBUSY ? LOOP_HELD : LOOP_FREE;
	close(fd);
	if (stat(dev, &st) == 0 && proc_holds_open(&st, ignore))
		return LOOP_OPENED;
	return LOOP_FREE;
}

enum loop_holder
loop_holder(const struct loopdev *l, pid_t ignore)
{
	int fd;

	fd = open_ours(l, O_RDONLY);
	if (fd < 0)
		return LOOP_FREE;
	close(fd);
	return blkdev_holder(l->path, ignore);
}

/* The device's discard limit in sysfs (0: the kernel turned it off). */
static unsigned long long
discard_max(const char *dev)
{
	char path[300];
	unsigned long long n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/block/%s/queue/discard_max_bytes",
	    strrchr(dev, '/') != NULL ? strrchr(dev, '/') + 1 : dev);
	if ((f = fopen(path, "re")) == NULL)
		return 0;
	if (fscanf(f, "%llu", &n) != 1)
		n = 0;
	fclose(f);
	return n;
}

int
loop_refresh_discard(const struct loopdev *l)
{
	int fd, bs, error = 0;

	if (discard_max(l->path) != 0)
		return 0;
	fd = open_ours(l, O_RDONLY);
	if (fd < 0)
		return fd;
	if (ioctl(fd, BLKSSZGET, &bs) != 0)
		error = -errno;
	else if (bs <= 512)
		error = -EOPNOTSUPP;
	/* The limits are worked out anew when the block size changes: 512
	 * on the way takes every request the real size takes. */
	else if (ioctl(fd, LOOP_SET_BLOCK_SIZE, 512UL) != 0 ||
	    ioctl(fd, LOOP_SET_BLOCK_SIZE, (unsigned long)bs) != 0)
		error = -errno;
	close(fd);
	return error;
}
