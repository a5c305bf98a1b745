/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the geli program's front ends offer one another, without including
 * one another: the command line (src/geli) starts an attach daemon
 * (src/attach) through a launch function and runs verbs of other front
 * ends (geli bench, src/bench) by name.  src/frontends.c fills the one
 * table the program links; a test can link another.
 */
#ifndef GELI_COMMON_FRONTENDS_H
#define GELI_COMMON_FRONTENDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "geli.h"

/* What serves an attached provider to the kernel. */
enum attach_backend {
	ATTACH_FUSE,			/* a FUSE file (and a loop device with -L) */
	ATTACH_AUTO,			/* ublk where the kernel has it, else FUSE */
	ATTACH_UBLK,			/* a ublk block device, or nothing */
};

/* An attached provider to serve. */
struct attach_req {
	const char *prov;		/* as given on the command line */
	const char *provpath;		/* the path opened */
	const char *name;		/* <name>.eli in the run directory */
	struct geli_metadata md;	/* as on disk (or made up for onetime) */
	int used_key;			/* slot that opened, -1 for onetime */
	unsigned flags;			/* GELI_FLAG_RO, WO_DETACH, ONETIME */
	bool loop;			/* also print the block device and make
					 * its stable name (the loop device
					 * of a FUSE file) */
	enum attach_backend backend;
	bool cached;			/* kernel page cache instead of direct I/O */
	bool nomap;			/* reads with pread only (GELI_MMAP=0) */
	unsigned threads;		/* worker threads, 0 = online CPUs */
	char journal[1024];		/* marked: the conversion's, to go on */
	int32_t ublk_waiting;		/* the ublk device of this name whose
					 * server and keeper died, waiting to
					 * be taken back; -1: none */
};

/* How a launch went. */
struct attach_result {
	char loopdev[64];		/* the block device, or "" */
	char note[600];			/* why not ublk (ATTACH_AUTO), or "" */
	bool unlocked;			/* secrets in memory it could not lock */
	char msg[1200];			/* on failure: FreeBSD-style text */
};

/*
 * Start the daemon of r with the 128-byte Master Key and wait until the
 * provider is served: 0, or -1 with res->msg.
 */
typedef int (*attach_launch_fn)(const struct attach_req *r,
    const uint8_t *mkey, struct attach_result *res);
/*
 * The ublk device id, which waits for a server of a provider whose server
 * and keeper died (attach_req.ublk_waiting), deleted, and what waited on
 * it ended with errors (detach): 0, or -ENOENT when it is no such device
 * of ours, or another -errno.
 */
typedef int (*attach_release_fn)(uint32_t id);

/* A verb another front end serves: argv[0] is the verb; the exit status. */
struct frontend_verb {
	const char *name;
	const char *usage;		/* its options, for geli help */
	int (*main)(int argc, char **argv);
};

struct frontends {
	attach_launch_fn launch;
	attach_release_fn release;
	const struct frontend_verb *verbs;	/* ends with a NULL name */
};

/* The program's table (src/frontends.c). */
extern const struct frontends geli_frontends;

#endif
