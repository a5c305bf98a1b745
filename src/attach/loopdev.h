/* SPDX-License-Identifier: BSD-2-Clause */
/* Loop block devices on top of a file (the .eli file of an attached provider). */
#ifndef GELI_LOOPDEV_H
#define GELI_LOOPDEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A loop device and the file it was set up on, known by the file's device
 * and inode as they were then: the path may since name something else (the
 * .eli mount lazily unmounted under a running daemon).
 */
struct loopdev {
	char path[64];		/* "": none */
	uint64_t fdev, fino;
	int fd;			/* held open while attached (see loop_attach) */
};

/*
 * A free loop device backed by file, with logical block size bs
 * (512..4096).  It is set to clear itself at its last close
 * (LO_FLAGS_AUTOCLEAR) and l->fd holds it open: a daemon killed with -9
 * leaves no loop device behind once its users (a mount, a pool) let go.
 */
int loop_attach(const char *file, uint32_t bs, bool readonly,
    struct loopdev *l);
/*
 * The next four act on the device only while it is still backed by the same
 * file (it may have been removed and given to something else): -ENXIO, or
 * false, when it is not.  loop_detach also lets go of l->fd.
 */
int loop_detach(struct loopdev *l);
/* Re-read the backing file's size. */
int loop_set_capacity(const struct loopdev *l);
/*
 * Discards offered again after the kernel turned them off (a discard was
 * refused while the provider had NODELETE): the block size set to 512 and
 * back, which makes the kernel work the limits out anew.  -EOPNOTSUPP for a
 * device of 512-byte blocks (no smaller size to pass through).
 */
int loop_refresh_discard(const struct loopdev *l);
/* Who holds a block device besides us (and ignore, 0: none, the keeper
 * that holds our loop device for the next of us): nobody, a mount or
 * another exclusive opener, or a process that has it open. */
enum loop_holder { LOOP_FREE, LOOP_HELD, LOOP_OPENED };
enum loop_holder blkdev_holder(const char *dev, pid_t ignore);
/* The same of our loop device (LOOP_FREE: it is no longer ours). */
enum loop_holder loop_holder(const struct loopdev *l, pid_t ignore);

#endif
