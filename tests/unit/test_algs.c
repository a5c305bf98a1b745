/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The algorithm table (lib/algs.h): every GELI algorithm's generic
 * parameters, and geli.h's algorithm functions, which read it, against the
 * answers they gave before the table (the words of -e and -a, key lengths,
 * tag lengths, names, legacy); availability through each backend; and the
 * key-slot wrap rule (mkey.c), checked by opening slots by hand with the
 * cipher the rule names: AES-CBC for AES-XTS volumes.
 */
#include <ctype.h>

#include "tap.h"

#include "algs.h"
#include "crypto.h"
#include "geli.h"

/* ---- What geli.h answered before the table (the oracle) ------------------- */

static const struct { const char *word; unsigned algo; } old_ewords[] = {
	{ "aes", GELI_ALGO_AES_XTS }, { "aes-xts", GELI_ALGO_AES_XTS },
	{ "aes-cbc", GELI_ALGO_AES_CBC }, { "camellia", GELI_ALGO_CAMELLIA_CBC },
	{ "camellia-cbc", GELI_ALGO_CAMELLIA_CBC }, { "null", GELI_ALGO_NULL },
	{ "null-cbc", GELI_ALGO_NULL }, { "blowfish", GELI_ALGO_BLOWFISH_CBC },
	{ "blowfish-cbc", GELI_ALGO_BLOWFISH_CBC }, { "3des", GELI_ALGO_3DES_CBC },
	{ "3des-cbc", GELI_ALGO_3DES_CBC },
};
static const struct { const char *word; unsigned algo; } old_awords[] = {
	{ "hmac/md5", GELI_ALGO_HMAC_MD5 }, { "hmac/sha1", GELI_ALGO_HMAC_SHA1 },
	{ "hmac/ripemd160", GELI_ALGO_HMAC_RMD160 },
	{ "hmac/sha256", GELI_ALGO_HMAC_SHA256 },
	{ "hmac/sha384", GELI_ALGO_HMAC_SHA384 },
	{ "hmac/sha512", GELI_ALGO_HMAC_SHA512 },
};

static unsigned
old_keylen(unsigned ealgo, unsigned keylen)
{
	switch (ealgo) {
	case GELI_ALGO_NULL:
		if (keylen == 0)
			return 512;
		return keylen <= 512 ? keylen : 0;
	case GELI_ALGO_BLOWFISH_CBC:
		if (keylen == 0)
			return 128;
		if (keylen < 128 || keylen > 448 || keylen % 32 != 0)
			return 0;
		return keylen;
	case GELI_ALGO_3DES_CBC:
		return keylen == 0 || keylen == 192 ? 192 : 0;
	case GELI_ALGO_AES_CBC:
	case GELI_ALGO_CAMELLIA_CBC:
		if (keylen == 0)
			return 128;
		return keylen == 128 || keylen == 192 || keylen == 256 ? keylen : 0;
	case GELI_ALGO_AES_XTS:
		if (keylen == 0)
			return 128;
		return keylen == 128 || keylen == 256 ? keylen : 0;
	}
	return 0;
}

static unsigned
old_hashlen(unsigned aalgo)
{
	switch (aalgo) {
	case GELI_ALGO_HMAC_MD5:	return 16;
	case GELI_ALGO_HMAC_SHA1:	return 20;
	case GELI_ALGO_HMAC_RMD160:	return 20;
	case GELI_ALGO_HMAC_SHA256:	return 32;
	case GELI_ALGO_HMAC_SHA384:	return 48;
	case GELI_ALGO_HMAC_SHA512:	return 64;
	}
	return 0;
}

