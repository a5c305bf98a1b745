/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * An attached volume: bytes [off, off+len) of the decrypted provider, mapped
 * to GELI sectors (and, with integrity, to their physical sectors), read with
 * one large pread, transformed by the worker pool, written with one pwrite.
 * Partial sectors are read, merged and rewritten (read-modify-write) under a
 * lock on their range; no layer above this one knows about sectors.  The
 * per-thread sector contexts live in sector_ctx.c, reads from a mapping of
 * the provider (GELI_VOLUME_MMAP) in volume_map.c.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "geli.h"
#include "internal.h"
#include "keys.h"
#include "sector.h"
#include "workers.h"

#define GRAIN_BYTES (1u << 15)	/* least logical bytes per worker task */

/* A held range of GELI sectors [a, b), shared (read) or exclusive. */
struct range {
	struct range *next;
	uint64_t a, b;
	bool excl;
};

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

/* ---- Thread contexts ----------------------------------------------------------- */

static void *
ctx_new(void *arg)
{
	struct geli_volume *v = arg;

	return sector_ctx_new(&v->g, &v->keys);
}

static void
ctx_free(void *arg, void *tls)
{
	(void)arg;
	sector_ctx_free(tls);
}

/* A context for the calling thread, from the free list or new. */
static struct sector_ctx *
ctx_get(struct geli_volume *v)
{
	struct sector_ctx *c;

	pthread_mutex_lock(&v->lock);
	c = v->free_ctx;
	if (c != NULL) {
		v->free_ctx = c->next;
	} else if (v->nctx < sizeof(v->all_ctx) / sizeof(v->all_ctx[0])) {
		c = ctx_new(v);
		if (c != NULL)
			v->all_ctx[v->nctx++] = c;
	}
	while (c == NULL) {
		/* All 64 in use: wait for one. */
		pthread_cond_wait(&v->cv, &v->lock);
		c = v->free_ctx;
		if (c != NULL)
			v->free_ctx = c->next;
	}
	pthread_mutex_unlock(&v->lock);
	return c;
}

static void
ctx_put(struct geli_volume *v, struct sector_ctx *c)
{
	pthread_mutex_lock(&v->lock);
	c->next = v->free_ctx;
	v->free_ctx = c;
	pthread_cond_broadcast(&v->cv);
	pthread_mutex_unlock(&v->lock);
}

/* ---- Range locks and the suspend gate ------------------------------------------- */

static bool
range_conflicts(const struct geli_volume *v, uint64_t a, uint64_t b, bool excl)
{
	for (const struct range *r = v->ranges; r != NULL; r = r->next)
		if (r->a < b && a < r->b && (excl || r->excl))
			return true;
	return false;
}

/* Enter the gate (waits while suspended) and lock sectors [a, b); -ENXIO
 * once the volume is shut down. */
static int
range_lock(struct geli_volume *v, struct range *r, uint64_t a, uint64_t b,
    bool excl)
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

static void
range_unlock(struct geli_volume *v, struct range *r)
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

/* ---- Batches for the pool ------------------------------------------------------- */

struct batch {
	struct geli_volume *v;
	uint64_t first;		/* GELI sector number of item 0 */
	uint8_t *plain;		/* S bytes per sector */
	uint8_t *phys;		/* bps bytes per sector (== plain without AUTH) */
	int enc;
	bool io;		/* each grain also reads (before) or writes (after) */
};

