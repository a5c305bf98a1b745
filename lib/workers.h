/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A worker pool for sector batches.
 *
 * Contract: workers_new() starts n threads, each with its own thread state
 * from tls_new (pre-keyed cipher contexts live there).  workers_run() splits
 * nitems into grains of at most `grain` items and calls fn on them from the
 * pool threads and from the caller (with the caller's own state), returning
 * when all are done with the first error, or 0.  One job runs at a time: a
 * caller that finds the pool busy, or a job of one grain, runs fn inline.
 * fn must only touch its own items.  workers_free() joins the threads.
 */
#ifndef GELI_WORKERS_H
#define GELI_WORKERS_H

#include <stddef.h>

typedef int (*work_fn)(void *arg, void *tls, size_t first, size_t count);

struct workers;
int workers_new(unsigned nthreads, void *(*tls_new)(void *),
    void (*tls_free)(void *, void *), void *targ, struct workers **out);
int workers_run(struct workers *w, work_fn fn, void *arg, void *caller_tls,
    size_t nitems, size_t grain);
/* Apply f to every pool thread's state while no job runs (suspend). */
void workers_each_tls(struct workers *w, void (*f)(void *tls));
unsigned workers_count(const struct workers *w);
void workers_free(struct workers *w);

#endif