static const struct { unsigned algo; const char *name; bool legacy; } old_names[] = {
	{ GELI_ALGO_3DES_CBC, "3DES-CBC", true },
	{ GELI_ALGO_BLOWFISH_CBC, "Blowfish-CBC", true },
	{ GELI_ALGO_HMAC_MD5, "HMAC/MD5", true },
	{ GELI_ALGO_HMAC_SHA1, "HMAC/SHA1", false },
	{ GELI_ALGO_HMAC_RMD160, "HMAC/RIPEMD160", false },
	{ GELI_ALGO_AES_CBC, "AES-CBC", false },
	{ GELI_ALGO_NULL, "NULL", false },
	{ GELI_ALGO_HMAC_SHA256, "HMAC/SHA256", false },
	{ GELI_ALGO_HMAC_SHA384, "HMAC/SHA384", false },
	{ GELI_ALGO_HMAC_SHA512, "HMAC/SHA512", false },
	{ GELI_ALGO_CAMELLIA_CBC, "CAMELLIA-CBC", false },
	{ GELI_ALGO_AES_XTS, "AES-XTS", false },
};
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* ---- The table's generic parameters ----------------------------------------- */

static const struct {
	unsigned algo;
	enum gc_cipher cipher;
	enum gc_mode mode;
	unsigned ivlen, keydef;
	unsigned keylen;	/* a valid length ... */
	size_t keybytes;	/* ... and its key bytes */
} want_ciphers[] = {
	{ GELI_ALGO_AES_XTS, GC_AES, GC_XTS, 16, 128, 128, 32 },
	{ GELI_ALGO_AES_XTS, GC_AES, GC_XTS, 16, 128, 256, 64 },
	{ GELI_ALGO_AES_CBC, GC_AES, GC_CBC, 16, 128, 192, 24 },
	{ GELI_ALGO_CAMELLIA_CBC, GC_CAMELLIA, GC_CBC, 16, 128, 256, 32 },
	{ GELI_ALGO_BLOWFISH_CBC, GC_BLOWFISH, GC_CBC, 8, 128, 448, 56 },
	{ GELI_ALGO_3DES_CBC, GC_3DES, GC_CBC, 8, 192, 192, 24 },
	{ GELI_ALGO_NULL, GC_NONE, GC_CBC, 0, 512, 512, 0 },
};

static const struct { unsigned algo; enum gc_hash hash; unsigned len; } want_hmacs[] = {
	{ GELI_ALGO_HMAC_MD5, GC_MD5, 16 }, { GELI_ALGO_HMAC_SHA1, GC_SHA1, 20 },
	{ GELI_ALGO_HMAC_RMD160, GC_RMD160, 20 },
	{ GELI_ALGO_HMAC_SHA256, GC_SHA256, 32 },
	{ GELI_ALGO_HMAC_SHA384, GC_SHA384, 48 },
	{ GELI_ALGO_HMAC_SHA512, GC_SHA512, 64 },
};

static const char *const cipher_names[] = { "none", "AES", "Camellia", "Blowfish",
	"3DES" };
static const char *const mode_names[] = { "CBC", "XTS" };
static const char *const hash_names[] = { "-", "MD5", "SHA1", "RMD160", "SHA256",
	"SHA384", "SHA512" };

static void
test_generic(void)
{
	size_t n = 0;

	for (size_t i = 0; i < NELEM(want_ciphers); i++) {
		const struct geli_alg *a = algs_cipher(want_ciphers[i].algo);

		tap_ok(a != NULL && a->cipher == want_ciphers[i].cipher &&
		    a->mode == want_ciphers[i].mode &&
		    a->ivlen == want_ciphers[i].ivlen &&
		    a->keydef == want_ciphers[i].keydef &&
		    algs_keybytes(a, want_ciphers[i].keylen) ==
		    want_ciphers[i].keybytes && algs_hmac(a->algo) == NULL,
		    "%s %u: %s in %s mode, IV %u bytes, key %zu bytes",
		    geli_algo_name(want_ciphers[i].algo), want_ciphers[i].keylen,
		    cipher_names[want_ciphers[i].cipher],
		    mode_names[want_ciphers[i].mode],
		    want_ciphers[i].ivlen, want_ciphers[i].keybytes);
	}
	for (size_t i = 0; i < NELEM(want_hmacs); i++) {
		const struct geli_alg *a = algs_hmac(want_hmacs[i].algo);

		tap_ok(a != NULL && a->hash == want_hmacs[i].hash &&
		    a->hashlen == want_hmacs[i].len &&
		    algs_cipher(a->algo) == NULL,
		    "%s: %s, %u-byte tags",
		    geli_algo_name(want_hmacs[i].algo), hash_names[want_hmacs[i].hash],
		    want_hmacs[i].len);
	}
	while (algs_at(n) != NULL)
		n++;
	tap_ok(n == NELEM(old_names), "the table has the %zu algorithms of geli.h (%zu)",
	    NELEM(old_names), n);
	tap_ok(algs_cipher(GELI_ALGO_NONE) == NULL && algs_hmac(GELI_ALGO_NONE) ==
	    NULL && algs_cipher(1) == NULL && algs_cipher(23) == NULL,
	    "numbers GELI never used have no entry");
}