static int
batch_run(void *arg, void *tls, size_t first, size_t count)
{
	struct batch *b = arg;
	struct sector_ctx *c = tls;
	const struct sector_geom *g = &b->v->g;
	int error = 0;

	/* The copy from or to the provider runs on the workers too, so that
	 * it overlaps with the crypto of the other grains. */
	/* From the mapping: decrypted straight into place, no copy first. */
	if (b->io && !b->enc && b->v->map.base != NULL) {
		error = volume_map_decrypt(&b->v->map, c, b->first + first,
		    count, b->plain + first * g->S);
		if (error != 1)
			return error;
		error = 0;
	}
	if (b->io && !b->enc)
		error = geli_provider_pread(b->v->p, b->phys + first * g->bps,
		    count * g->bps, (b->first + first) * g->bps);
	/* Without AUTH: the grain's sectors as one run, plain <-> phys, which
	 * may be the same buffer; a sector read from the provider may be a
	 * hole. */
	if (error == 0 && !g->auth) {
		uint64_t off = (b->first + first) * g->S;
		uint8_t *pl = b->plain + first * g->S;
		uint8_t *ph = b->phys + first * g->S;

		if (b->enc)
			error = sector_crypt_run(c, off, count, pl, ph, g->S, 1);
		else if (b->io)
			error = sector_read_stored(c, off, count, ph, pl, g->S);
		else
			error = sector_crypt_run(c, off, count, ph, pl, g->S, 0);
	}
	/* With AUTH: each sector's chunks, tag by tag. */
	for (size_t i = first; g->auth && i < first + count && error == 0; i++) {
		uint8_t *pl = b->plain + i * g->S;
		uint8_t *ph = b->phys + i * g->bps;

		if (b->enc)
			error = sector_auth_encrypt(c, b->first + i, pl, ph);
		else
			error = sector_auth_decrypt(c, b->first + i, ph, pl);
	}
	if (error == 0 && b->io && b->enc)
		error = geli_provider_pwrite(b->v->p, b->phys + first * g->bps,
		    count * g->bps, (b->first + first) * g->bps);
	return error;
}

static int
run_batch(struct geli_volume *v, struct sector_ctx *c, uint64_t first,
    size_t n, uint8_t *plain, uint8_t *phys, int enc, bool io)
{
	struct batch b = { v, first, plain, phys, enc, io };
	size_t grain, min = GRAIN_BYTES / v->g.S;
	int error;

	/* Two grains per thread: few system calls, and still balanced. */
	grain = n / (2 * (workers_count(v->w) + 1));
	if (grain < min)
		grain = min;
	error = workers_run(v->w, batch_run, &b, c, n, grain ? grain : 1);
	if (error == -EBADMSG)
		atomic_fetch_add(&v->integrity_errors, 1);
	return error;
}

static int
transform(struct geli_volume *v, struct sector_ctx *c, uint64_t first,
    size_t n, uint8_t *plain, uint8_t *phys, int enc)
{
	return run_batch(v, c, first, n, plain, phys, enc, false);
}

/* Read and decrypt sectors [a, a+n) into plain (n*S bytes). */
static int
read_sectors(struct geli_volume *v, struct sector_ctx *c, uint64_t a,
    size_t n, uint8_t *plain, uint8_t *phys)
{
	return run_batch(v, c, a, n, plain, phys, 0, true);
}

/* Encrypt plain (n*S bytes) and write it as sectors [a, a+n). */
static int
write_sectors(struct geli_volume *v, struct sector_ctx *c, uint64_t a,
    size_t n, uint8_t *plain, uint8_t *phys)
{
	return run_batch(v, c, a, n, plain, phys, 1, true);
}

/* The next round of a request: sectors [a, a+n), take bytes from head. */
struct span {
	uint64_t a;
	size_t n, head, take;
};

static struct span
next_span(uint32_t S, uint64_t pos, size_t want)
{
	struct span sp;

	sp.a = pos / S;
	sp.head = (size_t)(pos - sp.a * S);
	sp.n = (sp.head + (want < VOLUME_CHUNK_BYTES ? want :
	    VOLUME_CHUNK_BYTES) + S - 1) / S;
	sp.take = sp.n * S - sp.head < want ? sp.n * S - sp.head : want;
	return sp;
}

/* ---- The public API --------------------------------------------------------------- */

int
geli_volume_open(struct geli_provider *p, const struct geli_metadata *md,
    const uint8_t *mkey, unsigned flags, unsigned nthreads,
    struct geli_volume **out)
{
	const struct gc_ops *crypto = gc_current();
	struct geli_volume *v;
	uint32_t P = geli_provider_sectorsize(p);
	struct geli_metadata chk;
	struct sector_geom g;
	int error;

