/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The crypto seam's dispatcher (crypto.h): which backend new objects use
 * (geli_crypto_select and the rest of geli.h's crypto backends section),
 * the calls that forward to it, and what needs no library: IV lengths and
 * the cipher GC_NONE.  Objects carry their own table (crypto_backend.h), so
 * calls on them never look at the selection.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "crypto_backend.h"
#include "geli.h"

static const struct gc_ops *const backends[] = {
	&gc_ops_gcrypt,		/* the default: the faster library (docs/benchmarks.md) */
	&gc_ops_openssl,
};
#define NBACKENDS (sizeof(backends) / sizeof(backends[0]))

static _Atomic(const struct gc_ops *) cur;
static atomic_bool nohw;

const char *
geli_crypto_backend(unsigned i)
{
	return i < NBACKENDS ? backends[i]->name : NULL;
}

void
geli_crypto_disable_hwaccel(void)
{
	atomic_store(&nohw, true);
}

bool
gc_hw_disabled(void)
{
	return atomic_load(&nohw);
}

int
geli_crypto_select(const char *name)
{
	const struct gc_ops *ops = NULL;
	int error;

	if (name == NULL) {
		name = getenv("GELI_CRYPTO");
		if (name != NULL && *name == '\0')
			name = NULL;
	}
	if (name == NULL)
		ops = backends[0];
	for (unsigned i = 0; ops == NULL && i < NBACKENDS; i++)
		if (strcmp(name, backends[i]->name) == 0)
			ops = backends[i];
	if (ops == NULL)
		return -EINVAL;
	error = ops->init(atomic_load(&nohw));
	if (error != 0)
		return error;
	atomic_store(&cur, ops);
	return 0;
}

/* The selected table, selecting the default on first use; NULL when that
 * fails (an unknown $GELI_CRYPTO), and every call then fails. */
static const struct gc_ops *
ops(void)
{
	const struct gc_ops *o = atomic_load(&cur);

	if (o == NULL && geli_crypto_select(NULL) == 0)
		o = atomic_load(&cur);
	return o;
}

const struct gc_ops *
gc_current(void)
{
	return ops();
}

const char *
geli_crypto_name(void)
{
	const struct gc_ops *o = ops();

	return o != NULL ? o->name : "none";
}

const char *
geli_crypto_version(void)
{
	const struct gc_ops *o = ops();

	return o != NULL ? o->version() : "none";
}

const char *
geli_crypto_hwfeatures(void)
{
	const struct gc_ops *o = ops();

	return o != NULL ? o->hwfeatures() : NULL;
}

#define OPS_OR(fail) \
	const struct gc_ops *o = ops(); \
	if (o == NULL) \
		return fail

int
gc_random(void *buf, size_t len, bool key)
{
	OPS_OR(-EINVAL);
	return o->random(buf, len, key);
}

int
gc_md5(const void *msg, size_t len, uint8_t out[16])
{
	OPS_OR(-EINVAL);
	return o->md5(msg, len, out);
}

int
gc_sha256(const void *a, size_t alen, const void *b, size_t blen,
    uint8_t out[32])
{
	OPS_OR(-EINVAL);
	return o->sha256(a, alen, b, blen, out);
}

int
gc_gmac_aes256(const uint8_t key[32], const uint8_t iv[12], const void *a,
    size_t alen, const void *b, size_t blen, uint8_t tag[16])
{
	OPS_OR(-EINVAL);
	return o->gmac_aes256(key, iv, a, alen, b, blen, tag);
}

int
gc_hmac_sha512(const void *key, size_t keylen, const void *msg, size_t len,
    uint8_t out[64])
{
	struct gc_hmac *h;
	int error;

	error = gc_hmac_sha512_new(key, keylen, &h);
	if (error != 0)
		return error;
	error = gc_hmac_update(h, msg, len);
	if (error == 0)
		error = gc_hmac_final(h, out, 64);
	gc_hmac_free(h);
	return error;
}

int
gc_hmac_sha512_new(const void *key, size_t keylen, struct gc_hmac **out)
{
	OPS_OR(-EINVAL);
	return o->hmac_sha512_new(key, keylen, out);
}

int
gc_hmac_update(struct gc_hmac *h, const void *data, size_t len)
{
	return len == 0 ? 0 : h->ops->hmac_update(h, data, len);
}

int
gc_hmac_final(struct gc_hmac *h, uint8_t *out, size_t outlen)
{
	return outlen > 64 ? -EINVAL : h->ops->hmac_final(h, out, outlen);
}

void
gc_hmac_free(struct gc_hmac *h)
{
	if (h != NULL)
		h->ops->hmac_free(h);
}

int
gc_pbkdf2_sha512(const void *pass, size_t passlen, const void *salt,
    size_t saltlen, uint32_t iter, void *out, size_t outlen)
{
	OPS_OR(-EINVAL);
	if (iter == 0 || iter > INT32_MAX || passlen > INT32_MAX ||
	    saltlen > INT32_MAX || outlen > INT32_MAX)
		return -EINVAL;
	return o->pbkdf2_sha512(pass, passlen, salt, saltlen, iter, out,
	    outlen);
}

bool
gc_cipher_available(enum gc_cipher cipher, enum gc_mode mode, unsigned keybits)
{
	OPS_OR(false);
	if (cipher == GC_NONE)
		return true;
	return gc_ivlen(cipher, mode) != 0 &&
	    o->cipher_available(cipher, mode, keybits);
}

bool
gc_hash_available(enum gc_hash hash)
{
	OPS_OR(false);
	return hash >= GC_MD5 && hash <= GC_SHA512 && o->hash_available(hash);
}

/* ---- Keyed ciphers, and GC_NONE ----------------------------------------------- */

size_t
gc_ivlen(enum gc_cipher cipher, enum gc_mode mode)
{
	size_t block;

	switch (cipher) {
	case GC_AES:
	case GC_CAMELLIA:
		block = 16;
		break;
	case GC_BLOWFISH:
	case GC_3DES:
		block = 8;
		break;
	default:
		return 0;
	}
	switch (mode) {
	case GC_CBC:
		return block;
	case GC_XTS:
		/* A tweak is one block: 128-bit block ciphers only. */
		return block == 16 ? 16 : 0;
	}
	return 0;
}

/*
 * GC_NONE is the identity: no key, no IV, the bytes copied (or left where
 * they are).  It is handled here, once, and never reaches a backend: its
 * context is crypto.c's own, with no table.
 */
static int
none_copy(const uint8_t *in, uint8_t *out, size_t len)
{
	if (out != in)
		memmove(out, in, len);
	return 0;
}

int
gc_cipher_new(const struct gc_ops *be, enum gc_cipher cipher,
    enum gc_mode mode, const uint8_t *key, size_t keybytes,
    struct gc_cipher_ctx **out)
{
	size_t ivlen = gc_ivlen(cipher, mode);
	int error;

	if (be == NULL && (be = ops()) == NULL)
		return -EINVAL;
	if (cipher == GC_NONE) {
		*out = calloc(1, sizeof(**out));
		return *out != NULL ? 0 : -ENOMEM;
	}
	if (ivlen == 0 || key == NULL || keybytes == 0)
		return -EINVAL;
	error = be->cipher_new(cipher, mode, key, keybytes, out);
	if (error == 0)
		(*out)->ivlen = ivlen;
	return error;
}

int
gc_crypt(struct gc_cipher_ctx *c, const uint8_t *iv, const uint8_t *in,
    uint8_t *out, size_t len, int enc)
{
	if (c->ops == NULL)
		return none_copy(in, out, len);
	if (len > INT32_MAX)
		return -EINVAL;
	return c->ops->crypt(c, iv, in, out, len, enc);
}

int
gc_crypt_batch(struct gc_cipher_ctx *c, size_t n, const uint8_t *ivs,
    const uint8_t *in, uint8_t *out, size_t unit, int enc)
{
	size_t len;
	int error = 0;

	if (n == 0)
		return 0;
	if (unit > INT32_MAX || __builtin_mul_overflow(n, unit, &len))
		return -EINVAL;
	if (c->ops == NULL)
		return none_copy(in, out, len);
	if (c->ops->crypt_batch != NULL)
		return c->ops->crypt_batch(c, n, ivs, in, out, unit, enc);
	for (size_t i = 0; i < n && error == 0; i++)
		error = c->ops->crypt(c, ivs + i * c->ivlen, in + i * unit,
		    out + i * unit, unit, enc);
	return error;
}

void
gc_cipher_free(struct gc_cipher_ctx *c)
{
	if (c == NULL)
		return;
	if (c->ops == NULL)
		free(c);
	else
		c->ops->cipher_free(c);
}

/* ---- Hashes for the data path -------------------------------------------------- */

int
gc_sha256_prefixed_new(const struct gc_ops *be, const uint8_t prefix[64],
    struct gc_sha256_prefixed **out)
{
	return be->sha256_prefixed_new(prefix, out);
}

int
gc_sha256_prefixed(struct gc_sha256_prefixed *h, const void *data, size_t len,
    uint8_t out[32])
{
	return h->ops->sha256_prefixed(h, data, len, out);
}

void
gc_sha256_prefixed_free(struct gc_sha256_prefixed *h)
{
	if (h != NULL)
		h->ops->sha256_prefixed_free(h);
}

int
gc_mac_new(const struct gc_ops *be, enum gc_hash hash, struct gc_mac **out)
{
	if (hash < GC_MD5 || hash > GC_SHA512)
		return -EINVAL;
	return be->mac_new(hash, out);
}

int
gc_mac(struct gc_mac *m, const uint8_t *key, size_t keylen, const void *data,
    size_t len, uint8_t *out, size_t outlen)
{
	return outlen > 64 ? -EINVAL :
	    m->ops->mac(m, key, keylen, data, len, out, outlen);
}

void
gc_mac_free(struct gc_mac *m)
{
	if (m != NULL)
		m->ops->mac_free(m);
}
