/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The attach daemon: one process per attached provider.  It holds the
 * Master Key, serves the decrypted provider as the file
 * $GELI_RUNDIR/<name>.eli through FUSE (optionally with a loop block device
 * on top), and answers the control socket $GELI_RUNDIR/<name>.ctl (ctl.h)
 * for status, detach, suspend/resume, setkey, delkey, kill and configure.
 */
#ifndef GELI_DAEMON_H
#define GELI_DAEMON_H

#include <stdbool.h>
#include <stddef.h>

#include "geli.h"

struct attach_req {
	const char *prov;		/* as given on the command line */
	const char *provpath;		/* the path opened */
	const char *name;		/* <name>.eli in the run directory */
	struct geli_metadata md;	/* as on disk (or made up for onetime) */
	int used_key;			/* slot that opened, -1 for onetime */
	unsigned flags;			/* GELI_FLAG_RO, WO_DETACH, ONETIME */
	bool loop;			/* also make a loop block device */
	bool cached;			/* kernel page cache instead of direct I/O */
	bool nomap;			/* reads with pread only (GELI_MMAP=0) */
	unsigned threads;		/* worker threads, 0 = online CPUs */
};

/*
 * Fork the daemon, hand it the 128-byte Master Key and wait until the
 * provider is served.  Returns 0 with the loop device (or "") in loopdev
 * and in *unlocked whether the daemon holds secrets in memory it could not
 * lock, or -1 with FreeBSD-style text in msg.
 */
int daemon_start(const struct attach_req *r, const uint8_t *mkey,
    char *loopdev, size_t loopdevlen, bool *unlocked, char *msg,
    size_t msglen);

#endif
