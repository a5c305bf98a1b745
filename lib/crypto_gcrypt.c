/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The crypto backend on libgcrypt >= 1.10 (GELI_CRYPTO=gcrypt, the default;
 * see crypto_backend.h).  libgcrypt has what GELI's sectors want: a cheap
 * IV change (gcry_cipher_setiv) on a handle keyed once, AES-NI/VAES XTS and
 * CBC decryption several blocks at a time, AES-NI Camellia and assembly
 * Blowfish and 3DES (docs/benchmarks.md).
 *
 * libgcrypt's own secure memory is turned off, as cryptsetup does: the
 * caller locks the process (geli_protect_process) and keeps key material in
 * its own locked pages; the library's pool would be one more mlock limit
 * to run into.  That is done only when nobody has initialised libgcrypt
 * before us (a host program may have its own settings).
 */
#include "crypto_backend.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gcrypt.h>

#include "geli.h"

#define GCR_NEED_VERSION "1.10.0"

static const struct gc_ops *const self = &gc_ops_gcrypt;

static pthread_mutex_t gcr_lock = PTHREAD_MUTEX_INITIALIZER;
static bool gcr_started;
static int gcr_error;
static char gcr_version_str[64];
static char gcr_hwf[512];

static int
gcr_errno(gcry_error_t e)
{
	gcry_err_code_t code = gcry_err_code(e);

	if (code == GPG_ERR_NO_ERROR)
		return 0;
	if (code == GPG_ERR_ENOMEM)
		return -ENOMEM;
	if (code == GPG_ERR_INV_KEYLEN || code == GPG_ERR_INV_LENGTH ||
	    code == GPG_ERR_INV_ARG)
		return -EINVAL;
	if (code == GPG_ERR_CIPHER_ALGO || code == GPG_ERR_DIGEST_ALGO ||
	    code == GPG_ERR_NOT_SUPPORTED)
		return -ENOTSUP;
	return -EIO;
}

/* libgcrypt tells its hardware features only in its configuration print:
 * the "hwflist:" line, without the trailing colon. */
static void
gcr_read_hwf(void)
{
	char *text = NULL, *line, *end;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (f == NULL)
		return;
	/* A failed print leaves no "hwflist:" line: no features named. */
	(void)gcry_control(GCRYCTL_PRINT_CONFIG, f);
	/* text is complete only once fclose succeeds. */
	if (fclose(f) != 0) {
		free(text);
		return;
	}
	line = text != NULL ? strstr(text, "hwflist:") : NULL;
	if (line != NULL) {
		line += strlen("hwflist:");
		end = line + strcspn(line, "\n");
		if (end > line && end[-1] == ':')
			end--;
		snprintf(gcr_hwf, sizeof(gcr_hwf), "%.*s", (int)(end - line), line);
	}
	free(text);
}

/*
 * Read when asked (geli bench, the attach log), not at start: printing
 * libgcrypt's configuration starts its jitter entropy source, some 10 ms
 * of CPU that every geli command paid.
 */
static pthread_once_t gcr_hwf_once = PTHREAD_ONCE_INIT;

static const char *
gcr_hwfeatures(void)
{
	pthread_once(&gcr_hwf_once, gcr_read_hwf);
	return gcr_hwf;
}

