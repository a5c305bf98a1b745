/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The crypto backends against each other (differential): for every cipher x
 * key length x sector size x HMAC, libgcrypt and OpenSSL write the same
 * ciphertext and tags from the same plaintext, and what one writes the
 * other reads; metadata, key slots and user keys made with one open with
 * the other.  Both backends live in one process: a volume keeps the backend
 * selected when it was opened.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tap.h"

#include "crypto.h"
#include "geli.h"
#include "ciphers.h"

static const unsigned aalgos[] = { 0, GELI_ALGO_HMAC_MD5, GELI_ALGO_HMAC_SHA1,
	GELI_ALGO_HMAC_RMD160, GELI_ALGO_HMAC_SHA256, GELI_ALGO_HMAC_SHA384,
	GELI_ALGO_HMAC_SHA512 };
static const uint32_t sizes[] = { 512, 1024, 2048, 4096, 8192 };
#define NSEC 3		/* GELI sectors per provider */

#define A "gcrypt"
#define B "openssl"

/* A provider in memory of len bytes: the memfd stays open in *fd. */
static struct geli_provider *
mem_provider(size_t len, int *fd)
{
	struct geli_provider *p;
	char path[64];

	*fd = memfd_create("geli-diff", MFD_CLOEXEC);
	if (*fd < 0 || ftruncate(*fd, (off_t)len) != 0)
		return NULL;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", *fd);
	return geli_provider_open(path, true, &p) == 0 ? p : NULL;
}

/* Open a volume on fd's memfd with backend `be`. */
static struct geli_volume *
open_with(const char *be, int fd, const struct geli_metadata *md,
    const uint8_t *mkey)
{
	struct geli_provider *p;
	struct geli_volume *v;
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (geli_crypto_select(be) != 0 || geli_provider_open(path, true, &p) != 0)
		return NULL;
	if (geli_volume_open(p, md, mkey, 0, 1, &v) != 0) {
		geli_provider_close(p);
		return NULL;
	}
	return v;
}

/* Write plain (whole sectors, then an unaligned piece) with backend be. */
static bool
write_with(const char *be, int fd, const struct geli_metadata *md,
    const uint8_t *mkey, uint8_t *plain, size_t len)
{
	struct geli_volume *v = open_with(be, fd, md, mkey);
	size_t off = md->sectorsize / 2 + 3, n = md->sectorsize + 100;
	bool ok;

	if (v == NULL)
		return false;
	ok = geli_volume_size(v) == len &&
	    geli_volume_write(v, plain, len, 0) == (ssize_t)len;
	/* A read-modify-write across a sector boundary. */
	memset(plain + off, 0xa5, n);
	ok = ok && geli_volume_write(v, plain + off, n, off) == (ssize_t)n;
	geli_volume_close(v);
	return ok;
}

static bool
reads_back(const char *be, int fd, const struct geli_metadata *md,
    const uint8_t *mkey, const uint8_t *plain, size_t len)
{
	struct geli_volume *v = open_with(be, fd, md, mkey);
	uint8_t *got = malloc(len);
	bool ok;

	ok = v != NULL && got != NULL &&
	    geli_volume_read(v, got, len, 0) == (ssize_t)len &&
	    memcmp(got, plain, len) == 0;
	geli_volume_close(v);
	free(got);
	return ok;
}

static bool
same_bytes(int fa, int fb, size_t len)
{
	uint8_t *a = malloc(len), *b = malloc(len);
	bool ok = a != NULL && b != NULL &&
	    pread(fa, a, len, 0) == (ssize_t)len &&
	    pread(fb, b, len, 0) == (ssize_t)len && memcmp(a, b, len) == 0;

	free(a);
	free(b);
	return ok;
}

static void
test_volume(unsigned ealgo, unsigned keylen, uint32_t S, unsigned aalgo)
{
	struct geli_metadata md;
	uint8_t mkey[GELI_MKEY_DATALEN], *plain, *pa, *pb;
	uint32_t dps, lsec;
	size_t len = (size_t)NSEC * S, plen;
	int fa = -1, fb = -1;
	bool same = false, ab = false, ba = false;
	struct geli_provider *p;

	memset(&md, 0, sizeof(md));
	memcpy(md.magic, GELI_MAGIC, sizeof(GELI_MAGIC));
	md.version = GELI_VERSION;
	md.ealgo = (uint16_t)ealgo;
	md.keylen = (uint16_t)keylen;
	md.sectorsize = S;
	if (aalgo != 0) {
		md.flags = GELI_FLAG_AUTH;
		md.aalgo = (uint16_t)aalgo;
	}
	/* Physical bytes: NSEC GELI sectors (with their tags) + metadata. */
	plen = len + 512;
	if (aalgo != 0 && geli_auth_layout(&md, 512, &dps, &lsec) == 0)
		plen = (size_t)NSEC * lsec * 512 + 512;
	md.provsize = plen;
	geli_random(mkey, sizeof(mkey));
	plain = malloc(len);
	pa = malloc(len);
	pb = malloc(len);
	geli_random(plain, len);
	memcpy(pa, plain, len);
	memcpy(pb, plain, len);
	/* The same plaintext through each backend, each on its provider. */
	if ((p = mem_provider(plen, &fa)) != NULL)
		geli_provider_close(p);
	if ((p = mem_provider(plen, &fb)) != NULL)
		geli_provider_close(p);
	if (fa >= 0 && fb >= 0 && write_with(A, fa, &md, mkey, pa, len) &&
	    write_with(B, fb, &md, mkey, pb, len)) {
		same = memcmp(pa, pb, len) == 0 && same_bytes(fa, fb, plen);
		ab = reads_back(B, fa, &md, mkey, pa, len);
		ba = reads_back(A, fb, &md, mkey, pb, len);
	}
	tap_ok(same && ab && ba, "%s %u S=%u %s: the same ciphertext%s from both; "
	    A " -> " B "%s, " B " -> " A "%s", geli_algo_name(ealgo), keylen, S,
	    aalgo ? geli_algo_name(aalgo) : "no HMAC", aalgo ? " and tags" : "",
	    ab ? "" : " FAILED", ba ? "" : " FAILED");
	geli_wipe(mkey, sizeof(mkey));
	free(plain);
	free(pa);
	free(pb);
	if (fa >= 0)
		close(fa);
	if (fb >= 0)
		close(fb);
}

