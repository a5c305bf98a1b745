/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * In-place conversion (geli.h, docs/reencrypt.md): starting one (the
 * journal, then the marked record), resuming one (every check, then the
 * redo of a prepared chunk), the order of chunks.  The steps are
 * reencrypt_step.c's, the journal's file format journal.c's.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reencrypt.h"

static const char mark_tag[] = "GELIREENC";	/* the spare slot's first bytes */

/* ---- The marked record ------------------------------------------------------- */

/* md as the provider keeps it while converting: marked, slot kept, the other
 * slot naming the journal. */
static void
mark_record(const struct geli_metadata *md, int slot, const uint8_t uuid[16],
    struct geli_metadata *out)
{
	uint8_t *other;

	*out = *md;
	out->version = GELI_REENC_MARK | md->version;
	out->keys = (uint8_t)(1u << slot);
	other = out->mkeys + (1 - slot) * GELI_MKEYLEN;
	memset(other, 0, GELI_MKEYLEN);
	memcpy(other, mark_tag, sizeof(mark_tag));
	memcpy(other + 16, uuid, 16);
}

int
geli_reenc_uuid(const struct geli_metadata *md, uint8_t uuid[16])
{
	if (!GELI_REENC_MARKED(md->version))
		return -EINVAL;
	for (int slot = 0; slot < GELI_MAXMKEYS; slot++) {
		const uint8_t *s = md->mkeys + slot * GELI_MKEYLEN;

		if (!(md->keys & (1u << slot)) &&
		    memcmp(s, mark_tag, sizeof(mark_tag)) == 0) {
			memcpy(uuid, s + 16, 16);
			return 0;
		}
	}
	return -EINVAL;
}

/* ---- Geometry ------------------------------------------------------------------ */

static int
noio(void *opaque, void *buf, size_t len, uint64_t off)
{
	(void)opaque, (void)buf, (void)len, (void)off;
	return -EIO;
}

static const struct geli_provider_ops noio_ops = { .pread = noio };

int
geli_luks2_record(uint32_t S, uint64_t provsize, struct geli_metadata *md)
{
	if (S < 512 || (S & (S - 1)) != 0)
		return -EINVAL;
	memset(md, 0, sizeof(*md));
	memcpy(md->magic, GELI_MAGIC, sizeof(GELI_MAGIC));
	md->version = GELI_VERSION;
	md->ealgo = GELI_ALGO_AES_XTS;
	md->keylen = 256;
	md->provsize = provsize;
	md->sectorsize = S > 4096 ? 4096 : S;
	md->keys = 1;
	md->iterations = -1;
	return 0;
}

/* A volume for md's transforms over a provider of r->p's geometry (flags:
 * GELI_VOLUME_LUKS2 or 0). */
static int
transform_volume(struct geli_reenc *r, const struct geli_metadata *md,
    const uint8_t *mk, unsigned flags, struct geli_volume **out)
{
	struct geli_provider *q;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int error;

	error = geli_provider_open_ops(&noio_ops, NULL,
	    geli_provider_mediasize(r->p), geli_provider_sectorsize(r->p), &q);
	if (error != 0)
		return error;
	error = geli_volume_open(q, md, mk, flags,
	    cpus < 1 ? 1 : cpus > 8 ? 8 : (unsigned)cpus, out);
	if (error != 0)
		geli_provider_close(q);
	return error;
}