static int
gcr_init(bool nohw)
{
	/* libgcrypt 1.10's names (gcry_control(GCRYCTL_PRINT_CONFIG) lists
	 * them); the VAES paths also need AES-NI, masked for good measure. */
	static const char *const hw[] = { "intel-aesni", "intel-vaes-vpclmul",
	    "intel-pclmul" };

	pthread_mutex_lock(&gcr_lock);
	if (!gcr_started) {
		gcr_started = true;
		if (!gcry_control(GCRYCTL_INITIALIZATION_FINISHED_P)) {
			/*
			 * Fails only for a name this libgcrypt does not know.
			 * What it then uses is read back below (gcr_read_hwf)
			 * and shown by geli bench, so a mask that did not take
			 * is seen there; refusing to start over a renamed
			 * feature would be worse.
			 */
			for (size_t i = 0; nohw && i < sizeof(hw) / sizeof(hw[0]); i++)
				(void)gcry_control(GCRYCTL_DISABLE_HWF, hw[i], NULL);
			/* Our secrets live in our own locked pages, not in
			 * libgcrypt's secure memory. */
			if (gcry_check_version(GCR_NEED_VERSION) == NULL ||
			    gcry_control(GCRYCTL_DISABLE_SECMEM, 0) != 0 ||
			    gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0) != 0)
				gcr_error = -ENOSYS;
		} else if (gcry_check_version(GCR_NEED_VERSION) == NULL) {
			gcr_error = -ENOSYS;
		}
		snprintf(gcr_version_str, sizeof(gcr_version_str),
		    "libgcrypt %s", gcry_check_version(NULL));
	}
	pthread_mutex_unlock(&gcr_lock);
	return gcr_error;
}

static const char *
gcr_version(void)
{
	return gcr_version_str;
}

static int
gcr_random(void *buf, size_t len, bool key)
{
	/* Very strong costs ~4 ms a call here: for keys only. */
	gcry_randomize(buf, len, key ? GCRY_VERY_STRONG_RANDOM :
	    GCRY_STRONG_RANDOM);
	return 0;
}

static int
gcr_md5(const void *msg, size_t len, uint8_t out[16])
{
	gcry_md_hash_buffer(GCRY_MD_MD5, out, msg, len);
	return 0;
}

/* SHA256(a || b), on the stack: libgcrypt's hash_buffers allocates nothing. */
static int
gcr_sha256(const void *a, size_t alen, const void *b, size_t blen,
    uint8_t out[32])
{
	gcry_buffer_t iov[2];

	memset(iov, 0, sizeof(iov));
	iov[0].data = (void *)(uintptr_t)a;
	iov[0].len = alen;
	iov[1].data = (void *)(uintptr_t)b;
	iov[1].len = blen;
	return gcr_errno(gcry_md_hash_buffers(GCRY_MD_SHA256, 0, out, iov,
	    blen > 0 ? 2 : 1));
}

/* ---- HMAC ------------------------------------------------------------------ */

/* libgcrypt's hash for a generic one, or 0. */
static int
gcr_md_algo(enum gc_hash hash)
{
	switch (hash) {
	case GC_MD5:	return GCRY_MD_MD5;
	case GC_SHA1:	return GCRY_MD_SHA1;
	case GC_RMD160:	return GCRY_MD_RMD160;
	case GC_SHA256:	return GCRY_MD_SHA256;
	case GC_SHA384:	return GCRY_MD_SHA384;
	case GC_SHA512:	return GCRY_MD_SHA512;
	}
	return 0;
}

/* Copy outlen bytes of the finished digest of md. */
static int
gcr_md_result(gcry_md_hd_t md, int algo, uint8_t *out, size_t outlen)
{
	const unsigned char *p = gcry_md_read(md, algo);

	if (p == NULL || outlen > gcry_md_get_algo_dlen(algo))
		return -EIO;
	memcpy(out, p, outlen);
	return 0;
}

struct gcr_hmac {
	struct gc_hmac base;
	gcry_md_hd_t md;
};

static void
gcr_hmac_free(struct gc_hmac *g)
{
	struct gcr_hmac *h = (struct gcr_hmac *)g;

	gcry_md_close(h->md);	/* libgcrypt wipes the key pads */
	free(h);
}

static int
gcr_hmac_sha512_new(const void *key, size_t keylen, struct gc_hmac **out)
{
	struct gcr_hmac *h;
	gcry_error_t e;

	h = calloc(1, sizeof(*h));
	if (h == NULL)
		return -ENOMEM;
	h->base.ops = self;
	e = gcry_md_open(&h->md, GCRY_MD_SHA512, GCRY_MD_FLAG_HMAC);
	if (e != 0) {
		free(h);
		return gcr_errno(e);
	}
	/* A zero-length key is a valid HMAC key (RFC 2104). */
	e = gcry_md_setkey(h->md, keylen > 0 ? key : "", keylen);
	if (e != 0) {
		gcr_hmac_free(&h->base);
		return gcr_errno(e);
	}
	*out = &h->base;
	return 0;
}

