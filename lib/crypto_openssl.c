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
ossl_gmac_aes256(const uint8_t key[32], const uint8_t iv[12], const void *a,
    size_t alen, const void *b, size_t blen, uint8_t tag[16])
{
	static EVP_MAC *gmac;
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	OSSL_PARAM params[3];
	EVP_MAC_CTX *ctx;
	size_t len = 0;
	int ok;

	pthread_mutex_lock(&lock);
	if (gmac == NULL)
		gmac = EVP_MAC_fetch(NULL, "GMAC", NULL);
	pthread_mutex_unlock(&lock);
	if (gmac == NULL || (ctx = EVP_MAC_CTX_new(gmac)) == NULL)
		return -ENOSYS;
	params[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_CIPHER,
	    (char *)"AES-256-GCM", 0);
	params[1] = OSSL_PARAM_construct_octet_string(OSSL_MAC_PARAM_IV,
	    (void *)iv, 12);
	params[2] = OSSL_PARAM_construct_end();
	ok = EVP_MAC_init(ctx, key, 32, params) == 1 &&
	    (alen == 0 || EVP_MAC_update(ctx, a, alen) == 1) &&
	    (blen == 0 || EVP_MAC_update(ctx, b, blen) == 1) &&
	    EVP_MAC_final(ctx, tag, &len, 16) == 1 && len == 16;
	EVP_MAC_CTX_free(ctx);	/* OpenSSL cleanses the key state */
	return ok ? 0 : -EIO;
}

static int
ossl_pbkdf2_sha512(const void *pass, size_t passlen, const void *salt,
    size_t saltlen, uint32_t iter, void *out, size_t outlen)
{
	return PKCS5_PBKDF2_HMAC(pass, (int)passlen, salt, (int)saltlen,
	    (int)iter, EVP_sha512(), (int)outlen, out) == 1 ? 0 : -EIO;
}

/* ---- Generic names to OpenSSL's ------------------------------------------------- */

/*
 * OpenSSL's cipher for a generic one in mode with keys of kbytes bytes each
 * (XTS has two), or NULL: the one place generic names become OpenSSL's.
 */
static const char *
ossl_cipher_name(enum gc_cipher cipher, enum gc_mode mode, size_t kbytes)
{
	static const char *const aes[2][3] = {
		{ "AES-128-CBC", "AES-192-CBC", "AES-256-CBC" },
		{ "AES-128-XTS", NULL, "AES-256-XTS" },
	};
	static const char *const camellia[3] = { "CAMELLIA-128-CBC",
	    "CAMELLIA-192-CBC", "CAMELLIA-256-CBC" };
	bool xts = mode == GC_XTS;
	int i = kbytes == 16 ? 0 : kbytes == 24 ? 1 : kbytes == 32 ? 2 : -1;

	switch (cipher) {
	case GC_AES:
		return i >= 0 ? aes[xts][i] : NULL;
	case GC_CAMELLIA:
		return i >= 0 && !xts ? camellia[i] : NULL;
	case GC_BLOWFISH:	/* the legacy provider's */
		return kbytes >= 4 && kbytes <= 56 && !xts ? "BF-CBC" : NULL;
	case GC_3DES:		/* the legacy provider's */
		return kbytes == 24 && !xts ? "DES-EDE3-CBC" : NULL;
	case GC_NONE:	/* crypto.c's own: never asked for */
		break;
	}
	return NULL;
}

/* OpenSSL's digest for a generic hash, or NULL. */
static const char *
ossl_md_name(enum gc_hash hash)
{
	switch (hash) {
	case GC_MD5:	return "MD5";
	case GC_SHA1:	return "SHA1";
	case GC_RMD160:	return "RIPEMD160";	/* the legacy provider's */
	case GC_SHA256:	return "SHA256";
	case GC_SHA384:	return "SHA384";
	case GC_SHA512:	return "SHA512";
	}
	return NULL;
}

static bool
ossl_cipher_available(enum gc_cipher cipher, enum gc_mode mode,
    unsigned keybits)
{
	const char *name = keybits % 8 == 0 ?
	    ossl_cipher_name(cipher, mode, keybits / 8) : NULL;
	EVP_CIPHER *c;

	if (name == NULL)
		return false;
	c = EVP_CIPHER_fetch(NULL, name, NULL);
	EVP_CIPHER_free(c);
	return c != NULL;
}

