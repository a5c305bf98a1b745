/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The narrow crypto seam: everything libgeli needs from a crypto library.
 * Two backends implement it, each on its library and nothing hand-written:
 * crypto_gcrypt.c (libgcrypt, the default) and crypto_openssl.c (OpenSSL 3
 * libcrypto); crypto.c chooses one per process and dispatches (see
 * crypto_backend.h).
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

/* Incremental HMAC-SHA512 with a duplicable state (for the user key). */
struct gc_hmac;
int gc_hmac_sha512_new(const void *key, size_t keylen, struct gc_hmac **out);
int gc_hmac_update(struct gc_hmac *h, const void *data, size_t len);
int gc_hmac_final(struct gc_hmac *h, uint8_t *out, size_t outlen);
void gc_hmac_free(struct gc_hmac *h);

int gc_pbkdf2_sha512(const void *pass, size_t passlen, const void *salt,
    size_t saltlen, uint32_t iter, void *out, size_t outlen);

/*
 * CBC over len bytes (a multiple of the block size) with no padding, for
 * a GELI cipher number (3DES, Blowfish, AES-CBC, Camellia-CBC, NULL), or
 * AES-CBC for the metadata of AES-XTS volumes (§5.1).  keylen in bits.
 * in and out may be the same buffer.
 */
int gc_cbc(unsigned ealgo, const uint8_t *key, unsigned keylen,
    const uint8_t *iv, const uint8_t *in, uint8_t *out, size_t len, int enc);

/* True when the library can run this GELI algorithm. */
int gc_available(unsigned algo);

/* ---- The sector data path: pre-keyed, reusable contexts ------------------- */

/*
 * A sector cipher keyed once: AES-XTS (key = 2*keylen/8 bytes) or a CBC
 * cipher (keylen/8 bytes), for encryption and decryption.  Not thread-safe:
 * each thread owns its own.
 */
struct gc_sector_cipher;
int gc_sector_cipher_new(const struct gc_ops *be, unsigned ealgo,
    unsigned keylen, const uint8_t *key, struct gc_sector_cipher **out);
/* One data unit (len bytes, one CBC chain or XTS unit) with its IV. */
int gc_sector_crypt(struct gc_sector_cipher *c, const uint8_t *iv,
    const uint8_t *in, uint8_t *out, size_t len, int enc);
void gc_sector_cipher_free(struct gc_sector_cipher *c);

/* SHA256(prefix || data) with the 64-byte prefix absorbed once (CBC IVs). */
struct gc_sha256_prefixed;
int gc_sha256_prefixed_new(const struct gc_ops *be, const uint8_t prefix[64],
    struct gc_sha256_prefixed **out);
int gc_sha256_prefixed(struct gc_sha256_prefixed *h, const void *data,
    size_t len, uint8_t out[32]);
void gc_sha256_prefixed_free(struct gc_sha256_prefixed *h);

/* HMAC over one chunk with a fresh key each time (integrity tags). */
struct gc_mac;
int gc_mac_new(const struct gc_ops *be, unsigned aalgo, struct gc_mac **out);
int gc_mac(struct gc_mac *m, const uint8_t *key, size_t keylen,
    const void *data, size_t len, uint8_t *out, size_t outlen);
void gc_mac_free(struct gc_mac *m);

#endif
