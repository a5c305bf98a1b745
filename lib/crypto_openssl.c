/* The crypto backend on OpenSSL 3 libcrypto (see crypto.h). */
#include "crypto.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/provider.h>

#include "geli.h"

static pthread_once_t gc_once = PTHREAD_ONCE_INIT;
static int gc_init_error;
/* Held for the life of the process (and so reachable for leak checkers). */
static OSSL_PROVIDER *gc_default, *gc_legacy;

static void
gc_load_providers(void)
{
	/*
	 * Loading "legacy" explicitly would stop the implicit "default"
	 * provider from loading, so both are loaded.  A missing legacy
	 * provider only costs Blowfish (and maybe RIPEMD160): not fatal.
	 */
	gc_default = OSSL_PROVIDER_load(NULL, "default");
	if (gc_default == NULL)
		gc_init_error = -ENOSYS;
	gc_legacy = OSSL_PROVIDER_load(NULL, "legacy");
}

int
gc_init(void)
{
	pthread_once(&gc_once, gc_load_providers);
	return gc_init_error;
}

int
gc_md5(const void *msg, size_t len, uint8_t out[16])
{
	unsigned int outlen = 16;

	gc_init();
	return EVP_Digest(msg, len, out, &outlen, EVP_md5(), NULL) == 1 ?
	    0 : -EIO;
}

int
gc_sha256(const void *a, size_t alen, const void *b, size_t blen,
    uint8_t out[32])
{
	EVP_MD_CTX *ctx;
	unsigned int outlen = 32;
	int ok;

	gc_init();
	ctx = EVP_MD_CTX_new();
	if (ctx == NULL)
		return -ENOMEM;
	ok = EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1 &&
	    EVP_DigestUpdate(ctx, a, alen) == 1 &&
	    (blen == 0 || EVP_DigestUpdate(ctx, b, blen) == 1) &&
	    EVP_DigestFinal_ex(ctx, out, &outlen) == 1;
	EVP_MD_CTX_free(ctx);
	return ok ? 0 : -EIO;
}

/* ---- HMAC-SHA512 ---------------------------------------------------------- */

struct gc_hmac {
	EVP_MAC_CTX *ctx;
};

static EVP_MAC *
gc_hmac_mac(void)
{
	static EVP_MAC *mac;
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

	pthread_mutex_lock(&lock);
	if (mac == NULL)
		mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	pthread_mutex_unlock(&lock);
	return mac;
}

int
gc_hmac_sha512_new(const void *key, size_t keylen, struct gc_hmac **out)
{
	static const unsigned char empty[1];
	OSSL_PARAM params[2];
	struct gc_hmac *h;
	EVP_MAC *mac;

	gc_init();
	mac = gc_hmac_mac();
	if (mac == NULL)
		return -ENOSYS;
	h = OPENSSL_zalloc(sizeof(*h));
	if (h == NULL)
		return -ENOMEM;
	h->ctx = EVP_MAC_CTX_new(mac);
	if (h->ctx == NULL) {
		OPENSSL_free(h);
		return -ENOMEM;
	}
	params[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST,
	    (char *)"SHA512", 0);
	params[1] = OSSL_PARAM_construct_end();
	/* A zero-length key is a valid HMAC key (128 zero bytes, RFC 2104). */
	if (EVP_MAC_init(h->ctx, keylen > 0 ? key : empty, keylen,
	    params) != 1) {
		gc_hmac_free(h);
		return -EIO;
	}
	*out = h;
	return 0;
}

int
gc_hmac_update(struct gc_hmac *h, const void *data, size_t len)
{
	if (len == 0)
		return 0;
	return EVP_MAC_update(h->ctx, data, len) == 1 ? 0 : -EIO;
}

int
gc_hmac_dup(const struct gc_hmac *h, struct gc_hmac **out)
{
	struct gc_hmac *d;

	d = OPENSSL_zalloc(sizeof(*d));
	if (d == NULL)
		return -ENOMEM;
	d->ctx = EVP_MAC_CTX_dup(h->ctx);
	if (d->ctx == NULL) {
		OPENSSL_free(d);
		return -ENOMEM;
	}
	*out = d;
	return 0;
}

