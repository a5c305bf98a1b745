/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Inside the attach daemon (attachd.h): its state and what its files share.
 * daemon.c starts and stops it, front.c its front end, state.c answers
 * what its parts ask of its state, serve.c serves the .eli file and watches
 * the provider's size, handlers.c answers the control socket.
 */
#ifndef GELI_DMN_H
#define GELI_DMN_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>

#include "attachd.h"
#include "fusefile.h"
#include "keeper.h"
#include "loopdev.h"
#include "ublk.h"

struct dmn {
	struct attach_req r;
	struct keeper *keeper;		/* the parent that outlives us */
	bool restart;			/* started after a server's death */
	bool resumable;			/* the front end survives our death */
	char name[256], prov[1024], provpath[1024];
	char elipath[1024], ctlpath[1024], logpath[1024], pidpath[1024];
	struct geli_volume *v;
	struct geli_provider *p;	/* owned by v */
	struct geli_mdstore *store;	/* p's metadata */
	struct fusefile *ff;		/* the FUSE front end, or */
	struct ublk *ublk;		/* the ublk one */
	char ublkdev[64];		/* its block device */
	atomic_bool written;		/* (ublk: a write served, as FUSE's
					 * open for writing) */
	uint64_t marked_at;		/* ublk: requests when -l was seen, +1 */
	bool used_since_mark;		/* ublk: found held since */
	uint8_t *mkey;			/* secure; wiped while suspended */
	uint32_t flags;			/* runtime flags, as geli list shows */
	uint32_t psize;
	struct loopdev loop;		/* with -L */
	int ctlfd, evfd, sigfd;		/* control socket, last close, signals */
	pthread_mutex_t lock;		/* flags, opens, wopens */
	unsigned opens, wopens;
	bool stop;
	FILE *log;
	unsigned threads;		/* the volumes' workers */

	/* An online conversion (convert.c).  The .eli file's requests hold
	 * iolock shared; online is set under it exclusively. */
	pthread_rwlock_t iolock;
	struct geli_online *online;
	pthread_t conv;
	bool conv_thread;		/* conv to join */
	atomic_bool conv_stop;
	uint32_t reenc_state;		/* enum ctl_reenc_state, under lock */
	int32_t reenc_error;		/* under lock */
	uint32_t reenc_kind;
	char journal[1024];
};

/* daemon.c: a start that failed: what it made goes (torn: teardown, gone
 * before the caller hears), and the reason goes to the caller (stfd). */
void dmn_start_failed(struct dmn *d, int stfd, bool torn, const char *fmt,
    ...) __attribute__((noreturn, format(printf, 4, 5)));

/* What the start's steps share: does ublk serve it (else FUSE), is
 * the daemon in a mount namespace of its own, and the note that says why
 * FUSE serves it. */
struct start {
	bool use_ublk, own_ns;
	char note[600];
};


/* front.c: the front end chosen (at open), started (the .eli claimed in
 * the run directory, the control socket bound; or taken back after a
 * death), and what the next server needs of it left with the keeper. */
void dmn_front_choose(struct dmn *d, int stfd, struct start *s);
void dmn_front_start(struct dmn *d, int stfd, struct start *s);
void dmn_front_leave(struct dmn *d);
/* The kernel cancelled request slots of our ublk device (ublk_lost): this
 * server ends as if killed, and the keeper starts another, which takes the
 * device back. */
void dmn_front_lost(struct dmn *d) __attribute__((noreturn));

/* state.c: a line of the log, as FreeBSD's kernel prints "GEOM_ELI: ..." */
void dlog(struct dmn *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The runtime flags now, SUSPEND included. */
uint32_t dmn_flags(struct dmn *d);
/* Is the .eli file, or its block device, used by anyone but ourselves? */
bool dmn_busy(struct dmn *d);

/* serve.c: the front ends' backend (the volume's reads and writes), and
 * the loop until the daemon stops. */
void dmn_backend(struct dmn *d, struct blockio *be);
void dmn_serve(struct dmn *d);

/* convert.c: an online conversion. */
struct ctl_request;
struct ctl_reply;
struct ctl_status;
/* The attached provider is marked: its conversion goes on with journal.
 * 0, or -errno with msg. */
int dmn_convert_resume(struct dmn *d, const char *journal, char *msg,
    size_t len);
/* CTL_REENCRYPT: start, go on, pause. */
void dmn_do_reencrypt(struct dmn *d, struct ctl_reply *rp,
    const struct ctl_request *rq);
void dmn_convert_status(struct dmn *d, struct ctl_status *s);
/* -MSG_ECONVERTING or -MSG_ECONVERTED while the record is not the one the
 * keys in memory open; 0. */
int dmn_converting(struct dmn *d);
/* Paused at a chunk's end (detach); closed (after the last request). */
void dmn_convert_pause(struct dmn *d);
void dmn_convert_close(struct dmn *d);

/* handlers.c: the control socket. */
int ctl_listen(struct dmn *d);
void ctl_serve_one(struct dmn *d, int fd);

#endif