	if (crypto == NULL)
		return -ENOSYS;
	/* Whatever the record says, nothing below divides by zero or
	 * allocates a sector FreeBSD could not read (geli_metadata_check).
	 * A onetime volume may have a sector size that is not a power of
	 * two. */
	chk = *md;
	if (flags & GELI_VOLUME_ONETIME)
		chk.flags |= GELI_FLAG_ONETIME;
	error = geli_metadata_check(&chk, geli_provider_mediasize(p), P);
	geli_wipe(&chk, sizeof(chk));
	if (error != 0)
		return -EINVAL;
	/* This volume's backend, whatever is selected later. */
	if (sector_geom_init(&g, crypto, md, P) != 0)
		return -EINVAL;
	v = calloc(1, sizeof(*v));
	if (v == NULL)
		return -ENOMEM;
	v->p = p;
	v->md = *md;
	atomic_init(&v->nodelete, (md->flags & GELI_FLAG_NODELETE) != 0);
	v->flags = flags;
	v->g = g;
	v->size = geli_eli_mediasize(md, geli_provider_mediasize(p), P,
	    (flags & GELI_VOLUME_ONETIME) != 0);
	pthread_mutex_init(&v->lock, NULL);
	pthread_cond_init(&v->cv, NULL);
	error = keys_init(&v->keys, md, mkey, P);
	if (error == 0 && nthreads > 1)
		error = workers_new(nthreads - 1, ctx_new, ctx_free, v, &v->w);
	/* Integrity sectors are not where the mapping would put them. */
	if (error == 0 && (flags & GELI_VOLUME_MMAP) && !v->g.auth)
		volume_map_open(&v->map, p, v->size);
	if (error != 0) {
		v->p = NULL;
		geli_volume_close(v);
		return error;
	}
	*out = v;
	return 0;
}

uint64_t
geli_volume_size(const struct geli_volume *v)
{
	return v->size;
}

uint32_t
geli_volume_sectorsize(const struct geli_volume *v)
{
	return v->g.S;
}

struct geli_provider *
geli_volume_provider(const struct geli_volume *v)
{
	return v->p;
}

const struct geli_metadata *
geli_volume_metadata(const struct geli_volume *v)
{
	return &v->md;
}

uint64_t
geli_volume_keys_total(const struct geli_volume *v)
{
	/* Without AUTH: from the .eli size and S; with: from N and P (§6.2, §7.3). */
	return keys_total(&v->keys,
	    v->g.auth ? geli_provider_mediasize(v->p) : v->size);
}

uint64_t
geli_volume_keys_allocated(struct geli_volume *v)
{
	return keys_cached(&v->keys);
}

uint64_t
geli_volume_integrity_errors(const struct geli_volume *v)
{
	return atomic_load(&v->integrity_errors);
}

int
geli_volume_transform(struct geli_volume *v, uint64_t first, size_t n,
    uint8_t *plain, uint8_t *phys, bool encrypt)
{
	struct sector_ctx *c = ctx_get(v);
	int error;

	error = transform(v, c, first, n, plain, v->g.auth ? phys : plain,
	    encrypt);
	ctx_put(v, c);
	return error;
}

uint32_t
geli_volume_physical_sectorsize(const struct geli_volume *v)
{
	return v->g.bps;
}

ssize_t
geli_volume_read(struct geli_volume *v, void *buf, size_t len, uint64_t off)
{
	const uint32_t S = v->g.S;
	struct sector_ctx *c;
	uint8_t *out = buf, *plain, *phys;
	size_t done = 0;
	int error = 0;

	if (off >= v->size || len == 0)
		return 0;
	if (len > v->size - off)
		len = (size_t)(v->size - off);
	c = ctx_get(v);
	while (done < len && error == 0) {
		struct span sp = next_span(S, off + done, len - done);
		uint64_t a = sp.a;
		size_t n = sp.n, head = sp.head, take = sp.take;
		bool direct = head == 0 && take == n * S && !v->g.auth;
		struct range r;

		/* Aligned without integrity: decrypt in the caller's buffer. */
		plain = direct ? out + done :
		    sector_ctx_buf(c, n * S + n * v->g.bps);
		if (plain == NULL) {
			error = -ENOMEM;
			break;
		}
		phys = v->g.auth ? plain + n * S : plain;
		if ((error = range_lock(v, &r, a, a + n, false)) != 0)
			break;
		error = read_sectors(v, c, a, n, plain, phys);
		range_unlock(v, &r);
		if (error == 0 && !direct)
			memcpy(out + done, plain + head, take);
		done += take;
	}
	ctx_put(v, c);
	return error != 0 ? error : (ssize_t)len;
}

