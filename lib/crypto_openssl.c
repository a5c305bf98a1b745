/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The crypto backend on OpenSSL 3 libcrypto (GELI_CRYPTO=openssl; see
 * crypto_backend.h).  Blowfish and 3DES need OpenSSL's legacy provider.
 */
#include "crypto_backend.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/provider.h>
#include <openssl/rand.h>

#include "geli.h"

static const struct gc_ops *const self = &gc_ops_openssl;

static pthread_once_t ossl_once = PTHREAD_ONCE_INIT;
static int ossl_init_error;
/* Loaded once, unloaded at exit (ossl_stop). */
static OSSL_PROVIDER *ossl_default, *ossl_legacy;
static char ossl_version_str[64];

/*
 * The providers' handles are ours to give back: OPENSSL_cleanup() frees the
 * library's own state at exit but not a handle that OSSL_PROVIDER_load()
 * returned (valgrind counts it "definitely lost").
 */
static void
ossl_stop(void)
{
	if (ossl_legacy != NULL)
		OSSL_PROVIDER_unload(ossl_legacy);
	if (ossl_default != NULL)
		OSSL_PROVIDER_unload(ossl_default);
	ossl_legacy = ossl_default = NULL;
}

static void
ossl_start(void)
{
	snprintf(ossl_version_str, sizeof(ossl_version_str), "OpenSSL %s",
	    OpenSSL_version(OPENSSL_VERSION_STRING));
	/*
	 * libcrypto registers its OPENSSL_cleanup() with atexit() when it
	 * starts; ossl_stop is registered after it and so runs before it,
	 * while the providers can still be unloaded.
	 */
	if (OPENSSL_init_crypto(0, NULL) != 1) {
		ossl_init_error = -ENOSYS;
		return;
	}
	/*
	 * Loading "legacy" explicitly would stop the implicit "default"
	 * provider from loading, so both are loaded.  A missing legacy
	 * provider only costs Blowfish (and maybe RIPEMD160): not fatal.
	 */
	ossl_default = OSSL_PROVIDER_load(NULL, "default");
	if (ossl_default == NULL)
		ossl_init_error = -ENOSYS;
	ossl_legacy = OSSL_PROVIDER_load(NULL, "legacy");
	/* atexit() fails only without memory; the handles then stay loaded
	 * until the process ends, which costs nothing but the leak report. */
	(void)atexit(ossl_stop);
}

static int
ossl_init(bool nohw)
{
	(void)nohw;	/* OPENSSL_ia32cap, read when libcrypto starts */
	pthread_once(&ossl_once, ossl_start);
	return ossl_init_error;
}

static const char *
ossl_version(void)
{
	return ossl_version_str;
}

/* OpenSSL keeps its capability vector to itself. */
static const char *
ossl_hwfeatures(void)
{
	return NULL;
}

