/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A volume's sector geometry, and the life of a sector context (sector.h):
 * made for one thread, its ciphers,
 * IV and tag hashes keyed from the volume's keys on first use, dropped
 * (wiped) on suspend and rebuilt after resume, freed with its bounce buffer.
 * privacy.c and integrity.c reach the keyed objects only through here.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "algs.h"
#include "sector.h"

int
sector_geom_init(struct sector_geom *g, const struct gc_ops *be,
    const struct geli_metadata *md, uint32_t P)
{
	const struct geli_alg *e = algs_cipher(md->ealgo), *a;

	memset(g, 0, sizeof(*g));
	if (e == NULL || algs_keybytes(e, md->keylen) > 64 ||
	    e->ivlen > SECTOR_IVMAX)
		return -EINVAL;
	g->crypto = be;
	g->cipher = e->cipher;
	g->mode = e->mode;
	g->keybytes = algs_keybytes(e, md->keylen);
	g->ivlen = e->ivlen;
	g->S = md->sectorsize;
	g->P = P;
	g->bps = g->S;
	g->auth = (md->flags & GELI_FLAG_AUTH) != 0;
	if (g->auth) {
		a = algs_hmac(md->aalgo);
		if (a == NULL || geli_auth_layout(md, P, &g->dps, &g->lsec) != 0)
			return -EINVAL;
		g->hash = a->hash;
		g->alen = a->hashlen;
		g->bps = g->lsec * P;
	}
	return 0;
}

struct sector_ctx *
sector_ctx_new(const struct sector_geom *g, struct geli_keys *keys)
{
	struct sector_ctx *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->g = g;
	c->keys = keys;
	return c;
}

void
sector_ctx_drop_keys(struct sector_ctx *c)
{
	for (unsigned i = 0; i < SECTOR_CIPHERS; i++) {
		gc_cipher_free(c->ciph[i].c);
		gc_accel_cbc_free(c->ciph[i].a);
		c->ciph[i].c = NULL;
		c->ciph[i].a = NULL;
	}
	gc_sha256_prefixed_free(c->ivh);
	gc_sha256_prefixed_free(c->akh);
	c->ivh = c->akh = NULL;
	geli_secure_free(c->akoff);	/* wipes AK */
	c->akoff = NULL;
}

void
sector_ctx_free(struct sector_ctx *c)
{
	if (c == NULL)
		return;
	sector_ctx_drop_keys(c);
	gc_accel_free(c->accel);
	gc_mac_free(c->mac);
	if (c->buf != NULL)
		geli_wipe(c->buf, c->buflen);
	free(c->buf);
	free(c);
}

/* The thread's accelerator (made on first use; tried once). */
static struct gc_accel *
accel_of(struct sector_ctx *c)
{
	if (!c->accel_tried) {
		c->accel_tried = true;
		if (gc_accel_new(&c->accel) != 0)
			c->accel = NULL;
	}
	return c->accel;
}

/*
 * Made when a run first needs them, not with the cipher: a thread that only
 * ever does single sectors makes no manager (one made slows libgcrypt's
 * CBC encryption of single sectors after it by some 8% on this machine;
 * docs/benchmarks.md).
 */
struct gc_accel_cbc *
sector_ctx_accel(struct sector_ctx *c, uint64_t k, size_t len)
{
	uint8_t key[64];
	unsigned i;

	if (c->g->cipher != GC_AES || c->g->mode != GC_CBC || len % 16 != 0 ||
	    len > GC_ACCEL_MAX_UNIT || !gc_accel_enabled())
		return NULL;
	for (i = 0; i < SECTOR_CIPHERS; i++)
		if (c->ciph[i].c != NULL && c->ciph[i].k == k)
			break;
	if (i == SECTOR_CIPHERS || accel_of(c) == NULL)
		return NULL;
	if (c->ciph[i].a == NULL && keys_get(c->keys, k, key) == 0) {
		if (gc_accel_cbc_new(c->accel, key, c->g->keybytes,
		    keys_ivk(c->keys), &c->ciph[i].a) != 0)
			c->ciph[i].a = NULL;
		geli_wipe(key, sizeof(key));
	}
	return c->ciph[i].a;
}

struct gc_cipher_ctx *
sector_ctx_cipher(struct sector_ctx *c, uint64_t k, int *error)
{
	const struct sector_geom *g = c->g;
	uint8_t key[64];
	unsigned i;

	for (i = 0; i < SECTOR_CIPHERS; i++)
		if (c->ciph[i].c != NULL && c->ciph[i].k == k)
			return c->ciph[i].c;
	i = c->ciph_next++ % SECTOR_CIPHERS;
	gc_cipher_free(c->ciph[i].c);
	gc_accel_cbc_free(c->ciph[i].a);
	c->ciph[i].c = NULL;
	c->ciph[i].a = NULL;
	/* NULL takes no key: no range key is derived (KeysAllocated 0). */
	*error = g->keybytes > 0 ? keys_get(c->keys, k, key) : 0;
	if (*error == 0)
		*error = gc_cipher_new(g->crypto, g->cipher, g->mode,
		    g->keybytes > 0 ? key : NULL, g->keybytes, &c->ciph[i].c);
	geli_wipe(key, sizeof(key));
	if (*error != 0)
		return NULL;
	c->ciph[i].k = k;
	return c->ciph[i].c;
}

struct gc_sha256_prefixed *
sector_ctx_ivh(struct sector_ctx *c, int *error)
{
	if (c->ivh == NULL) {
		*error = gc_sha256_prefixed_new(c->g->crypto, keys_ivk(c->keys),
		    &c->ivh);
		if (*error != 0)
			return NULL;
	}
	return c->ivh;
}

struct gc_sha256_prefixed *
sector_ctx_akh(struct sector_ctx *c, int *error)
{
	if (c->akh == NULL) {
		*error = gc_sha256_prefixed_new(c->g->crypto, keys_ak(c->keys),
		    &c->akh);
		if (*error != 0)
			return NULL;
	}
	return c->akh;
}

uint8_t *
sector_ctx_akoff(struct sector_ctx *c, int *error)
{
	if (c->akoff == NULL) {
		c->akoff = geli_secure_alloc(72);
		if (c->akoff == NULL) {
			*error = -ENOMEM;
			return NULL;
		}
		memcpy(c->akoff, keys_ak(c->keys), 64);
	}
	return c->akoff;
}

struct gc_mac *
sector_ctx_mac(struct sector_ctx *c, int *error)
{
	/* Not keyed: each tag brings its own key, so it survives suspend. */
	if (c->mac == NULL) {
		*error = gc_mac_new(c->g->crypto, c->g->hash, &c->mac);
		if (*error != 0)
			return NULL;
	}
	return c->mac;
}

uint8_t *
sector_ctx_buf(struct sector_ctx *c, size_t len, const void *beside,
    size_t align)
{
	size_t off = 0;
	void *b;

	if (beside != NULL)
		off = (((uintptr_t)beside + BOUNCE_BESIDE) & (BOUNCE_PAGE - 1)) &
		    ~(align - 1);
	/* A page more than len: room for the largest offset. */
	if (len > SIZE_MAX - BOUNCE_PAGE)
		return NULL;
	if (c->buflen >= len + BOUNCE_PAGE)
		return c->buf + off;
	if (posix_memalign(&b, BOUNCE_PAGE, len + BOUNCE_PAGE) != 0)
		return NULL;
	if (c->buf != NULL)
		geli_wipe(c->buf, c->buflen);
	free(c->buf);
	c->buf = b;
	c->buflen = len + BOUNCE_PAGE;
	return c->buf + off;
}
