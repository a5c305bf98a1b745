/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The run directory: where the daemon of each attached provider keeps its
 * files, and everything the front ends know about them, once.
 *
 *   $GELI_RUNDIR, else for root /run/geli, else $XDG_RUNTIME_DIR/geli,
 *   else /tmp/geli-UID; in it, for the provider attached as NAME:
 *
 *     NAME.eli   the decrypted provider (a FUSE file)
 *     NAME.ctl   the daemon's control socket (ctl.h)
 *     NAME.pid   the daemon's PID, written once it serves
 *     NAME.log   the daemon's log, in FreeBSD's kernel words
 *     NAME.dev   the block device its stable name was made to point at
 *                (devlink_make), so that a later attach knows the link
 *                of a daemon killed with -9 for its own
 *     .attach.lock   taken by attaches from their stale-file check until
 *                    their daemon answers
 *
 *   and $GELI_DEVDIR (default /dev)/NAME.eli, the stable name of its block
 *   device (devlink_path).
 */
#ifndef GELI_COMMON_RUNDIR_H
#define GELI_COMMON_RUNDIR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

enum rundir_entry { RUNDIR_ELI, RUNDIR_CTL, RUNDIR_PID, RUNDIR_LOG, RUNDIR_DEV };

/* The run directory of this process (its environment and user). */
const char *rundir(void);
/*
 * 0 when the run directory is root's (we are root), or a directory of ours
 * (not a symbolic link) that no one else can write; -EPERM when it is not,
 * -ENOENT when it does not exist.
 */
int rundir_private(void);
/* The run directory made (mkdir -p) and checked: 0, -errno of the mkdir,
 * or -EPERM when it is not private (rundir_private). */
int rundir_make(void);
/* dir/NAME<suffix of e> into buf (dir NULL: rundir()); 0 or -ENAMETOOLONG. */
int rundir_entry(const char *dir, const char *name, enum rundir_entry e,
    char *buf, size_t len);

/*
 * The names whose daemon answers, sorted: their count (0 on any failure),
 * *out for rundir_names_free.
 */
int rundir_names(char ***out);
void rundir_names_free(char **names, int n);
/* A daemon that died leaves its files: removed (and a dead mount), when no
 * daemon answers on name's control socket. */
void rundir_clean_stale(const char *name);
/*
 * Attaches take turns from the stale-file check until their daemon has
 * answered (see rundir.c): the lock's descriptor, or -1 when there are no
 * turns to take (then attaches go on without, as before there were).
 */
int rundir_lock(void);
void rundir_unlock(int fd);

/*
 * The stable block-device name of the provider attached as name, as
 * FreeBSD's /dev/ada1.eli: $GELI_DEVDIR/NAME.eli (default /dev/NAME.eli), a
 * symbolic link to the block device the daemon made (the loop device of
 * attach -L), made by the daemon itself (no udev needs to run) and removed
 * when it ends.  A pool or an fstab that records the name finds the
 * provider whichever device it is attached as next.
 */
int devlink_path(const char *name, char *buf, size_t len);
/* Where the stable names are: $GELI_DEVDIR, else /dev. */
const char *devdir(void);
/*
 * name's link made to point at dev (an absolute path), recorded first in
 * NAME.dev.  A link left by an earlier daemon of the same name (to nothing,
 * to the device NAME.dev records, or to a loop device on this run
 * directory's NAME.eli) is replaced; anything else there is kept and the
 * answer is -EEXIST.  0 or -errno.
 */
int devlink_make(const char *name, const char *dev);
/* name's link removed, if it still points at dev (NULL: at a device that a
 * daemon of ours left, as devlink_make replaces), and its record. */
void devlink_remove(const char *name, const char *dev);

/* A daemon: its PID (0: none) and start time, against PID reuse; and its
 * keeper's (src/attach/keeper.h), 0 where it has none. */
struct daemon_ref {
	pid_t pid;
	unsigned long long start;
	pid_t keeper;
	unsigned long long keeper_start;
};
/* The daemon that serves name, from its pid file in dir (NULL: rundir()),
 * if that process is still there; its keeper is its parent, when that is
 * a session leader of the same name (not the caller). */
struct daemon_ref daemon_ref(const char *dir, const char *name);
/* True while d is running (not gone, not a zombie, not another process
 * with its PID). */
bool daemon_running(struct daemon_ref d);
/*
 * Wait until d has exited (and so has flushed and closed its provider and
 * removed its files), and its keeper (which wipes the key as it ends),
 * unless that starts another server of name.
 * Without a daemon (pid 0): until name's control socket is gone, at most
 * 5 s.
 */
void daemon_wait_gone(struct daemon_ref d, const char *name);

#endif
