/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A conversion beside the I/O of an attached volume (geli.h, "Online";
 * docs/reencrypt.md).  Every request is cut at chunk boundaries; each piece
 * holds its chunk shared while it runs, and goes to the old volume or to
 * the new side by what the chunk is now.  A step holds its chunk
 * exclusively from before it reads it until it is DONE (geli_reenc's
 * locks), so a piece never sees a chunk half converted, and the step never
 * converts a chunk under a write.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reencrypt.h"

/* A piece of a request in flight: chunk c held shared. */
struct held {
	struct held *next;
	uint64_t c;
};

struct geli_online {
	struct geli_reenc *r;		/* NULL once finished */
	struct geli_volume *v;		/* the caller's: old keys */
	struct geli_volume *vnew;	/* REKEY, LUKS2: the new keys, over p */
	struct geli_provider *p;	/* v's and r's */
	uint64_t bytes, nchunks, done;
	uint32_t hotzone;
	uint8_t *conv;			/* per chunk (offset order): converted */

	pthread_mutex_t lock;
	pthread_cond_t cv;
	struct held *io;
	bool busy;			/* chunk bc held by a step */
	bool broken;			/* ... which failed: its I/O is -EIO */
	uint64_t bc;
	bool finished;
};

/* ---- The new side: the new record's keys over the same provider ------------ */

static int
fwd_pread(void *opaque, void *buf, size_t len, uint64_t off)
{
	return geli_provider_pread(opaque, buf, len, off);
}

static int
fwd_pwrite(void *opaque, const void *buf, size_t len, uint64_t off)
{
	return geli_provider_pwrite(opaque, buf, len, off);
}

static int
fwd_flush(void *opaque)
{
	return geli_provider_flush(opaque);
}

static const struct geli_provider_ops fwd_ops = {
	.pread = fwd_pread, .pwrite = fwd_pwrite, .flush = fwd_flush,
};

/* ---- Holding chunks -------------------------------------------------------- */

static void
step_lock(void *arg, uint64_t off, uint64_t len)
{
	struct geli_online *o = arg;
	bool inflight;

	(void)len;
	pthread_mutex_lock(&o->lock);
	o->bc = off / o->hotzone;
	o->busy = true;		/* new pieces of bc wait from now on */
	do {
		inflight = false;
		for (struct held *h = o->io; h != NULL; h = h->next)
			inflight |= h->c == o->bc;
		if (inflight)
			pthread_cond_wait(&o->cv, &o->lock);
	} while (inflight);
	pthread_mutex_unlock(&o->lock);
}

static void
step_unlock(void *arg, uint64_t off, uint64_t len)
{
	struct geli_online *o = arg;
	bool now = geli_reenc_converted(o->r, off);

	(void)len;
	pthread_mutex_lock(&o->lock);
	o->conv[o->bc] = now;
	/* Not converted: the step failed, maybe with the chunk half
	 * written.  It stays held until a recovery says what it holds. */
	if (now) {
		o->busy = false;
		o->done = o->r->done;
	} else {
		o->broken = true;
	}
	pthread_cond_broadcast(&o->cv);
	pthread_mutex_unlock(&o->lock);
}

/* Chunk c held shared by h: whether it is converted, or -EIO. */
static int
piece_enter(struct geli_online *o, struct held *h, uint64_t c)
{
	int side;

	pthread_mutex_lock(&o->lock);
	while (o->busy && o->bc == c && !o->broken)
		pthread_cond_wait(&o->cv, &o->lock);
	if (o->busy && o->bc == c) {
		pthread_mutex_unlock(&o->lock);
		return -EIO;
	}
	h->c = c;
	h->next = o->io;
	o->io = h;
	side = o->conv[c];
	pthread_mutex_unlock(&o->lock);
	return side;
}

static void
piece_leave(struct geli_online *o, struct held *h)
{
	pthread_mutex_lock(&o->lock);
	for (struct held **pp = &o->io; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == h) {
			*pp = h->next;
			break;
		}
	}
	pthread_cond_broadcast(&o->cv);
	pthread_mutex_unlock(&o->lock);
}