/* What start and resume share once the records and keys are known. */
static int
setup(struct geli_reenc *r)
{
	const struct geli_metadata *md = r->kind == GELI_REENC_ENCRYPT ?
	    &r->newmd : &r->oldmd;
	uint64_t N = geli_provider_mediasize(r->p);
	uint32_t P = geli_provider_sectorsize(r->p);
	int error;

	if ((md->flags & GELI_FLAG_AUTH) || md->provsize != N ||
	    geli_metadata_check(md, N, P) != 0)
		return -EINVAL;
	if (r->kind == GELI_REENC_REKEY &&
	    ((r->newmd.flags & GELI_FLAG_AUTH) || r->newmd.provsize != N ||
	    r->newmd.sectorsize != r->oldmd.sectorsize ||
	    geli_metadata_check(&r->newmd, N, P) != 0))
		return -EINVAL;
	/* LUKS2's sectors: GELI's, or 4096-byte parts of larger ones. */
	if (r->kind == GELI_REENC_LUKS2 && (r->newmd.provsize != N ||
	    r->newmd.sectorsize > r->oldmd.sectorsize ||
	    r->oldmd.sectorsize % r->newmd.sectorsize != 0 ||
	    r->newmd.sectorsize % P != 0))
		return -EINVAL;
	r->S = md->sectorsize;
	r->bytes = geli_eli_mediasize(md, N, P, false);
	if (r->bytes == 0)
		return -EINVAL;
	if (r->hotzone == 0)
		r->hotzone = GELI_REENC_HOTZONE;
	if (r->hotzone > (64u << 20))
		r->hotzone = 64u << 20;
	r->hotzone -= r->hotzone % r->S;
	if (r->hotzone == 0)
		r->hotzone = r->S;
	r->nchunks = (r->bytes + r->hotzone - 1) / r->hotzone;
	for (int i = 0; i < 2; i++)
		if ((r->pre[i].buf = aligned_alloc(4096, r->hotzone)) == NULL)
			return -ENOMEM;
	if (r->kind != GELI_REENC_ENCRYPT &&
	    (error = transform_volume(r, &r->oldmd, r->mk, 0, &r->vold)) != 0)
		return error;
	if (r->kind != GELI_REENC_DECRYPT &&
	    (error = transform_volume(r, &r->newmd,
	    r->mk + GELI_MKEY_DATALEN, reenc_new_flags(r->kind), &r->vnew)) != 0)
		return error;
	return 0;
}

/* Chunks [0, *lo) and [*hi, n) hold the first and last EDGE bytes. */
static void
edges(const struct geli_reenc *r, uint64_t *lo, uint64_t *hi)
{
	uint64_t n = r->nchunks, e = (GELI_REENC_EDGE + r->hotzone - 1) /
	    r->hotzone;

	*lo = e < n ? e : n;
	*hi = r->bytes > GELI_REENC_EDGE ? (r->bytes - GELI_REENC_EDGE) /
	    r->hotzone : 0;
	if (*hi < *lo)
		*hi = *lo;
}

void
geli_reenc_chunk(const struct geli_reenc *r, uint64_t k, uint64_t *off,
    uint64_t *len)
{
	uint64_t n = r->nchunks, lo, hi, c;

	edges(r, &lo, &hi);
	if (r->kind == GELI_REENC_ENCRYPT)	/* edges, then the middle */
		c = k < lo ? k : k < lo + (n - hi) ? hi + (k - lo) :
		    lo + (k - lo - (n - hi));
	else if (r->kind == GELI_REENC_DECRYPT)	/* the middle, then the last
						 * edge, then the first down to 0 */
		c = k < hi - lo ? lo + k : k < n - lo ? hi + (k - (hi - lo)) :
		    n - 1 - k;
	else
		c = k;
	*off = c * r->hotzone;
	*len = r->bytes - *off < r->hotzone ? r->bytes - *off : r->hotzone;
}

bool
geli_reenc_converted(const struct geli_reenc *r, uint64_t off)
{
	uint64_t n = r->nchunks, c = off / r->hotzone, lo, hi, pos;

	if (off >= r->bytes)
		return false;
	/* geli_reenc_chunk's order, read backwards. */
	edges(r, &lo, &hi);
	if (r->kind == GELI_REENC_ENCRYPT)
		pos = c < lo ? c : c >= hi ? lo + (c - hi) : lo + (n - hi) + (c - lo);
	else if (r->kind == GELI_REENC_DECRYPT)
		pos = c >= lo && c < hi ? c - lo : c >= hi ? c - lo : n - 1 - c;
	else
		pos = c;
	return pos < r->done;
}

void
geli_reenc_set_locks(struct geli_reenc *r, geli_reenc_lock_fn lock,
    geli_reenc_lock_fn unlock, void *arg)
{
	reenc_quiesce(r);
	r->lock = lock;
	r->unlock = unlock;
	r->lockarg = arg;
}

/* ---- Start ---------------------------------------------------------------------- */