static int
gcr_hmac_update(struct gc_hmac *g, const void *data, size_t len)
{
	gcry_md_write(((struct gcr_hmac *)g)->md, data, len);
	return 0;
}

static int
gcr_hmac_final(struct gc_hmac *g, uint8_t *out, size_t outlen)
{
	return gcr_md_result(((struct gcr_hmac *)g)->md, GCRY_MD_SHA512, out,
	    outlen);
}

static int
gcr_gmac_aes256(const uint8_t key[32], const uint8_t iv[12], const void *a,
    size_t alen, const void *b, size_t blen, uint8_t tag[16])
{
	gcry_mac_hd_t h;
	size_t len = 16;
	gcry_error_t e;

	e = gcry_mac_open(&h, GCRY_MAC_GMAC_AES, GCRY_MAC_FLAG_SECURE, NULL);
	if (e != 0)
		return gcr_errno(e);
	e = gcry_mac_setkey(h, key, 32);
	if (e == 0)
		e = gcry_mac_setiv(h, iv, 12);
	if (e == 0 && alen > 0)
		e = gcry_mac_write(h, a, alen);
	if (e == 0 && blen > 0)
		e = gcry_mac_write(h, b, blen);
	if (e == 0)
		e = gcry_mac_read(h, tag, &len);
	gcry_mac_close(h);	/* libgcrypt wipes the key schedule */
	return e == 0 && len == 16 ? 0 : gcr_errno(e ? e : GPG_ERR_INV_LENGTH);
}

static int
gcr_pbkdf2_sha512(const void *pass, size_t passlen, const void *salt,
    size_t saltlen, uint32_t iter, void *out, size_t outlen)
{
	/* libgcrypt wants a passphrase pointer even for an empty one. */
	return gcr_errno(gcry_kdf_derive(passlen > 0 ? pass : "", passlen,
	    GCRY_KDF_PBKDF2, GCRY_MD_SHA512, salt, saltlen, iter, outlen, out));
}

/* ---- Block ciphers ----------------------------------------------------------- */

/*
 * libgcrypt's cipher for a generic one with keys of kbytes bytes each (XTS
 * has two), or 0: the one place generic names become libgcrypt's.
 */
static int
gcr_cipher_algo(enum gc_cipher cipher, size_t kbytes)
{
	switch (cipher) {
	case GC_AES:
		return kbytes == 16 ? GCRY_CIPHER_AES128 :
		    kbytes == 24 ? GCRY_CIPHER_AES192 :
		    kbytes == 32 ? GCRY_CIPHER_AES256 : 0;
	case GC_CAMELLIA:
		return kbytes == 16 ? GCRY_CIPHER_CAMELLIA128 :
		    kbytes == 24 ? GCRY_CIPHER_CAMELLIA192 :
		    kbytes == 32 ? GCRY_CIPHER_CAMELLIA256 : 0;
	case GC_BLOWFISH:
		return kbytes >= 4 && kbytes <= 56 ? GCRY_CIPHER_BLOWFISH : 0;
	case GC_3DES:
		return kbytes == 24 ? GCRY_CIPHER_3DES : 0;
	case GC_NONE:	/* crypto.c's own: never asked for */
		break;
	}
	return 0;
}

static int
gcr_mode(enum gc_mode mode)
{
	return mode == GC_XTS ? GCRY_CIPHER_MODE_XTS : GCRY_CIPHER_MODE_CBC;
}

