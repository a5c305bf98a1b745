/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A single-file FUSE mount over a backend (see fusefile.h), on libfuse's
 * lowlevel API: the session's life (mounted, adopted from a dead server,
 * stopped).  What it answers is fusefile_ops.c's.
 */
#include "fusefile_int.h"
#include <linux/fuse.h>		/* the messages (libfuse keeps its copy) */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/vfs.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "spawn.h"

/* The kernel's FUSE_NOTIFY_RESEND (protocol 7.40, Linux 6.9), newer than
 * libfuse 3.14's fuse_kernel.h: the requests a server read and did not
 * answer go back to the queue. */
#define FF_NOTIFY_RESEND	7
#define FF_RESEND_MINOR		40


/*
 * Reads of requests, each thread's buffer written to once before the
 * kernel first copies a request into it.  The kernel pins the pages of a
 * reader's buffer to copy a request in; a page it must fault in while the
 * reader is being killed fails the copy, and the kernel ends that request
 * with EIO, where a server that dies otherwise loses nothing
 * (fusefile_adopt).  libfuse keeps one buffer per thread for the thread's
 * life: touched once, it stays (locked, geli_protect_process).
 */
static __thread void *ff_touched;

static ssize_t
ff_io_read(int fd, void *buf, size_t len, void *userdata)
{
	long page = sysconf(_SC_PAGESIZE);

	(void)userdata;
	if (buf != ff_touched) {
		for (size_t o = 0; o < len; o += (size_t)page)
			((volatile char *)buf)[o] = 0;
		ff_touched = buf;
	}
	return read(fd, buf, len);
}

static ssize_t
ff_io_writev(int fd, struct iovec *iov, int count, void *userdata)
{
	(void)userdata;
	return writev(fd, iov, count);
}

static const struct fuse_custom_io ff_io = {
	.read = ff_io_read,
	.writev = ff_io_writev,
};

static void *
ff_loop(void *p)
{
	struct fusefile *f = p;
	struct fuse_loop_config *cfg;

	cfg = fuse_loop_cfg_create();
	fuse_loop_cfg_set_clone_fd(cfg, 0);
	fuse_loop_cfg_set_max_threads(cfg, 16);
	fuse_loop_cfg_set_idle_threads(cfg, 8);
	/* It returns when the file system is unmounted or the connection
	 * aborted; either way the session is over, which is all the daemon
	 * learns (fusefile_ended) and acts on. */
	(void)fuse_session_loop_mt(f->se, cfg);
	fuse_loop_cfg_destroy(cfg);
	f->ended = true;
	return NULL;
}

/* A fusefile with its session made (not mounted): NULL when out of memory
 * or libfuse refused the options. */
static struct fusefile *
ff_new(const char *mountpoint, const struct blockio *be,
    bool readonly, bool direct_io)
{
	char *argv[] = { "geli", "-o", "fsname=geli,subtype=geli", NULL };
	struct fuse_args args = FUSE_ARGS_INIT(3, argv);
	struct fusefile *f;

	f = calloc(1, sizeof(*f));
	if (f == NULL)
		return NULL;
	f->be = *be;
	f->readonly = readonly;
	f->direct_io = direct_io;
	f->mountpoint = strdup(mountpoint);
	clock_gettime(CLOCK_REALTIME, &f->mtime);
	f->se = fuse_session_new(&args, &fusefile_ops, sizeof(fusefile_ops), f);
	fuse_opt_free_args(&args);
	if (f->se == NULL || f->mountpoint == NULL) {
		if (f->se != NULL)
			fuse_session_destroy(f->se);
		free(f->mountpoint);
		free(f);
		return NULL;
	}
	return f;
}

static void
ff_free(struct fusefile *f)
{
	fuse_session_destroy(f->se);
	free(f->mountpoint);
	free(f);
}

/* The session's threads started, and the mount's device noted (its fusectl
 * entry): 0 or -EAGAIN (f freed, the mount left to the caller). */
static int
ff_run(struct fusefile *f)
{
	struct stat st;

	if (pthread_create(&f->th, NULL, ff_loop, f) != 0)
		return -EAGAIN;
	f->running = true;
	if (stat(f->mountpoint, &st) == 0)
		f->dev = st.st_dev;
	return 0;
}

int
fusefile_start(const char *mountpoint, const struct blockio *be,
    bool readonly, bool direct_io, struct fusefile **out)
{
	struct fusefile *f = ff_new(mountpoint, be, readonly, direct_io);

	if (f == NULL)
		return -EIO;
	if (fuse_session_mount(f->se, mountpoint) != 0) {
		ff_free(f);
		return -EIO;
	}
	if (fuse_session_custom_io(f->se, &ff_io, fuse_session_fd(f->se)) != 0 ||
	    ff_run(f) != 0) {
		fuse_session_unmount(f->se);
		ff_free(f);
		return -EAGAIN;
	}
	*out = f;
	return 0;
}

int
fusefile_fd(const struct fusefile *f)
{
	return fuse_session_fd(f->se);
}

void
fusefile_conn(const struct fusefile *f, struct fusefile_conn *c)
{
	*c = f->conn;
}

bool
fusefile_resumable(const struct fusefile_conn *c)
{
	return c->proto_minor >= FF_RESEND_MINOR;
}

/*
 * The FUSE_INIT the kernel sent the first server, told to the new session
 * so that it serves (libfuse answers nothing else until it has seen one):
 * the kernel sends it once per mount.  Its answer goes to the kernel under
 * a request number the kernel never gave out, and is dropped (ENOENT,
 * which libfuse takes for an interrupted request and does not report).
 * The flags are the ones that shape libfuse's buffers as they were shaped
 * for the first server (FUSE_MAX_PAGES: room for 1 MiB writes).
 */
