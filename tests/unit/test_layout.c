/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * geli_eli_provsize(): the provider size for a wanted decrypted size, as
 * the inverse of geli_eli_mediasize() over a matrix of sector sizes,
 * physical sector sizes, HMACs and sizes, against values worked out by
 * hand from §7.1 and §8.1, and its refusals.
 */
#include <stdint.h>

#include "tap.h"

#include "geli.h"

static void
md_for(struct geli_metadata *md, uint32_t S, unsigned aalgo)
{
	memset(md, 0, sizeof(*md));
	md->version = GELI_VERSION;
	md->ealgo = GELI_ALGO_AES_XTS;
	md->keylen = 128;
	md->aalgo = (uint16_t)aalgo;
	md->flags = aalgo != 0 ? GELI_FLAG_AUTH : 0;
	md->sectorsize = S;
}

/* Worked out by hand: 1 MiB at S=4096 on 512-byte sectors is 256 GELI
 * sectors; with HMAC/SHA256 a sector's data is 480 bytes, so 9 physical
 * sectors each; one more for the metadata. */
static void
test_known(void)
{
	struct geli_metadata md;

	md_for(&md, 4096, 0);
	tap_ok(geli_eli_provsize(&md, 256u << 20, 512, false) == (256u << 20) + 512,
	    "256 MiB, S=4096, P=512: 256 MiB + the metadata sector");
	tap_ok(geli_eli_provsize(&md, 256u << 20, 512, true) == 256u << 20,
	    "one-time: no metadata sector");
	tap_ok(geli_eli_provsize(&md, 1, 512, false) == 4096 + 512,
	    "1 byte takes a whole GELI sector");
	tap_ok(geli_eli_provsize(&md, 0, 512, false) == 512, "0 bytes: the metadata alone");
	md_for(&md, 4096, GELI_ALGO_HMAC_SHA256);
	tap_ok(geli_eli_provsize(&md, 1u << 20, 512, false) == 256 * 9 * 512 + 512,
	    "1 MiB, S=4096, HMAC/SHA256, P=512: 256 x 9 x 512 + 512");
	md_for(&md, 4096, GELI_ALGO_HMAC_SHA512);
	tap_ok(geli_eli_provsize(&md, 4096, 4096, false) == 2 * 4096 + 4096,
	    "S=4096, HMAC/SHA512, P=4096: 4032 data bytes a sector, so 2 a GELI sector");
}

/* The formula geli bench wrote by hand before the library had one. */
static void
test_bench_formula(void)
{
	static const unsigned hmacs[] = { GELI_ALGO_HMAC_MD5, GELI_ALGO_HMAC_SHA1,
	    GELI_ALGO_HMAC_RMD160, GELI_ALGO_HMAC_SHA256, GELI_ALGO_HMAC_SHA384,
	    GELI_ALGO_HMAC_SHA512 };
	struct geli_metadata md;
	uint64_t size = 256u << 20;
	int bad = 0;

	for (size_t h = 0; h < sizeof(hmacs) / sizeof(hmacs[0]); h++)
		for (uint32_t S = 512; S <= 65536; S *= 2) {
			uint64_t want = size / S * ((S - 1) /
			    ((512 - geli_hashlen(hmacs[h])) / 16 * 16) + 1) * 512 + 512;
			md_for(&md, S, hmacs[h]);
			if (geli_eli_provsize(&md, size, 512, false) != want) {
				printf("# %s S=%u: got %ju, want %ju\n", geli_algo_name(hmacs[h]),
				    S, (uintmax_t)geli_eli_provsize(&md, size, 512, false),
				    (uintmax_t)want);
				bad++;
			}
		}
	tap_ok(bad == 0, "every HMAC x S=512..65536 on P=512: geli bench's old formula");
}

/* The inverse: the result holds size, one byte less does not. */
static void
test_inverse(void)
{
	static const unsigned aalgos[] = { 0, GELI_ALGO_HMAC_MD5, GELI_ALGO_HMAC_SHA256,
	    GELI_ALGO_HMAC_SHA512 };
	static const uint32_t psizes[] = { 512, 4096 };
	struct geli_metadata md;
	int cases = 0, bad = 0;

	for (size_t a = 0; a < sizeof(aalgos) / sizeof(aalgos[0]); a++)
		for (size_t p = 0; p < 2; p++)
			for (uint32_t S = psizes[p]; S <= 65536; S *= 2)
				for (int ot = 0; ot < 2; ot++) {
					uint64_t sizes[] = { 1, S - 1, S, S + 1, 3 * S + 7,
					    1u << 20, (256ull << 20) + 12345, 1ull << 40 };
					md_for(&md, S, aalgos[a]);
					for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
						uint64_t x = sizes[i];
						uint64_t ps = geli_eli_provsize(&md, x, psizes[p], ot);

						cases++;
						if (ps == 0 ||
						    geli_eli_mediasize(&md, ps, psizes[p], ot) < x ||
						    geli_eli_mediasize(&md, ps - 1, psizes[p], ot) >= x) {
							printf("# aalgo %u S=%u P=%u onetime=%d size=%ju: %ju\n",
							    aalgos[a], S, psizes[p], ot, (uintmax_t)x,
							    (uintmax_t)ps);
							bad++;
						}
					}
				}
	tap_ok(bad == 0, "%d cases: the smallest provider that holds the size", cases);
}

static void
test_refusals(void)
{
	struct geli_metadata md;

	md_for(&md, 0, 0);
	tap_ok(geli_eli_provsize(&md, 4096, 512, false) == 0, "sectorsize 0: no layout");
	md_for(&md, 4096, 0);
	tap_ok(geli_eli_provsize(&md, 4096, 0, false) == 0, "psize 0: no layout");
	md_for(&md, 4096, GELI_ALGO_HMAC_SHA256);
	tap_ok(geli_eli_provsize(&md, 4096, 48, false) == 0,
	    "HMAC/SHA256 on 48-byte sectors: no room for data");
	md_for(&md, 4096, 0);
	tap_ok(geli_eli_provsize(&md, UINT64_MAX, 512, false) == 0,
	    "a size beyond 64 bits: 0, not a wrapped value");
}

int
main(void)
{
	test_known();
	test_bench_formula();
	test_inverse();
	test_refusals();
	return tap_done();
}