/* A handle of algo in mode, keyed with klen bytes. */
static int
gcr_keyed(int algo, int mode, const uint8_t *key, size_t klen,
    gcry_cipher_hd_t *out)
{
	gcry_cipher_hd_t h;
	gcry_error_t e;

	e = gcry_cipher_open(&h, algo, mode, 0);
	if (e != 0)
		return gcr_errno(e);
	/* FreeBSD keys 3DES and Blowfish without a weak-key check; so do we.
	 * libgcrypt then still reports GPG_ERR_WEAK_KEY, with the key in
	 * place; without this switch a weak key would not be in place, so its
	 * failure is one.  (Blowfish: a key whose S-boxes repeat an entry,
	 * about one random key in 30,000, each range key of a volume.) */
	bool weak_ok = algo == GCRY_CIPHER_3DES || algo == GCRY_CIPHER_BLOWFISH;
	e = 0;
	if (weak_ok)
		e = gcry_cipher_ctl(h, GCRYCTL_SET_ALLOW_WEAK_KEY, NULL, 1);
	if (e != 0) {
		gcry_cipher_close(h);
		return gcr_errno(e);
	}
	e = gcry_cipher_setkey(h, key, klen);
	if (e != 0 && !(weak_ok && gcry_err_code(e) == GPG_ERR_WEAK_KEY)) {
		gcry_cipher_close(h);
		return gcr_errno(e);
	}
	*out = h;
	return 0;
}

static bool
gcr_cipher_available(enum gc_cipher cipher, enum gc_mode mode,
    unsigned keybits)
{
	int algo = gcr_cipher_algo(cipher, keybits / 8);
	gcry_cipher_hd_t h;

	if (algo == 0 || keybits % 8 != 0 ||
	    gcry_cipher_algo_info(algo, GCRYCTL_TEST_ALGO, NULL, NULL) != 0)
		return false;
	/* Whether the mode goes with the cipher: an unkeyed handle says. */
	if (gcry_cipher_open(&h, algo, gcr_mode(mode), 0) != 0)
		return false;
	gcry_cipher_close(h);
	return true;
}

static bool
gcr_hash_available(enum gc_hash hash)
{
	int algo = gcr_md_algo(hash);

	return algo != 0 && gcry_md_test_algo(algo) == 0;
}

/* ---- Keyed ciphers ------------------------------------------------------------- */

struct gcr_cipher {
	struct gc_cipher_ctx base;
	gcry_cipher_hd_t h;
};

static void
gcr_cipher_free(struct gc_cipher_ctx *g)
{
	struct gcr_cipher *c = (struct gcr_cipher *)g;

	gcry_cipher_close(c->h);	/* wipes the key schedule */
	free(c);
}

static int
gcr_cipher_new(enum gc_cipher cipher, enum gc_mode mode, const uint8_t *key,
    size_t keybytes, struct gc_cipher_ctx **out)
{
	/* XTS: two keys of the cipher's length, data key || tweak key. */
	size_t kbytes = mode == GC_XTS ? keybytes / 2 : keybytes;
	int algo = gcr_cipher_algo(cipher, kbytes), error;
	struct gcr_cipher *c;

	if (algo == 0 || (mode == GC_XTS && keybytes % 2 != 0))
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return -ENOMEM;
	c->base.ops = self;
	error = gcr_keyed(algo, gcr_mode(mode), key, keybytes, &c->h);
	if (error != 0) {
		free(c);
		return error;
	}
	*out = &c->base;
	return 0;
}

/* One data unit: the IV, then len bytes, in place when in == out
 * (libgcrypt wants a NULL input for that). */
static int
gcr_crypt(struct gc_cipher_ctx *g, const uint8_t *iv, const uint8_t *in,
    uint8_t *out, size_t len, int enc)
{
	struct gcr_cipher *c = (struct gcr_cipher *)g;
	const void *src = in == out ? NULL : in;
	size_t srclen = in == out ? 0 : len;
	gcry_error_t e;

	e = gcry_cipher_setiv(c->h, iv, g->ivlen);
	if (e == 0)
		e = enc ? gcry_cipher_encrypt(c->h, out, len, src, srclen) :
		    gcry_cipher_decrypt(c->h, out, len, src, srclen);
	return gcr_errno(e);
}

/* ---- SHA256 with a prefix ------------------------------------------------------------ */

