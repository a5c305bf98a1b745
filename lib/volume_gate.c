/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The gate of an attached volume (volume.h): who may touch which GELI
 * sectors when.  Reads hold their sectors shared and writes exclusive
 * (range locks); suspend closes the gate, waits for the I/O inside, and
 * wipes every key; resume opens it with the keys again; shutdown turns
 * everybody away.
 */
#include "volume.h"

static bool
range_conflicts(const struct geli_volume *v, uint64_t a, uint64_t b, bool excl)
{
	for (const struct range *r = v->ranges; r != NULL; r = r->next)
		if (r->a < b && a < r->b && (excl || r->excl))
			return true;
	return false;
}

int
volume_range_lock(struct geli_volume *v, struct range *r, uint64_t a,
    uint64_t b, bool excl)
{
	r->a = a;
	r->b = b;
	r->excl = excl;
	pthread_mutex_lock(&v->lock);
	while (!v->closing && (v->suspended || range_conflicts(v, a, b, excl)))
		pthread_cond_wait(&v->cv, &v->lock);
	if (v->closing) {
		pthread_mutex_unlock(&v->lock);
		return -ENXIO;
	}
	v->inflight++;
	r->next = v->ranges;
	v->ranges = r;
	pthread_mutex_unlock(&v->lock);
	return 0;
}

void
volume_range_unlock(struct geli_volume *v, struct range *r)
{
	pthread_mutex_lock(&v->lock);
	for (struct range **pp = &v->ranges; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == r) {
			*pp = r->next;
			break;
		}
	}
	v->inflight--;
	pthread_cond_broadcast(&v->cv);
	pthread_mutex_unlock(&v->lock);
}

static void
drop_keys(void *tls)
{
	sector_ctx_drop_keys(tls);
}

int
geli_volume_suspend(struct geli_volume *v)
{
	pthread_mutex_lock(&v->lock);
	if (v->suspended) {
		pthread_mutex_unlock(&v->lock);
		return -EALREADY;
	}
	v->suspended = true;
	while (v->inflight > 0)
		pthread_cond_wait(&v->cv, &v->lock);
	/* No I/O runs now: wipe every key and every keyed context. */
	keys_wipe(&v->keys);
	workers_each_tls(v->w, drop_keys);
	for (unsigned i = 0; i < v->nctx; i++)
		sector_ctx_drop_keys(v->all_ctx[i]);
	pthread_mutex_unlock(&v->lock);
	return 0;
}

int
geli_volume_resume(struct geli_volume *v, const uint8_t *mkey)
{
	int error;

	pthread_mutex_lock(&v->lock);
	if (!v->suspended) {
		pthread_mutex_unlock(&v->lock);
		return -EALREADY;
	}
	error = keys_init(&v->keys, &v->md, mkey, v->g.P,
	    (v->flags & GELI_VOLUME_LUKS2) != 0);
	if (error == 0) {
		v->suspended = false;
		pthread_cond_broadcast(&v->cv);
	}
	pthread_mutex_unlock(&v->lock);
	return error;
}

void
geli_volume_shutdown(struct geli_volume *v)
{
	pthread_mutex_lock(&v->lock);
	v->closing = true;
	pthread_cond_broadcast(&v->cv);
	pthread_mutex_unlock(&v->lock);
}

bool
geli_volume_suspended(struct geli_volume *v)
{
	bool s;

	pthread_mutex_lock(&v->lock);
	s = v->suspended;
	pthread_mutex_unlock(&v->lock);
	return s;
}