/* ---- geli.h's algorithm functions, as before ----------------------------------- */

static void
test_as_before(void)
{
	char up[32];
	bool ok;

	for (unsigned algo = 0; algo < 40; algo++) {
		ok = true;
		for (unsigned k = 0; k <= 1024; k++)
			ok = ok && geli_keylen(algo, k) == old_keylen(algo, k);
		ok = ok && geli_hashlen(algo) == old_hashlen(algo);
		if (old_keylen(algo, 0) != 0 || old_hashlen(algo) != 0 || algo < 2)
			tap_ok(ok, "algorithm %u (%s): key lengths 0..1024 and tag length as before",
			    algo, geli_algo_name(algo));
		else if (!ok)
			tap_ok(0, "algorithm %u: a key or tag length where there was none", algo);
	}
	for (size_t i = 0; i < NELEM(old_names); i++)
		tap_ok(strcmp(geli_algo_name(old_names[i].algo), old_names[i].name) == 0 &&
		    geli_algo_is_legacy(old_names[i].algo) == old_names[i].legacy,
		    "%s: its name, %slegacy", old_names[i].name,
		    old_names[i].legacy ? "" : "not ");
	tap_ok(strcmp(geli_algo_name(0), "unknown") == 0 &&
	    strcmp(geli_algo_name(99), "unknown") == 0 && !geli_algo_is_legacy(99),
	    "an unknown number is \"unknown\", not legacy");

	ok = true;
	for (size_t i = 0; i < NELEM(old_ewords); i++) {
		/* Every other letter in upper case: "aEs-xTs". */
		snprintf(up, sizeof(up), "%s", old_ewords[i].word);
		for (size_t j = 1; up[j - 1] != '\0' && up[j] != '\0'; j += 2)
			up[j] = (char)toupper((unsigned char)up[j]);
		ok = ok && geli_str2ealgo(old_ewords[i].word) == old_ewords[i].algo &&
		    geli_str2ealgo(up) == old_ewords[i].algo &&
		    geli_str2aalgo(old_ewords[i].word) == GELI_ALGO_NONE;
	}
	tap_ok(ok, "-e: the same %zu words, in any case, and no -a word among them",
	    NELEM(old_ewords));
	ok = true;
	for (size_t i = 0; i < NELEM(old_awords); i++) {
		snprintf(up, sizeof(up), "%s", old_awords[i].word);
		for (char *p = up; *p != '\0'; p++)
			*p = (char)toupper((unsigned char)*p);
		ok = ok && geli_str2aalgo(old_awords[i].word) == old_awords[i].algo &&
		    geli_str2aalgo(up) == old_awords[i].algo &&
		    geli_str2ealgo(old_awords[i].word) == GELI_ALGO_NONE;
	}
	tap_ok(ok, "-a: the same %zu words, in any case, and no -e word among them",
	    NELEM(old_awords));
	/* Every word the table has is one of the old ones. */
	ok = true;
	for (size_t i = 0; algs_at(i) != NULL; i++) {
		const struct geli_alg *a = algs_at(i);

		for (const char *const *w = a->words; *w != NULL; w++) {
			bool found = false;

			for (size_t j = 0; j < NELEM(old_ewords); j++)
				found = found || (!a->hmac && strcmp(*w, old_ewords[j].word) == 0);
			for (size_t j = 0; j < NELEM(old_awords); j++)
				found = found || (a->hmac && strcmp(*w, old_awords[j].word) == 0);
			ok = ok && found;
		}
	}
	tap_ok(ok, "no word beyond the old ones");
	tap_ok(geli_str2ealgo("aes-ctr") == GELI_ALGO_NONE &&
	    geli_str2ealgo("") == GELI_ALGO_NONE &&
	    geli_str2aalgo("hmac/sha3") == GELI_ALGO_NONE &&
	    geli_str2ealgo("AES-XTS ") == GELI_ALGO_NONE,
	    "unknown words are GELI_ALGO_NONE");
}

