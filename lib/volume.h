/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * An attached volume's state, shared by the files that make it up:
 * volume.c (open, close, reads and writes through the worker pool),
 * volume_gate.c (range locks and the suspend gate in front of them) and
 * volume_delete.c (discard and zeroing).  Never installed.
 */
#ifndef GELI_VOLUME_H
#define GELI_VOLUME_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "geli.h"
#include "internal.h"
#include "keys.h"
#include "sector.h"
#include "workers.h"

/* A held range of GELI sectors [a, b), shared (read) or exclusive. */
struct range {
	struct range *next;
	uint64_t a, b;
	bool excl;
};

/* The handle of geli.h; lock guards the fields below it. */
struct geli_volume {
	struct geli_provider *p;
	struct geli_metadata md;
	struct sector_geom g;
	uint64_t size;			/* decrypted bytes */
	unsigned flags;
	struct geli_keys keys;
	struct workers *w;

	pthread_mutex_t lock;		/* ranges, free contexts, suspend */
	pthread_cond_t cv;
	struct range *ranges;
	struct sector_ctx *free_ctx;	/* caller contexts not in use */
	struct sector_ctx *all_ctx[64];	/* every caller context, to drop keys */
	unsigned nctx;
	bool suspended;
	bool closing;			/* geli_volume_shutdown: no more I/O */
	unsigned inflight;
	atomic_uint_fast64_t integrity_errors;
	atomic_bool nodelete;		/* NODELETE now (configure -T/-t) */
	struct volume_map map;		/* GELI_VOLUME_MMAP (volume_map.c) */
};

/*
 * volume_gate.c: enter the gate (waits while suspended) and lock sectors
 * [a, b), shared or exclusive (excl); -ENXIO once the volume is shut down.
 * r is the caller's until volume_range_unlock.
 */
int volume_range_lock(struct geli_volume *v, struct range *r, uint64_t a,
    uint64_t b, bool excl);
void volume_range_unlock(struct geli_volume *v, struct range *r);

#endif