static bool
ossl_hash_available(enum gc_hash hash)
{
	const char *name = ossl_md_name(hash);
	EVP_MD *md;

	if (name == NULL)
		return false;
	md = EVP_MD_fetch(NULL, name, NULL);
	EVP_MD_free(md);
	return md != NULL;
}

/* ---- Keyed ciphers ------------------------------------------------------------- */

/* A context for each direction, keyed once; a unit only changes the IV. */
struct ossl_cipher {
	struct gc_cipher_ctx base;
	EVP_CIPHER_CTX *enc, *dec;
};

static EVP_CIPHER_CTX *
ossl_keyed_ctx(EVP_CIPHER *cipher, size_t keybytes, const uint8_t *key,
    int enc, bool xts)
{
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();

	if (ctx == NULL)
		return NULL;
	/* XTS has no padding; setting it would cost a parameter round trip
	 * on every IV change. */
	if (EVP_CipherInit_ex2(ctx, cipher, NULL, NULL, enc, NULL) != 1 ||
	    EVP_CIPHER_CTX_set_key_length(ctx, (int)keybytes) != 1 ||
	    (!xts && EVP_CIPHER_CTX_set_padding(ctx, 0) != 1) ||
	    EVP_CipherInit_ex2(ctx, NULL, key, NULL, enc, NULL) != 1) {
		EVP_CIPHER_CTX_free(ctx);
		return NULL;
	}
	return ctx;
}

static void
ossl_cipher_free(struct gc_cipher_ctx *g)
{
	struct ossl_cipher *c = (struct ossl_cipher *)g;

	EVP_CIPHER_CTX_free(c->enc);	/* cleanses the key schedule */
	EVP_CIPHER_CTX_free(c->dec);
	OPENSSL_free(c);
}

static int
ossl_cipher_new(enum gc_cipher cipher, enum gc_mode mode, const uint8_t *key,
    size_t keybytes, struct gc_cipher_ctx **out)
{
	bool xts = mode == GC_XTS;
	const char *name;
	struct ossl_cipher *c;
	EVP_CIPHER *evp;

	/* XTS: two keys of the cipher's length, data key || tweak key. */
	name = xts && keybytes % 2 != 0 ? NULL :
	    ossl_cipher_name(cipher, mode, xts ? keybytes / 2 : keybytes);
	if (name == NULL)
		return -EINVAL;
	evp = EVP_CIPHER_fetch(NULL, name, NULL);
	if (evp == NULL)
		return -ENOTSUP;
	c = OPENSSL_zalloc(sizeof(*c));
	if (c == NULL) {
		EVP_CIPHER_free(evp);
		return -ENOMEM;
	}
	c->base.ops = self;
	c->enc = ossl_keyed_ctx(evp, keybytes, key, 1, xts);
	c->dec = ossl_keyed_ctx(evp, keybytes, key, 0, xts);
	EVP_CIPHER_free(evp);
	if (c->enc == NULL || c->dec == NULL) {
		ossl_cipher_free(&c->base);
		return -EIO;
	}
	*out = &c->base;
	return 0;
}

static int
ossl_crypt(struct gc_cipher_ctx *g, const uint8_t *iv, const uint8_t *in,
    uint8_t *out, size_t len, int enc)
{
	struct ossl_cipher *c = (struct ossl_cipher *)g;
	EVP_CIPHER_CTX *ctx = enc ? c->enc : c->dec;
	int outl;

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
ossl_mac_new(enum gc_hash hash, struct gc_mac **out)
{
	const char *d = ossl_md_name(hash);
	struct ossl_mac *m;
	EVP_MAC *mac;

	if (d == NULL)
		return -EINVAL;
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
	.gmac_aes256 = ossl_gmac_aes256,
	.hmac_update = ossl_hmac_update,
	.hmac_final = ossl_hmac_final,
	.hmac_free = ossl_hmac_free,
	.pbkdf2_sha512 = ossl_pbkdf2_sha512,
	.cipher_available = ossl_cipher_available,
	.hash_available = ossl_hash_available,
	.cipher_new = ossl_cipher_new,
	.crypt = ossl_crypt,
	.crypt_batch = NULL,	/* OpenSSL has no call for many units: crypto.c loops */
	.cipher_free = ossl_cipher_free,
	.sha256_prefixed_new = ossl_sha256_prefixed_new,
	.sha256_prefixed = ossl_sha256_prefixed,
	.sha256_prefixed_free = ossl_sha256_prefixed_free,
	.mac_new = ossl_mac_new,
	.mac = ossl_mac,
	.mac_free = ossl_mac_free,
};