static struct geli_reenc *
reenc_new(struct geli_provider *p, enum geli_reenc_kind kind, uint32_t hotzone)
{
	struct geli_reenc *r = calloc(1, sizeof(*r));

	if (r == NULL)
		return NULL;
	r->p = p;
	r->kind = kind;
	r->hotzone = hotzone;
	r->j.fd = -1;
	r->mk = geli_secure_alloc(2 * GELI_MKEY_DATALEN);
	if (r->mk == NULL) {
		free(r);
		return NULL;
	}
	return r;
}

/* The journal's keys from the Master Keys this kind involves. */
static int
derive(struct geli_reenc *r)
{
	if (reenc_has_newkey(r->kind))
		return journal_derive(&r->j, r->mk, r->mk + GELI_MKEY_DATALEN);
	if (r->kind == GELI_REENC_ENCRYPT)
		return journal_derive(&r->j, r->mk + GELI_MKEY_DATALEN, NULL);
	return journal_derive(&r->j, r->mk, NULL);
}

/* The new Master Key (REKEY; LUKS2: its volume key in the same place)
 * wrapped or unwrapped, as a key slot is. */
static int
wrap(struct geli_reenc *r, bool unwrap)
{
	struct geli_metadata slot;
	uint8_t *key = geli_secure_alloc(GELI_USERKEYLEN);
	int used, error;

	if (key == NULL)
		return -ENOMEM;
	error = journal_wrap_key(r->j.h.uuid, r->mk, key);
	memset(&slot, 0, sizeof(slot));
	slot.ealgo = GELI_ALGO_AES_XTS;
	slot.keylen = 256;
	slot.keys = 1;
	if (error == 0 && !unwrap) {
		error = geli_mkey_encrypt(slot.ealgo, slot.keylen, key,
		    r->mk + GELI_MKEY_DATALEN, r->j.h.wrapped);
	} else if (error == 0) {
		memcpy(slot.mkeys, r->j.h.wrapped, GELI_MKEYLEN);
		error = geli_mkey_decrypt(&slot, key, 0,
		    r->mk + GELI_MKEY_DATALEN, &used);
		if (error == -GELI_EWRONGKEY)
			error = -GELI_EJOURNALAUTH;
	}
	geli_secure_free(key);
	return error;
}

int
geli_reenc_start(struct geli_provider *p, enum geli_reenc_kind kind,
    const struct geli_metadata *oldmd, const uint8_t *oldmk, int oldslot,
    const struct geli_metadata *newmd, const uint8_t *newmk,
    const uint8_t uuid[16], const char *journal, uint32_t hotzone,
    struct geli_reenc **out)
{
	struct geli_metadata marked;
	struct geli_reenc *r;
	int error;

	if ((kind != GELI_REENC_ENCRYPT) != (oldmd != NULL && oldmk != NULL) ||
	    (kind != GELI_REENC_DECRYPT) != (newmd != NULL && newmk != NULL) ||
	    (oldmd != NULL && (oldslot < 0 || oldslot > 1)) ||
	    (newmd != NULL && !(newmd->keys & 1)))
		return -EINVAL;
	if ((r = reenc_new(p, kind, hotzone)) == NULL)
		return -ENOMEM;
	if (oldmd != NULL) {
		r->oldmd = *oldmd;
		memcpy(r->mk, oldmk, GELI_MKEY_DATALEN);
	}
	if (newmd != NULL) {
		r->newmd = *newmd;
		memcpy(r->mk + GELI_MKEY_DATALEN, newmk, GELI_MKEY_DATALEN);
	}
	error = setup(r);
	if (error != 0)
		goto fail;

