/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The keeper: one small process per attached provider, the parent of the
 * process that serves its I/O (the server, daemon.c).  It holds what must
 * outlive a server: the Master Key (secure shared memory, memfd_secret where
 * the kernel offers it), the listening control socket, in which requests
 * wait while no server runs, and, for a FUSE-served provider, a copy of
 * the session's /dev/fuse descriptor, which keeps the mount meanwhile.
 * When a server that was serving dies (a signal, the OOM killer, a crash),
 * the keeper starts another, which takes the session back; when it ends in
 * order (detach), the keeper wipes the key and ends too.  It does no I/O of
 * its own and allocates nothing after its start; it is a leaf: the server's
 * code is a function it is given.
 */
#ifndef GELI_KEEPER_H
#define GELI_KEEPER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "fusefile.h"

/*
 * What a server leaves for the next one, in memory the keeper shares with
 * them (not secret).  The server that writes a field is the only one
 * running; the keeper reads restarts and death only.
 */
struct keeper_state {
	int32_t keeper_pid;
	atomic_uint restarts;		/* servers started after a death */
	int32_t death;			/* the signal that ended the last one */
	bool resumable;			/* the running server's session can be
					 * taken back (set in keeper_up) */
	bool secret;			/* the key is in memfd_secret memory */
	int32_t ctl_fd;			/* the keeper's copy of the listening
					 * control socket (the next server's,
					 * inherited): a request made while no
					 * server runs waits for the next, -1 */
	int32_t fuse_fd;		/* and of the FUSE session's */
	int32_t loop_fd;		/* and of the loop device's (-L), which
					 * would clear itself at its last close */
	struct fusefile_conn fuse;	/* what its kernel said at FUSE_INIT */
	int32_t ublk_id;		/* a ublk device that waits for the next
					 * server when one dies, -1 */
	atomic_int opens, wopens;	/* the .eli's open files, as served */
	char loop[64];			/* the loop device of -L, "" */
	uint64_t loop_fdev, loop_fino;
	char journal[1024];		/* a conversion under way, "" */
};

struct keeper {
	uint8_t *mkey;			/* GELI_MKEY_DATALEN, shared, secure */
	struct keeper_state *st;	/* shared */
	int sock;			/* the server's end, to tell it serves */
};

/*
 * The server's code: it starts (status to stfd on the first start, -1
 * after a death: then it takes the provider's device back), serves and
 * returns its exit status (0: ended in order).
 */
typedef int (*keeper_serve_fn)(struct keeper *k, int stfd, void *arg);
/* What a dead server left waiting undone, when no other server will take
 * it back (run in a child of the keeper, which then ends). */
typedef void (*keeper_abandon_fn)(struct keeper *k, void *arg);

/*
 * Become the keeper (in a new process, which this never returns from): the
 * key read from keyfd, and serve started in a child, again after each
 * death of one that was serving (keeper_up), until one ends in order or
 * one fails to start (then abandon, after a death).  stfd, the attaching
 * process's status pipe, goes to the first server only.
 */
void keeper_main(int keyfd, int stfd, keeper_serve_fn serve,
    keeper_abandon_fn abandon, void *arg) __attribute__((noreturn));

/*
 * In the server: it serves.  resumable: another server can take its
 * session back after its death (ctlfd: the listening control socket,
 * fusefd: the FUSE session's descriptor, loopfd its loop device's, for the
 * keeper to hold; -1 where there is none); else the keeper ends with it,
 * as the server's death ended the provider before keepers were.
 */
void keeper_up(struct keeper *k, bool resumable, int ctlfd, int fusefd,
    int loopfd);
/* It ends in order (detach): the keeper lets go of what it held for the
 * next server, before the server undoes it (the loop device, the mount),
 * so that nothing of them outlives the server. */
void keeper_ending(struct keeper *k);
/* The same later: a death from now on is (or is no longer) survived. */
void keeper_resumable(struct keeper *k, bool resumable);
/* The key the next server gets: mkey's (a resume), or none (NULL: a
 * suspend, which no server survives: keeper_resumable(k, false) first). */
void keeper_set_key(struct keeper *k, const uint8_t *mkey);

#endif