ssize_t
geli_volume_write(struct geli_volume *v, const void *buf, size_t len,
    uint64_t off)
{
	const uint32_t S = v->g.S;
	const uint8_t *in = buf;
	struct sector_ctx *c;
	uint8_t *plain, *phys;
	size_t done = 0;
	int error = 0;

	if (v->flags & GELI_VOLUME_READONLY)
		return -EROFS;
	if (len == 0)
		return 0;
	if (off >= v->size)
		return -ENOSPC;
	if (len > v->size - off)
		len = (size_t)(v->size - off);
	c = ctx_get(v);
	while (done < len && error == 0) {
		struct span sp = next_span(S, off + done, len - done);
		uint64_t a = sp.a;
		size_t n = sp.n, head = sp.head, take = sp.take;
		struct range r;

		/*
		 * Whole sectors: encrypt straight from the caller's buffer into
		 * ours (one pass less).  Partial ones: merge in our buffer.
		 */
		bool whole = head == 0 && take == n * S;
		uint8_t *bounce = sector_ctx_buf(c, whole ? n * v->g.bps :
		    n * S + n * v->g.bps);
		if (bounce == NULL) {
			error = -ENOMEM;
			break;
		}
		if (whole) {
			plain = (uint8_t *)(uintptr_t)(in + done);
			phys = bounce;
			if ((error = range_lock(v, &r, a, a + n, true)) != 0)
				break;
			error = write_sectors(v, c, a, n, plain, phys);
			range_unlock(v, &r);
			done += take;
			continue;
		}
		plain = bounce;
		phys = v->g.auth ? plain + n * S : plain;
		if ((error = range_lock(v, &r, a, a + n, true)) != 0)
			break;
		/* Read-modify-write of a partial first and last sector. */
		if (head != 0)
			error = read_sectors(v, c, a, 1, plain, phys);
		if (error == 0 && (head + take) % S != 0 &&
		    (n > 1 || head == 0))
			error = read_sectors(v, c, a + n - 1, 1,
			    plain + (n - 1) * S, phys + (n - 1) * v->g.bps);
		if (error == 0) {
			memcpy(plain + head, in + done, take);
			error = write_sectors(v, c, a, n, plain, phys);
		}
		range_unlock(v, &r);
		done += take;
	}
	ctx_put(v, c);
	return error != 0 ? error : (ssize_t)len;
}

int
geli_volume_grow(struct geli_volume *v, uint64_t newsize)
{
	if (newsize < geli_provider_mediasize(v->p))
		return -EINVAL;
	/* Wait for I/O in flight so that no request sees a half-grown volume. */
	pthread_mutex_lock(&v->lock);
	while (v->inflight > 0)
		pthread_cond_wait(&v->cv, &v->lock);
	provider_set_mediasize(v->p, newsize);
	if (!(v->flags & GELI_VOLUME_ONETIME))
		v->md.provsize = newsize;
	v->size = geli_eli_mediasize(&v->md, newsize, v->g.P,
	    (v->flags & GELI_VOLUME_ONETIME) != 0);
	if (v->map.base != NULL) {
		volume_map_close(&v->map);
		volume_map_open(&v->map, v->p, v->size);
	}
	pthread_mutex_unlock(&v->lock);
	return 0;
}

int
geli_volume_flush(struct geli_volume *v)
{
	return geli_provider_flush(v->p);
}

bool
geli_volume_can_discard(const struct geli_volume *v)
{
	return !atomic_load(&v->nodelete) && !v->g.auth;
}

