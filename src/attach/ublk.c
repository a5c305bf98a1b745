/* SPDX-License-Identifier: BSD-2-Clause */
/* The ublk front end (ublk.h), on liburing and the definitions of ublk_abi.h. */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ublk.h"
#include "ublk_ctl.h"

/*
 * A queue's thread serves one request at a time, so a deep queue buys
 * little; its buffers (QUEUE_DEPTH * MAX_IO, locked as they are touched)
 * cost: 8 MiB a queue, at most MAX_QUEUES a device, whatever the number
 * of CPUs (the kernel maps several CPUs to one queue).
 */
#define QUEUE_DEPTH	32
#define MAX_QUEUES	4
#define MAX_IO		(256u << 10)	/* bytes per request */

/* ---- Queues ---------------------------------------------------------------------- */

struct ublk;

struct queue {
	struct ublk *u;
	uint16_t q;
	struct io_uring ring;
	bool ring_made;
	const struct ublk_io_desc *descs;
	size_t descs_len;
	uint8_t *bufs;			/* QUEUE_DEPTH * MAX_IO */
	pthread_t thread;
	bool running;
	atomic_bool fetched;		/* every tag's FETCH submitted */
	int error;
};

struct ublk {
	struct blockio be;
	struct ublk_conf conf;
	struct uctl ctl;
	uint32_t id;
	bool added, started;
	bool user;			/* an ordinary user's device */
	bool recoverable;		/* waits for a new server if we die */
	int cdev;
	unsigned nq;
	struct queue *qs;
	_Atomic uint64_t size;		/* conf.size, as it grows */
	int setup_lock;			/* held from ADD_DEV to START_DEV */
	atomic_bool stopping;
	atomic_uint ended;		/* queues whose thread returned */
	atomic_uint lost;		/* slots the kernel cancelled while
					 * we served (ublk_ctl.h) */
	_Atomic uint64_t requests;
};

static void
prep_io(struct queue *qu, unsigned op, uint16_t tag, int32_t result)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&qu->ring);
	struct ublk_io_cmd cmd = {
		.q_id = qu->q, .tag = tag, .result = result,
		.addr = (uint64_t)(uintptr_t)(qu->bufs + (size_t)tag * MAX_IO),
	};

	/* (never NULL: one entry per tag, and a tag has one command) */
	if (sqe == NULL)
		abort();
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = qu->u->cdev;
	sqe->cmd_op = qu->u->ctl.encoded ?
	    (op == UBLK_IO_FETCH_REQ ? UBLK_U_IO_FETCH_REQ :
	    UBLK_U_IO_COMMIT_AND_FETCH_REQ) : op;
	sqe->user_data = tag;
	memcpy(sqe->cmd, &cmd, sizeof(cmd));
}

/*
 * One request, as the backend answers it: the bytes done, or -errno.  What
 * the kernel should never ask (beyond the end, not on a block boundary,
 * larger than the buffer, an operation we did not offer) is refused.
 */
static int32_t
serve(struct ublk *u, const struct ublk_io_desc *d, uint8_t *buf)
{
	const struct blockio *be = &u->be;
	uint64_t off = d->start_sector << 9, len = (uint64_t)d->nr_sectors << 9;
	uint64_t size = atomic_load(&u->size);
	uint32_t lbs = u->conf.sectorsize > 4096 ? 4096 : u->conf.sectorsize;
	unsigned op = UBLK_IO_OP(d);
	ssize_t n;
	int error;

	if (op == UBLK_IO_OP_FLUSH)
		return be->flush(be->arg);
	if (off > size || len > size - off ||
	    off % lbs != 0 || len % lbs != 0)
		return -EIO;
	switch (op) {
	case UBLK_IO_OP_READ:
	case UBLK_IO_OP_WRITE:
		if (len > MAX_IO)
			return -EIO;
		if (op == UBLK_IO_OP_READ) {
			n = be->read(be->arg, buf, len, off);
		} else {
			if (u->conf.readonly)
				return -EROFS;
			n = be->write(be->arg, buf, len, off);
			if (n == (ssize_t)len && (d->op_flags & UBLK_IO_F_FUA) &&
			    (error = be->flush(be->arg)) != 0)
				return error;
		}
		if (n >= 0 && (uint64_t)n != len)
			return -EIO;
		return (int32_t)n;
	case UBLK_IO_OP_DISCARD:
	case UBLK_IO_OP_WRITE_ZEROES:
		if (u->conf.readonly)
			return -EROFS;
		/* as the loop driver asks a file: a hole unless told to keep
		 * the blocks */
		error = be->zero(be->arg, off, len, op == UBLK_IO_OP_DISCARD ||
		    !(d->op_flags & UBLK_IO_F_NOUNMAP));
		return error != 0 ? error : 0;
	default:
		return -EOPNOTSUPP;
	}
}

