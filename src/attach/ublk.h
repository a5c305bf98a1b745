/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The ublk front end: the attached provider as a block device of the
 * kernel's ublk driver (/dev/ublkbN), whose requests this process takes
 * from one io_uring per queue (a queue per online CPU up to four, each on
 * its own thread) and answers from the same backend as the FUSE file's
 * (blockio.h).  One copy per request, no page cache of its own.
 */
#ifndef GELI_UBLK_H
#define GELI_UBLK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "blockio.h"

struct ublk;

/*
 * Can this process make ublk devices?  /dev/ublk-control is opened (root
 * loads ublk_drv first when it is missing) and the kernel answers; for an
 * ordinary user, it says it makes devices for them (where the
 * administrator gave them /dev/ublk-control, and udev gives them the
 * device's nodes: 61-geli-ublk.rules).  0, or -errno with why in a few
 * words ("no /dev/ublk-control, and ublk_drv does not load").
 */
int ublk_probe(char *why, size_t len);

struct ublk_conf {
	uint64_t size;		/* bytes, a multiple of the sector size */
	uint32_t sectorsize;	/* GELI's: the logical block size up to 4096 */
	bool readonly;		/* else discard and write-zeroes are offered */
	int32_t keeper;		/* the server's keeper (keeper.h), 0: none */
};

/*
 * A device made and started for be: *out, and its block device's path in
 * dev.  Devices an earlier daemon of geli left behind (killed with -9) are
 * deleted first.  0 or -errno (with why).
 */
int ublk_start(const struct blockio *be, const struct ublk_conf *c,
    struct ublk **out, char *dev, size_t devlen, char *why, size_t whylen);
/*
 * Device id, whose server died, taken back (root's devices added with
 * recovery: ublk_waiting_id): its queues served by this process, the
 * requests the dead server held issued again by the kernel.  Waits for
 * the kernel to let go of the dead server (30 s at most).  0 or -errno
 * (with why); on failure the device is deleted, but for -EAGAIN: the
 * kernel cancelled request slots of ours (ublk_lost) before the device
 * served again, and it waits for another server (this one must end).
 */
int ublk_recover(const struct blockio *be, const struct ublk_conf *c,
    uint32_t id, struct ublk **out, char *dev, size_t devlen, char *why,
    size_t whylen);
/* The device's id if it waits for another server when this one dies (root's,
 * added with recovery), else -1. */
int32_t ublk_waiting_id(const struct ublk *u);
/* The new size after the provider grew: 0, or -EOPNOTSUPP when the kernel
 * cannot change it (no UBLK_F_UPDATE_SIZE: 6.12 has none). */
int ublk_resize(struct ublk *u, uint64_t size);
/* Requests served so far (every queue's). */
uint64_t ublk_requests(struct ublk *u);
/* Request slots the kernel cancelled while the device served (a race of
 * Linux before 6.15, ublk_ctl.h: uctl_quiesce_settled): a request given to
 * one is never served, and the device must be taken back again. */
unsigned ublk_lost(struct ublk *u);
/* True once every queue has ended (the device was removed from outside). */
bool ublk_ended(struct ublk *u);
/* The device stopped and deleted, the threads joined; safe on NULL. */
void ublk_stop(struct ublk *u);
/*
 * Who made device id, for udev (geli-ublk-owner, as root): 0 with the user
 * and group of an ordinary user's device, 1 for one of root's (the
 * kernel's to guard), or -errno.
 */
int ublk_owner(uint32_t id, uint32_t *uid, uint32_t *gid);
/*
 * Device id given up: one of ours whose server and keeper are gone (which
 * waits for a server, where it was added with recovery), deleted; the I/O
 * that waited on it ends with errors.  0, -ENOENT when id is no such
 * device, or -errno.
 */
int ublk_release_waiting(uint32_t id);

#endif
