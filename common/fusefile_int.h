/* SPDX-License-Identifier: BSD-2-Clause */
/* Inside the FUSE file (fusefile.h): its state, shared by fusefile.c (the
 * session) and fusefile_ops.c (the answers). */
#ifndef GELI_FUSEFILE_INT_H
#define GELI_FUSEFILE_INT_H

#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>
#include <pthread.h>
#include <time.h>

#include "fusefile.h"

struct fusefile {
	struct blockio be;
	dev_t dev;			/* the mount's device: its fusectl entry */
	struct fuse_session *se;
	struct fusefile_conn conn;	/* what the kernel said at FUSE_INIT */
	pthread_t th;
	bool readonly, direct_io, running, ended;
	bool adopted;			/* the mount is not libfuse's to undo */
	struct timespec mtime;
	char *mountpoint;
};

extern const struct fuse_lowlevel_ops fusefile_ops;

#endif