/*
 * The queue's ring, made by the thread that alone uses it: the kernel's
 * completions then wait in the ring (DEFER_TASKRUN), not in the thread's
 * task work, which at a killed server's exit met a kernel bug (Debian's
 * 6.12.95 panicked in io_fallback_tw).  Before 6.1: a plain ring.
 */
static int
queue_ring(struct queue *qu)
{
	int error;

	error = io_uring_queue_init(QUEUE_DEPTH, &qu->ring,
	    IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN);
	if (error == -EINVAL)
		error = io_uring_queue_init(QUEUE_DEPTH, &qu->ring, 0);
	if (error < 0)
		return error;
	qu->ring_made = true;
	return 0;
}

static void *
queue_main(void *arg)
{
	struct queue *qu = arg;
	struct ublk *u = qu->u;
	struct __kernel_timespec ts = { .tv_sec = 1 };
	struct io_uring_cqe *cqe;
	unsigned inflight = QUEUE_DEPTH, idle = 0, head, seen;
	int error;

	if ((error = queue_ring(qu)) != 0) {
		qu->error = error;
		atomic_store(&qu->fetched, true);
		atomic_fetch_add(&u->ended, 1);
		return NULL;
	}
	for (uint16_t tag = 0; tag < QUEUE_DEPTH; tag++)
		prep_io(qu, UBLK_IO_FETCH_REQ, tag, -1);
	error = io_uring_submit(&qu->ring);
	if (error != QUEUE_DEPTH) {
		qu->error = error < 0 ? error : -EIO;
		inflight = 0;
	}
	atomic_store(&qu->fetched, true);
	while (inflight > 0) {
		error = io_uring_submit_and_wait_timeout(&qu->ring, &cqe, 1,
		    &ts, NULL);
		if (error == -ETIME || error == -EINTR) {
			/* Stopped: the kernel ends our commands; a kernel
			 * that does not is left to the ring's exit. */
			if (atomic_load(&u->stopping) && ++idle >= 3)
				break;
			continue;
		}
		if (error < 0) {
			qu->error = error;
			break;
		}
		idle = 0;
		seen = 0;
		io_uring_for_each_cqe(&qu->ring, head, cqe) {
			uint16_t tag = (uint16_t)cqe->user_data;

			seen++;
			/* (requests are served while the device stops: its
			 * removal waits for them, a file system's last
			 * writes among them) */
			if (cqe->res != UBLK_IO_RES_OK || tag >= QUEUE_DEPTH) {
				/* aborted (the device goes away) or refused */
				if (cqe->res == UBLK_IO_RES_ABORT &&
				    !atomic_load(&u->stopping))
					atomic_fetch_add(&u->lost, 1);
				inflight--;
				continue;
			}
			atomic_fetch_add_explicit(&u->requests, 1,
			    memory_order_relaxed);
			prep_io(qu, UBLK_IO_COMMIT_AND_FETCH_REQ, tag,
			    serve(u, &qu->descs[tag],
			    qu->bufs + (size_t)tag * MAX_IO));
		}
		io_uring_cq_advance(&qu->ring, seen);
	}
	atomic_fetch_add(&u->ended, 1);
	return NULL;
}

static void
queue_close(struct queue *qu)
{
	if (qu->descs != NULL)
		munmap((void *)qu->descs, qu->descs_len);
	if (qu->ring_made)
		io_uring_queue_exit(&qu->ring);
	free(qu->bufs);
}

