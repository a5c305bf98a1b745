/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer harness: key-slot decryption and verification (lib/mkey.c),
 * with the user key taken from the input (no PBKDF2).
 *
 * Input: ealgo selector, keylen (2 bytes), md_keys, keyno, mode, the
 * 64-byte user key, then slot bytes.  Mode 0 decrypts the slots as given.
 * Mode 1 first makes a valid slot (geli_mkey_encrypt of a Master Key from
 * the input) and XORs the bytes after it into the slot as damage: an
 * undamaged slot must open to the same Master Key, a damaged one never.
 * A slot that opens must encrypt back to the same bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "geli.h"

#define HEAD 6

static const uint16_t ealgos[] = {
	GELI_ALGO_AES_XTS, GELI_ALGO_AES_CBC, GELI_ALGO_CAMELLIA_CBC,
	GELI_ALGO_BLOWFISH_CBC, GELI_ALGO_3DES_CBC, GELI_ALGO_NULL,
	GELI_ALGO_NONE, 1, 23, 0xffff,
};
static const uint16_t keylens[] = {
	128, 256, 192, 448, 192, 0, 64, 8, 40, 512, 513, 1,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct geli_metadata md;
	uint8_t in[HEAD + GELI_USERKEYLEN + 2 * GELI_MKEYLEN];
	uint8_t mk[GELI_MKEY_DATALEN], got[GELI_MKEY_DATALEN];
	uint8_t slot[GELI_MKEYLEN];
	const uint8_t *ukey, *damage;
	bool damaged = false, built = false;
	int error, keyno, used = -9, n = 0;

	memset(in, 0, sizeof(in));
	memcpy(in, data, size < sizeof(in) ? size : sizeof(in));
	memset(&md, 0, sizeof(md));
	md.version = GELI_VERSION;
	md.ealgo = ealgos[in[0] % (sizeof(ealgos) / sizeof(ealgos[0]))];
	if (in[1] & 0x80)
		md.keylen = (uint16_t)((in[1] & 0x7f) << 8 | in[2]);
	else
		md.keylen = keylens[in[2] % (sizeof(keylens) / sizeof(keylens[0]))];
	md.keys = in[3];
	keyno = in[4] % 5 - 2;		/* -2 .. 2: two of them wrong */
	ukey = in + HEAD;
	memcpy(md.mkeys, in + HEAD + GELI_USERKEYLEN, sizeof(md.mkeys));

	if (in[5] & 1) {
		n = keyno == 1 ? 1 : 0;
		memcpy(mk, md.mkeys, sizeof(mk));
		if (geli_mkey_encrypt(md.ealgo, md.keylen, ukey, mk, slot) == 0) {
			built = true;
			damage = md.mkeys + GELI_MKEY_DATALEN;
			for (size_t i = 0; i < GELI_MKEYLEN; i++) {
				/* The damage is what follows the Master Key. */
				uint8_t d = i + GELI_MKEY_DATALEN < sizeof(md.mkeys) ?
				    damage[i] : 0;
				damaged |= d != 0;
				slot[i] ^= d;
			}
			memset(md.mkeys, 0, sizeof(md.mkeys));
			memcpy(md.mkeys + n * GELI_MKEYLEN, slot, GELI_MKEYLEN);
		}
	}

	error = geli_mkey_decrypt(&md, ukey, keyno, got, &used);
	if (keyno < -1 || keyno > 1) {
		if (error != -EINVAL)
			abort();
		return 0;
	}
	if (error == 0) {
		if (used < 0 || used > 1 || (md.keys & (1u << used)) == 0 ||
		    (keyno != -1 && used != keyno))
			abort();
		/* Deterministic (IV 0): the Master Key encrypts back to its slot. */
		if (geli_mkey_encrypt(md.ealgo, md.keylen, ukey, got, slot) != 0 ||
		    memcmp(slot, md.mkeys + used * GELI_MKEYLEN, GELI_MKEYLEN) != 0)
			abort();
	}
	if (built && (md.keys & (1u << n)) != 0 && (keyno == -1 || keyno == n)) {
		/* Slot n (or slot 0, all zeros, before it) decides. */
		if (!damaged && (error != 0 || memcmp(got, mk, sizeof(mk)) != 0))
			abort();
		if (damaged && error == 0 && used == n)
			abort();
	}
	return 0;
}
