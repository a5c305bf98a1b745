/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A conversion beside I/O (geli_online_*, lib/reencrypt_online.c) on a
 * provider in memory: two threads write, read back and read again at any
 * alignment, across chunk boundaries, through the online object while the
 * main thread converts (a new Master Key; decryption), each comparing with
 * its own copy of what it wrote.  One step fails on the provider in the
 * middle: its chunk's I/O is -EIO while the chunk is in doubt, and the next
 * step recovers it from the journal.  At the end, the new record (or the
 * bare provider) holds exactly what the threads wrote.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "geli.h"
#include "tap.h"

#define SIZE (6u << 20)
#define HOT (64u << 10)
#define STRIPE (96u << 10)	/* a thread's stripes cross chunk boundaries */

#include "memprov.h"

static uint8_t *model;
static char journal[64];
static atomic_bool stop;
static pthread_rwlock_t window = PTHREAD_RWLOCK_INITIALIZER;

/* ---- The I/O threads ------------------------------------------------------- */

struct worker {
	struct geli_online *o;
	uint64_t bytes;
	unsigned id, seed;
	atomic_uint ops;
	unsigned bad;
	pthread_t t;
};

static unsigned
rnd(unsigned *seed, unsigned n)
{
	*seed = *seed * 1103515245u + 12345u;
	return (*seed >> 8) % n;
}

/* A random range inside one of w's stripes. */
static void
pick(struct worker *w, uint64_t *off, size_t *len)
{
	uint64_t nstripes = w->bytes / STRIPE, s;

	do
		s = rnd(&w->seed, (unsigned)nstripes);
	while (s % 2 != w->id);
	*len = 1 + rnd(&w->seed, 20000);
	*off = s * STRIPE + rnd(&w->seed, STRIPE - (unsigned)*len);
}

static void *
worker_main(void *arg)
{
	struct worker *w = arg;
	uint8_t *buf = malloc(20000), *back = malloc(20000);
	uint64_t off;
	size_t len;

	while (!atomic_load(&stop)) {
		pthread_rwlock_rdlock(&window);
		pick(w, &off, &len);
		if (rnd(&w->seed, 2) == 0) {
			for (size_t i = 0; i < len; i++)
				buf[i] = (uint8_t)rnd(&w->seed, 256);
			if (geli_online_write(w->o, buf, len, off) != (ssize_t)len)
				w->bad++;
			memcpy(model + off, buf, len);
		}
		if (geli_online_read(w->o, back, len, off) != (ssize_t)len ||
		    memcmp(back, model + off, len) != 0)
			w->bad++;
		atomic_fetch_add(&w->ops, 1);
		pthread_rwlock_unlock(&window);
	}
	free(buf);
	free(back);
	return NULL;
}

/* Until each of the two workers has made n more requests: the main thread's
 * steps interleave with their I/O however a loaded machine schedules the
 * threads (a pause of a fixed length would not). */
static void
let_workers_run(struct worker *w, unsigned n)
{
	for (unsigned i = 0; i < 2; i++) {
		unsigned from = atomic_load(&w[i].ops);

		while (atomic_load(&w[i].ops) - from < n)
			usleep(100);
	}
}

/* ---- One conversion -------------------------------------------------------- */