static int
queue_open(struct ublk *u, struct queue *qu, uint16_t q)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t stride = ((size_t)UBLK_MAX_DEPTH * sizeof(struct ublk_io_desc) +
	    (size_t)page - 1) / (size_t)page * (size_t)page;
	void *p;

	qu->u = u;
	qu->q = q;
	qu->descs_len = ((size_t)QUEUE_DEPTH * sizeof(struct ublk_io_desc) +
	    (size_t)page - 1) / (size_t)page * (size_t)page;
	/* Queue q's descriptors are at q times the largest queue's area. */
	p = mmap(NULL, qu->descs_len, PROT_READ, MAP_SHARED | MAP_POPULATE,
	    u->cdev, (off_t)(UBLK_IO_DESC_OFFSET + q * stride));
	if (p == MAP_FAILED)
		return -errno;
	qu->descs = p;
	/* (in locked memory, as all of the daemon's: geli_protect_process) */
	qu->bufs = aligned_alloc((size_t)page, (size_t)QUEUE_DEPTH * MAX_IO);
	if (qu->bufs == NULL)
		return -ENOMEM;
	return 0;
}

/* ---- The device ------------------------------------------------------------------ */

static int
open_cdev(struct ublk *u, char *why, size_t len)
{
	char path[64];
	int error, fd;

	snprintf(path, sizeof(path), "/dev/ublkc%u", u->id);
	if ((error = uctl_node_ready(path, u->user, R_OK | W_OK)) == 0 &&
	    (fd = open(path, O_RDWR | O_CLOEXEC)) >= 0)
		return fd;
	error = error != 0 ? error : -errno;
	snprintf(why, len, "%s: %s%s", path, strerror(-error), error ==
	    -EACCES ? " (not given to its owner: no udev rule "
	    "61-geli-ublk.rules?)" : "");
	return error;
}

void
ublk_stop(struct ublk *u)
{
	int lk;

	if (u == NULL)
		return;
	lk = u->setup_lock >= 0 ? u->setup_lock : uctl_setup_lock();
	atomic_store(&u->stopping, true);
	if (u->started)
		(void)uctl_cmd(&u->ctl, UBLK_CMD_STOP_DEV, u->id, u->user, NULL,
		    0, 0);
	for (unsigned q = 0; q < u->nq; q++) {
		if (u->qs[q].running)
			pthread_join(u->qs[q].thread, NULL);
		queue_close(&u->qs[q]);
	}
	if (u->cdev >= 0)
		close(u->cdev);
	/* (after the rings: the character device closed) */
	if (u->added)
		uctl_delete_dev(&u->ctl, u->id, u->user, lk);
	uctl_close(&u->ctl);
	uctl_setup_unlock(lk);
	free(u->qs);
	free(u);
}

/* A device's state, its control device opened: NULL (-errno in *error,
 * why) when not. */
static struct ublk *
ublk_new(const struct blockio *be, const struct ublk_conf *c,
    unsigned nq, char *why, size_t whylen, int *error)
{
	struct ublk *u = calloc(1, sizeof(*u));

	*error = -ENOMEM;
	if (u == NULL)
		return NULL;
	u->be = *be;
	u->conf = *c;
	atomic_store(&u->size, c->size);
	u->cdev = -1;
	u->setup_lock = -1;
	u->nq = nq;
	u->qs = calloc(u->nq, sizeof(*u->qs));
	if (u->qs == NULL || (*error = uctl_open(&u->ctl, why, whylen)) != 0) {
		free(u->qs);
		free(u);
		return NULL;
	}
	return u;
}

/* Every queue's thread started, and every tag's FETCH submitted: 0, or
 * -errno (*step says where). */
static int
start_queues(struct ublk *u, const char **step)
{
	int error;

	*step = "queue";
	for (unsigned q = 0; q < u->nq; q++) {
		if ((error = queue_open(u, &u->qs[q], (uint16_t)q)) != 0)
			return error;
		error = -pthread_create(&u->qs[q].thread, NULL, queue_main,
		    &u->qs[q]);
		if (error != 0)
			return error;
		u->qs[q].running = true;
	}
	for (unsigned q = 0; q < u->nq; q++) {
		while (!atomic_load(&u->qs[q].fetched))
			usleep(1000);
		if ((error = u->qs[q].error) != 0)
			return error;
	}
	return 0;
}