/* Finish a MAC into out (outlen bytes of the digest), wiping the copy. */
static int
gc_mac_finish(EVP_MAC_CTX *ctx, uint8_t *out, size_t outlen)
{
	uint8_t md[64];
	size_t mdlen = 0;
	int ok;

	ok = EVP_MAC_final(ctx, md, &mdlen, sizeof(md)) == 1 && mdlen >= outlen;
	if (ok)
		memcpy(out, md, outlen);
	OPENSSL_cleanse(md, sizeof(md));
	return ok ? 0 : -EIO;
}

int
gc_hmac_final(struct gc_hmac *h, uint8_t *out, size_t outlen)
{
	return gc_mac_finish(h->ctx, out, outlen);
}

void
gc_hmac_free(struct gc_hmac *h)
{
	if (h == NULL)
		return;
	EVP_MAC_CTX_free(h->ctx);	/* OpenSSL cleanses the key state */
	OPENSSL_free(h);
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
gc_pbkdf2_sha512(const void *pass, size_t passlen, const void *salt,
    size_t saltlen, uint32_t iter, void *out, size_t outlen)
{
	gc_init();
	if (iter == 0 || iter > INT32_MAX || passlen > INT32_MAX ||
	    saltlen > INT32_MAX || outlen > INT32_MAX)
		return -EINVAL;
	return PKCS5_PBKDF2_HMAC(pass, (int)passlen, salt, (int)saltlen,
	    (int)iter, EVP_sha512(), (int)outlen, out) == 1 ? 0 : -EIO;
}

/* ---- Block ciphers in CBC mode --------------------------------------------- */

static const char *
gc_cbc_name(unsigned ealgo, unsigned keylen)
{
	switch (ealgo) {
	case GELI_ALGO_AES_XTS:		/* metadata of XTS volumes: AES-CBC */
	case GELI_ALGO_AES_CBC:
		switch (keylen) {
		case 128: return "AES-128-CBC";
		case 192: return "AES-192-CBC";
		case 256: return "AES-256-CBC";
		}
		return NULL;
	case GELI_ALGO_CAMELLIA_CBC:
		switch (keylen) {
		case 128: return "CAMELLIA-128-CBC";
		case 192: return "CAMELLIA-192-CBC";
		case 256: return "CAMELLIA-256-CBC";
		}
		return NULL;
	case GELI_ALGO_BLOWFISH_CBC:
		return "BF-CBC";
	case GELI_ALGO_3DES_CBC:
		return keylen == 192 ? "DES-EDE3-CBC" : NULL;
	}
	return NULL;
}

int
gc_cbc(unsigned ealgo, const uint8_t *key, unsigned keylen, const uint8_t *iv,
    const uint8_t *in, uint8_t *out, size_t len, int enc)
{
	EVP_CIPHER_CTX *ctx;
	EVP_CIPHER *cipher;
	const char *name;
	int outl, ok;

	if (ealgo == GELI_ALGO_NULL) {
		if (out != in)
			memmove(out, in, len);
		return 0;
	}
	gc_init();
	name = gc_cbc_name(ealgo, keylen);
	if (name == NULL || len > INT32_MAX)
		return -EINVAL;
	cipher = EVP_CIPHER_fetch(NULL, name, NULL);
	if (cipher == NULL)
		return -ENOTSUP;
	ctx = EVP_CIPHER_CTX_new();
	if (ctx == NULL) {
		EVP_CIPHER_free(cipher);
		return -ENOMEM;
	}
	ok = EVP_CipherInit_ex2(ctx, cipher, NULL, NULL, enc, NULL) == 1 &&
	    EVP_CIPHER_CTX_set_key_length(ctx, (int)(keylen / 8)) == 1 &&
	    EVP_CIPHER_CTX_set_padding(ctx, 0) == 1 &&
	    EVP_CipherInit_ex2(ctx, NULL, key, iv, enc, NULL) == 1 &&
	    EVP_CipherUpdate(ctx, out, &outl, in, (int)len) == 1 &&
	    (size_t)outl == len;
	EVP_CIPHER_CTX_free(ctx);
	EVP_CIPHER_free(cipher);
	return ok ? 0 : -EIO;
}

int
gc_available(unsigned algo)
{
	const char *name = NULL;
	EVP_CIPHER *c;
	EVP_MD *md;

	gc_init();
	switch (algo) {
	case GELI_ALGO_NULL:
		return 1;
	case GELI_ALGO_HMAC_MD5:	name = "MD5"; break;
	case GELI_ALGO_HMAC_SHA1:	name = "SHA1"; break;
	case GELI_ALGO_HMAC_RMD160:	name = "RIPEMD160"; break;
	case GELI_ALGO_HMAC_SHA256:	name = "SHA256"; break;
	case GELI_ALGO_HMAC_SHA384:	name = "SHA384"; break;
	case GELI_ALGO_HMAC_SHA512:	name = "SHA512"; break;
	}
	if (name != NULL) {
		md = EVP_MD_fetch(NULL, name, NULL);
		EVP_MD_free(md);
		return md != NULL;
	}
	if (algo == GELI_ALGO_AES_XTS)
		name = "AES-128-XTS";
	else
		name = gc_cbc_name(algo, algo == GELI_ALGO_3DES_CBC ? 192 : 128);
	if (name == NULL)
		return 0;
	c = EVP_CIPHER_fetch(NULL, name, NULL);
	EVP_CIPHER_free(c);
	return c != NULL;
}

/* ---- Sector ciphers ------------------------------------------------------------- */

struct gc_sector_cipher {
	EVP_CIPHER_CTX *enc, *dec;
	unsigned ealgo;
};

static const char *
gc_sector_name(unsigned ealgo, unsigned keylen)
{
	if (ealgo == GELI_ALGO_AES_XTS)
		return keylen == 128 ? "AES-128-XTS" :
		    keylen == 256 ? "AES-256-XTS" : NULL;
	return gc_cbc_name(ealgo, keylen);
}

static EVP_CIPHER_CTX *
gc_keyed_ctx(EVP_CIPHER *cipher, unsigned keylen_bytes, const uint8_t *key,
    int enc, bool xts)
{
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();

	if (ctx == NULL)
		return NULL;
	/* XTS has no padding; setting it would cost a parameter round trip
	 * on every IV change. */
	if (EVP_CipherInit_ex2(ctx, cipher, NULL, NULL, enc, NULL) != 1 ||
	    EVP_CIPHER_CTX_set_key_length(ctx, (int)keylen_bytes) != 1 ||
	    (!xts && EVP_CIPHER_CTX_set_padding(ctx, 0) != 1) ||
	    EVP_CipherInit_ex2(ctx, NULL, key, NULL, enc, NULL) != 1) {
		EVP_CIPHER_CTX_free(ctx);
		return NULL;
	}
	return ctx;
}

int
gc_sector_cipher_new(unsigned ealgo, unsigned keylen, const uint8_t *key,
    struct gc_sector_cipher **out)
{
	struct gc_sector_cipher *c;
	EVP_CIPHER *cipher;
	const char *name;
	unsigned kbytes;

	gc_init();
	c = OPENSSL_zalloc(sizeof(*c));
	if (c == NULL)
		return -ENOMEM;
	c->ealgo = ealgo;
	if (ealgo == GELI_ALGO_NULL) {
		*out = c;
		return 0;
	}
	name = gc_sector_name(ealgo, keylen);
	if (name == NULL) {
		OPENSSL_free(c);
		return -EINVAL;
	}
	cipher = EVP_CIPHER_fetch(NULL, name, NULL);
	if (cipher == NULL) {
		OPENSSL_free(c);
		return -ENOTSUP;
	}
	kbytes = keylen / 8 * (ealgo == GELI_ALGO_AES_XTS ? 2 : 1);
	c->enc = gc_keyed_ctx(cipher, kbytes, key, 1, ealgo == GELI_ALGO_AES_XTS);
	c->dec = gc_keyed_ctx(cipher, kbytes, key, 0, ealgo == GELI_ALGO_AES_XTS);
	EVP_CIPHER_free(cipher);
	if (c->enc == NULL || c->dec == NULL) {
		gc_sector_cipher_free(c);
		return -EIO;
	}
	*out = c;
	return 0;
}

int
gc_sector_crypt(struct gc_sector_cipher *c, const uint8_t *iv,
    const uint8_t *in, uint8_t *out, size_t len, int enc)
{
	EVP_CIPHER_CTX *ctx;
	int outl;

	if (c->ealgo == GELI_ALGO_NULL) {
		if (out != in)
			memmove(out, in, len);
		return 0;
	}
	ctx = enc ? c->enc : c->dec;
	if (EVP_CipherInit_ex(ctx, NULL, NULL, NULL, iv, enc) != 1 ||
	    EVP_CipherUpdate(ctx, out, &outl, in, (int)len) != 1 ||
	    (size_t)outl != len)
		return -EIO;
	return 0;
}

void
gc_sector_cipher_free(struct gc_sector_cipher *c)
{
	if (c == NULL)
		return;
	EVP_CIPHER_CTX_free(c->enc);	/* cleanses the key schedule */
	EVP_CIPHER_CTX_free(c->dec);
	OPENSSL_free(c);
}

/* ---- SHA256 with an absorbed prefix ------------------------------------------------ */

struct gc_sha256_prefixed {
	EVP_MD_CTX *base, *work;
};

int
gc_sha256_prefixed_new(const uint8_t prefix[64], struct gc_sha256_prefixed **out)
{
	struct gc_sha256_prefixed *h;

	gc_init();
	h = OPENSSL_zalloc(sizeof(*h));
	if (h == NULL)
		return -ENOMEM;
	h->base = EVP_MD_CTX_new();
	h->work = EVP_MD_CTX_new();
	if (h->base == NULL || h->work == NULL ||
	    EVP_DigestInit_ex(h->base, EVP_sha256(), NULL) != 1 ||
	    EVP_DigestUpdate(h->base, prefix, 64) != 1) {
		gc_sha256_prefixed_free(h);
		return -EIO;
	}
	*out = h;
	return 0;
}

int
gc_sha256_prefixed(struct gc_sha256_prefixed *h, const void *data, size_t len,
    uint8_t out[32])
{
	unsigned int outlen = 32;

	return EVP_MD_CTX_copy_ex(h->work, h->base) == 1 &&
	    EVP_DigestUpdate(h->work, data, len) == 1 &&
	    EVP_DigestFinal_ex(h->work, out, &outlen) == 1 ? 0 : -EIO;
}

void
gc_sha256_prefixed_free(struct gc_sha256_prefixed *h)
{
	if (h == NULL)
		return;
	EVP_MD_CTX_free(h->base);	/* the prefix state holds IV-key bytes */
	EVP_MD_CTX_free(h->work);
	OPENSSL_free(h);
}

/* ---- Per-chunk HMAC -------------------------------------------------------------- */

struct gc_mac {
	EVP_MAC_CTX *ctx;
	OSSL_PARAM params[2];
	char digest[16];
};

int
gc_mac_new(unsigned aalgo, struct gc_mac **out)
{
	struct gc_mac *m;
	const char *d;
	EVP_MAC *mac;

	switch (aalgo) {
	case GELI_ALGO_HMAC_MD5:	d = "MD5"; break;
	case GELI_ALGO_HMAC_SHA1:	d = "SHA1"; break;
	case GELI_ALGO_HMAC_RMD160:	d = "RIPEMD160"; break;
	case GELI_ALGO_HMAC_SHA256:	d = "SHA256"; break;
	case GELI_ALGO_HMAC_SHA384:	d = "SHA384"; break;
	case GELI_ALGO_HMAC_SHA512:	d = "SHA512"; break;
	default:			return -EINVAL;
	}
	gc_init();
	mac = gc_hmac_mac();
	if (mac == NULL)
		return -ENOSYS;
	m = OPENSSL_zalloc(sizeof(*m));
	if (m == NULL)
		return -ENOMEM;
	snprintf(m->digest, sizeof(m->digest), "%s", d);
	m->params[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST,
	    m->digest, 0);
	m->params[1] = OSSL_PARAM_construct_end();
	m->ctx = EVP_MAC_CTX_new(mac);
	if (m->ctx == NULL || EVP_MAC_CTX_set_params(m->ctx, m->params) != 1) {
		gc_mac_free(m);
		return -ENOTSUP;
	}
	*out = m;
	return 0;
}

int
gc_mac(struct gc_mac *m, const uint8_t *key, size_t keylen, const void *data,
    size_t len, uint8_t *out, size_t outlen)
{
	if (EVP_MAC_init(m->ctx, key, keylen, NULL) != 1 ||
	    EVP_MAC_update(m->ctx, data, len) != 1)
		return -EIO;
	return gc_mac_finish(m->ctx, out, outlen);
}

void
gc_mac_free(struct gc_mac *m)
{
	if (m == NULL)
		return;
	EVP_MAC_CTX_free(m->ctx);
	OPENSSL_free(m);
}
