/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A FUSE file system that is one regular file, mounted over a regular file
 * (the mount point).  The file's bytes come from a backend; the front end
 * only translates calls.
 */
#ifndef GELI_FUSEFILE_H
#define GELI_FUSEFILE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "blockio.h"


struct fusefile;

/*
 * Mount at mountpoint (an existing regular file) and serve requests on
 * background threads.  readonly: the file is 0400 and writes get EROFS.
 * direct_io: bypass the kernel page cache (the default for attach).
 */
int fusefile_start(const char *mountpoint, const struct blockio *be,
    bool readonly, bool direct_io, struct fusefile **out);
/* What the kernel said when the session began (FUSE_INIT). */
struct fusefile_conn {
	uint32_t proto_minor, max_readahead;
};
/* The session's /dev/fuse descriptor: while any process holds it (or a
 * copy of it), the mount stays when the server dies. */
int fusefile_fd(const struct fusefile *f);
void fusefile_conn(const struct fusefile *f, struct fusefile_conn *c);
/* Can another server take this session over (the kernel queues the
 * requests a dead server had read again: FUSE_NOTIFY_RESEND, Linux 6.9)? */
bool fusefile_resumable(const struct fusefile_conn *c);
/*
 * Serve the session of fd (a copy of a dead server's /dev/fuse descriptor,
 * mounted at mountpoint, whose kernel said c) as fusefile_start does: the
 * requests the dead server had read and not answered are served again.
 * -EOPNOTSUPP where the kernel cannot resend them.  fusefile_stop unmounts
 * it as it unmounts its own.
 */
int fusefile_adopt(int fd, const struct fusefile_conn *c,
    const char *mountpoint, const struct blockio *be,
    bool readonly, bool direct_io, struct fusefile **out);
/* Tell the kernel the size changed (after a resize). */
void fusefile_size_changed(struct fusefile *f);
/* Unmount and wait for the threads; safe to call once. */
void fusefile_stop(struct fusefile *f);
/* True once the session has ended (unmounted from outside). */
bool fusefile_ended(struct fusefile *f);

#endif