int
ublk_start(const struct blockio *be, const struct ublk_conf *c,
    struct ublk **out, char *dev, size_t devlen, char *why, size_t whylen)
{
	struct ublk_dev_info info;
	struct ublk *u;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	const char *step;
	bool recover;
	int error;

	*out = NULL;
	u = ublk_new(be, c, ncpu <= 0 ? 1 : ncpu > MAX_QUEUES ? MAX_QUEUES :
	    (unsigned)ncpu, why, whylen, &error);
	if (u == NULL)
		return error;
	/* Root's device outlives its server where the kernel can wait for
	 * another (a keeper starts one): the requests it held are issued
	 * again (GELI writes the same bytes for the same data).  Before 6.15
	 * (no UPDATE_SIZE, 6.16) a death runs the quiesce work once per
	 * queue, and a run after the next server's START_USER_RECOVERY
	 * aborts its commands (a request given to one is lost): one queue. */
	recover = !u->ctl.user && c->keeper > 0 &&
	    (u->ctl.features & UBLK_F_USER_RECOVERY_REISSUE);
	if (recover && !(u->ctl.features & UBLK_F_UPDATE_SIZE))
		u->nq = 1;
	u->setup_lock = uctl_setup_lock();
	uctl_delete_orphans(&u->ctl, u->setup_lock);

	step = "ADD_DEV";
	memset(&info, 0, sizeof(info));
	info.nr_hw_queues = (uint16_t)u->nq;
	info.queue_depth = QUEUE_DEPTH;
	info.max_io_buf_bytes = MAX_IO;
	info.dev_id = (uint32_t)-1;
	info.ublksrv_pid = getpid();
	info.ublksrv_flags = GELI_UBLK_MARK |
	    (uint64_t)(uint32_t)c->keeper << 32;
	info.flags = (u->ctl.encoded ? UBLK_F_CMD_IOCTL_ENCODE : 0) |
	    (u->ctl.user ? UBLK_F_UNPRIVILEGED_DEV : 0);
	if (recover)
		info.flags |= UBLK_F_USER_RECOVERY |
		    UBLK_F_USER_RECOVERY_REISSUE;
	error = uctl_cmd(&u->ctl, UBLK_CMD_ADD_DEV, (uint32_t)-1, false, &info,
	    sizeof(info), 0);
	if (error != 0)
		goto fail;
	u->added = true;
	u->id = info.dev_id;
	/* (the kernel clears the flag for root, and recovery for a user) */
	u->user = (info.flags & UBLK_F_UNPRIVILEGED_DEV) != 0;
	u->recoverable = (info.flags & UBLK_F_USER_RECOVERY) != 0;
	/* (first: an ordinary user's commands name the node they may open) */
	if ((error = u->cdev = open_cdev(u, why, whylen)) < 0)
		goto failed;
	step = "SET_PARAMS";
	if ((error = uctl_set_params(&u->ctl, u->id, u->user, &u->conf,
	    MAX_IO)) != 0)
		goto fail;
	if ((error = start_queues(u, &step)) != 0)
		goto fail;
	/* (the kernel waits for every tag's FETCH, then adds the disk) */
	step = "START_DEV";
	error = uctl_cmd(&u->ctl, UBLK_CMD_START_DEV, u->id, u->user, NULL, 0,
	    (uint64_t)getpid());
	if (error != 0)
		goto fail;
	u->started = true;
	snprintf(dev, devlen, "/dev/ublkb%u", u->id);
	/* (an ordinary user's, once udev gave it to them) */
	error = uctl_node_ready(dev, u->user, R_OK | (c->readonly ? 0 : W_OK));
	if (error != 0) {
		step = dev;
		goto fail;
	}
	uctl_setup_unlock(u->setup_lock);
	u->setup_lock = -1;
	*out = u;
	return 0;
fail:
	snprintf(why, whylen, "%s: %s", step, strerror(-error));
failed:
	ublk_stop(u);
	return error;
}

/*
 * START_USER_RECOVERY is refused (EBUSY) until the kernel has let go of
 * the dead server: every thread gone, its ring torn down, and the device
 * quiesced (6.1 notices the death only at its next 5-second check): asked
 * again every 10 ms for a second, then every 100 ms, 30 s in all.
 */
#define RECOVER_TRIES	390

