/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Deleting from an attached volume (volume.h): discard (TRIM) gives whole
 * sectors back to the provider, unless NODELETE or integrity forbid it;
 * zeroing writes zeros, or, deallocating, punches the whole sectors out
 * (they read as zeros: a hole, privacy.c) and writes the partial ones.
 */
#include <stdlib.h>

#include "volume.h"

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
	if ((error = volume_range_lock(v, &r, a, b, true)) != 0)
		return error;
	error = punch ? provider_punch(v->p, a * S, (b - a) * S) :
	    geli_provider_discard(v->p, a * S, (b - a) * S);
	volume_range_unlock(v, &r);
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
