/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The accelerator (lib/accel.h) against the backends: for AES-CBC 128, 192
 * and 256, units of 512 bytes to the largest it takes (65024, the last
 * multiple of 512 under its 65534), runs of 1 to 256 units, at offsets
 * that are not the first, both ways, in place: the same bytes as
 * SHA256(IVK || LE64(off)) and one gc_crypt per unit with each backend,
 * with the IVs from Nettle's state of the IV key and as ipsec-mb's jobs.
 * Its refusals.  Skipped where no accelerator is in use (not built, no
 * AES-NI, GELI_ACCEL=none).
 */
#include <stdlib.h>

#include "tap.h"

#include "accel.h"
#include "crypto.h"
#include "endian.h"
#include "geli.h"

static const unsigned keybytes[] = { 16, 24, 32 };
static const size_t units[] = { 512, 4096, 8192, 65024 };
static const size_t counts[] = { 1, 2, 3, 16, 64, 256 };
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define MAXLEN (256 * 65024)

static uint8_t *plain, *ref, *got;

/* The backend's way, unit by unit. */
static bool
reference(const uint8_t *key, size_t kb, const uint8_t ivk[64], uint64_t off,
    size_t n, const uint8_t *in, uint8_t *out, size_t len, int enc)
{
	struct gc_cipher_ctx *c;
	uint8_t off8[8], iv[32];
	bool ok = true;

	if (gc_cipher_new(NULL, GC_AES, GC_CBC, key, kb, &c) != 0)
		return false;
	for (size_t i = 0; i < n && ok; i++) {
		le64enc(off8, off + i * len);
		ok = gc_sha256(ivk, 64, off8, 8, iv) == 0 &&
		    gc_crypt(c, iv, in + i * len, out + i * len, len, enc) == 0;
	}
	gc_cipher_free(c);
	return ok;
}

static void
test_same(struct gc_accel *a, const char *be, unsigned kb)
{
	struct gc_accel_cbc *k;
	uint8_t key[32], ivk[64];

	geli_random(key, sizeof(key));
	geli_random(ivk, sizeof(ivk));
	if (gc_accel_cbc_new(a, key, kb, ivk, &k) != 0) {
		tap_ok(0, "[%s] AES-CBC-%u: keyed", be, kb * 8);
		return;
	}
	for (size_t z = 0; z < NELEM(units); z++) {
		/* [0]: IVs from Nettle's state, [1]: as ipsec-mb's jobs. */
		bool enc[2] = { true, true }, dec[2] = { true, true };

		for (size_t j = 0; j < NELEM(counts); j++) {
			size_t n = counts[j], len = units[z];
			uint64_t off = (uint64_t)(j + 3) * len + (1ULL << 33);

			geli_random(plain, n * len);
			if (!reference(key, kb, ivk, off, n, plain, ref, len, 1))
				enc[0] = enc[1] = false;
			for (int g = 0; g < 2; g++) {
				gc_accel_ivs_as_jobs(g);
				memcpy(got, plain, n * len);
				if (gc_accel_cbc_run(a, k, off, n, got, got, len,
				    1) != 0 || memcmp(got, ref, n * len) != 0)
					enc[g] = false;
				if (gc_accel_cbc_run(a, k, off, n, ref, got, len,
				    0) != 0 || memcmp(got, plain, n * len) != 0)
					dec[g] = false;
			}
		}
		for (int g = 0; g < 2; g++) {
			const char *how = g ? "IVs hashed as jobs" :
			    "IVs from the IV key's state";

			tap_ok(enc[g], "[%s] AES-CBC-%u, units of %zu, runs of 1 to "
			    "256, %s: encrypted as the backend does", be, kb * 8,
			    units[z], how);
			tap_ok(dec[g], "[%s] AES-CBC-%u, units of %zu, %s: "
			    "decrypted back", be, kb * 8, units[z], how);
		}
	}
	gc_accel_ivs_as_jobs(-1);
	gc_accel_cbc_free(k);
}

static void
test_refusals(struct gc_accel *a)
{
	struct gc_accel_cbc *k;
	uint8_t key[32] = { 0 }, ivk[64] = { 0 };

	tap_ok(gc_accel_cbc_new(a, key, 20, ivk, &k) == -EINVAL && k == NULL,
	    "a 160-bit key: -EINVAL");
	if (gc_accel_cbc_new(a, key, 16, ivk, &k) != 0) {
		tap_ok(0, "keyed");
		return;
	}
	tap_ok(gc_accel_cbc_run(a, k, 0, 2, plain, got, 520, 1) == -EINVAL,
	    "units not a multiple of 16 bytes: -EINVAL");
	tap_ok(gc_accel_cbc_run(a, k, 0, 1, plain, got, 65536, 1) == -EINVAL,
	    "a unit of 65536 bytes (over 65534): -EINVAL");
	tap_ok(gc_accel_cbc_run(a, k, 0, GC_ACCEL_MAX_UNITS + 1, plain, got,
	    16, 1) == -EINVAL, "a run of %d units: -EINVAL", GC_ACCEL_MAX_UNITS + 1);
	tap_ok(gc_accel_cbc_run(a, k, 0, 0, plain, got, 512, 1) == 0,
	    "a run of none: nothing to do");
	gc_accel_cbc_free(k);
}

int
main(void)
{
	struct gc_accel *a;
	const char *be;

	if (gc_accel_name() == NULL) {
		printf("ok 1 # SKIP no accelerator in use\n1..1\n");
		return 0;
	}
	printf("# %s\n", gc_accel_name());
	plain = malloc(MAXLEN);
	ref = malloc(MAXLEN);
	got = malloc(MAXLEN);
	if (plain == NULL || ref == NULL || got == NULL)
		return 1;
	tap_ok(gc_accel_new(&a) == 0, "a manager for this thread");
	if (a == NULL)
		return tap_done();
	for (unsigned i = 0; (be = geli_crypto_backend(i)) != NULL; i++) {
		tap_ok(geli_crypto_select(be) == 0, "[%s] selected", be);
		for (size_t j = 0; j < NELEM(keybytes); j++)
			test_same(a, be, keybytes[j]);
	}
	test_refusals(a);
	geli_crypto_set_accel(false);
	tap_ok(!gc_accel_enabled(), "switched off: runs go to the backend");
	geli_crypto_set_accel(true);
	geli_crypto_disable_hwaccel();
	tap_ok(!gc_accel_enabled(), "without AES-NI (geli_crypto_disable_hwaccel): "
	    "not used");
	gc_accel_free(a);
	free(plain);
	free(ref);
	free(got);
	return tap_done();
}