/*
 * libgcrypt cannot keep a hash state to start from (gcry_md_copy allocates
 * a handle, which costs more than hashing the 64-byte prefix again), so the
 * prefix is kept and hashed with the data in one call on the stack.
 */
struct gcr_sha256_prefixed {
	struct gc_sha256_prefixed base;
	uint8_t prefix[64];	/* key bytes: wiped on free */
};

static void
gcr_sha256_prefixed_free(struct gc_sha256_prefixed *g)
{
	geli_wipe(g, sizeof(struct gcr_sha256_prefixed));
	free(g);
}

static int
gcr_sha256_prefixed_new(const uint8_t prefix[64],
    struct gc_sha256_prefixed **out)
{
	struct gcr_sha256_prefixed *h;

	h = calloc(1, sizeof(*h));
	if (h == NULL)
		return -ENOMEM;
	h->base.ops = self;
	memcpy(h->prefix, prefix, sizeof(h->prefix));
	*out = &h->base;
	return 0;
}

static int
gcr_sha256_prefixed(struct gc_sha256_prefixed *g, const void *data, size_t len,
    uint8_t out[32])
{
	struct gcr_sha256_prefixed *h = (struct gcr_sha256_prefixed *)g;

	return gcr_sha256(h->prefix, sizeof(h->prefix), data, len, out);
}

/* ---- Per-chunk HMAC -------------------------------------------------------------- */

/* One HMAC handle, re-keyed per chunk: gcry_md_setkey also resets it. */
struct gcr_mac {
	struct gc_mac base;
	gcry_md_hd_t md;
	int algo;
};

static void
gcr_mac_free(struct gc_mac *g)
{
	struct gcr_mac *m = (struct gcr_mac *)g;

	gcry_md_close(m->md);
	free(m);
}

static int
gcr_mac_new(enum gc_hash hash, struct gc_mac **out)
{
	struct gcr_mac *m;
	gcry_error_t e;

	if (gcr_md_algo(hash) == 0)
		return -EINVAL;
	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return -ENOMEM;
	m->base.ops = self;
	m->algo = gcr_md_algo(hash);
	e = gcry_md_open(&m->md, m->algo, GCRY_MD_FLAG_HMAC);
	if (e != 0) {
		free(m);
		return gcr_errno(e);
	}
	*out = &m->base;
	return 0;
}

static int
gcr_mac(struct gc_mac *g, const uint8_t *key, size_t keylen, const void *data,
    size_t len, uint8_t *out, size_t outlen)
{
	struct gcr_mac *m = (struct gcr_mac *)g;
	gcry_error_t e;

	e = gcry_md_setkey(m->md, key, keylen);
	if (e != 0)
		return gcr_errno(e);
	gcry_md_write(m->md, data, len);
	return gcr_md_result(m->md, m->algo, out, outlen);
}

const struct gc_ops gc_ops_gcrypt = {
	.name = "gcrypt",
	.init = gcr_init,
	.version = gcr_version,
	.hwfeatures = gcr_hwfeatures,
	.random = gcr_random,
	.md5 = gcr_md5,
	.sha256 = gcr_sha256,
	.hmac_sha512_new = gcr_hmac_sha512_new,
	.gmac_aes256 = gcr_gmac_aes256,
	.hmac_update = gcr_hmac_update,
	.hmac_final = gcr_hmac_final,
	.hmac_free = gcr_hmac_free,
	.pbkdf2_sha512 = gcr_pbkdf2_sha512,
	.cipher_available = gcr_cipher_available,
	.hash_available = gcr_hash_available,
	.cipher_new = gcr_cipher_new,
	.crypt = gcr_crypt,
	.crypt_batch = NULL,	/* libgcrypt has no call for many units: crypto.c loops */
	.cipher_free = gcr_cipher_free,
	.sha256_prefixed_new = gcr_sha256_prefixed_new,
	.sha256_prefixed = gcr_sha256_prefixed,
	.sha256_prefixed_free = gcr_sha256_prefixed_free,
	.mac_new = gcr_mac_new,
	.mac = gcr_mac,
	.mac_free = gcr_mac_free,
};
