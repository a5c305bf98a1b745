/* SPDX-License-Identifier: BSD-2-Clause */
/* The worker pool (see workers.h). */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "workers.h"

/*
 * How long a thread spins before it sleeps: a little more than the gap
 * between two requests of a sequential stream through FUSE (the reply of
 * 1 MiB and the reader's next call, 110-150 us on the 2-core machine of
 * docs/benchmarks.md), since a wake-up from sleep costs that machine
 * 50-100 us, which a worker that slept through the gap adds to every
 * request.  Counted in time: a pause takes 10-140 cycles by CPU model.
 */
#define SPIN_NS 200000

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#if defined(__x86_64__) || defined(__i386__)
#define cpu_relax() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define cpu_relax() __asm__ __volatile__("yield")
#else
#define cpu_relax() do { } while (0)
#endif

/* Pause while cond holds, at most SPIN_NS, giving the core every 64 rounds
 * to anything else that wants it. */
#define SPIN_WHILE(cond) do {						\
	uint64_t spin_t0_ = mono_ns();					\
	for (unsigned spin_i_ = 1; (cond); spin_i_++) {			\
		cpu_relax();						\
		if (spin_i_ % 64 == 0) {				\
			if (mono_ns() - spin_t0_ > SPIN_NS)		\
				break;					\
			sched_yield();					\
		}							\
	}								\
} while (0)

struct worker {
	struct workers *w;
	pthread_t th;
	void *tls;
};

struct workers {
	unsigned n;
	struct worker *wk;
	void (*tls_free)(void *, void *);
	void *targ;
	pthread_mutex_t lock;
	pthread_cond_t cv_work, cv_done;
	atomic_bool stop;		/* read without the lock while spinning */
	bool busy;
	_Atomic uint64_t gen;		/* read without the lock while spinning */
	unsigned active;
	/* The current job. */
	work_fn fn;
	void *arg;
	size_t nitems, grain;
	atomic_size_t next;
	atomic_size_t done;
	atomic_int error;
};

/* Take grains until none is left. */
static void
work(struct workers *w, work_fn fn, void *arg, void *tls, size_t nitems,
    size_t grain)
{
	size_t first, count;
	int error, zero;

	for (;;) {
		first = atomic_fetch_add(&w->next, grain);
		if (first >= nitems)
			return;
		count = nitems - first < grain ? nitems - first : grain;
		error = fn(arg, tls, first, count);
		if (error != 0) {
			zero = 0;
			atomic_compare_exchange_strong(&w->error, &zero, error);
		}
		atomic_fetch_add(&w->done, count);
	}
}

static void *
worker_main(void *p)
{
	struct worker *me = p;
	struct workers *w = me->w;
	uint64_t seen = 0;
	work_fn fn;
	void *arg;
	size_t nitems, grain;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		/* Back-to-back jobs are the common case (a stream of 1 MiB
		 * requests): spin a little before sleeping, so that a new job
		 * does not pay for a wake-up. */
		pthread_mutex_unlock(&w->lock);
		SPIN_WHILE(atomic_load(&w->gen) == seen && !atomic_load(&w->stop));
		pthread_mutex_lock(&w->lock);
		while (!w->stop && w->gen == seen)
			pthread_cond_wait(&w->cv_work, &w->lock);
		if (w->stop)
			break;
		seen = w->gen;
		/* The job may have ended before this thread woke: then fn is
		 * NULL and its caller's arg must not be touched. */
		if (w->fn == NULL)
			continue;
		fn = w->fn;
		arg = w->arg;
		nitems = w->nitems;
		grain = w->grain;
		w->active++;
		pthread_mutex_unlock(&w->lock);
		work(w, fn, arg, me->tls, nitems, grain);
		pthread_mutex_lock(&w->lock);
		if (--w->active == 0)
			pthread_cond_broadcast(&w->cv_done);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

int
workers_new(unsigned nthreads, void *(*tls_new)(void *),
    void (*tls_free)(void *, void *), void *targ, struct workers **out)
{
	struct workers *w;
	unsigned i;

	w = calloc(1, sizeof(*w));
	if (w == NULL)
		return -ENOMEM;
	w->wk = calloc(nthreads > 0 ? nthreads : 1, sizeof(*w->wk));
	if (w->wk == NULL) {
		free(w);
		return -ENOMEM;
	}
	w->tls_free = tls_free;
	w->targ = targ;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cv_work, NULL);
	pthread_cond_init(&w->cv_done, NULL);
	for (i = 0; i < nthreads; i++) {
		w->wk[i].w = w;
		w->wk[i].tls = tls_new(targ);
		if (w->wk[i].tls == NULL ||
		    pthread_create(&w->wk[i].th, NULL, worker_main, &w->wk[i]) != 0) {
			if (w->wk[i].tls != NULL)
				tls_free(targ, w->wk[i].tls);
			break;
		}
		w->n++;
	}
	if (w->n != nthreads) {
		workers_free(w);
		return -ENOMEM;
	}
	*out = w;
	return 0;
}

int
workers_run(struct workers *w, work_fn fn, void *arg, void *caller_tls,
    size_t nitems, size_t grain)
{
	int error;

	if (grain == 0)
		grain = 1;
	if (w == NULL || w->n == 0 || nitems <= grain)
		return fn(arg, caller_tls, 0, nitems);
	pthread_mutex_lock(&w->lock);
	if (w->busy) {
		/* Another request has the pool: this one runs on its caller. */
		pthread_mutex_unlock(&w->lock);
		return fn(arg, caller_tls, 0, nitems);
	}
	w->busy = true;
	w->fn = fn;
	w->arg = arg;
	w->nitems = nitems;
	w->grain = grain;
	atomic_store(&w->next, 0);
	atomic_store(&w->done, 0);
	atomic_store(&w->error, 0);
	w->gen++;
	pthread_cond_broadcast(&w->cv_work);
	pthread_mutex_unlock(&w->lock);

	work(w, fn, arg, caller_tls, nitems, grain);

	SPIN_WHILE(atomic_load(&w->done) < nitems);
	pthread_mutex_lock(&w->lock);
	while (w->active > 0 || atomic_load(&w->done) < nitems)
		pthread_cond_wait(&w->cv_done, &w->lock);
	error = atomic_load(&w->error);
	w->fn = NULL;
	w->arg = NULL;
	w->busy = false;
	pthread_mutex_unlock(&w->lock);
	return error;
}

void
workers_each_tls(struct workers *w, void (*f)(void *tls))
{
	if (w == NULL)
		return;
	for (unsigned i = 0; i < w->n; i++)
		f(w->wk[i].tls);
}

unsigned
workers_count(const struct workers *w)
{
	return w == NULL ? 0 : w->n;
}

void
workers_free(struct workers *w)
{
	if (w == NULL)
		return;
	pthread_mutex_lock(&w->lock);
	w->stop = true;
	pthread_cond_broadcast(&w->cv_work);
	pthread_mutex_unlock(&w->lock);
	for (unsigned i = 0; i < w->n; i++) {
		pthread_join(w->wk[i].th, NULL);
		w->tls_free(w->targ, w->wk[i].tls);
	}
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->cv_work);
	pthread_cond_destroy(&w->cv_done);
	free(w->wk);
	free(w);
}