/* Slots made with one backend open with the other, both ways. */
static void
test_slots(unsigned ealgo, unsigned keylen)
{
	struct geli_metadata md;
	uint8_t ukey[GELI_USERKEYLEN], mk[GELI_MKEY_DATALEN], out[GELI_MKEY_DATALEN];
	uint8_t sa[GELI_MKEYLEN], sb[GELI_MKEYLEN];
	bool ok = true;
	int used;

	memset(&md, 0, sizeof(md));
	md.version = GELI_VERSION;
	md.ealgo = (uint16_t)ealgo;
	md.keylen = (uint16_t)keylen;
	md.keys = 0x01;
	geli_random(ukey, sizeof(ukey));
	geli_random(mk, sizeof(mk));
	ok = geli_crypto_select(A) == 0 && geli_mkey_encrypt(ealgo, keylen, ukey, mk, sa) == 0 &&
	    geli_crypto_select(B) == 0 && geli_mkey_encrypt(ealgo, keylen, ukey, mk, sb) == 0 &&
	    memcmp(sa, sb, sizeof(sa)) == 0;
	memcpy(md.mkeys, sa, sizeof(sa));
	ok = ok && geli_crypto_select(B) == 0 && geli_mkey_decrypt(&md, ukey, -1, out, &used) == 0 &&
	    memcmp(out, mk, sizeof(mk)) == 0;
	ok = ok && geli_crypto_select(A) == 0 && geli_mkey_decrypt(&md, ukey, -1, out, &used) == 0 &&
	    memcmp(out, mk, sizeof(mk)) == 0;
	tap_ok(ok, "%s %u: the same key slot from both, each opens the other's",
	    geli_algo_name(ealgo), keylen);
}

/* A user key from a keyfile and a passphrase, and the metadata's MD5. */
static void
test_ukey_metadata(void)
{
	static const char pass[] = "openwall", kf[] = "keyfile bytes";
	uint8_t ua[GELI_USERKEYLEN], ub[GELI_USERKEYLEN], buf[GELI_MD_SIZE];
	struct geli_metadata md, back;
	struct geli_ukey_ctx *ctx;

	memset(&md, 0, sizeof(md));
	memcpy(md.magic, GELI_MAGIC, sizeof(GELI_MAGIC));
	md.version = GELI_VERSION;
	md.ealgo = GELI_ALGO_AES_XTS;
	md.keylen = 128;
	md.sectorsize = 4096;
	md.iterations = 2000;
	md.keys = 1;
	geli_random(md.salt, sizeof(md.salt));
	for (int i = 0; i < 2; i++) {
		uint8_t *u = i == 0 ? ua : ub;
		geli_crypto_select(i == 0 ? A : B);
		geli_ukey_new(&ctx);
		geli_ukey_update(ctx, kf, sizeof(kf) - 1);
		geli_ukey_final(ctx, &md, pass, sizeof(pass) - 1, u);
		geli_ukey_free(ctx);
	}
	tap_ok(memcmp(ua, ub, sizeof(ua)) == 0,
	    "keyfile + PBKDF2 passphrase: the same user key from both");
	geli_crypto_select(A);
	int n = geli_metadata_encode(&md, buf);
	geli_crypto_select(B);
	tap_ok(n > 0 && geli_metadata_decode(buf, sizeof(buf), &back) == 0 &&
	    memcmp(back.hash, md.hash, sizeof(md.hash)) == 0,
	    "metadata encoded with " A " decodes with " B " (MD5)");
	buf[100] ^= 1;
	tap_ok(geli_metadata_decode(buf, sizeof(buf), &back) == -EBADMSG,
	    "... and a changed byte is caught by " B);
}

int
main(void)
{
	for (size_t c = 0; c < sizeof(ciphers) / sizeof(ciphers[0]); c++) {
		test_slots(ciphers[c].ealgo, ciphers[c].keylen);
		for (size_t z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++)
			for (size_t a = 0; a < sizeof(aalgos) / sizeof(aalgos[0]); a++)
				test_volume(ciphers[c].ealgo, ciphers[c].keylen, sizes[z],
				    aalgos[a]);
	}
	test_ukey_metadata();
	return tap_done();
}
