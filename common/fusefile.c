/* SPDX-License-Identifier: BSD-2-Clause */
/* A single-file FUSE mount over a backend (see fusefile.h). */
#define FUSE_USE_VERSION 314
#include <fuse.h>

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

#include "fusefile.h"
#include "geli.h"

struct fusefile {
	struct fusefile_backend be;
	dev_t dev;			/* the mount's device: its fusectl entry */
	struct fuse *fuse;
	pthread_t th;
	bool readonly, direct_io, running, ended;
	struct timespec mtime;
	char *mountpoint;
};

static struct fusefile *
ff(void)
{
	return fuse_get_context()->private_data;
}

static int
ff_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	struct fusefile *f = ff();

	(void)fi;
	if (strcmp(path, "/") != 0)
		return -ENOENT;
	memset(st, 0, sizeof(*st));
	st->st_mode = S_IFREG | (f->readonly ? 0400 : 0600);
	st->st_nlink = 1;
	st->st_uid = getuid();
	st->st_gid = getgid();
	st->st_size = (off_t)f->be.size(f->be.arg);
	st->st_blksize = 65536;
	st->st_blocks = (st->st_size + 511) / 512;
	st->st_mtim = st->st_ctim = st->st_atim = f->mtime;
	return 0;
}

static int
ff_open(const char *path, struct fuse_file_info *fi)
{
	struct fusefile *f = ff();
	bool w = (fi->flags & O_ACCMODE) != O_RDONLY;

	if (strcmp(path, "/") != 0)
		return -ENOENT;
	if (w && f->readonly)
		return -EROFS;
	fi->direct_io = f->direct_io;
	fi->keep_cache = !f->direct_io;
	fi->nonseekable = 0;
	if (f->be.opened != NULL)
		f->be.opened(f->be.arg, w);
	return 0;
}

static int
ff_release(const char *path, struct fuse_file_info *fi)
{
	struct fusefile *f = ff();

	(void)path;
	if (f->be.closed != NULL)
		f->be.closed(f->be.arg, (fi->flags & O_ACCMODE) != O_RDONLY);
	return 0;
}

static int
ff_read(const char *path, char *buf, size_t len, off_t off,
    struct fuse_file_info *fi)
{
	struct fusefile *f = ff();
	ssize_t n;

	(void)path;
	(void)fi;
	n = f->be.read(f->be.arg, buf, len, (uint64_t)off);
	/* An integrity failure is an I/O error, never data. */
	return n == -EBADMSG ? -EIO : (int)n;
}

static int
ff_write(const char *path, const char *buf, size_t len, off_t off,
    struct fuse_file_info *fi)
{
	struct fusefile *f = ff();
	ssize_t n;

	(void)path;
	(void)fi;
	if (f->readonly)
		return -EROFS;
	n = f->be.write(f->be.arg, buf, len, (uint64_t)off);
	if (n > 0)
		clock_gettime(CLOCK_REALTIME, &f->mtime);
	return n == -EBADMSG ? -EIO : (int)n;
}

/* close(2): nothing to write back (direct I/O), and no durability promise. */
static int
ff_flush(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	(void)fi;
	return 0;
}

/* fsync(2) and fdatasync(2) reach the provider. */
static int
ff_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	struct fusefile *f = ff();

	(void)path;
	(void)datasync;
	(void)fi;
	return f->readonly ? 0 : f->be.flush(f->be.arg);
}

static int
ff_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	struct fusefile *f = ff();

	(void)path;
	(void)fi;
	/* A disk has the size it has: only a no-op truncate succeeds. */
	return (uint64_t)size == f->be.size(f->be.arg) ? 0 : -EPERM;
}

static int
ff_utimens(const char *path, const struct timespec tv[2],
    struct fuse_file_info *fi)
{
	(void)path;
	(void)tv;
	(void)fi;
	return 0;
}

/*
 * fallocate(2) on a file that is a disk: its size stays.  PUNCH_HOLE (what
 * the loop driver sends for a discard, and for WRITE_ZEROES) and ZERO_RANGE
 * leave zeros; allocating is done already within the size.
 */
static int
ff_fallocate(const char *path, int mode, off_t off, off_t len,
    struct fuse_file_info *fi)
{
	struct fusefile *f = ff();
	bool keep = mode & FALLOC_FL_KEEP_SIZE;
	int error;

