/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The narrow crypto seam: everything libgeli needs from a crypto library,
 * in generic terms ("AES in XTS mode with this key"), as cryptsetup's
 * backends take them: GELI's algorithm numbers and rules stay above it
 * (algs.h, mkey.c, privacy.c).  Two backends implement it, each on its
 * library and nothing hand-written: crypto_gcrypt.c (libgcrypt, the
 * default) and crypto_openssl.c (OpenSSL 3 libcrypto); crypto.c chooses
 * one per process, dispatches (see crypto_backend.h) and is the cipher
 * GC_NONE itself.
 */
#ifndef GELI_CRYPTO_H
#define GELI_CRYPTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Which backend new objects use is chosen with geli_crypto_select() (geli.h:
 * $GELI_CRYPTO or the default, also on first use).  gc_current() is that
 * backend, selecting the default if none is: what a volume keeps for the
 * contexts it makes later; NULL when none can start.
 */
struct gc_ops;
const struct gc_ops *gc_current(void);
/* geli_crypto_disable_hwaccel() was called: no AES-NI, VAES or PCLMUL. */
bool gc_hw_disabled(void);

/*
 * Generic names: what a cipher or hash is, not what GELI numbers it
 * (lib/algs.h maps GELI's algorithm numbers to these).  Each backend maps
 * them to its own library's names in one place.
 */
enum gc_cipher {
	GC_NONE,	/* no cipher: a copy, no key, no IV; never reaches a backend */
	GC_AES,		/* 16-byte blocks, 16/24/32-byte keys */
	GC_CAMELLIA,	/* 16-byte blocks, 16/24/32-byte keys */
	GC_BLOWFISH,	/* 8-byte blocks, 4..56-byte keys */
	GC_3DES,	/* DES-EDE3: 8-byte blocks, 24-byte keys */
};

enum gc_mode {
	GC_CBC,		/* no padding: a unit is a whole number of blocks */
	GC_XTS,		/* IEEE 1619: key = data key || tweak key, IV = the tweak */
};

enum gc_hash {		/* 0: none */
	GC_MD5 = 1,
	GC_SHA1,
	GC_RMD160,
	GC_SHA256,
	GC_SHA384,
	GC_SHA512,
};

/* Random bytes from the library's CSPRNG; key: long-term key material
 * (libgcrypt's very strong level, OpenSSL's private generator). */
int gc_random(void *buf, size_t len, bool key);

/* One-shot hashes and HMACs. out must hold the digest. */
int gc_md5(const void *msg, size_t len, uint8_t out[16]);
int gc_sha256(const void *a, size_t alen, const void *b, size_t blen,
    uint8_t out[32]);
int gc_hmac_sha512(const void *key, size_t keylen, const void *msg,
    size_t len, uint8_t out[64]);

/*
 * GMAC with AES-256 (GCM's tag over a || b as additional data, nothing
 * encrypted): a fast MAC for bulk data.  A key must never tag two different
 * messages under one IV: give each message a key of its own.
 */
int gc_gmac_aes256(const uint8_t key[32], const uint8_t iv[12], const void *a,
    size_t alen, const void *b, size_t blen, uint8_t tag[16]);

/* Incremental HMAC-SHA512 with a duplicable state (for the user key). */
struct gc_hmac;
int gc_hmac_sha512_new(const void *key, size_t keylen, struct gc_hmac **out);
int gc_hmac_update(struct gc_hmac *h, const void *data, size_t len);
int gc_hmac_final(struct gc_hmac *h, uint8_t *out, size_t outlen);
void gc_hmac_free(struct gc_hmac *h);

int gc_pbkdf2_sha512(const void *pass, size_t passlen, const void *salt,
    size_t saltlen, uint32_t iter, void *out, size_t outlen);

/* True when the selected backend can run cipher in mode with keys of keybits
 * bits (XTS: each of its two keys); GC_NONE can whenever a backend starts. */
bool gc_cipher_available(enum gc_cipher cipher, enum gc_mode mode,
    unsigned keybits);
/* True when the selected backend has the hash (for HMACs). */
bool gc_hash_available(enum gc_hash hash);

/* ---- Keyed ciphers -------------------------------------------------------- */

/* The bytes of a unit's IV: the block (CBC) or the 16-byte tweak (XTS); 0
 * for GC_NONE and for a mode the cipher does not have. */
size_t gc_ivlen(enum gc_cipher cipher, enum gc_mode mode);

/*
 * A cipher in a mode keyed once with keybytes bytes of key (XTS: both keys,
 * data || tweak), for encryption and decryption, made by backend be (NULL:
 * the selected one).  GC_NONE takes no key (key may be NULL) and copies.
 * Not thread-safe: each thread owns its own.  Freeing wipes the key
 * schedule (the libraries do on close and free).
 */
struct gc_cipher_ctx;
int gc_cipher_new(const struct gc_ops *be, enum gc_cipher cipher,
    enum gc_mode mode, const uint8_t *key, size_t keybytes,
    struct gc_cipher_ctx **out);
/* One unit of len bytes (one CBC chain, no padding, or one XTS data unit)
 * with its IV of gc_ivlen bytes; in and out may be the same buffer. */
int gc_crypt(struct gc_cipher_ctx *c, const uint8_t *iv, const uint8_t *in,
    uint8_t *out, size_t len, int enc);
/*
 * n units of unit bytes each, unit i with its own IV: ivs holds n
 * consecutive IVs of gc_ivlen bytes (none for GC_NONE).  in and out may be
 * the same buffer.  A backend may take the whole batch at once (where a
 * multi-buffer implementation, many sectors in one pass, plugs in);
 * otherwise it is one gc_crypt per unit.  Stops at the first error.
 */
int gc_crypt_batch(struct gc_cipher_ctx *c, size_t n, const uint8_t *ivs,
    const uint8_t *in, uint8_t *out, size_t unit, int enc);
void gc_cipher_free(struct gc_cipher_ctx *c);

/* ---- The sector data path's other contexts -------------------------------- */

/* SHA256(prefix || data) with the 64-byte prefix absorbed once (CBC IVs). */
struct gc_sha256_prefixed;
int gc_sha256_prefixed_new(const struct gc_ops *be, const uint8_t prefix[64],
    struct gc_sha256_prefixed **out);
int gc_sha256_prefixed(struct gc_sha256_prefixed *h, const void *data,
    size_t len, uint8_t out[32]);
void gc_sha256_prefixed_free(struct gc_sha256_prefixed *h);

/* HMAC with hash over one chunk with a fresh key each time (integrity tags). */
struct gc_mac;
int gc_mac_new(const struct gc_ops *be, enum gc_hash hash, struct gc_mac **out);
int gc_mac(struct gc_mac *m, const uint8_t *key, size_t keylen,
    const void *data, size_t len, uint8_t *out, size_t outlen);
void gc_mac_free(struct gc_mac *m);

#endif
