/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The kernel's ublk interface (Linux 6.0+, drivers/block/ublk_drv.c), as
 * this project uses it, defined here: Debian 12's <linux/ublk_cmd.h> is
 * 6.1's and lacks the ioctl-encoded commands and GET_FEATURES.
 *
 * Control commands go to /dev/ublk-control as io_uring URING_CMDs (a ring
 * of 128-byte entries: the command is 32 bytes); each queue's I/O commands
 * go to /dev/ublkcN from that queue's own thread and ring.  Kernels that
 * answer GET_FEATURES (6.5+) take the ioctl-encoded numbers; older ones
 * only the plain ones.
 *
 * An ordinary user's device (UBLK_F_UNPRIVILEGED_DEV, 6.3+) takes every
 * command but ADD_DEV and GET_FEATURES with the path of its /dev/ublkcN at
 * the start of the buffer (dev_path_len bytes, counted in len): the kernel
 * checks the caller may read (and write) that node, then passes the rest
 * on.  GET_DEV_INFO2 takes the path whoever asks.
 */
#ifndef GELI_UBLK_ABI_H
#define GELI_UBLK_ABI_H

#include <linux/ioctl.h>
#include <stdint.h>

/* The command area of a control URING_CMD. */
struct ublk_ctrl_cmd {
	uint32_t dev_id;
	uint16_t queue_id;
	uint16_t len;			/* of the buffer at addr */
	uint64_t addr;
	uint64_t data[1];
	uint16_t dev_path_len;		/* the path that starts the buffer */
	uint16_t pad;
	uint32_t reserved;
};

/* ADD_DEV's and GET_DEV_INFO's buffer. */
struct ublk_dev_info {
	uint16_t nr_hw_queues;
	uint16_t queue_depth;
	uint16_t state;			/* UBLK_STATE_* */
	uint16_t pad0;
	uint32_t max_io_buf_bytes;
	uint32_t dev_id;
	int32_t ublksrv_pid;
	uint32_t pad1;
	uint64_t flags;			/* UBLK_F_* */
	uint64_t ublksrv_flags;		/* the server's own, kept for it */
	uint32_t owner_uid, owner_gid;
	uint64_t reserved1, reserved2;
};

#define UBLK_STATE_DEAD		0
#define UBLK_STATE_LIVE		1
#define UBLK_STATE_QUIESCED	2

/* Control commands: the plain numbers, and the ioctl encodings. */
enum {
	UBLK_CMD_GET_DEV_INFO = 0x02,
	UBLK_CMD_ADD_DEV = 0x04,
	UBLK_CMD_DEL_DEV = 0x05,
	UBLK_CMD_START_DEV = 0x06,
	UBLK_CMD_STOP_DEV = 0x07,
	UBLK_CMD_SET_PARAMS = 0x08,
	UBLK_CMD_START_USER_RECOVERY = 0x10,	/* with UBLK_F_USER_RECOVERY */
	UBLK_CMD_END_USER_RECOVERY = 0x11,	/* data[0]: the new server's pid */
	UBLK_CMD_GET_DEV_INFO2 = 0x12,	/* with the device's path, 6.2+ */
	UBLK_CMD_GET_FEATURES = 0x13,	/* 6.5+, ioctl-encoded only */
	UBLK_CMD_DEL_DEV_ASYNC = 0x14,	/* 6.9+, ioctl-encoded only */
	UBLK_CMD_UPDATE_SIZE = 0x15,	/* with UBLK_F_UPDATE_SIZE */
};
#define UBLK_IOC_R(nr)	_IOR('u', (nr), struct ublk_ctrl_cmd)
#define UBLK_IOC_RW(nr)	_IOWR('u', (nr), struct ublk_ctrl_cmd)
#define UBLK_U_CMD_GET_DEV_INFO	UBLK_IOC_R(UBLK_CMD_GET_DEV_INFO)
#define UBLK_U_CMD_ADD_DEV	UBLK_IOC_RW(UBLK_CMD_ADD_DEV)
#define UBLK_U_CMD_DEL_DEV	UBLK_IOC_RW(UBLK_CMD_DEL_DEV)
#define UBLK_U_CMD_START_DEV	UBLK_IOC_RW(UBLK_CMD_START_DEV)
#define UBLK_U_CMD_STOP_DEV	UBLK_IOC_RW(UBLK_CMD_STOP_DEV)
#define UBLK_U_CMD_SET_PARAMS	UBLK_IOC_RW(UBLK_CMD_SET_PARAMS)
#define UBLK_U_CMD_START_USER_RECOVERY UBLK_IOC_RW(UBLK_CMD_START_USER_RECOVERY)
#define UBLK_U_CMD_END_USER_RECOVERY UBLK_IOC_RW(UBLK_CMD_END_USER_RECOVERY)
#define UBLK_U_CMD_GET_DEV_INFO2 UBLK_IOC_R(UBLK_CMD_GET_DEV_INFO2)
#define UBLK_U_CMD_GET_FEATURES	UBLK_IOC_R(UBLK_CMD_GET_FEATURES)
#define UBLK_U_CMD_DEL_DEV_ASYNC UBLK_IOC_R(UBLK_CMD_DEL_DEV_ASYNC)
#define UBLK_U_CMD_UPDATE_SIZE	UBLK_IOC_RW(UBLK_CMD_UPDATE_SIZE)