void
geli_volume_set_nodelete(struct geli_volume *v, bool on)
{
	atomic_store(&v->nodelete, on);
}

/* Sectors [a, b) deleted on the provider: discarded, or punched (zeros). */
static int
delete_sectors(struct geli_volume *v, uint64_t a, uint64_t b, bool punch)
{
	const uint32_t S = v->g.S;
	struct range r;
	int error;

	/* Without integrity sector n is bytes [n*S, (n+1)*S) below too. */
	if ((error = range_lock(v, &r, a, b, true)) != 0)
		return error;
	error = punch ? provider_punch(v->p, a * S, (b - a) * S) :
	    geli_provider_discard(v->p, a * S, (b - a) * S);
	range_unlock(v, &r);
	return error;
}

/*
 * The checks of a deletion (or, deleting false, a zeroing) of [off, off+*len):
 * -errno; 0 when there is nothing to do; 1 with *len cut at the end of the
 * volume and [*a, *b) the whole sectors inside it (rounded inwards).
 */
static int
delete_span(struct geli_volume *v, uint64_t off, uint64_t *len, bool deleting,
    uint64_t *a, uint64_t *b)
{
	const uint32_t S = v->g.S;

	if (deleting && !geli_volume_can_discard(v))
		return -EOPNOTSUPP;
	if (v->flags & GELI_VOLUME_READONLY)
		return -EROFS;
	if (off >= v->size || *len == 0)
		return 0;
	if (*len > v->size - off)
		*len = v->size - off;
	*a = (off + S - 1) / S;
	*b = (off + *len) / S;
	return 1;
}

int
geli_volume_discard(struct geli_volume *v, uint64_t off, uint64_t len)
{
	uint64_t a, b;
	int r = delete_span(v, off, &len, true, &a, &b);

	if (r <= 0)
		return r;
	return a < b ? delete_sectors(v, a, b, false) : 0;
}

/* Zeros written over [off, off+len) (inside the volume), a chunk at a time. */
static int
write_zeros(struct geli_volume *v, uint64_t off, uint64_t len)
{
	size_t chunk = len < VOLUME_CHUNK_BYTES ? (size_t)len : VOLUME_CHUNK_BYTES;
	uint8_t *zero;
	int error = 0;

	if (len == 0)
		return 0;
	if ((zero = calloc(1, chunk)) == NULL)
		return -ENOMEM;
	while (len > 0 && error == 0) {
		size_t n = len < chunk ? (size_t)len : chunk;
		ssize_t w = geli_volume_write(v, zero, n, off);

		error = w < 0 ? (int)w : 0;
		off += n;
		len -= n;
	}
	free(zero);
	return error;
}

int
geli_volume_zero(struct geli_volume *v, uint64_t off, uint64_t len,
    bool deallocate)
{
	const uint32_t S = v->g.S;
	uint64_t a, b;
	int error = delete_span(v, off, &len, deallocate, &a, &b);

	if (error <= 0)
		return error;
	/* The whole sectors inside, [a, b), deleted: they read as zeros (a
	 * hole, sector_read_stored); the partial ones at the edges written. */
	if (!deallocate || a >= b)
		return write_zeros(v, off, len);
	/* The deletion first: when the provider cannot, nothing changed. */
	if ((error = delete_sectors(v, a, b, true)) != 0 ||
	    (error = write_zeros(v, off, a * S - off)) != 0)
		return error;
	return write_zeros(v, b * S, off + len - b * S);
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
	error = keys_init(&v->keys, &v->md, mkey, v->g.P);
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

void
geli_volume_close(struct geli_volume *v)
{
	if (v == NULL)
		return;
	workers_free(v->w);
	volume_map_close(&v->map);
	for (unsigned i = 0; i < v->nctx; i++)
		ctx_free(v, v->all_ctx[i]);
	keys_destroy(&v->keys);
	geli_provider_close(v->p);
	pthread_mutex_destroy(&v->lock);
	pthread_cond_destroy(&v->cv);
	geli_wipe(&v->md, sizeof(v->md));
	free(v);
}
