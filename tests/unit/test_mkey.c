/* SPDX-License-Identifier: BSD-2-Clause */
/* Master-key slots (§5) for every cipher and key length. */
#include "tap.h"

#include "crypto.h"
#include "geli.h"
#include "ciphers.h"

static void
test_cipher(unsigned ealgo, unsigned keylen)
{
	struct geli_metadata md;
	uint8_t ukey[64], other[64], mk[128], out[128];
	int used = -1, r;
	const char *name = geli_algo_name(ealgo);

	memset(&md, 0, sizeof(md));
	md.version = 7;
	md.ealgo = (uint16_t)ealgo;
	md.keylen = (uint16_t)keylen;
	geli_random(ukey, sizeof(ukey));
	geli_random(other, sizeof(other));
	geli_random(mk, sizeof(mk));
	geli_random(md.mkeys, sizeof(md.mkeys));

	r = geli_mkey_encrypt(ealgo, keylen, ukey, mk, md.mkeys + GELI_MKEYLEN);
	md.keys = 0x02;
	tap_ok(r == 0, "%s %u: slot encrypted", name, keylen);
	r = geli_mkey_decrypt(&md, ukey, -1, out, &used);
	tap_ok(r == 0 && used == 1 && memcmp(out, mk, 128) == 0,
	    "%s %u: slot 1 opens with its key", name, keylen);
	tap_ok(geli_mkey_decrypt(&md, other, -1, out, &used) == -GELI_EWRONGKEY,
	    "%s %u: another key is a wrong key", name, keylen);
	tap_ok(geli_mkey_decrypt(&md, ukey, 0, out, &used) == -GELI_EWRONGKEY,
	    "%s %u: -n 0 does not try slot 1", name, keylen);
	md.keys = 0;
	tap_ok(geli_mkey_decrypt(&md, ukey, -1, out, &used) == -GELI_EWRONGKEY,
	    "%s %u: a slot whose bit is clear is not tried", name, keylen);
	if (ealgo == GELI_ALGO_NULL)
		tap_ok(memcmp(md.mkeys + GELI_MKEYLEN, mk, 128) == 0,
		    "NULL stores the Master Key in the clear");
	else
		tap_ok(memcmp(md.mkeys + GELI_MKEYLEN, mk, 128) != 0,
		    "%s %u: the slot is not the plain key", name, keylen);
}

int
main(void)
{
	struct geli_metadata md;
	uint8_t ukey[64], mk[128], a[192], b[192];

	for (size_t i = 0; i < sizeof(ciphers) / sizeof(ciphers[0]); i++)
		test_cipher(ciphers[i].ealgo, ciphers[i].keylen);

	/* XTS volumes protect their slots with AES-CBC of the same size. */
	geli_random(ukey, sizeof(ukey));
	geli_random(mk, sizeof(mk));
	geli_mkey_encrypt(GELI_ALGO_AES_XTS, 256, ukey, mk, a);
	geli_mkey_encrypt(GELI_ALGO_AES_CBC, 256, ukey, mk, b);
	tap_ok(memcmp(a, b, sizeof(a)) == 0, "AES-XTS-256 slot == AES-CBC-256 slot");

	memset(&md, 0, sizeof(md));
	tap_ok(geli_mkey_decrypt(&md, ukey, 2, mk, NULL) == -EINVAL, "keyno 2 is invalid");
	return tap_done();
}
