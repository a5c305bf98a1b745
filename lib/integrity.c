/* SPDX-License-Identifier: BSD-2-Clause */
/* Integrity: encrypt-then-MAC per physical chunk (docs/format.md §7). */
#include <string.h>

#include "endian.h"
#include "sector.h"

/*
 * The tag of one chunk: HMAC(SHA256(AK || LE64(phys)), ciphertext).
 *
 * For HMAC/SHA256 the key derivation is HMAC's own first step: a key longer
 * than SHA256's 64-byte block is replaced by its SHA256 (RFC 2104, section
 * 2), so the 72 bytes AK || LE64(phys) go in as the key and the library
 * derives and sets it in one call (one library call less per 512-byte
 * chunk, the commonest integrity mode).  Other HMACs hash with another
 * function, or not at all (SHA384/512 take 128-byte keys as they are), so
 * they get the SHA256 first.
 */
static int
chunk_tag(struct sector_ctx *c, uint64_t phys, const uint8_t *data,
    size_t len, uint8_t *tag)
{
	struct gc_sha256_prefixed *akh;
	struct gc_mac *mac;
	uint8_t key[32], off8[8], *akoff;
	int error;

	mac = sector_ctx_mac(c, &error);
	if (mac == NULL)
		return error;
	if (c->g->hash == GC_SHA256) {
		/* AK once per context; per chunk only the offset changes. */
		akoff = sector_ctx_akoff(c, &error);
		if (akoff == NULL)
			return error;
		/* FreeBSD hashes the host-order off_t: little-endian on x86/arm64. */
		le64enc(akoff + 64, phys);
		return gc_mac(mac, akoff, 72, data, len, tag, c->g->alen);
	}
	le64enc(off8, phys);
	akh = sector_ctx_akh(c, &error);
	if (akh == NULL)
		return error;
	error = gc_sha256_prefixed(akh, off8, sizeof(off8), key);
	if (error == 0)
		error = gc_mac(mac, key, sizeof(key), data, len, tag, c->g->alen);
	geli_wipe(key, sizeof(key));
	return error;
}

static size_t
chunk_len(const struct sector_geom *g, uint32_t j)
{
	return j + 1 < g->lsec ? g->dps : g->S - (size_t)(g->lsec - 1) * g->dps;
}

int
sector_auth_encrypt(struct sector_ctx *c, uint64_t i, const uint8_t *plain,
    uint8_t *phys)
{
	const struct sector_geom *g = c->g;
	uint64_t base = i * g->bps;
	int error;

	for (uint32_t j = 0; j < g->lsec; j++) {
		uint8_t *ps = phys + (size_t)j * g->P;
		size_t len = chunk_len(g, j);

		error = sector_crypt(c, base + (uint64_t)j * g->P,
		    plain + (size_t)j * g->dps, ps + g->alen, len, 1);
		if (error == 0)
			error = chunk_tag(c, base + (uint64_t)j * g->P,
			    ps + g->alen, len, ps);
		if (error != 0)
			return error;
		/* The rest of the physical sector is zero (not authenticated). */
		memset(ps + g->alen + len, 0, g->P - g->alen - len);
	}
	return 0;
}

int
sector_auth_decrypt(struct sector_ctx *c, uint64_t i, const uint8_t *phys,
    uint8_t *plain)
{
	const struct sector_geom *g = c->g;
	uint64_t base = i * g->bps;
	uint8_t tag[64];
	int error;

	/* Every chunk verifies before any byte is decrypted. */
	for (uint32_t j = 0; j < g->lsec; j++) {
		const uint8_t *ps = phys + (size_t)j * g->P;

		error = chunk_tag(c, base + (uint64_t)j * g->P, ps + g->alen,
		    chunk_len(g, j), tag);
		if (error != 0)
			return error;
		if (!geli_ct_equal(tag, ps, g->alen))
			return -EBADMSG;
	}
	for (uint32_t j = 0; j < g->lsec; j++) {
		const uint8_t *ps = phys + (size_t)j * g->P;

		error = sector_crypt(c, base + (uint64_t)j * g->P,
		    ps + g->alen, plain + (size_t)j * g->dps, chunk_len(g, j), 0);
		if (error != 0)
			return error;
	}
	return 0;
}
