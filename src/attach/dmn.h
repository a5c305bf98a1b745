/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Inside the attach daemon (attachd.h): its state and what its files share.
 * daemon.c starts and stops it, serve.c serves the .eli file and watches
 * the provider's size, handlers.c answers the control socket.
 */
#ifndef GELI_DMN_H
#define GELI_DMN_H

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>

#include "attachd.h"
#include "fusefile.h"
#include "loopdev.h"

struct dmn {
	struct attach_req r;
	char name[256], prov[1024], provpath[1024];
	char elipath[1024], ctlpath[1024], logpath[1024], pidpath[1024];
	struct geli_volume *v;
	struct geli_provider *p;	/* owned by v */
	struct geli_mdstore *store;	/* p's metadata */
	struct fusefile *ff;
	uint8_t *mkey;			/* secure; wiped while suspended */
	uint32_t flags;			/* runtime flags, as geli list shows */
	uint32_t psize;
	struct loopdev loop;		/* with -L */
	int ctlfd, evfd, sigfd;		/* control socket, last close, signals */
	pthread_mutex_t lock;		/* flags, opens, wopens */
	unsigned opens, wopens;
	bool stop;
	FILE *log;
};

/* A line of the log, as FreeBSD's kernel prints "GEOM_ELI: ..." */
void dlog(struct dmn *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* serve.c: the FUSE file's backend, and the loop until the daemon stops. */
void dmn_backend(struct dmn *d, struct fusefile_backend *be);
void dmn_serve(struct dmn *d);
/* The runtime flags now, SUSPEND included. */
uint32_t dmn_flags(struct dmn *d);
/* Is the .eli file, or its loop device, used by anyone but ourselves? */
bool dmn_busy(struct dmn *d);

/* handlers.c: the control socket. */
int ctl_listen(struct dmn *d);
void ctl_serve_one(struct dmn *d, int fd);

#endif