/* ---- I/O ------------------------------------------------------------------------- */

enum op { OP_READ, OP_WRITE, OP_ZERO };

static ssize_t
piece_io(struct geli_online *o, enum op op, void *buf, size_t len,
    uint64_t off)
{
	static const uint8_t zeros[65536];
	struct held h;
	struct geli_volume *v;
	int side = piece_enter(o, &h, off / o->hotzone), error = 0;
	ssize_t n;

	if (side < 0)
		return side;
	v = side ? o->vnew : o->v;
	if (v != NULL) {
		if (op == OP_ZERO)
			n = geli_volume_zero(v, off, len, false);
		else
			n = op == OP_READ ? geli_volume_read(v, buf, len, off) :
			    geli_volume_write(v, buf, len, off);
		piece_leave(o, &h);
		return op == OP_ZERO && n == 0 ? (ssize_t)len : n;
	}
	/* Converted to plain: the provider's own bytes. */
	if (op == OP_READ)
		error = geli_provider_pread(o->p, buf, len, off);
	else if (op == OP_WRITE)
		error = geli_provider_pwrite(o->p, buf, len, off);
	for (size_t d = 0, k; op == OP_ZERO && d < len && error == 0; d += k) {
		k = len - d < sizeof(zeros) ? len - d : sizeof(zeros);
		error = geli_provider_pwrite(o->p, zeros, k, off + d);
	}
	piece_leave(o, &h);
	return error != 0 ? error : (ssize_t)len;
}

static ssize_t
online_io(struct geli_online *o, enum op op, void *buf, size_t len,
    uint64_t off)
{
	size_t done = 0;
	ssize_t n;

	/* At or past the end: the volume's answer (0, -ENOSPC). */
	if (off >= o->bytes) {
		if (op == OP_ZERO)
			return geli_volume_zero(o->v, off, len, false);
		return op == OP_READ ? geli_volume_read(o->v, buf, len, off) :
		    geli_volume_write(o->v, buf, len, off);
	}
	if (len > o->bytes - off)
		len = (size_t)(o->bytes - off);
	while (done < len) {
		uint64_t at = off + done, end = (at / o->hotzone + 1) * o->hotzone;
		size_t k = end - at < len - done ? (size_t)(end - at) : len - done;

		n = piece_io(o, op, buf == NULL ? NULL : (uint8_t *)buf + done,
		    k, at);
		if (n < 0)
			return n;
		done += k;
	}
	return (ssize_t)done;
}

ssize_t
geli_online_read(struct geli_online *o, void *buf, size_t len, uint64_t off)
{
	return online_io(o, OP_READ, buf, len, off);
}

ssize_t
geli_online_write(struct geli_online *o, const void *buf, size_t len,
    uint64_t off)
{
	return online_io(o, OP_WRITE, (void *)(uintptr_t)buf, len, off);
}

int
geli_online_zero(struct geli_online *o, uint64_t off, uint64_t len,
    bool deallocate)
{
	ssize_t n;

	if (deallocate)
		return -EOPNOTSUPP;
	for (uint64_t d = 0, k; d < len; d += k) {
		k = len - d < (1u << 30) ? len - d : (1u << 30);
		n = online_io(o, OP_ZERO, NULL, (size_t)k, off + d);
		if (n < 0)
			return (int)n;
		if (n == 0)
			break;
	}
	return 0;
}

int
geli_online_flush(struct geli_online *o)
{
	return geli_volume_flush(o->v);
}

/* ---- The conversion ---------------------------------------------------------------- */

