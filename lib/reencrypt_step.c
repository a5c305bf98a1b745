/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The steps of an in-place conversion (docs/reencrypt.md, "One step"): a
 * chunk read and converted in memory; then its journal record sealed,
 * written and synced, PREPARED synced, the chunk written to the
 * provider and flushed, DONE.  While chunk k is written, chunk k+1 is read
 * and converted by a helper thread: the two touch different bytes of the
 * provider, and k+1's record goes to the journal's other place.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reencrypt.h"

static bool
zero_sector(const uint8_t *s, uint32_t S)
{
	return s[0] == 0 && memcmp(s, s + 1, S - 1) == 0;
}

/*
 * The chunk's new bytes in place.  A sector stored as zeros is a hole,
 * which reads as zeros (privacy.c): it stays one when re-keyed and turns
 * into zeros when decrypted, or into LUKS2's zeros.  Encrypting writes
 * every sector, as FreeBSD reads no holes.
 */
static int
convert(struct geli_reenc *r, uint8_t *buf, uint64_t off, uint64_t len)
{
	uint64_t first = off / r->S, n = len / r->S, i = 0, j;
	int error = 0;

	if (r->kind == GELI_REENC_ENCRYPT)
		return geli_volume_transform(r->vnew, first, n, buf, buf, true);
	while (i < n && error == 0) {
		for (; i < n && zero_sector(buf + i * r->S, r->S); i++)
			;
		for (j = i; j < n && !zero_sector(buf + j * r->S, r->S); j++)
			;
		if (j == i)
			break;
		error = geli_volume_transform(r->vold, first + i, j - i,
		    buf + i * r->S, buf + i * r->S, false);
		if (error == 0 && r->kind == GELI_REENC_REKEY)
			error = geli_volume_transform(r->vnew, first + i, j - i,
			    buf + i * r->S, buf + i * r->S, true);
		i = j;
	}
	/* LUKS2 reads no holes: every sector, in its own sector size. */
	if (error == 0 && r->kind == GELI_REENC_LUKS2) {
		uint32_t m = r->S / r->newmd.sectorsize;

		error = geli_volume_transform(r->vnew, first * m, n * m, buf,
		    buf, true);
	}
	return error;
}

/* Chunk p->k read and converted into p. */
static void
prepare(struct geli_reenc *r, struct prepared *p)
{
	geli_reenc_chunk(r, p->k, &p->off, &p->len);
	p->error = geli_provider_pread(r->p, p->buf, p->len, p->off);
	if (p->error == 0)
		p->error = convert(r, p->buf, p->off, p->len);
}

static void *
helper_main(void *arg)
{
	struct geli_reenc *r = arg;

	prepare(r, r->next);
	return NULL;
}

void
reenc_quiesce(struct geli_reenc *r)
{
	if (r->helping)
		pthread_join(r->helper, NULL);
	r->helping = false;
}

int
geli_reenc_step(struct geli_reenc *r)
{
	uint64_t k = r->done;
	struct prepared *p = &r->pre[k % 2];
	int error;

	if (k >= r->nchunks)
		return 0;
	/* The helper's chunk, or this one prepared now (under its lock
	 * beside other I/O, held until it is DONE). */
	if (r->helping) {
		reenc_quiesce(r);
	} else {
		p->k = k;
		if (r->lock != NULL) {
			geli_reenc_chunk(r, k, &p->off, &p->len);
			r->lock(r->lockarg, p->off, p->len);
		}
		prepare(r, p);
	}
	if (p->k != k)
		error = -EINVAL;
	else
		error = p->error;
	if (error == 0 && k + 1 < r->nchunks && r->lock == NULL) {
		r->next = &r->pre[(k + 1) % 2];
		r->next->k = k + 1;
		r->helping = pthread_create(&r->helper, NULL, helper_main, r) == 0;
	}
	/* The new bytes kept, then promised; only then the provider.  The
	 * record is sealed here, beside the helper's conversion (they take
	 * about as long). */
	if (error == 0)
		error = journal_seal_hotzone(&r->j, k, p->off, p->buf,
		    (uint32_t)p->len, p->head);
	if (error == 0)
		error = journal_put_hotzone(&r->j, k, p->head, p->buf,
		    (uint32_t)p->len);
	if (error == 0)
		error = journal_set_progress(&r->j, JSTATE_PREPARED, k, true);
	if (error == 0)
		error = geli_provider_pwrite(r->p, p->buf, p->len, p->off);
	if (error == 0)
		error = geli_provider_flush(r->p);
	/* Synced with the next step's hotzone record, or by finish. */
	if (error == 0)
		error = journal_set_progress(&r->j, JSTATE_DONE, k, false);
	if (error == 0)
		r->done = k + 1;
	if (r->lock != NULL)
		r->unlock(r->lockarg, p->off, p->len);
	if (error != 0) {
		reenc_quiesce(r);
		return error;
	}
	return 1;
}

int
geli_reenc_finish(struct geli_reenc *r)
{
	uint64_t N = geli_provider_mediasize(r->p), off;
	uint8_t *zeros = r->pre[0].buf;
	int error;

	reenc_quiesce(r);
	if (r->done < r->nchunks)
		return -EINVAL;
	if (fsync(r->j.fd) != 0)
		return -errno;
	if (r->kind == GELI_REENC_DECRYPT || r->kind == GELI_REENC_LUKS2) {
		/* The bytes past the data area (the record among them). */
		memset(zeros, 0, r->hotzone);
		for (off = r->bytes, error = 0; off < N && error == 0;
		    off += r->hotzone)
			error = geli_provider_pwrite(r->p, zeros,
			    N - off < r->hotzone ? N - off : r->hotzone, off);
		if (error == 0)
			error = geli_provider_flush(r->p);
	} else {
		error = geli_provider_write_metadata(r->p, &r->newmd);
	}
	if (error != 0)
		return error;
	return journal_remove(&r->j);
}