static int
ossl_random(void *buf, size_t len, bool key)
{
	uint8_t *p = buf;

	while (len > 0) {
		int n = len > INT_MAX ? INT_MAX : (int)len;
		if ((key ? RAND_priv_bytes(p, n) : RAND_bytes(p, n)) != 1)
			return -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int
ossl_md5(const void *msg, size_t len, uint8_t out[16])
{
	unsigned int outlen = 16;

	return EVP_Digest(msg, len, out, &outlen, EVP_md5(), NULL) == 1 ?
	    0 : -EIO;
}

static int
ossl_sha256(const void *a, size_t alen, const void *b, size_t blen,
    uint8_t out[32])
{
	EVP_MD_CTX *ctx;
	unsigned int outlen = 32;
	int ok;

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

/* ---- HMAC ------------------------------------------------------------------ */

static EVP_MAC *
ossl_hmac_mac(void)
{
	static EVP_MAC *mac;
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

	pthread_mutex_lock(&lock);
	if (mac == NULL)
		mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	pthread_mutex_unlock(&lock);
	return mac;
}

/* Finish a MAC into out (outlen bytes of the digest), wiping the copy. */
static int
ossl_mac_finish(EVP_MAC_CTX *ctx, uint8_t *out, size_t outlen)
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

struct ossl_hmac {
	struct gc_hmac base;
	EVP_MAC_CTX *ctx;
};

static void
ossl_hmac_free(struct gc_hmac *g)
{
	struct ossl_hmac *h = (struct ossl_hmac *)g;

	EVP_MAC_CTX_free(h->ctx);	/* OpenSSL cleanses the key state */
	OPENSSL_free(h);
}

static int
ossl_hmac_sha512_new(const void *key, size_t keylen, struct gc_hmac **out)
{
	static const unsigned char empty[1];
	OSSL_PARAM params[2];
	struct ossl_hmac *h;
	EVP_MAC *mac;

	mac = ossl_hmac_mac();
	if (mac == NULL)
		return -ENOSYS;
	h = OPENSSL_zalloc(sizeof(*h));
	if (h == NULL)
		return -ENOMEM;
	h->base.ops = self;
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
		ossl_hmac_free(&h->base);
		return -EIO;
	}
	*out = &h->base;
	return 0;
}

static int
ossl_hmac_update(struct gc_hmac *g, const void *data, size_t len)
{
	return EVP_MAC_update(((struct ossl_hmac *)g)->ctx, data, len) == 1 ?
	    0 : -EIO;
}

static int
ossl_hmac_final(struct gc_hmac *g, uint8_t *out, size_t outlen)
{
	return ossl_mac_finish(((struct ossl_hmac *)g)->ctx, out, outlen);
}

static int
ossl_pbkdf2_sha512(const void *pass, size_t passlen, const void *salt,
    size_t saltlen, uint32_t iter, void *out, size_t outlen)
{
	return PKCS5_PBKDF2_HMAC(pass, (int)passlen, salt, (int)saltlen,
	    (int)iter, EVP_sha512(), (int)outlen, out) == 1 ? 0 : -EIO;
}

/* ---- Block ciphers in CBC mode --------------------------------------------- */

static const char *
ossl_cbc_name(unsigned ealgo, unsigned keylen)
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

static int
ossl_cbc(unsigned ealgo, const uint8_t *key, unsigned keylen, const uint8_t *iv,
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
	name = ossl_cbc_name(ealgo, keylen);
	if (name == NULL)
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

static int
ossl_available(unsigned algo)
{
	const char *name = NULL;
	EVP_CIPHER *c;
	EVP_MD *md;

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
		name = ossl_cbc_name(algo, algo == GELI_ALGO_3DES_CBC ? 192 : 128);
	if (name == NULL)
		return 0;
	c = EVP_CIPHER_fetch(NULL, name, NULL);
	EVP_CIPHER_free(c);
	return c != NULL;
}

/* ---- Sector ciphers ------------------------------------------------------------- */

struct ossl_sector_cipher {
	struct gc_sector_cipher base;
	EVP_CIPHER_CTX *enc, *dec;
	unsigned ealgo;
};

static const char *
ossl_sector_name(unsigned ealgo, unsigned keylen)
{
	if (ealgo == GELI_ALGO_AES_XTS)
		return keylen == 128 ? "AES-128-XTS" :
		    keylen == 256 ? "AES-256-XTS" : NULL;
	return ossl_cbc_name(ealgo, keylen);
}

static EVP_CIPHER_CTX *
ossl_keyed_ctx(EVP_CIPHER *cipher, unsigned keylen_bytes, const uint8_t *key,
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

static void
ossl_sector_cipher_free(struct gc_sector_cipher *g)
{
	struct ossl_sector_cipher *c = (struct ossl_sector_cipher *)g;

	EVP_CIPHER_CTX_free(c->enc);	/* cleanses the key schedule */
	EVP_CIPHER_CTX_free(c->dec);
	OPENSSL_free(c);
}

static int
ossl_sector_cipher_new(unsigned ealgo, unsigned keylen, const uint8_t *key,
    struct gc_sector_cipher **out)
{
	struct ossl_sector_cipher *c;
	EVP_CIPHER *cipher;
	const char *name;
	unsigned kbytes;

	c = OPENSSL_zalloc(sizeof(*c));
	if (c == NULL)
		return -ENOMEM;
	c->base.ops = self;
	c->ealgo = ealgo;
	if (ealgo == GELI_ALGO_NULL) {
		*out = &c->base;
		return 0;
	}
	name = ossl_sector_name(ealgo, keylen);
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
	c->enc = ossl_keyed_ctx(cipher, kbytes, key, 1, ealgo == GELI_ALGO_AES_XTS);
	c->dec = ossl_keyed_ctx(cipher, kbytes, key, 0, ealgo == GELI_ALGO_AES_XTS);
	EVP_CIPHER_free(cipher);
	if (c->enc == NULL || c->dec == NULL) {
		ossl_sector_cipher_free(&c->base);
		return -EIO;
	}
	*out = &c->base;
	return 0;
}

static int
ossl_sector_crypt(struct gc_sector_cipher *g, const uint8_t *iv,
    const uint8_t *in, uint8_t *out, size_t len, int enc)
{
	struct ossl_sector_cipher *c = (struct ossl_sector_cipher *)g;
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

/* ---- SHA256 with an absorbed prefix ------------------------------------------------ */

struct ossl_sha256_prefixed {
	struct gc_sha256_prefixed base;
	EVP_MD_CTX *pre, *work;
};

static void
ossl_sha256_prefixed_free(struct gc_sha256_prefixed *g)
{
	struct ossl_sha256_prefixed *h = (struct ossl_sha256_prefixed *)g;

	EVP_MD_CTX_free(h->pre);	/* the prefix state holds key bytes */
	EVP_MD_CTX_free(h->work);
	OPENSSL_free(h);
}

static int
ossl_sha256_prefixed_new(const uint8_t prefix[64],
    struct gc_sha256_prefixed **out)
{
	struct ossl_sha256_prefixed *h;

	h = OPENSSL_zalloc(sizeof(*h));
	if (h == NULL)
		return -ENOMEM;
	h->base.ops = self;
	h->pre = EVP_MD_CTX_new();
	h->work = EVP_MD_CTX_new();
	if (h->pre == NULL || h->work == NULL ||
	    EVP_DigestInit_ex(h->pre, EVP_sha256(), NULL) != 1 ||
	    EVP_DigestUpdate(h->pre, prefix, 64) != 1) {
		ossl_sha256_prefixed_free(&h->base);
		return -EIO;
	}
	*out = &h->base;
	return 0;
}

static int
ossl_sha256_prefixed(struct gc_sha256_prefixed *g, const void *data, size_t len,
    uint8_t out[32])
{
	struct ossl_sha256_prefixed *h = (struct ossl_sha256_prefixed *)g;
	unsigned int outlen = 32;

	return EVP_MD_CTX_copy_ex(h->work, h->pre) == 1 &&
	    EVP_DigestUpdate(h->work, data, len) == 1 &&
	    EVP_DigestFinal_ex(h->work, out, &outlen) == 1 ? 0 : -EIO;
}

/* ---- Per-chunk HMAC -------------------------------------------------------------- */

struct ossl_mac {
	struct gc_mac base;
	EVP_MAC_CTX *ctx;
	OSSL_PARAM params[2];
	char digest[16];
};

static void
ossl_mac_free(struct gc_mac *g)
{
	struct ossl_mac *m = (struct ossl_mac *)g;

	EVP_MAC_CTX_free(m->ctx);
	OPENSSL_free(m);
}

static int
ossl_mac_new(unsigned aalgo, struct gc_mac **out)
{
	struct ossl_mac *m;
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
	mac = ossl_hmac_mac();
	if (mac == NULL)
		return -ENOSYS;
	m = OPENSSL_zalloc(sizeof(*m));
	if (m == NULL)
		return -ENOMEM;
	m->base.ops = self;
	snprintf(m->digest, sizeof(m->digest), "%s", d);
	m->params[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST,
	    m->digest, 0);
	m->params[1] = OSSL_PARAM_construct_end();
	m->ctx = EVP_MAC_CTX_new(mac);
	if (m->ctx == NULL || EVP_MAC_CTX_set_params(m->ctx, m->params) != 1) {
		ossl_mac_free(&m->base);
		return -ENOTSUP;
	}
	*out = &m->base;
	return 0;
}

static int
ossl_mac(struct gc_mac *g, const uint8_t *key, size_t keylen, const void *data,
    size_t len, uint8_t *out, size_t outlen)
{
	struct ossl_mac *m = (struct ossl_mac *)g;

	if (EVP_MAC_init(m->ctx, key, keylen, NULL) != 1 ||
	    EVP_MAC_update(m->ctx, data, len) != 1)
		return -EIO;
	return ossl_mac_finish(m->ctx, out, outlen);
}

const struct gc_ops gc_ops_openssl = {
	.name = "openssl",
	.init = ossl_init,
	.version = ossl_version,
	.hwfeatures = ossl_hwfeatures,
	.random = ossl_random,
	.md5 = ossl_md5,
	.sha256 = ossl_sha256,
	.hmac_sha512_new = ossl_hmac_sha512_new,
	.hmac_update = ossl_hmac_update,
	.hmac_final = ossl_hmac_final,
	.hmac_free = ossl_hmac_free,
	.pbkdf2_sha512 = ossl_pbkdf2_sha512,
	.cbc = ossl_cbc,
	.available = ossl_available,
	.sector_cipher_new = ossl_sector_cipher_new,
	.sector_crypt = ossl_sector_crypt,
	.sector_cipher_free = ossl_sector_cipher_free,
	.sha256_prefixed_new = ossl_sha256_prefixed_new,
	.sha256_prefixed = ossl_sha256_prefixed,
	.sha256_prefixed_free = ossl_sha256_prefixed_free,
	.mac_new = ossl_mac_new,
	.mac = ossl_mac,
	.mac_free = ossl_mac_free,
};