/* ---- Availability and IV lengths, per backend ------------------------------------ */

static void
test_available(const char *be)
{
	bool ok = true;

	for (size_t i = 0; algs_at(i) != NULL; i++) {
		const struct geli_alg *a = algs_at(i);

		tap_ok(geli_algo_available(a->algo), "[%s] %s is available", be, a->name);
		if (!a->hmac)
			ok = ok && a->ivlen == gc_ivlen(a->cipher, a->mode);
	}
	tap_ok(ok, "[%s] every cipher's IV length is its generic one", be);
	tap_ok(!geli_algo_available(GELI_ALGO_NONE) && !geli_algo_available(1) &&
	    !geli_algo_available(99), "[%s] unknown numbers are not available", be);
	tap_ok(gc_cipher_available(GC_NONE, GC_CBC, 0) &&
	    !gc_cipher_available(GC_BLOWFISH, GC_XTS, 128) &&
	    !gc_cipher_available(GC_AES, GC_CBC, 100) &&
	    !gc_hash_available((enum gc_hash)0) &&
	    !gc_hash_available((enum gc_hash)(GC_SHA512 + 1)),
	    "[%s] no cipher: available; no XTS for a 64-bit block; no odd keys or hashes",
	    be);
}

/* ---- The key-slot wrap rule (§5.1) -------------------------------------------------- */

/* Each cipher with the slot cipher the rule names, written out here. */
static const struct {
	unsigned ealgo, keylen;
	enum gc_cipher slot;	/* always in CBC mode, keylen/8 bytes of EK */
} slots[] = {
	{ GELI_ALGO_AES_XTS, 128, GC_AES }, { GELI_ALGO_AES_XTS, 256, GC_AES },
	{ GELI_ALGO_AES_CBC, 128, GC_AES }, { GELI_ALGO_AES_CBC, 192, GC_AES },
	{ GELI_ALGO_AES_CBC, 256, GC_AES },
	{ GELI_ALGO_CAMELLIA_CBC, 128, GC_CAMELLIA },
	{ GELI_ALGO_CAMELLIA_CBC, 192, GC_CAMELLIA },
	{ GELI_ALGO_CAMELLIA_CBC, 256, GC_CAMELLIA },
	{ GELI_ALGO_BLOWFISH_CBC, 128, GC_BLOWFISH },
	{ GELI_ALGO_BLOWFISH_CBC, 448, GC_BLOWFISH },
	{ GELI_ALGO_3DES_CBC, 192, GC_3DES },
	{ GELI_ALGO_NULL, 512, GC_NONE },
};

/* Random UK and MK; EK = HMAC_SHA512(UK, 0x01) and the slot's plaintext
 * MK || HMAC_SHA512(HMAC_SHA512(UK, 0x00), MK). */
static bool
slot_inputs(uint8_t *ukey, uint8_t *mk, uint8_t ek[64], uint8_t *want)
{
	static const uint8_t zero = 0x00, one = 0x01;
	uint8_t hk[64];
	bool ok;

	geli_random(ukey, GELI_USERKEYLEN);
	geli_random(mk, GELI_MKEY_DATALEN);
	memcpy(want, mk, GELI_MKEY_DATALEN);
	ok = gc_hmac_sha512(ukey, GELI_USERKEYLEN, &one, 1, ek) == 0 &&
	    gc_hmac_sha512(ukey, GELI_USERKEYLEN, &zero, 1, hk) == 0 &&
	    gc_hmac_sha512(hk, sizeof(hk), mk, GELI_MKEY_DATALEN,
	    want + GELI_MKEY_DATALEN) == 0;
	geli_wipe(hk, sizeof(hk));
	return ok;
}