static void
ff_replay_init(struct fusefile *f, const struct fusefile_conn *c)
{
	struct {
		struct fuse_in_header h;
		struct fuse_init_in in;
	} msg;
	struct fuse_buf fb = { .size = sizeof(msg), .mem = &msg };

	memset(&msg, 0, sizeof(msg));
	msg.h.len = sizeof(msg);
	msg.h.opcode = FUSE_INIT;
	msg.h.unique = UINT64_C(1) << 62;
	msg.in.major = FUSE_KERNEL_VERSION;
	msg.in.minor = c->proto_minor;
	msg.in.max_readahead = c->max_readahead;
	msg.in.flags = FUSE_ASYNC_READ | FUSE_BIG_WRITES | FUSE_MAX_PAGES |
	    FUSE_ASYNC_DIO | FUSE_ATOMIC_O_TRUNC | FUSE_AUTO_INVAL_DATA |
	    FUSE_PARALLEL_DIROPS;
	fuse_session_process_buf(f->se, &fb);
}

int
fusefile_adopt(int fd, const struct fusefile_conn *c, const char *mountpoint,
    const struct blockio *be, bool readonly, bool direct_io,
    struct fusefile **out)
{
	struct fuse_out_header resend = {
		.len = sizeof(resend), .error = FF_NOTIFY_RESEND, .unique = 0,
	};
	struct fusefile *f;

	if (!fusefile_resumable(c))
		return -EOPNOTSUPP;
	f = ff_new(mountpoint, be, readonly, direct_io);
	if (f == NULL)
		return -EIO;
	f->adopted = true;
	/* (libfuse reads fd as it would the device it mounted) */
	if (fuse_session_custom_io(f->se, &ff_io, fd) != 0) {
		ff_free(f);
		return -EIO;
	}
	ff_replay_init(f, c);
	if (ff_run(f) != 0) {
		ff_free(f);
		return -EAGAIN;
	}
	/* What the dead server read and did not answer, queued again (in the
	 * order it came): served now by these threads. */
	if (write(fd, &resend, sizeof(resend)) != (ssize_t)sizeof(resend)) {
		int error = -errno;

		fusefile_stop(f);
		return error;
	}
	*out = f;
	return 0;
}

void
fusefile_size_changed(struct fusefile *f)
{
	/* attributes are not cached: the next getattr sees the new size. */
	clock_gettime(CLOCK_REALTIME, &f->mtime);
}

bool
fusefile_ended(struct fusefile *f)
{
	return f->ended;
}

/* The abort file of the connection at path: "1" written. */
static void
ff_abort_write(const char *path)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd >= 0) {
		(void)!write(fd, "1", 1);
		close(fd);
	}
}

/*
 * Abort the connection through fusectl: files still open (a forced detach)
 * then get errors, and the session's threads stop waiting for requests.
 * Where the host has no fusectl mounted (systemd mounts it at boot; other
 * systems may not), a thread mounts it in a mount namespace of its own
 * (unshare(CLONE_NEWNS) is the thread's alone), so that the host's mounts
 * stay as they were; a thread rather than a forked child, whose _exit a
 * checker at exit (valgrind) would see holding the other threads' memory
 * as lost.  Best effort: without fusectl, or when the abort is refused
 * (not root), the caller's join waits for the last open file to close
 * instead.
 */
#define FUSECTL_SUPER_MAGIC 0x65735543	/* the kernel's fs/fuse/control.c */
#define FUSECTL_DIR "/sys/fs/fuse/connections"

static void *
ff_abort_ns(void *path)
{
	/* ("none": a propagation change ignores source and type; valgrind
	 * still reads them.) */
	if (unshare(CLONE_NEWNS) == 0 &&
	    mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) == 0 &&
	    mount("fusectl", FUSECTL_DIR, "fusectl", 0, NULL) == 0)
		ff_abort_write(path);
	return NULL;
}

static void
ff_abort(struct fusefile *f)
{
	char path[128];
	struct statfs sf;
	pthread_t t;

	snprintf(path, sizeof(path), "%s/%u/abort", FUSECTL_DIR,
	    minor(f->dev));
	if (statfs(FUSECTL_DIR, &sf) != 0 || sf.f_type == FUSECTL_SUPER_MAGIC) {
		ff_abort_write(path);
		return;
	}
	if (pthread_create(&t, NULL, ff_abort_ns, path) == 0)
		pthread_join(t, NULL);
}

/*
 * An adopted session's mount is not libfuse's (it only knows the device):
 * undone as libfuse undoes its own, lazily, by root itself and for anyone
 * else by fusermount3.
 */
static void
ff_unmount(struct fusefile *f)
{
	if (!f->adopted) {
		fuse_session_unmount(f->se);
		return;
	}
	if (geteuid() == 0)
		(void)umount2(f->mountpoint, MNT_DETACH);
	else
		(void)run_cmd(SPAWN_QUIET, NULL, NULL, "fusermount3", "-u", "-q",
		    "-z", "--", f->mountpoint, (char *)NULL);
}

void
fusefile_stop(struct fusefile *f)
{
	struct timespec ts;

	if (f == NULL)
		return;
	if (f->running) {
		fuse_session_exit(f->se);
		ff_unmount(f);
		/* Unmounted lazily: open files keep the session alive. */
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 500000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		if (pthread_timedjoin_np(f->th, NULL, &ts) != 0) {
			ff_abort(f);
			pthread_join(f->th, NULL);
		}
	}
	ff_free(f);
}
