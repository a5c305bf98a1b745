/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * GELI's algorithms, once (see algs.h; docs/format.md §3): their names, the
 * words -e and -a accept, their key lengths and what they are in the crypto
 * seam's generic terms.  geli.h's algorithm functions read this table.
 */
#include <strings.h>

#include "algs.h"
#include "geli.h"

/* An encryption algorithm: cipher, mode, keys, IV bytes, key lengths in
 * bits (default, least, most, step), then its -e words. */
#define ENC(a, n, leg, c, m, nk, iv, def, lo, hi, st, ...) \
	{ .algo = (a), .name = (n), .legacy = (leg), .cipher = (c), \
	  .mode = (m), .nkeys = (nk), .ivlen = (iv), .keydef = (def), \
	  .keymin = (lo), .keymax = (hi), .keystep = (st), \
	  .words = { __VA_ARGS__, NULL } }
/* An HMAC: its hash, tag bytes, then its -a word. */
#define MAC(a, n, leg, h, len, word) \
	{ .algo = (a), .name = (n), .legacy = (leg), .hmac = true, \
	  .hash = (h), .hashlen = (len), .words = { (word), NULL } }

static const struct geli_alg algs[] = {
	/* "aes" alone is AES-XTS (§13.1). */
	ENC(GELI_ALGO_AES_XTS, "AES-XTS", false, GC_AES, GC_XTS, 2, 16,
	    128, 128, 256, 128, "aes", "aes-xts"),
	ENC(GELI_ALGO_AES_CBC, "AES-CBC", false, GC_AES, GC_CBC, 1, 16,
	    128, 128, 256, 64, "aes-cbc"),
	ENC(GELI_ALGO_CAMELLIA_CBC, "CAMELLIA-CBC", false, GC_CAMELLIA, GC_CBC,
	    1, 16, 128, 128, 256, 64, "camellia", "camellia-cbc"),
	/* No key and no IV: any length up to the 64 bytes of a key. */
	ENC(GELI_ALGO_NULL, "NULL", false, GC_NONE, GC_CBC, 0, 0,
	    512, 1, 512, 1, "null", "null-cbc"),
	ENC(GELI_ALGO_BLOWFISH_CBC, "Blowfish-CBC", true, GC_BLOWFISH, GC_CBC,
	    1, 8, 128, 128, 448, 32, "blowfish", "blowfish-cbc"),
	ENC(GELI_ALGO_3DES_CBC, "3DES-CBC", true, GC_3DES, GC_CBC, 1, 8,
	    192, 192, 192, 1, "3des", "3des-cbc"),
	MAC(GELI_ALGO_HMAC_MD5, "HMAC/MD5", true, GC_MD5, 16, "hmac/md5"),
	MAC(GELI_ALGO_HMAC_SHA1, "HMAC/SHA1", false, GC_SHA1, 20, "hmac/sha1"),
	MAC(GELI_ALGO_HMAC_RMD160, "HMAC/RIPEMD160", false, GC_RMD160, 20,
	    "hmac/ripemd160"),
	MAC(GELI_ALGO_HMAC_SHA256, "HMAC/SHA256", false, GC_SHA256, 32,
	    "hmac/sha256"),
	MAC(GELI_ALGO_HMAC_SHA384, "HMAC/SHA384", false, GC_SHA384, 48,
	    "hmac/sha384"),
	MAC(GELI_ALGO_HMAC_SHA512, "HMAC/SHA512", false, GC_SHA512, 64,
	    "hmac/sha512"),
};

#define NALGS (sizeof(algs) / sizeof(algs[0]))

const struct geli_alg *
algs_at(size_t i)
{
	return i < NALGS ? &algs[i] : NULL;
}

static const struct geli_alg *
find(unsigned algo)
{
	for (size_t i = 0; i < NALGS; i++)
		if (algs[i].algo == algo)
			return &algs[i];
	return NULL;
}

const struct geli_alg *
algs_cipher(unsigned ealgo)
{
	const struct geli_alg *a = find(ealgo);

	return a != NULL && !a->hmac ? a : NULL;
}

const struct geli_alg *
algs_hmac(unsigned aalgo)
{
	const struct geli_alg *a = find(aalgo);

	return a != NULL && a->hmac ? a : NULL;
}

const char *
geli_algo_name(unsigned algo)
{
	const struct geli_alg *a = find(algo);

	return a != NULL ? a->name : "unknown";
}

/* The algorithm of the kind hmac one of whose words is name. */
static unsigned
parse(const char *name, bool hmac)
{
	for (size_t i = 0; i < NALGS; i++) {
		if (algs[i].hmac != hmac)
			continue;
		for (const char *const *w = algs[i].words; *w != NULL; w++)
			if (strcasecmp(name, *w) == 0)
				return algs[i].algo;
	}
	return GELI_ALGO_NONE;
}

unsigned
geli_str2ealgo(const char *name)
{
	return parse(name, false);
}

unsigned
geli_str2aalgo(const char *name)
{
	return parse(name, true);
}

unsigned
geli_keylen(unsigned ealgo, unsigned keylen)
{
	const struct geli_alg *a = algs_cipher(ealgo);

	if (a == NULL)
		return 0;
	if (keylen == 0)
		return a->keydef;
	return keylen >= a->keymin && keylen <= a->keymax &&
	    (keylen - a->keymin) % a->keystep == 0 ? keylen : 0;
}

unsigned
geli_hashlen(unsigned aalgo)
{
	const struct geli_alg *a = algs_hmac(aalgo);

	return a != NULL ? a->hashlen : 0;
}

bool
geli_algo_is_legacy(unsigned algo)
{
	const struct geli_alg *a = find(algo);

	return a != NULL && a->legacy;
}

bool
geli_algo_available(unsigned algo)
{
	const struct geli_alg *a = find(algo);

	if (a == NULL)
		return false;
	if (a->hmac)
		return gc_hash_available(a->hash);
	return gc_cipher_available(a->cipher, a->mode, a->keydef);
}