	/* The journal first: until the marked record is written, the
	 * provider is as it was. */
	r->j.h.kind = kind;
	r->j.h.hotzone = r->hotzone;
	r->j.h.psize = geli_provider_sectorsize(p);
	r->j.h.provsize = geli_provider_mediasize(p);
	memcpy(r->j.h.uuid, uuid, 16);
	if (oldmd != NULL && geli_metadata_encode(&r->oldmd, r->j.h.oldrec) < 0)
		error = -EINVAL;
	if (newmd != NULL && geli_metadata_encode(&r->newmd, r->j.h.newrec) < 0)
		error = -EINVAL;
	if (error == 0 && reenc_has_newkey(kind))
		error = wrap(r, false);
	if (error == 0)
		error = derive(r);
	if (error == 0)
		error = journal_create(&r->j, journal);
	if (error != 0)
		goto fail;
	if (kind == GELI_REENC_ENCRYPT)
		mark_record(&r->newmd, 0, r->j.h.uuid, &marked);
	else
		mark_record(&r->oldmd, oldslot, r->j.h.uuid, &marked);
	error = geli_provider_write_metadata(p, &marked);
	geli_wipe(&marked, sizeof(marked));
	if (error != 0) {
		/* Not written: nothing refers to the journal. */
		journal_remove(&r->j);
		goto fail;
	}
	*out = r;
	return 0;
fail:
	geli_reenc_free(r);
	return error;
}

/* ---- Resume ---------------------------------------------------------------------- */

/* Is md (as on the provider) what this journal's header makes of its
 * records?  Everything that decides where plaintext goes is in them. */
static bool
header_matches(struct geli_reenc *r, const struct geli_metadata *md)
{
	struct geli_metadata want;
	bool same;

	if (r->kind == GELI_REENC_ENCRYPT)
		mark_record(&r->newmd, 0, r->j.h.uuid, &want);
	else
		mark_record(&r->oldmd, md->keys & 1 ? 0 : 1, r->j.h.uuid,
		    &want);
	same = geli_metadata_same(&want, md);
	geli_wipe(&want, sizeof(want));
	return same;
}

/* A PREPARED chunk written again from the journal. */
static int
redo(struct geli_reenc *r, uint64_t k)
{
	uint64_t off, len;
	int error;

	geli_reenc_chunk(r, k, &off, &len);
	error = journal_get_hotzone(&r->j, k, off, r->pre[0].buf, (uint32_t)len);
	if (error == 0)
		error = geli_provider_pwrite(r->p, r->pre[0].buf, len, off);
	if (error == 0)
		error = geli_provider_flush(r->p);
	if (error == 0)
		error = journal_set_progress(&r->j, JSTATE_DONE, k, true);
	return error;
}

int
reenc_recover(struct geli_reenc *r)
{
	enum journal_state state;
	uint64_t chunk;
	int error;

	reenc_quiesce(r);
	if ((error = journal_progress(&r->j, &state, &chunk)) != 0)
		return error;
	if (state != JSTATE_NONE && chunk >= r->nchunks)
		return -GELI_EJOURNALAUTH;
	if (state == JSTATE_PREPARED && (error = redo(r, chunk)) != 0)
		return error;
	r->done = state == JSTATE_NONE ? 0 : chunk + 1;
	return 0;
}

int
geli_reenc_resume(struct geli_provider *p, const struct geli_metadata *md,
    const uint8_t *mk, const char *journal, struct geli_reenc **out)
{
	int error = geli_reenc_open(p, md, mk, journal, out);

	if (error == 0 && (error = reenc_recover(*out)) != 0) {
		geli_reenc_free(*out);
		*out = NULL;
	}
	return error;
}

int
geli_reenc_recover(struct geli_reenc *r)
{
	return reenc_recover(r);
}

int
geli_reenc_open(struct geli_provider *p, const struct geli_metadata *md,
    const uint8_t *mk, const char *journal, struct geli_reenc **out)
{
	uint8_t uuid[16];
	struct geli_reenc *r;
	int error;

	if (geli_reenc_uuid(md, uuid) != 0)
		return -EINVAL;
	if ((r = reenc_new(p, 0, 0)) == NULL)
		return -ENOMEM;
	error = journal_open(&r->j, journal, true);
	if (error != 0)
		goto fail;
	r->kind = r->j.h.kind;
	r->hotzone = r->j.h.hotzone;
	error = -GELI_EJOURNAL;
	if (memcmp(r->j.h.uuid, uuid, 16) != 0 ||
	    r->kind < GELI_REENC_REKEY || r->kind > GELI_REENC_LUKS2 ||
	    r->j.h.provsize != geli_provider_mediasize(p) ||
	    r->j.h.psize != geli_provider_sectorsize(p) ||
	    (r->kind != GELI_REENC_ENCRYPT && geli_metadata_decode(
	    r->j.h.oldrec, GELI_MD_SIZE, &r->oldmd) != 0) ||
	    (r->kind != GELI_REENC_DECRYPT && geli_metadata_decode(
	    r->j.h.newrec, GELI_MD_SIZE, &r->newmd) != 0))
		goto fail;
	/* mk opens the marked record: the old one, or for ENCRYPT the new. */
	memcpy(r->mk + (r->kind == GELI_REENC_ENCRYPT ? GELI_MKEY_DATALEN : 0),
	    mk, GELI_MKEY_DATALEN);
	if (reenc_has_newkey(r->kind) && (error = wrap(r, true)) != 0)
		goto fail;
	if ((error = derive(r)) != 0 || (error = journal_verify(&r->j)) != 0)
		goto fail;
	/* Authentic, and about this record (of this provider's size). */
	error = -GELI_EJOURNAL;
	if (!header_matches(r, md))
		goto fail;
	if ((error = setup(r)) != 0)
		goto fail;
	*out = r;
	return 0;
fail:
	geli_reenc_free(r);
	return error;
}

