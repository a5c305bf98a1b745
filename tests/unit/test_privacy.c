/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Runs of sectors through privacy.c (sector_crypt_run, sector_read_stored),
 * against the formulas of docs/format.md §6 worked by hand, one sector at a
 * time, with the seam's single-unit call:
 *
 *   key k = (off >> 20) / S,  RangeKey = HMAC_SHA512(DK, "ekey" || LE64(k))
 *   IV    = LE64(off) || 0^8 (AES-XTS), SHA256(IVK || LE64(off))[0..ivlen)
 *
 * for runs of 1, 7 and 300 sectors (more than one batch), starting at 0 and
 * 3 sectors before a range key changes, in place and out of place, with
 * both backends, each without and with the AES-CBC accelerator (accel.h):
 * its IVs from Nettle's state and as ipsec-mb's jobs, runs decrypted by it
 * and by the backend; holes (all-zero sectors) inside a run read as zeros;
 * and a NULL volume derives no range key.
 */
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tap.h"

#include "algs.h"
#include "crypto.h"
#include "endian.h"
#include "geli.h"
#include "keys.h"
#include "sector.h"

static const struct { unsigned ealgo, keylen; } ciphers[] = {
	{ GELI_ALGO_AES_XTS, 128 }, { GELI_ALGO_AES_XTS, 256 },
	{ GELI_ALGO_AES_CBC, 128 }, { GELI_ALGO_AES_CBC, 192 },
	{ GELI_ALGO_AES_CBC, 256 }, { GELI_ALGO_CAMELLIA_CBC, 192 }, { GELI_ALGO_BLOWFISH_CBC, 448 },
	{ GELI_ALGO_3DES_CBC, 192 }, { GELI_ALGO_NULL, 512 },
};
static const uint32_t sizes[] = { 512, 4096 };
static const size_t counts[] = { 1, 7, 300 };
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define MAXLEN (300 * 4096)

static uint8_t *plain, *want, *got, *inplace;
static uint8_t mkey[GELI_MKEY_DATALEN];

/* Sector at byte offset off, one unit, worked by hand from MK. */
static bool
by_hand(const struct geli_alg *a, unsigned keylen, uint32_t S, uint64_t off,
    const uint8_t *in, uint8_t *out, int enc)
{
	uint8_t msg[12], key[64], iv[32], off8[8];
	struct gc_cipher_ctx *c;
	bool ok;

	memcpy(msg, "ekey", 4);
	le64enc(msg + 4, (off >> 20) / S);
	le64enc(off8, off);
	memset(iv, 0, sizeof(iv));
	if (a->mode == GC_XTS)
		memcpy(iv, off8, 8);
	else if (gc_sha256(mkey, 64, off8, 8, iv) != 0)	/* IVK = MK[0..64) */
		return false;
	if (gc_hmac_sha512(mkey + 64, 64, msg, sizeof(msg), key) != 0 ||
	    gc_cipher_new(NULL, a->cipher, a->mode, key, algs_keybytes(a, keylen),
	    &c) != 0)
		return false;
	ok = gc_crypt(c, iv, in, out, S, enc) == 0;
	gc_cipher_free(c);
	geli_wipe(key, sizeof(key));
	return ok;
}

struct fixture {
	struct geli_metadata md;
	struct sector_geom g;
	struct geli_keys keys;
	struct sector_ctx *c;
};

static bool
fixture_open(struct fixture *f, unsigned ealgo, unsigned keylen, uint32_t S)
{
	memset(f, 0, sizeof(*f));
	f->md.version = GELI_VERSION;
	f->md.ealgo = (uint16_t)ealgo;
	f->md.keylen = (uint16_t)keylen;
	f->md.sectorsize = S;
	if (sector_geom_init(&f->g, gc_current(), &f->md, 512) != 0 ||
	    keys_init(&f->keys, &f->md, mkey, 512, false) != 0)
		return false;
	f->c = sector_ctx_new(&f->g, &f->keys);
	return f->c != NULL;
}

static void
fixture_close(struct fixture *f)
{
	sector_ctx_free(f->c);
	keys_destroy(&f->keys);
}

static void
test_runs(const char *be, unsigned ealgo, unsigned keylen, uint32_t S)
{
	const struct geli_alg *a = algs_cipher(ealgo);
	/* Sector 0, and three sectors before range key 1. */
	const uint64_t starts[] = { 0, ((uint64_t)1 << 20) - 3 };
	struct fixture f;

	if (!fixture_open(&f, ealgo, keylen, S)) {
		tap_ok(0, "[%s] %s %u S=%u: a sector context", be, a->name, keylen, S);
		return;
	}
	for (size_t s = 0; s < NELEM(starts); s++) {
		for (size_t k = 0; k < NELEM(counts); k++) {
			uint64_t off = starts[s] * S;
			size_t n = counts[k], len = n * S;
			bool ok = true, enc, dec;

			geli_random(plain, len);
			for (size_t i = 0; i < n && ok; i++)
				ok = by_hand(a, keylen, S, off + i * S, plain + i * S,
				    want + i * S, 1);
			memcpy(inplace, plain, len);
			enc = ok && sector_crypt_run(f.c, off, n, plain, got, S, 1) == 0 &&
			    memcmp(got, want, len) == 0 &&
			    sector_crypt_run(f.c, off, n, inplace, inplace, S, 1) == 0 &&
			    memcmp(inplace, want, len) == 0;
			dec = sector_crypt_run(f.c, off, n, want, got, S, 0) == 0 &&
			    memcmp(got, plain, len) == 0 &&
			    sector_crypt_run(f.c, off, n, inplace, inplace, S, 0) == 0 &&
			    memcmp(inplace, plain, len) == 0;
			tap_ok(enc && dec, "[%s] %s %u S=%u: a run of %zu from sector %llu "
			    "is the formulas, sector by sector, in place and out", be,
			    a->name, keylen, S, n, (unsigned long long)starts[s]);
		}
	}
	fixture_close(&f);
}

