/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the FUSE file system of fusefile.c answers: one inode (the root,
 * FUSE_ROOT_ID) that is a regular file of the backend's bytes, so there is
 * no table of nodes or handles to keep, and a server that takes a session
 * over from a dead one (fusefile_adopt) answers the old one's requests as
 * its own.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fusefile_int.h"
#include "geli.h"

static int
ff_eio(ssize_t n)
{
	/* An integrity failure is an I/O error, never data. */
	return n == -EBADMSG ? -EIO : (int)n;
}

static void
ff_init(void *arg, struct fuse_conn_info *conn)
{
	struct fusefile *f = arg;

	f->conn.proto_minor = conn->proto_minor;
	f->conn.max_readahead = conn->max_readahead;
}

static void
ff_stat(struct fusefile *f, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = FUSE_ROOT_ID;
	st->st_mode = S_IFREG | (f->readonly ? 0400 : 0600);
	st->st_nlink = 1;
	st->st_uid = getuid();
	st->st_gid = getgid();
	st->st_size = (off_t)f->be.size(f->be.arg);
	st->st_blksize = 65536;
	st->st_blocks = (st->st_size + 511) / 512;
	st->st_mtim = st->st_ctim = st->st_atim = f->mtime;
}

/* The root is the file; it has no names under it. */
static void
ff_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	(void)parent;
	(void)name;
	fuse_reply_err(req, ENOENT);
}

static void
ff_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fusefile *f = fuse_req_userdata(req);
	struct stat st;

	(void)fi;
	if (ino != FUSE_ROOT_ID) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	ff_stat(f, &st);
	/* (no caching: a size change, after a resize, shows at once) */
	fuse_reply_attr(req, &st, 0.0);
}

/* A disk has the size it has: only a no-op truncate succeeds; times are
 * taken and forgotten; owner and mode stay. */
static void
ff_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
    struct fuse_file_info *fi)
{
	struct fusefile *f = fuse_req_userdata(req);
	struct stat st;

	(void)fi;
	if (ino != FUSE_ROOT_ID) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	if (to_set & (FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID |
	    FUSE_SET_ATTR_GID)) {
		fuse_reply_err(req, ENOSYS);
		return;
	}
	if ((to_set & FUSE_SET_ATTR_SIZE) &&
	    (uint64_t)attr->st_size != f->be.size(f->be.arg)) {
		fuse_reply_err(req, EPERM);
		return;
	}
	ff_stat(f, &st);
	fuse_reply_attr(req, &st, 0.0);
}

static void
ff_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fusefile *f = fuse_req_userdata(req);
	bool w = (fi->flags & O_ACCMODE) != O_RDONLY;

	if (ino != FUSE_ROOT_ID) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	if (w && f->readonly) {
		fuse_reply_err(req, EROFS);
		return;
	}
	fi->direct_io = f->direct_io;
	fi->keep_cache = !f->direct_io;
	fi->nonseekable = 0;
	if (f->be.opened != NULL)
		f->be.opened(f->be.arg, w);
	/* -ENOENT: the open was interrupted, and there is no file to close
	 * later. */
	if (fuse_reply_open(req, fi) == -ENOENT && f->be.closed != NULL)
		f->be.closed(f->be.arg, w);
}

static void
ff_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fusefile *f = fuse_req_userdata(req);

	(void)ino;
	if (f->be.closed != NULL)
		f->be.closed(f->be.arg, (fi->flags & O_ACCMODE) != O_RDONLY);
	fuse_reply_err(req, 0);
}

static void
ff_read(fuse_req_t req, fuse_ino_t ino, size_t len, off_t off,
    struct fuse_file_info *fi)
{
	struct fusefile *f = fuse_req_userdata(req);
	char *buf = malloc(len > 0 ? len : 1);
	ssize_t n;

	(void)ino;
	(void)fi;
	if (buf == NULL) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	n = f->be.read(f->be.arg, buf, len, (uint64_t)off);
	if (n < 0)
		fuse_reply_err(req, -ff_eio(n));
	else
		fuse_reply_buf(req, buf, (size_t)n);
	free(buf);
}

static void
ff_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t len,
    off_t off, struct fuse_file_info *fi)
{
	struct fusefile *f = fuse_req_userdata(req);
	ssize_t n;

	(void)ino;
	(void)fi;
	if (f->readonly) {
		fuse_reply_err(req, EROFS);
		return;
	}
	n = f->be.write(f->be.arg, buf, len, (uint64_t)off);
	if (n > 0)
		clock_gettime(CLOCK_REALTIME, &f->mtime);
	if (n < 0)
		fuse_reply_err(req, -ff_eio(n));
	else
		fuse_reply_write(req, (size_t)n);
}

/* close(2): nothing to write back (direct I/O), and no durability promise. */
static void
ff_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	(void)fi;
	fuse_reply_err(req, 0);
}

/* fsync(2) and fdatasync(2) reach the provider. */
static void
ff_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
    struct fuse_file_info *fi)
{
	struct fusefile *f = fuse_req_userdata(req);

	(void)ino;
	(void)datasync;
	(void)fi;
	fuse_reply_err(req, f->readonly ? 0 : -f->be.flush(f->be.arg));
}

/*
 * fallocate(2) on a file that is a disk: its size stays.  PUNCH_HOLE (what
 * the loop driver sends for a discard, and for WRITE_ZEROES) and ZERO_RANGE
 * leave zeros; allocating is done already within the size.
 */
static int
ff_fallocate_do(struct fusefile *f, int mode, off_t off, off_t len)
{
	bool keep = mode & FALLOC_FL_KEEP_SIZE;
	int error;

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
	return ff_eio(error);
}

static void
ff_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len,
    struct fuse_file_info *fi)
{
	(void)ino;
	(void)fi;
	fuse_reply_err(req, -ff_fallocate_do(fuse_req_userdata(req), mode, off,
	    len));
}

/* An attribute's value (or a list's) of n bytes, for a buffer of size. */
static void
ff_reply_xattr(fuse_req_t req, const char *v, size_t n, size_t size)
{
	if (size == 0)
		fuse_reply_xattr(req, n);
	else if (size < n)
		fuse_reply_err(req, ERANGE);
	else
		fuse_reply_buf(req, v, n);
}

/* One attribute, read-only: the sector size a stacked provider takes. */
static void
ff_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	struct fusefile *f = fuse_req_userdata(req);
	char v[16];
	int n;

	if (ino != FUSE_ROOT_ID) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	if (f->be.sectorsize == 0 || strcmp(name, GELI_XATTR_SECTORSIZE) != 0) {
		fuse_reply_err(req, ENODATA);
		return;
	}
	n = snprintf(v, sizeof(v), "%u", (unsigned)f->be.sectorsize);
	ff_reply_xattr(req, v, (size_t)n, size);
}

static void
ff_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	struct fusefile *f = fuse_req_userdata(req);

	if (ino != FUSE_ROOT_ID) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	ff_reply_xattr(req, GELI_XATTR_SECTORSIZE,
	    f->be.sectorsize == 0 ? 0 : sizeof(GELI_XATTR_SECTORSIZE), size);
}

const struct fuse_lowlevel_ops fusefile_ops = {
	.init = ff_init,
	.lookup = ff_lookup,
	.getattr = ff_getattr,
	.setattr = ff_setattr,
	.open = ff_open,
	.read = ff_read,
	.write = ff_write,
	.flush = ff_flush,
	.fsync = ff_fsync,
	.release = ff_release,
	.fallocate = ff_fallocate,
	.getxattr = ff_getxattr,
	.listxattr = ff_listxattr,
};