/* ---- The rest ------------------------------------------------------------------- */

enum geli_reenc_kind
geli_reenc_kind(const struct geli_reenc *r)
{
	return r->kind;
}

const struct geli_metadata *
geli_reenc_new(const struct geli_reenc *r)
{
	return &r->newmd;
}

const uint8_t *
geli_reenc_newkey(const struct geli_reenc *r)
{
	return r->kind == GELI_REENC_DECRYPT ? NULL : r->mk + GELI_MKEY_DATALEN;
}

void
geli_reenc_progress(const struct geli_reenc *r, uint64_t *done,
    uint64_t *total, uint64_t *bytes)
{
	*done = r->done;
	*total = r->nchunks;
	*bytes = r->bytes;
}

void
geli_reenc_free(struct geli_reenc *r)
{
	if (r == NULL)
		return;
	/* The helper first: it may be converting the next chunk with the
	 * volumes (a run stopped by a signal between steps). */
	reenc_quiesce(r);
	journal_close(&r->j);
	geli_volume_close(r->vold);
	geli_volume_close(r->vnew);
	geli_secure_free(r->mk);
	for (int i = 0; i < 2; i++) {
		if (r->pre[i].buf != NULL)
			geli_wipe(r->pre[i].buf, r->hotzone);
		free(r->pre[i].buf);
	}
	geli_wipe(r, sizeof(*r));
	free(r);
}

int
geli_reenc_peek(const char *path, struct geli_reenc_info *info)
{
	struct journal j = { .fd = -1 };
	struct geli_reenc r = { .kind = 0 };
	struct geli_metadata md;
	enum journal_state state;
	uint64_t chunk;
	int error;

	memset(info, 0, sizeof(*info));
	error = journal_open(&j, path, false);
	if (error == 0)
		error = journal_progress(&j, &state, &chunk);
	if (error == 0 && geli_metadata_decode(j.h.kind == GELI_REENC_ENCRYPT ?
	    j.h.newrec : j.h.oldrec, GELI_MD_SIZE, &md) != 0)
		error = -GELI_EJOURNAL;
	if (error == 0) {
		r.kind = j.h.kind;
		r.hotzone = j.h.hotzone;
		r.bytes = geli_eli_mediasize(&md, j.h.provsize, j.h.psize,
		    false);
		info->kind = j.h.kind;
		memcpy(info->uuid, j.h.uuid, 16);
		info->bytes = r.bytes;
		info->total = r.hotzone ? (r.bytes + r.hotzone - 1) /
		    r.hotzone : 0;
		info->done = state == JSTATE_NONE ? 0 : state == JSTATE_DONE ?
		    chunk + 1 : chunk;
		info->prepared = state == JSTATE_PREPARED;
		if ((j.h.kind != GELI_REENC_DECRYPT &&
		    geli_metadata_decode(j.h.newrec, GELI_MD_SIZE, &info->to) != 0) ||
		    (j.h.kind != GELI_REENC_ENCRYPT &&
		    geli_metadata_decode(j.h.oldrec, GELI_MD_SIZE, &info->from) != 0))
			error = -GELI_EJOURNAL;
	}
	geli_wipe(&md, sizeof(md));
	journal_close(&j);
	return error;
}