static void
one(enum geli_reenc_kind kind, uint32_t S)
{
	uint8_t oldmk[GELI_MKEY_DATALEN], newmk[GELI_MKEY_DATALEN], uuid[16];
	struct geli_metadata oldmd, newmd;
	struct geli_provider *p = provider();
	struct geli_volume *v = NULL;
	struct geli_reenc *r = NULL;
	struct geli_online *o = NULL;
	struct worker w[2];
	uint64_t bytes, done, total, off, len;
	uint8_t *buf;
	int error, steps = 0, eio = -1, failed = 0;
	char what[64];

	bool newkey = kind != GELI_REENC_DECRYPT;

	snprintf(what, sizeof(what), "%s S=%u", kind == GELI_REENC_REKEY ?
	    "online rekey" : kind == GELI_REENC_LUKS2 ? "online to LUKS2" :
	    "online decrypt", S);
	geli_random(oldmk, sizeof(oldmk));
	geli_random(newmk, sizeof(newmk));
	geli_random(uuid, sizeof(uuid));
	record(&oldmd, S, oldmk);
	if (kind == GELI_REENC_LUKS2)
		geli_luks2_record(S, SIZE, &newmd);
	else
		record(&newmd, S, newmk);
	geli_random(model, SIZE);
	geli_volume_open(p, &oldmd, oldmk, 0, 2, &v);
	bytes = geli_volume_size(v);
	geli_volume_write(v, model, bytes, 0);
	unlink(journal);
	error = geli_reenc_start(p, kind, &oldmd, oldmk, 0,
	    newkey ? &newmd : NULL, newkey ? newmk : NULL, uuid, journal, HOT,
	    &r);
	if (error == 0)
		error = geli_online_open(r, v, 2, &o);
	tap_ok(error == 0, "%s: started (%d)", what, error);
	if (error != 0) {
		geli_reenc_free(r);
		geli_volume_close(v);
		return;
	}
	atomic_store(&stop, false);
	for (unsigned i = 0; i < 2; i++) {
		w[i] = (struct worker){ .o = o, .bytes = bytes, .id = i,
		    .seed = (unsigned)rand() };
		atomic_init(&w[i].ops, 0);
		pthread_create(&w[i].t, NULL, worker_main, &w[i]);
	}
	while ((error = geli_online_step(o)) == 1) {
		/* The 5th step fails on the provider (the other I/O held
		 * off: a write to the chunk in doubt would fail too); its
		 * chunk is refused until the next step recovers it. */
		if (++steps == 4) {
			pthread_rwlock_wrlock(&window);
			atomic_store(&fail_len, HOT);
			geli_online_progress(o, &done, &total, &bytes);
			geli_reenc_chunk(r, done, &off, &len);
			failed = geli_online_step(o) < 0;
			buf = malloc(len);
			eio = (int)geli_online_read(o, buf, 1, off + len / 2);
			free(buf);
			atomic_store(&fail_len, 0);
			failed += failed && geli_online_step(o) == 1;
			pthread_rwlock_unlock(&window);
		}
		let_workers_run(w, 1);
	}
	tap_ok(failed == 2 && eio == -EIO, "%s: a step that failed on the "
	    "provider: its chunk's reads are -EIO (%d), the next step goes on",
	    what, eio);
	/* LUKS2: every chunk done, the end waits for its header. */
	if (kind == GELI_REENC_LUKS2) {
		tap_ok(error == 0 && !geli_online_finished(o) &&
		    geli_online_step(o) == 0 && !geli_online_finished(o) &&
		    access(journal, F_OK) == 0 && geli_provider_read_metadata(p,
		    &newmd) == -GELI_EINPROGRESS, "%s: every chunk done, not "
		    "finished: the journal and the marked record stay", what);
		geli_luks2_record(S, SIZE, &newmd);
		error = geli_online_finish(o);
	}
	tap_ok(error == 0 && geli_online_finished(o) && access(journal,
	    F_OK) != 0, "%s: finished after %d steps, the journal removed",
	    what, steps);
	let_workers_run(w, 2);	/* some I/O after the end too */
	atomic_store(&stop, true);
	for (unsigned i = 0; i < 2; i++)
		pthread_join(w[i].t, NULL);
	tap_ok(w[0].bad + w[1].bad == 0 && w[0].ops > 50 && w[1].ops > 50,
	    "%s: %u + %u requests beside it, all right", what,
	    atomic_load(&w[0].ops), atomic_load(&w[1].ops));
	buf = malloc(bytes);
	tap_ok(geli_online_read(o, buf, bytes, 0) == (ssize_t)bytes &&
	    memcmp(buf, model, bytes) == 0, "%s: everything reads back", what);
	geli_online_close(o);
	geli_volume_close(v);	/* and p */
	if (kind == GELI_REENC_DECRYPT) {
		tap_ok(memcmp(dev, model, bytes) == 0,
		    "%s: the provider is what was written", what);
	} else {
		geli_volume_open(provider(), &newmd, newmk,
		    kind == GELI_REENC_LUKS2 ? GELI_VOLUME_LUKS2 : 0, 1, &v);
		tap_ok(geli_volume_read(v, buf, bytes, 0) == (ssize_t)bytes &&
		    memcmp(buf, model, bytes) == 0,
		    "%s: the new record's key reads what was written", what);
		geli_volume_close(v);
	}
	free(buf);
}

int
main(void)
{
	snprintf(journal, sizeof(journal), "/tmp/test_online.%d.journal",
	    (int)getpid());
	srand((unsigned)getpid());
	dev = calloc(1, SIZE);
	model = malloc(SIZE);
	for (uint32_t S = 512; S <= 4096; S *= 8) {
		one(GELI_REENC_REKEY, S);
		one(GELI_REENC_DECRYPT, S);
		one(GELI_REENC_LUKS2, S);
	}
	unlink(journal);
	free(dev);
	free(model);
	return tap_done();
}