	(void)path;
	(void)fi;
	if (f->readonly)
		return -EROFS;
	if (off < 0 || len <= 0)
		return -EINVAL;
	mode &= ~FALLOC_FL_KEEP_SIZE;
	if (mode != 0 && mode != FALLOC_FL_PUNCH_HOLE &&
	    mode != FALLOC_FL_ZERO_RANGE)
		return -EOPNOTSUPP;
	if (mode == FALLOC_FL_PUNCH_HOLE && !keep)
		return -EOPNOTSUPP;	/* as for any file */
	/* Past the end only without a change of size. */
	if (!keep && (uint64_t)off + (uint64_t)len > f->be.size(f->be.arg))
		return -ENOSPC;
	if (mode == 0)
		return 0;
	if (f->be.zero == NULL)
		return -EOPNOTSUPP;
	error = f->be.zero(f->be.arg, (uint64_t)off, (uint64_t)len,
	    mode == FALLOC_FL_PUNCH_HOLE);
	if (error == 0)
		clock_gettime(CLOCK_REALTIME, &f->mtime);
	return error == -EBADMSG ? -EIO : error;
}

/* One attribute, read-only: the sector size a stacked provider takes. */
static int
ff_getxattr(const char *path, const char *name, char *value, size_t size)
{
	struct fusefile *f = ff();
	char v[16];
	int n;

	if (strcmp(path, "/") != 0)
		return -ENOENT;
	if (f->be.sectorsize == 0 || strcmp(name, GELI_XATTR_SECTORSIZE) != 0)
		return -ENODATA;
	n = snprintf(v, sizeof(v), "%u", (unsigned)f->be.sectorsize);
	if (size == 0)
		return n;
	if (size < (size_t)n)
		return -ERANGE;
	memcpy(value, v, (size_t)n);
	return n;
}

static int
ff_listxattr(const char *path, char *list, size_t size)
{
	struct fusefile *f = ff();
	size_t n = sizeof(GELI_XATTR_SECTORSIZE);

	if (strcmp(path, "/") != 0)
		return -ENOENT;
	if (f->be.sectorsize == 0)
		return 0;
	if (size == 0)
		return (int)n;
	if (size < n)
		return -ERANGE;
	memcpy(list, GELI_XATTR_SECTORSIZE, n);
	return (int)n;
}

static void *
ff_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	(void)conn;
	cfg->use_ino = 0;
	cfg->attr_timeout = 0;	/* size changes (resize) show at once */
	cfg->entry_timeout = 0;
	cfg->negative_timeout = 0;
	cfg->direct_io = 0;
	return fuse_get_context()->private_data;
}

static const struct fuse_operations ff_ops = {
	.init = ff_init,
	.getattr = ff_getattr,
	.open = ff_open,
	.read = ff_read,
	.write = ff_write,
	.flush = ff_flush,
	.fsync = ff_fsync,
	.release = ff_release,
	.truncate = ff_truncate,
	.utimens = ff_utimens,
	.fallocate = ff_fallocate,
	.getxattr = ff_getxattr,
	.listxattr = ff_listxattr,
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
	(void)fuse_loop_mt(f->fuse, cfg);
	fuse_loop_cfg_destroy(cfg);
	f->ended = true;
	return NULL;
}

int
fusefile_start(const char *mountpoint, const struct fusefile_backend *be,
    bool readonly, bool direct_io, struct fusefile **out)
{
	char *argv[] = { "geli", "-o", "fsname=geli,subtype=geli", NULL };
	struct fuse_args args = FUSE_ARGS_INIT(3, argv);
	struct fusefile *f;

	f = calloc(1, sizeof(*f));
	if (f == NULL)
		return -ENOMEM;
	f->be = *be;
	f->readonly = readonly;
	f->direct_io = direct_io;
	f->mountpoint = strdup(mountpoint);
	clock_gettime(CLOCK_REALTIME, &f->mtime);
	f->fuse = fuse_new(&args, &ff_ops, sizeof(ff_ops), f);
	fuse_opt_free_args(&args);
	if (f->fuse == NULL || f->mountpoint == NULL) {
		free(f->mountpoint);
		free(f);
		return -EIO;
	}
	if (fuse_mount(f->fuse, mountpoint) != 0) {
		fuse_destroy(f->fuse);
		free(f->mountpoint);
		free(f);
		return -EIO;
	}
	if (pthread_create(&f->th, NULL, ff_loop, f) != 0) {
		fuse_unmount(f->fuse);
		fuse_destroy(f->fuse);
		free(f->mountpoint);
		free(f);
		return -EAGAIN;
	}
	f->running = true;
	/* The mount's device (its fusectl entry), asked of the running loop. */
	struct stat st;
	if (stat(mountpoint, &st) == 0)
		f->dev = st.st_dev;
	*out = f;
	return 0;
}

void
fusefile_size_changed(struct fusefile *f)
{
	/* attr_timeout is 0: the next getattr sees the new size. */
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

void
fusefile_stop(struct fusefile *f)
{
	struct timespec ts;

	if (f == NULL)
		return;
	if (f->running) {
		fuse_exit(f->fuse);
		fuse_unmount(f->fuse);
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
	fuse_destroy(f->fuse);
	free(f->mountpoint);
	free(f);
}
