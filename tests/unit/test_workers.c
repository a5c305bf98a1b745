/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The worker pool's contract under load: several callers at once, many
 * small jobs; every item is processed exactly once, by a call that got its
 * own job's argument, and errors come back to the right caller.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "tap.h"

#include "workers.h"

struct job {
	unsigned magic;
	size_t n;
	atomic_uchar *seen;
	int fail_at;		/* item that reports an error, or -1 */
};

static atomic_int wrong_arg;

static int
fn(void *arg, void *tls, size_t first, size_t count)
{
	struct job *j = arg;

	(void)tls;
	if (j->magic != 0x5eed)
		atomic_fetch_add(&wrong_arg, 1);
	for (size_t i = first; i < first + count; i++) {
		if (i >= j->n) {
			atomic_fetch_add(&wrong_arg, 1);
			continue;
		}
		atomic_fetch_add(&j->seen[i], 1);
		if ((int)i == j->fail_at)
			return -5;
	}
	return 0;
}

static void *
tls_new(void *a)
{
	(void)a;
	return malloc(1);
}

static void
tls_free(void *a, void *t)
{
	(void)a;
	free(t);
}

struct caller {
	struct workers *w;
	int bad, errors_ok;
	unsigned seed;
};

static void *
caller_main(void *p)
{
	struct caller *c = p;

	for (int round = 0; round < 3000; round++) {
		struct job j;
		size_t n = 1 + (size_t)(rand_r(&c->seed) % 700);
		atomic_uchar seen[700];

		for (size_t i = 0; i < n; i++)
			atomic_init(&seen[i], 0);
		j.magic = 0x5eed;
		j.n = n;
		j.seen = seen;
		j.fail_at = round % 10 == 0 ? (int)(n / 2) : -1;
		int r = workers_run(c->w, fn, &j, NULL, n, 1 + (size_t)(rand_r(&c->seed) % 64));
		/* A failing grain stops early: its items may be left undone. */
		for (size_t i = 0; i < n; i++)
			if (atomic_load(&seen[i]) > 1 ||
			    (j.fail_at < 0 && atomic_load(&seen[i]) != 1))
				c->bad++;
		if ((j.fail_at >= 0) != (r == -5))
			c->bad++;
		else if (r == -5)
			c->errors_ok++;
		j.magic = 0;	/* a late worker would see this */
	}
	return NULL;
}

int
main(void)
{
	struct workers *w;
	struct caller c[4];
	pthread_t th[4];
	int bad = 0, errs = 0;

	tap_ok(workers_new(3, tls_new, tls_free, NULL, &w) == 0 && workers_count(w) == 3,
	    "a pool of 3 threads");
	for (int i = 0; i < 4; i++) {
		c[i] = (struct caller){ w, 0, 0, (unsigned)i * 7919u + 1 };
		pthread_create(&th[i], NULL, caller_main, &c[i]);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		bad += c[i].bad;
		errs += c[i].errors_ok;
	}
	tap_ok(bad == 0, "4 callers x 3000 jobs: every item exactly once (%d wrong)", bad);
	tap_ok(atomic_load(&wrong_arg) == 0, "no call saw another job's argument (%d)",
	    atomic_load(&wrong_arg));
	tap_ok(errs == 4 * 300, "every failing job returned its error (%d of %d)", errs, 4 * 300);
	workers_free(w);
	return tap_done();
}
