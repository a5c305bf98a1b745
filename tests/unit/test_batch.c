/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The batch call of the crypto seam (gc_crypt_batch) against one gc_crypt
 * per unit, for every cipher x key length x number of units x unit size
 * (a 512- and a 4096-byte sector, a 480-byte integrity chunk) x backend, in
 * place and out of place, both ways; the cipher GC_NONE (GELI's NULL)
 * through the seam; and the seam's refusals.
 */
#include <stdlib.h>

#include "tap.h"

#include "algs.h"
#include "crypto.h"
#include "crypto_backend.h"	/* a context's table: none for GC_NONE */
#include "geli.h"
#include "ciphers.h"

static const size_t counts[] = { 1, 2, 7, 64 };
static const size_t units[] = { 512, 4096, 480 };
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define MAXN 64
#define MAXUNIT 4096

static uint8_t plain[MAXN * MAXUNIT], ref[MAXN * MAXUNIT], got[MAXN * MAXUNIT];
static uint8_t inplace[MAXN * MAXUNIT], ivs[MAXN * 16];

/* One gc_crypt per unit, out of place: the reference. */
static bool
per_unit(struct gc_cipher_ctx *c, size_t n, size_t ivlen, const uint8_t *in,
    uint8_t *out, size_t unit, int enc)
{
	for (size_t i = 0; i < n; i++)
		if (gc_crypt(c, ivs + i * ivlen, in + i * unit, out + i * unit, unit,
		    enc) != 0)
			return false;
	return true;
}

static void
test_batch(const char *be, unsigned ealgo, unsigned keylen)
{
	const struct geli_alg *a = algs_cipher(ealgo);
	size_t ivlen = gc_ivlen(a->cipher, a->mode);
	struct gc_cipher_ctx *c;
	uint8_t key[64];

	geli_random(key, sizeof(key));
	if (gc_cipher_new(NULL, a->cipher, a->mode, key,
	    algs_keybytes(a, keylen), &c) != 0) {
		tap_ok(0, "[%s] %s %u: keyed", be, a->name, keylen);
		return;
	}
	for (size_t z = 0; z < NELEM(units); z++) {
		for (size_t k = 0; k < NELEM(counts); k++) {
			size_t n = counts[k], unit = units[z], len = n * unit;
			bool enc, dec;

			geli_random(plain, len);
			geli_random(ivs, n * ivlen);
			/* Encryption: out of place, then in place. */
			memcpy(inplace, plain, len);
			enc = per_unit(c, n, ivlen, plain, ref, unit, 1) &&
			    gc_crypt_batch(c, n, ivs, plain, got, unit, 1) == 0 &&
			    memcmp(got, ref, len) == 0 &&
			    gc_crypt_batch(c, n, ivs, inplace, inplace, unit, 1) == 0 &&
			    memcmp(inplace, ref, len) == 0 &&
			    (a->cipher == GC_NONE || memcmp(ref, plain, len) != 0);
			/* Decryption: the same, back to the plaintext. */
			dec = per_unit(c, n, ivlen, ref, got, unit, 0) &&
			    memcmp(got, plain, len) == 0 &&
			    gc_crypt_batch(c, n, ivs, ref, got, unit, 0) == 0 &&
			    memcmp(got, plain, len) == 0 &&
			    gc_crypt_batch(c, n, ivs, inplace, inplace, unit, 0) == 0 &&
			    memcmp(inplace, plain, len) == 0;
			tap_ok(enc && dec, "[%s] %s %u, %zu x %zu bytes: the batch is the "
			    "per-unit loop, in place and out, encrypt%s, decrypt%s", be,
			    a->name, keylen, n, unit, enc ? "" : " FAILED",
			    dec ? "" : " FAILED");
		}
	}
	gc_cipher_free(c);
	geli_wipe(key, sizeof(key));
}

/* GELI's NULL: no key, no IV, a copy; crypto.c's own, no backend's. */
static void
test_none(const char *be)
{
	struct gc_cipher_ctx *c;
	size_t len = 7 * 480;
	bool ok;

	tap_ok(gc_ivlen(GC_NONE, GC_CBC) == 0 && gc_ivlen(GC_NONE, GC_XTS) == 0,
	    "[%s] no cipher, no IV", be);
	ok = gc_cipher_new(NULL, GC_NONE, GC_CBC, NULL, 0, &c) == 0;
	tap_ok(ok && c->ops == NULL, "[%s] no cipher: keyed with no key, no backend's table",
	    be);
	if (!ok)
		return;
	geli_random(plain, len);
	memcpy(inplace, plain, len);
	memset(got, 0, len);
	tap_ok(gc_crypt(c, NULL, plain, got, 480, 1) == 0 &&
	    memcmp(got, plain, 480) == 0 &&
	    gc_crypt(c, NULL, inplace, inplace, 480, 0) == 0 &&
	    memcmp(inplace, plain, 480) == 0,
	    "[%s] no cipher: one unit copied, or left in place", be);
	memset(got, 0, len);
	tap_ok(gc_crypt_batch(c, 7, NULL, plain, got, 480, 1) == 0 &&
	    memcmp(got, plain, len) == 0 &&
	    gc_crypt_batch(c, 7, NULL, inplace, inplace, 480, 0) == 0 &&
	    memcmp(inplace, plain, len) == 0,
	    "[%s] no cipher: a batch copied, or left in place, without IVs", be);
	gc_cipher_free(c);
}

/* What the seam refuses before a backend sees it. */
static void
test_refusals(const char *be)
{
	struct gc_cipher_ctx *c = NULL;
	uint8_t key[64];

	/* Random: OpenSSL refuses XTS keys whose halves are the same. */
	geli_random(key, sizeof(key));
	tap_ok(gc_cipher_new(NULL, GC_BLOWFISH, GC_XTS, key, 32, &c) == -EINVAL &&
	    gc_cipher_new(NULL, GC_3DES, GC_XTS, key, 48, &c) == -EINVAL,
	    "[%s] no XTS with a 64-bit block", be);
	tap_ok(gc_cipher_new(NULL, GC_AES, GC_CBC, key, 20, &c) == -EINVAL &&
	    gc_cipher_new(NULL, GC_AES, GC_XTS, key, 33, &c) == -EINVAL &&
	    gc_cipher_new(NULL, GC_3DES, GC_CBC, key, 16, &c) == -EINVAL &&
	    gc_cipher_new(NULL, GC_BLOWFISH, GC_CBC, key, 60, &c) == -EINVAL &&
	    gc_cipher_new(NULL, GC_AES, GC_CBC, NULL, 16, &c) == -EINVAL &&
	    gc_cipher_new(NULL, GC_AES, GC_CBC, key, 0, &c) == -EINVAL,
	    "[%s] key lengths a cipher does not take, and no key, are refused", be);
	if (gc_cipher_new(NULL, GC_AES, GC_XTS, key, 32, &c) != 0) {
		tap_ok(0, "[%s] AES-XTS keyed", be);
		return;
	}
	memset(got, 0xee, 16);
	tap_ok(gc_crypt_batch(c, 0, NULL, NULL, NULL, 512, 1) == 0 &&
	    gc_crypt_batch(c, 2, ivs, got, got, (size_t)INT32_MAX + 16, 1) ==
	    -EINVAL && gc_crypt_batch(c, SIZE_MAX / 512 + 1, ivs, got, got, 512, 1) ==
	    -EINVAL && gc_crypt(c, ivs, got, got, (size_t)INT32_MAX + 16, 1) ==
	    -EINVAL && got[0] == 0xee,
	    "[%s] no units: nothing done; units too long, or too many: refused", be);
	gc_cipher_free(c);
}

int
main(void)
{
	const char *be;

	for (unsigned i = 0; (be = geli_crypto_backend(i)) != NULL; i++) {
		tap_ok(geli_crypto_select(be) == 0, "[%s] selected", be);
		for (size_t c = 0; c < NELEM(ciphers); c++)
			test_batch(be, ciphers[c].ealgo, ciphers[c].keylen);
		test_none(be);
		test_refusals(be);
	}
	return tap_done();
}