/* Holes: sectors 0, 3, 4, 150 and the last of 300 are all zeros. */
static void
test_holes(const char *be, unsigned ealgo, unsigned keylen, uint32_t S)
{
	static const size_t holes[] = { 0, 3, 4, 150, 299 };
	const struct geli_alg *a = algs_cipher(ealgo);
	const size_t n = 300, len = n * S;
	uint64_t off = (((uint64_t)1 << 20) - 100) * S;
	struct fixture f;
	bool ok;

	if (!fixture_open(&f, ealgo, keylen, S)) {
		tap_ok(0, "[%s] %s %u S=%u: a sector context", be, a->name, keylen, S);
		return;
	}
	geli_random(plain, len);
	for (size_t h = 0; h < NELEM(holes); h++)
		memset(plain + holes[h] * S, 0, S);
	/* want: ciphertext, with the holes' sectors zero on the provider. */
	ok = sector_crypt_run(f.c, off, n, plain, want, S, 1) == 0;
	for (size_t h = 0; h < NELEM(holes); h++)
		memset(want + holes[h] * S, 0, S);
	memset(got, 0xa5, len);
	memcpy(inplace, want, len);
	ok = ok && sector_read_stored(f.c, off, n, want, got, S) == 0 &&
	    memcmp(got, plain, len) == 0 &&
	    sector_read_stored(f.c, off, n, inplace, inplace, S) == 0 &&
	    memcmp(inplace, plain, len) == 0;
	tap_ok(ok, "[%s] %s %u S=%u: 300 stored sectors, five of them holes, read "
	    "as the plaintext with zeros in the holes, in place and out", be,
	    a->name, keylen, S);
	fixture_close(&f);
}

/* A NULL volume in memory: written and read, no range key derived. */
static void
test_null_keys(const char *be)
{
	struct geli_metadata md;
	struct geli_provider *p;
	struct geli_volume *v;
	char path[64];
	int fd = memfd_create("geli-null", MFD_CLOEXEC);
	size_t len = 64 * 4096;
	bool ok;

	memset(&md, 0, sizeof(md));
	memcpy(md.magic, GELI_MAGIC, sizeof(GELI_MAGIC));
	md.version = GELI_VERSION;
	md.ealgo = GELI_ALGO_NULL;
	md.keylen = 512;
	md.sectorsize = 4096;
	md.provsize = len + 512;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ok = fd >= 0 && ftruncate(fd, (off_t)md.provsize) == 0 &&
	    geli_provider_open(path, true, &p) == 0;
	if (ok && geli_volume_open(p, &md, mkey, 0, 2, &v) != 0) {
		geli_provider_close(p);
		ok = false;
	}
	if (ok) {
		geli_random(plain, len);
		ok = geli_volume_write(v, plain, len, 0) == (ssize_t)len &&
		    geli_volume_read(v, got, len, 0) == (ssize_t)len &&
		    memcmp(got, plain, len) == 0 && pread(fd, want, len, 0) ==
		    (ssize_t)len && memcmp(want, plain, len) == 0 &&
		    geli_volume_keys_allocated(v) == 0;
		geli_volume_close(v);
	}
	tap_ok(ok, "[%s] NULL: stored as written, read back, no range key derived", be);
	if (fd >= 0)
		close(fd);
}

int
main(void)
{
	const char *be;

	plain = malloc(MAXLEN);
	want = malloc(MAXLEN);
	got = malloc(MAXLEN);
	inplace = malloc(MAXLEN);
	if (plain == NULL || want == NULL || got == NULL || inplace == NULL)
		return 1;
	geli_random(mkey, sizeof(mkey));
	/* Each backend, and each with the accelerator (AES-CBC) when one is
	 * in use. */
	for (unsigned i = 0; (be = geli_crypto_backend(i)) != NULL; i++) {
		tap_ok(geli_crypto_select(be) == 0, "[%s] selected", be);
		/* 1-4: its IVs from Nettle's state or as jobs, and runs
		 * decrypted by it or by the backend. */
		for (int acc = 0; acc < (gc_accel_name() != NULL ? 5 : 1); acc++) {
			static const char *const how[] = { "",
			    "+accelerator (IVs from the IV key's state)",
			    "+accelerator (IVs from its state; backend decrypts)",
			    "+accelerator (IVs as jobs)",
			    "+accelerator (IVs as jobs; the backend decrypts)" };
			char label[100];

			snprintf(label, sizeof(label), "%s%s", be, how[acc]);
			geli_crypto_set_accel(acc > 0);
			gc_accel_ivs_as_jobs(acc > 2);
			gc_accel_decrypt_runs(acc % 2);
			for (size_t c = 0; c < NELEM(ciphers); c++) {
				for (size_t z = 0; z < NELEM(sizes); z++) {
					test_runs(label, ciphers[c].ealgo,
					    ciphers[c].keylen, sizes[z]);
					test_holes(label, ciphers[c].ealgo,
					    ciphers[c].keylen, sizes[z]);
				}
			}
		}
		test_null_keys(be);
	}
	geli_wipe(mkey, sizeof(mkey));
	free(plain);
	free(want);
	free(got);
	free(inplace);
	return tap_done();
}