int
geli_online_open(struct geli_reenc *r, struct geli_volume *v,
    unsigned nthreads, struct geli_online **out)
{
	struct geli_online *o;
	struct geli_provider *q;
	int error = -ENOMEM;

	*out = NULL;
	if (r->kind == GELI_REENC_ENCRYPT || geli_volume_provider(v) != r->p ||
	    geli_volume_size(v) != r->bytes)
		return -EINVAL;
	if ((o = calloc(1, sizeof(*o))) == NULL)
		return -ENOMEM;
	o->r = r;
	o->v = v;
	o->p = r->p;
	o->bytes = r->bytes;
	o->nchunks = r->nchunks;
	o->hotzone = r->hotzone;
	o->done = r->done;
	pthread_mutex_init(&o->lock, NULL);
	pthread_cond_init(&o->cv, NULL);
	if ((o->conv = calloc(o->nchunks, 1)) == NULL)
		goto fail;
	for (uint64_t c = 0; c < o->nchunks; c++)
		o->conv[c] = geli_reenc_converted(r, c * o->hotzone);
	if (reenc_has_newkey(r->kind)) {
		error = geli_provider_open_ops(&fwd_ops, r->p,
		    geli_provider_mediasize(r->p),
		    geli_provider_sectorsize(r->p), &q);
		if (error != 0)
			goto fail;
		error = geli_volume_open(q, &r->newmd,
		    r->mk + GELI_MKEY_DATALEN, reenc_new_flags(r->kind),
		    nthreads, &o->vnew);
		if (error != 0) {
			geli_provider_close(q);
			goto fail;
		}
	}
	geli_reenc_set_locks(r, step_lock, step_unlock, o);
	*out = o;
	return 0;
fail:
	o->r = NULL;	/* the caller's still */
	geli_online_close(o);
	return error;
}

/* The chunk a failed step held: what the journal says it holds (a resume's
 * recovery), then let go. */
static int
recover(struct geli_online *o)
{
	int error = reenc_recover(o->r);

	if (error != 0)
		return error;
	pthread_mutex_lock(&o->lock);
	o->conv[o->bc] = geli_reenc_converted(o->r, o->bc * o->hotzone);
	o->broken = o->busy = false;
	o->done = o->r->done;
	pthread_cond_broadcast(&o->cv);
	pthread_mutex_unlock(&o->lock);
	return 0;
}

int
geli_online_step(struct geli_online *o)
{
	int error;

	if (o->finished)
		return 0;
	if (o->broken && (error = recover(o)) != 0)
		return error;
	error = geli_reenc_step(o->r);
	if (error < 0 && o->broken)
		(void)recover(o);	/* may fail as the step did */
	if (error != 0)
		return error;
	/* Every chunk done: every piece goes to the new side already.  A
	 * LUKS2 target's end waits for its header (geli_online_finish). */
	if (o->r->kind == GELI_REENC_LUKS2)
		return 0;
	return geli_online_finish(o);
}

int
geli_online_finish(struct geli_online *o)
{
	int error;

	if (o->finished)
		return 0;
	if (o->broken || o->r->done != o->r->nchunks)
		return -EINVAL;
	if ((error = geli_reenc_finish(o->r)) != 0)
		return error;
	geli_reenc_free(o->r);
	pthread_mutex_lock(&o->lock);
	o->r = NULL;
	o->finished = true;
	pthread_mutex_unlock(&o->lock);
	return 0;
}

void
geli_online_progress(struct geli_online *o, uint64_t *done, uint64_t *total,
    uint64_t *bytes)
{
	pthread_mutex_lock(&o->lock);
	*done = o->done;
	*total = o->nchunks;
	*bytes = o->bytes;
	pthread_mutex_unlock(&o->lock);
}

bool
geli_online_finished(struct geli_online *o)
{
	bool f;

	pthread_mutex_lock(&o->lock);
	f = o->finished;
	pthread_mutex_unlock(&o->lock);
	return f;
}

int
geli_online_abandon(struct geli_online *o)
{
	return o->r != NULL ? journal_remove(&o->r->j) : 0;
}

void
geli_online_close(struct geli_online *o)
{
	if (o == NULL)
		return;
	geli_reenc_free(o->r);
	geli_volume_close(o->vnew);
	free(o->conv);
	pthread_cond_destroy(&o->cv);
	pthread_mutex_destroy(&o->lock);
	free(o);
}
