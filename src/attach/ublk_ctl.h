/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ublk's control device (/dev/ublk-control) for the ublk front end
 * (ublk.c) and geli-ublk-owner: its commands, a device's description, the
 * deletion of a device and of those whose daemon is gone, and the setup
 * lock that orders root's daemons around them.
 */
#ifndef GELI_UBLK_CTL_H
#define GELI_UBLK_CTL_H

#include <liburing.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ublk_abi.h"

struct ublk_conf;

/* Our mark in the kernel's ublksrv_flags, which it keeps for the server
 * (the low half; the high half: the keeper's pid, keeper.h): a device of
 * ours whose server and keeper died may be deleted by the next daemon. */
#define GELI_UBLK_MARK	0x494c4547ull	/* "GELI" */
#define GELI_UBLK_MARKED(flags)	(((flags) & 0xffffffffull) == GELI_UBLK_MARK)
#define GELI_UBLK_KEEPER(flags)	((pid_t)((flags) >> 32))

/* The control device: its descriptor, a ring for its commands, and what
 * the kernel offers. */
struct uctl {
	int fd;
	struct io_uring ring;		/* 128-byte entries */
	bool encoded;			/* the kernel takes ioctl numbers */
	bool user;			/* we are an ordinary user */
	uint64_t features;
};

/* The control device opened (modprobe ublk_drv for root where it is not
 * loaded), its features asked: 0, or -errno with why. */
int uctl_open(struct uctl *c, char *why, size_t len);
void uctl_close(struct uctl *c);
/*
 * Control command nr for device id, with buf (len bytes) as its buffer; with
 * path, the device's /dev/ublkcN goes before it (an ordinary user's device,
 * and GET_DEV_INFO2: ublk_abi.h).  0, or -errno.
 */
int uctl_cmd(struct uctl *c, unsigned nr, uint32_t id, bool path, void *buf,
    uint16_t len, uint64_t data0);
/* Device id's parameters, as c and a request's largest size say. */
int uctl_set_params(struct uctl *ctl, uint32_t id, bool user,
    const struct ublk_conf *c, uint32_t max_io);
/* Device id's description. */
int uctl_dev_info(struct uctl *c, uint32_t id, struct ublk_dev_info *info);
/* Device id deleted, without waiting for its holders (user: an ordinary
 * user's device; lock: the setup lock's descriptor, or -1). */
void uctl_delete_dev(struct uctl *c, uint32_t id, bool user, int lock);
/* Our devices whose daemon is gone (server and keeper), deleted. */
void uctl_delete_orphans(struct uctl *c, int lock);
/*
 * Before Linux 6.15 the kernel's work that quiesces a device whose server
 * died (ublk_quiesce_work_fn) cancels the device's commands after it let
 * go of the lock that START_USER_RECOVERY takes: a worker preempted there
 * cancels the next server's fresh FETCHes, and a request later given to
 * such a slot is never served.  Wait until no kernel worker is inside it
 * (its stack, /proc/PID/stack, root's to read), 5 s at most: true once
 * none is.
 */
bool uctl_quiesce_settled(void);
/* Wait (5 s at most) for a device node: devtmpfs makes it as the device is
 * added, and for an ordinary user's device (user) udev then gives it to
 * them (61-geli-ublk.rules); until then it is root's.  0, or -errno. */
int uctl_node_ready(const char *path, bool user, int mode);
/* The setup lock held (root's daemons; -1 for an ordinary user's), and let
 * go. */
int uctl_setup_lock(void);
void uctl_setup_unlock(int fd);

#endif
