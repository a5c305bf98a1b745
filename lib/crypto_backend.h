/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What a crypto library provides behind crypto.h: one table of operations
 * per library (crypto_gcrypt.c, crypto_openssl.c), as cryptsetup keeps one
 * backend file per library.  crypto.c picks a table and dispatches to it.
 *
 * Every object a backend makes starts with the table that made it, so an
 * object keeps working with its own library after another one is selected
 * (the differential tests write with one backend and read with the other
 * in one process).  A backend's object types embed these headers as their
 * first member.
 */
#ifndef GELI_CRYPTO_BACKEND_H
#define GELI_CRYPTO_BACKEND_H

#include "crypto.h"

struct gc_ops;

struct gc_hmac { const struct gc_ops *ops; };
/* ops NULL: GC_NONE, crypto.c's own; ivlen: set by crypto.c (gc_ivlen). */
struct gc_cipher_ctx { const struct gc_ops *ops; size_t ivlen; };
struct gc_sha256_prefixed { const struct gc_ops *ops; };
struct gc_mac { const struct gc_ops *ops; };

struct gc_ops {
	const char *name;		/* GELI_CRYPTO's word: "gcrypt", "openssl" */
	/* Once per process; nohw: no AES-NI, VAES or PCLMUL (where the
	 * library allows it at run time). */
	int (*init)(bool nohw);
	const char *(*version)(void);	/* "libgcrypt 1.10.1" */
	/* The CPU features the library uses, in its words, or NULL. */
	const char *(*hwfeatures)(void);
	int (*random)(void *buf, size_t len, bool key);
	int (*md5)(const void *msg, size_t len, uint8_t out[16]);
	int (*sha256)(const void *a, size_t alen, const void *b, size_t blen,
	    uint8_t out[32]);
	int (*hmac_sha512_new)(const void *key, size_t keylen,
	    struct gc_hmac **out);
	int (*hmac_update)(struct gc_hmac *h, const void *data, size_t len);
	int (*hmac_final)(struct gc_hmac *h, uint8_t *out, size_t outlen);
	void (*hmac_free)(struct gc_hmac *h);
	int (*gmac_aes256)(const uint8_t key[32], const uint8_t iv[12],
	    const void *a, size_t alen, const void *b, size_t blen,
	    uint8_t tag[16]);
	int (*pbkdf2_sha512)(const void *pass, size_t passlen, const void *salt,
	    size_t saltlen, uint32_t iter, void *out, size_t outlen);
	/* Never asked about GC_NONE. */
	bool (*cipher_available)(enum gc_cipher cipher, enum gc_mode mode,
	    unsigned keybits);
	bool (*hash_available)(enum gc_hash hash);
	/*
	 * A keyed cipher (never GC_NONE; keybytes: the whole key, XTS both
	 * halves); -EINVAL for a key length the cipher does not take,
	 * -ENOTSUP for a cipher or mode the library does not have.
	 */
	int (*cipher_new)(enum gc_cipher cipher, enum gc_mode mode,
	    const uint8_t *key, size_t keybytes, struct gc_cipher_ctx **out);
	/* One unit, len <= INT32_MAX (crypto.c checks). */
	int (*crypt)(struct gc_cipher_ctx *c, const uint8_t *iv,
	    const uint8_t *in, uint8_t *out, size_t len, int enc);
	/*
	 * n units (gc_crypt_batch), unit <= INT32_MAX, n * unit without
	 * overflow (crypto.c checks).  NULL: crypto.c calls crypt per unit.
	 */
	int (*crypt_batch)(struct gc_cipher_ctx *c, size_t n, const uint8_t *ivs,
	    const uint8_t *in, uint8_t *out, size_t unit, int enc);
	void (*cipher_free)(struct gc_cipher_ctx *c);
	int (*sha256_prefixed_new)(const uint8_t prefix[64],
	    struct gc_sha256_prefixed **out);
	int (*sha256_prefixed)(struct gc_sha256_prefixed *h, const void *data,
	    size_t len, uint8_t out[32]);
	void (*sha256_prefixed_free)(struct gc_sha256_prefixed *h);
	int (*mac_new)(enum gc_hash hash, struct gc_mac **out);
	int (*mac)(struct gc_mac *m, const uint8_t *key, size_t keylen,
	    const void *data, size_t len, uint8_t *out, size_t outlen);
	void (*mac_free)(struct gc_mac *m);
};

extern const struct gc_ops gc_ops_gcrypt;
extern const struct gc_ops gc_ops_openssl;

#endif
