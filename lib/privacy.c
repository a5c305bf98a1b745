/* SPDX-License-Identifier: BSD-2-Clause */
/* Privacy: one encrypted unit (docs/format.md §6; see sector.h). */
#include <string.h>

#include "endian.h"
#include "sector.h"

int
sector_crypt(struct sector_ctx *c, uint64_t off, const uint8_t *in,
    uint8_t *out, size_t len, int enc)
{
	const struct sector_geom *g = c->g;
	struct gc_cipher_ctx *cipher;
	struct gc_sha256_prefixed *ivh;
	uint8_t iv[32], off8[8];
	int error = 0;

	cipher = sector_ctx_cipher(c, keys_number(c->keys, off), &error);
	if (cipher == NULL)
		return error;
	/* v<4 used the host's byte order: the same bytes on little-endian. */
	le64enc(off8, off);
	if (g->mode == GC_XTS) {
		memset(iv, 0, 16);
		memcpy(iv, off8, 8);
	} else if (g->ivlen > 0) {
		ivh = sector_ctx_ivh(c, &error);
		if (ivh == NULL)
			return error;
		error = gc_sha256_prefixed(ivh, off8, sizeof(off8), iv);
		if (error != 0)
			return error;
	}
	/* The IV is no secret (XTS: the offset; CBC: sent in the clear by
	 * design), so it is not wiped: this is the per-sector hot path. */
	return gc_crypt(cipher, iv, in, out, len, enc);
}

int
sector_read_stored(struct sector_ctx *c, uint64_t off, const uint8_t *in,
    uint8_t *out, size_t len)
{
	static const uint8_t zero[16];

	/* Ciphertext is all zeros by chance with odds of 2^-128 per 16
	 * bytes: the first 16 decide nearly always, at once. */
	if (len >= sizeof(zero) && memcmp(in, zero, sizeof(zero)) == 0 &&
	    memcmp(in, in + sizeof(zero), len - sizeof(zero)) == 0) {
		memset(out, 0, len);
		return 0;
	}
	return sector_crypt(c, off, in, out, len, 0);
}
