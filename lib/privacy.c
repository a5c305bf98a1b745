/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Privacy: runs of encrypted units (docs/format.md §6; see sector.h).  The
 * units of a run that share a range key get their IVs, then go to the
 * cipher in one batch call (gc_crypt_batch); AES-CBC runs go to the
 * accelerator (accel.h) when one is in use: IVs and all, or for a run that
 * the backend decrypts faster, the IVs alone.
 */
#include <string.h>

#include "endian.h"
#include "sector.h"

_Static_assert(SECTOR_BATCH <= GC_ACCEL_MAX_UNITS, "a batch fits a run");

/*
 * The IVs of n units of len bytes from byte offset off into c->ivs, ivlen
 * bytes each: LE64(off) || 0^8 for XTS (LE64(off / 512) || 0^8 for LUKS2's
 * plain64: ivshift), SHA256(IVK || LE64(off)) cut to
 * ivlen for CBC, none without a cipher.  v<4 used the host's byte order:
 * the same bytes on little-endian.  The IVs are no secret (XTS: the
 * offset; CBC: sent in the clear by design), so they are not wiped.
 */
static int
unit_ivs(struct sector_ctx *c, uint64_t off, size_t n, size_t len)
{
	const size_t ivlen = c->g->ivlen;
	struct gc_sha256_prefixed *ivh;
	uint8_t off8[8], h[32];
	int error = 0;

	if (ivlen == 0)
		return 0;
	if (c->g->mode == GC_XTS) {
		for (size_t i = 0; i < n; i++) {
			le64enc(c->ivs + i * 16,
			    (off + i * len) >> c->g->ivshift);
			memset(c->ivs + i * 16 + 8, 0, 8);
		}
		return 0;
	}
	ivh = sector_ctx_ivh(c, &error);
	if (ivh == NULL)
		return error;
	for (size_t i = 0; i < n && error == 0; i++) {
		le64enc(off8, off + i * len);
		error = gc_sha256_prefixed(ivh, off8, sizeof(off8), h);
		if (error == 0)
			memcpy(c->ivs + i * ivlen, h, ivlen);
	}
	return error;
}

int
sector_crypt_run(struct sector_ctx *c, uint64_t off, size_t n,
    const uint8_t *in, uint8_t *out, size_t len, int enc)
{
	struct gc_cipher_ctx *cipher;
	struct gc_accel_cbc *ak;
	int error = 0;

	while (n > 0 && error == 0) {
		uint64_t k = keys_number(c->keys, off);
		size_t m = 1;

		/* The units up to the next range key, at most a batch. */
		while (m < n && m < SECTOR_BATCH &&
		    keys_number(c->keys, off + m * len) == k)
			m++;
		cipher = sector_ctx_cipher(c, k, &error);
		if (cipher == NULL)
			return error;
		ak = m >= GC_ACCEL_MIN_UNITS ? sector_ctx_accel(c, k, len) : NULL;
		if (ak != NULL && (enc || gc_accel_decrypts()))
			error = gc_accel_cbc_run(c->accel, ak, off, m, in, out,
			    len, enc);
		else if ((error = ak != NULL ?
		    gc_accel_cbc_ivs(c->accel, ak, off, m, len, c->ivs) :
		    unit_ivs(c, off, m, len)) == 0)
			error = gc_crypt_batch(cipher, m, c->ivs, in, out, len,
			    enc);
		off += m * len;
		in += m * len;
		out += m * len;
		n -= m;
	}
	return error;
}

/* One unit (an integrity chunk): the same, without a run to split. */
int
sector_crypt(struct sector_ctx *c, uint64_t off, const uint8_t *in,
    uint8_t *out, size_t len, int enc)
{
	struct gc_cipher_ctx *cipher;
	int error = 0;

	cipher = sector_ctx_cipher(c, keys_number(c->keys, off), &error);
	if (cipher == NULL)
		return error;
	error = unit_ivs(c, off, 1, len);
	return error != 0 ? error : gc_crypt(cipher, c->ivs, in, out, len, enc);
}

/* Ciphertext is all zeros by chance with odds of 2^-128 per 16 bytes: the
 * first 16 decide nearly always, at once. */
static bool
is_hole(const uint8_t *p, size_t len)
{
	static const uint8_t zero[16];

	return len >= sizeof(zero) && memcmp(p, zero, sizeof(zero)) == 0 &&
	    memcmp(p, p + sizeof(zero), len - sizeof(zero)) == 0;
}

int
sector_read_stored(struct sector_ctx *c, uint64_t off, size_t n,
    const uint8_t *in, uint8_t *out, size_t len)
{
	size_t a = 0;		/* the run of sectors to decrypt: [a, i) */
	int error = 0;

	for (size_t i = 0; i <= n && error == 0; i++) {
		if (i < n && !is_hole(in + i * len, len))
			continue;
		if (i > a)
			error = sector_crypt_run(c, off + a * len, i - a,
			    in + a * len, out + a * len, len, 0);
		if (i < n)
			memset(out + i * len, 0, len);
		a = i + 1;
	}
	return error;
}