/* Whether slot decrypts to want with cipher in mode, keybytes of ek, IV 0. */
static bool
opens_with(const uint8_t *slot, const uint8_t *want, enum gc_cipher cipher,
    enum gc_mode mode, const uint8_t *ek, size_t keybytes)
{
	static const uint8_t iv[16];
	uint8_t plain[GELI_MKEYLEN];
	struct gc_cipher_ctx *c;
	bool ok;

	if (gc_cipher_new(NULL, cipher, mode, ek, keybytes, &c) != 0)
		return false;
	ok = gc_crypt(c, iv, slot, plain, sizeof(plain), 0) == 0 &&
	    memcmp(plain, want, sizeof(plain)) == 0;
	gc_cipher_free(c);
	return ok;
}

static void
test_wrap(const char *be)
{
	uint8_t ukey[GELI_USERKEYLEN], mk[GELI_MKEY_DATALEN], ek[64];
	uint8_t slot[GELI_MKEYLEN], want[GELI_MKEYLEN];
	bool ok;

	for (size_t i = 0; i < NELEM(slots); i++) {
		ok = slot_inputs(ukey, mk, ek, want) &&
		    geli_mkey_encrypt(slots[i].ealgo, slots[i].keylen, ukey, mk,
		    slot) == 0;
		if (slots[i].slot == GC_NONE)
			tap_ok(ok && memcmp(slot, want, sizeof(want)) == 0,
			    "[%s] NULL: the slot is MK || VER in the clear", be);
		else
			tap_ok(ok && opens_with(slot, want, slots[i].slot, GC_CBC, ek,
			    slots[i].keylen / 8),
			    "[%s] %s %u: a slot opens by hand with %s-CBC, %u-bit key, IV 0",
			    be, geli_algo_name(slots[i].ealgo), slots[i].keylen,
			    cipher_names[slots[i].slot], slots[i].keylen);
	}
	/* An XTS volume's slot is not an XTS encryption. */
	ok = slot_inputs(ukey, mk, ek, want) &&
	    geli_mkey_encrypt(GELI_ALGO_AES_XTS, 128, ukey, mk, slot) == 0 &&
	    opens_with(slot, want, GC_AES, GC_CBC, ek, 16) &&
	    !opens_with(slot, want, GC_AES, GC_XTS, ek, 32);
	tap_ok(ok, "[%s] AES-XTS 128: the slot does not open with AES-XTS", be);
	tap_ok(geli_mkey_encrypt(GELI_ALGO_AES_CBC, 130, ukey, mk, slot) == -EINVAL &&
	    geli_mkey_encrypt(GELI_ALGO_BLOWFISH_CBC, 132, ukey, mk, slot) == -EINVAL &&
	    geli_mkey_encrypt(GELI_ALGO_HMAC_SHA256, 128, ukey, mk, slot) == -EINVAL &&
	    geli_mkey_encrypt(GELI_ALGO_AES_CBC, 0, ukey, mk, slot) == -EINVAL &&
	    geli_mkey_encrypt(GELI_ALGO_NULL, 520, ukey, mk, slot) == -EINVAL,
	    "[%s] no slot for a key of part of a byte, an HMAC, no key, or too long a key",
	    be);
	geli_wipe(ek, sizeof(ek));
}

int
main(void)
{
	const char *be;

	test_generic();
	test_as_before();
	for (unsigned i = 0; (be = geli_crypto_backend(i)) != NULL; i++) {
		tap_ok(geli_crypto_select(be) == 0, "[%s] selected", be);
		test_available(be);
		test_wrap(be);
	}
	return tap_done();
}