/* Features (ADD_DEV's flags; GET_FEATURES answers the kernel's). */
/* Its server dead, the device waits (QUIESCED) for another to take it back
 * (START_USER_RECOVERY, a FETCH of every tag, END_USER_RECOVERY), and the
 * requests the dead one held are issued again (REISSUE).  Root's devices
 * only: the kernel clears both for an unprivileged one. */
#define UBLK_F_USER_RECOVERY	(1ULL << 3)
#define UBLK_F_USER_RECOVERY_REISSUE (1ULL << 4)
#define UBLK_F_UNPRIVILEGED_DEV	(1ULL << 5)
#define UBLK_F_CMD_IOCTL_ENCODE	(1ULL << 6)
#define UBLK_F_UPDATE_SIZE	(1ULL << 10)

/* What the kernel asks of a queue: one descriptor per tag, mapped read-only
 * from /dev/ublkcN at queue q * (the area's size rounded up to pages). */
struct ublk_io_desc {
	uint32_t op_flags;		/* op in bits 0-7, UBLK_IO_F_* above */
	uint32_t nr_sectors;		/* 512-byte sectors */
	uint64_t start_sector;
	uint64_t addr;
};
#define UBLK_IO_OP(d)		((d)->op_flags & 0xff)
#define UBLK_IO_OP_READ		0
#define UBLK_IO_OP_WRITE	1
#define UBLK_IO_OP_FLUSH	2
#define UBLK_IO_OP_DISCARD	3
#define UBLK_IO_OP_WRITE_ZEROES	5
#define UBLK_IO_F_FUA		(1U << 13)
#define UBLK_IO_F_NOUNMAP	(1U << 15)

/* The command area of an I/O URING_CMD (16 bytes: a plain 64-byte entry). */
struct ublk_io_cmd {
	uint16_t q_id;
	uint16_t tag;
	int32_t result;			/* COMMIT: bytes done, or -errno */
	uint64_t addr;			/* the tag's buffer */
};
enum {
	UBLK_IO_FETCH_REQ = 0x20,
	UBLK_IO_COMMIT_AND_FETCH_REQ = 0x21,
};
#define UBLK_U_IO_FETCH_REQ	_IOWR('u', UBLK_IO_FETCH_REQ, struct ublk_io_cmd)
#define UBLK_U_IO_COMMIT_AND_FETCH_REQ \
	_IOWR('u', UBLK_IO_COMMIT_AND_FETCH_REQ, struct ublk_io_cmd)
/* A fetch's completion: a request to serve, or the device going away. */
#define UBLK_IO_RES_OK		0
#define UBLK_IO_RES_ABORT	(-19)	/* -ENODEV */
#define UBLK_IO_DESC_OFFSET	0
#define UBLK_MAX_DEPTH		4096

/* SET_PARAMS: a header and the parameter blocks that types names. */
struct ublk_param_basic {
	uint32_t attrs;			/* UBLK_ATTR_* */
	uint8_t logical_bs_shift, physical_bs_shift;
	uint8_t io_opt_shift, io_min_shift;
	uint32_t max_sectors;
	uint32_t chunk_sectors;
	uint64_t dev_sectors;
	uint64_t virt_boundary_mask;
};
#define UBLK_ATTR_READ_ONLY		(1U << 0)
#define UBLK_ATTR_VOLATILE_CACHE	(1U << 2)
#define UBLK_ATTR_FUA			(1U << 3)

struct ublk_param_discard {
	uint32_t discard_alignment;
	uint32_t discard_granularity;
	uint32_t max_discard_sectors;
	uint32_t max_write_zeroes_sectors;
	uint16_t max_discard_segments;
	uint16_t reserved0;
};

struct ublk_params {
	uint32_t len;			/* of what follows types, and the header */
	uint32_t types;
	struct ublk_param_basic basic;
	struct ublk_param_discard discard;
};
#define UBLK_PARAM_TYPE_BASIC	(1U << 0)
#define UBLK_PARAM_TYPE_DISCARD	(1U << 1)

_Static_assert(sizeof(struct ublk_ctrl_cmd) == 32, "ublk control command");
_Static_assert(sizeof(struct ublk_dev_info) == 64, "ublk device info");
_Static_assert(sizeof(struct ublk_io_desc) == 24, "ublk I/O descriptor");
_Static_assert(sizeof(struct ublk_io_cmd) == 16, "ublk I/O command");
_Static_assert(sizeof(struct ublk_param_basic) == 32, "ublk basic params");
_Static_assert(sizeof(struct ublk_param_discard) == 20, "ublk discard");

#endif