int
ublk_recover(const struct blockio *be, const struct ublk_conf *c,
    uint32_t id, struct ublk **out, char *dev, size_t devlen, char *why,
    size_t whylen)
{
	struct ublk_dev_info info;
	const char *step = "GET_DEV_INFO";
	struct ublk *u;
	int error;

	*out = NULL;
	/* (room for the most queues; the device says how many it has) */
	u = ublk_new(be, c, MAX_QUEUES, why, whylen, &error);
	if (u == NULL)
		return error;
	u->nq = 0;
	u->id = id;
	if ((error = uctl_dev_info(&u->ctl, id, &info)) != 0)
		goto fail;
	/* (its server gone: another daemon's live device is not ours) */
	error = -EBUSY;
	if (info.ublksrv_pid > 0 && info.ublksrv_pid != getpid() &&
	    kill(info.ublksrv_pid, 0) == 0)
		goto fail;
	error = -EINVAL;
	if (!GELI_UBLK_MARKED(info.ublksrv_flags) ||
	    !(info.flags & UBLK_F_USER_RECOVERY) ||
	    info.queue_depth != QUEUE_DEPTH || info.nr_hw_queues == 0 ||
	    info.nr_hw_queues > MAX_QUEUES)
		goto fail;
	/* Ours from here: deleted if it cannot be taken back. */
	u->added = true;
	u->started = true;
	u->recoverable = true;
	u->nq = info.nr_hw_queues;
	step = "START_USER_RECOVERY";
	for (int i = 0; i < RECOVER_TRIES; i++) {
		error = uctl_cmd(&u->ctl, UBLK_CMD_START_USER_RECOVERY, id,
		    false, NULL, 0, 0);
		if (error != -EBUSY)
			break;
		usleep(i < 100 ? 10000 : 100000);
	}
	if (error != 0)
		goto fail;
	if (!(u->ctl.features & UBLK_F_UPDATE_SIZE))
		(void)uctl_quiesce_settled();
	if ((error = u->cdev = open_cdev(u, why, whylen)) < 0)
		goto failed;
	if ((error = start_queues(u, &step)) != 0)
		goto fail;
	/* (a slot cancelled: the device, kept, waits for another server) */
	if (atomic_load(&u->lost) > 0)
		return -EAGAIN;
	/* (the kernel waits for every tag's FETCH, then serves again; its
	 * parameters stay as the first server set them) */
	step = "END_USER_RECOVERY";
	error = uctl_cmd(&u->ctl, UBLK_CMD_END_USER_RECOVERY, id, false, NULL,
	    0, (uint64_t)getpid());
	if (error != 0)
		goto fail;
	snprintf(dev, devlen, "/dev/ublkb%u", id);
	*out = u;
	return 0;
fail:
	snprintf(why, whylen, "%s: %s", step, strerror(-error));
failed:
	ublk_stop(u);
	return error;
}

int32_t
ublk_waiting_id(const struct ublk *u)
{
	return u->recoverable ? (int32_t)u->id : -1;
}

int
ublk_resize(struct ublk *u, uint64_t size)
{
	uint64_t old = atomic_load(&u->size);
	int error;

	if (!(u->ctl.features & UBLK_F_UPDATE_SIZE))
		return -EOPNOTSUPP;
	/* (served before the kernel sends the first request beyond the old
	 * end; the provider has grown already) */
	if (size > old)
		atomic_store(&u->size, size);
	error = uctl_cmd(&u->ctl, UBLK_CMD_UPDATE_SIZE, u->id, u->user, NULL, 0,
	    size >> 9);
	atomic_store(&u->size, error == 0 ? size : old);
	return error;
}

bool
ublk_ended(struct ublk *u)
{
	return atomic_load(&u->ended) == u->nq;
}

unsigned
ublk_lost(struct ublk *u)
{
	unsigned n = atomic_load(&u->lost);
	struct ublk_dev_info info;

	/* (a device stopped or deleted by another aborts every slot) */
	return n > 0 && uctl_dev_info(&u->ctl, u->id, &info) == 0 &&
	    info.state == UBLK_STATE_LIVE ? n : 0;
}

uint64_t
ublk_requests(struct ublk *u)
{
	return atomic_load(&u->requests);
}

