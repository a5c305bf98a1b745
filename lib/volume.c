/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * An attached volume: bytes [off, off+len) of the decrypted provider, mapped
 * to GELI sectors (and, with integrity, to their physical sectors), read with
 * one large pread, transformed by the worker pool, written with one pwrite.
 * Partial sectors are read, merged and rewritten (read-modify-write) under a
 * lock on their range; no layer above this one knows about sectors.  The
 * per-thread sector contexts live in sector_ctx.c, reads from a mapping of
 * the provider (GELI_VOLUME_MMAP) in volume_map.c, the range locks and
 * suspend in volume_gate.c, discard and zeroing in volume_delete.c.
 */
#include <stdlib.h>
#include <string.h>

#include "volume.h"

#define GRAIN_BYTES (1u << 15)	/* least logical bytes per worker task */

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
	if (flags & GELI_VOLUME_LUKS2) {
		/* aes-xts-plain64 with a 512-bit key, nothing else. */
		if (md->ealgo != GELI_ALGO_AES_XTS || md->keylen != 256 ||
		    (md->flags & GELI_FLAG_AUTH))
			return -EINVAL;
		g.ivshift = 9;
	}
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
	error = keys_init(&v->keys, md, mkey, P,
	    (flags & GELI_VOLUME_LUKS2) != 0);
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
		    sector_ctx_buf(c, n * S + n * v->g.bps, NULL, 0);
		if (plain == NULL) {
			error = -ENOMEM;
			break;
		}
		phys = v->g.auth ? plain + n * S : plain;
		if ((error = volume_range_lock(v, &r, a, a + n, false)) != 0)
			break;
		error = read_sectors(v, c, a, n, plain, phys);
		volume_range_unlock(v, &r);
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
		uint8_t *bounce = whole ? sector_ctx_buf(c, n * v->g.bps,
		    in + done, provider_buffer_align(v->p)) :
		    sector_ctx_buf(c, n * S + n * v->g.bps, NULL, 0);
		if (bounce == NULL) {
			error = -ENOMEM;
			break;
		}
		if (whole) {
			plain = (uint8_t *)(uintptr_t)(in + done);
			phys = bounce;
			if ((error = volume_range_lock(v, &r, a, a + n, true)) != 0)
				break;
			error = write_sectors(v, c, a, n, plain, phys);
			volume_range_unlock(v, &r);
			done += take;
			continue;
		}
		plain = bounce;
		phys = v->g.auth ? plain + n * S : plain;
		if ((error = volume_range_lock(v, &r, a, a + n, true)) != 0)
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
		volume_range_unlock(v, &r);
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
