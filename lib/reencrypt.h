/* SPDX-License-Identifier: BSD-2-Clause */
/* What reencrypt.c (start, resume) and reencrypt_step.c (the steps) share. */
#ifndef GELI_REENCRYPT_H
#define GELI_REENCRYPT_H

#include <pthread.h>

#include "journal.h"

/* A chunk read, converted and sealed, ready to be written. */
struct prepared {
	uint8_t *buf;			/* one hotzone */
	uint8_t head[JOURNAL_HOTZONE_HEAD];
	uint64_t k, off, len;
	int error;
};

struct geli_reenc {
	struct geli_provider *p;	/* the caller's */
	enum geli_reenc_kind kind;
	struct geli_metadata oldmd, newmd;	/* unmarked; zeros when none */
	struct geli_volume *vold, *vnew;	/* transforms only, no I/O */
	uint8_t *mk;			/* secure: old MK || new MK */
	struct journal j;
	uint64_t bytes;			/* the data area */
	uint32_t S, hotzone;
	uint64_t nchunks, done;
	/* Chunk k is written from pre[k % 2] while the next is prepared
	 * in the other by a thread of its own. */
	struct prepared pre[2], *next;
	pthread_t helper;
	bool helping;
	/* Beside other I/O (geli_reenc_set_locks): no helper. */
	geli_reenc_lock_fn lock, unlock;
	void *lockarg;
};

/* Kinds that go to a key of their own, wrapped in the journal (REKEY's
 * Master Key, LUKS2's volume key), and the flags of their new side's
 * volume. */
static inline bool
reenc_has_newkey(enum geli_reenc_kind kind)
{
	return kind == GELI_REENC_REKEY || kind == GELI_REENC_LUKS2;
}

static inline unsigned
reenc_new_flags(enum geli_reenc_kind kind)
{
	return kind == GELI_REENC_LUKS2 ? GELI_VOLUME_LUKS2 : 0;
}

/* The helper stopped (its chunk, if any, left unused). */
void reenc_quiesce(struct geli_reenc *r);
/* Where the journal says the conversion is: a PREPARED chunk written again
 * from it, done set (resume, and a step retried after an error). */
int reenc_recover(struct geli_reenc *r);

#endif
