/* Privacy: one encrypted unit (GELI-FORMAT.md §6; see sector.h). */
#include <stdlib.h>
#include <string.h>

#include "endian.h"
#include "sector.h"

int
sector_ctx_init(struct sector_ctx *c, const struct sector_geom *g,
    struct geli_keys *keys)
{
	memset(c, 0, sizeof(*c));
	c->g = g;
	c->keys = keys;
	return 0;
}

void
sector_ctx_drop_keys(struct sector_ctx *c)
{
	for (unsigned i = 0; i < SECTOR_CIPHERS; i++) {
		gc_sector_cipher_free(c->ciph[i].c);
		c->ciph[i].c = NULL;
	}
	gc_sha256_prefixed_free(c->ivh);
	gc_sha256_prefixed_free(c->akh);
	c->ivh = c->akh = NULL;
	geli_secure_free(c->akoff);	/* wipes AK */
	c->akoff = NULL;
}

void
sector_ctx_destroy(struct sector_ctx *c)
{
	sector_ctx_drop_keys(c);
	gc_mac_free(c->mac);
	c->mac = NULL;
	if (c->buf != NULL)
		geli_wipe(c->buf, c->buflen);
	free(c->buf);
	c->buf = NULL;
}

/* The pre-keyed cipher for key number k, keyed on first use. */
static struct gc_sector_cipher *
sector_cipher(struct sector_ctx *c, uint64_t k, int *error)
{
	uint8_t key[64];
	unsigned i;

	for (i = 0; i < SECTOR_CIPHERS; i++)
		if (c->ciph[i].c != NULL && c->ciph[i].k == k)
			return c->ciph[i].c;
	i = c->ciph_next++ % SECTOR_CIPHERS;
	gc_sector_cipher_free(c->ciph[i].c);
	c->ciph[i].c = NULL;
	*error = keys_get(c->keys, k, key);
	if (*error == 0)
		*error = gc_sector_cipher_new(c->g->crypto, c->g->ealgo,
		    c->g->keylen, key, &c->ciph[i].c);
	geli_wipe(key, sizeof(key));
	if (*error != 0)
		return NULL;
	c->ciph[i].k = k;
	return c->ciph[i].c;
}

int
sector_crypt(struct sector_ctx *c, uint64_t off, const uint8_t *in,
    uint8_t *out, size_t len, int enc)
{
	struct gc_sector_cipher *cipher;
	uint8_t iv[32], off8[8];
	int error = 0;

	if (c->g->ealgo == GELI_ALGO_NULL) {
		if (out != in)
			memcpy(out, in, len);
		return 0;
	}
	cipher = sector_cipher(c, keys_number(c->keys, off), &error);
	if (cipher == NULL)
		return error;
	/* v<4 used the host's byte order: the same bytes on little-endian. */
	le64enc(off8, off);
	if (c->g->ealgo == GELI_ALGO_AES_XTS) {
		memset(iv, 0, 16);
		memcpy(iv, off8, 8);
	} else {
		if (c->ivh == NULL) {
			error = gc_sha256_prefixed_new(c->g->crypto,
			    keys_ivk(c->keys), &c->ivh);
			if (error != 0)
				return error;
		}
		error = gc_sha256_prefixed(c->ivh, off8, sizeof(off8), iv);
		if (error != 0)
			return error;
	}
	/* The IV is no secret (XTS: the offset; CBC: sent in the clear by
	 * design), so it is not wiped: this is the per-sector hot path. */
	return gc_sector_crypt(cipher, iv, in, out, len, enc);
}
