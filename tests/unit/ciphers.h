/* SPDX-License-Identifier: BSD-2-Clause */
/* Every cipher and key length a GELI volume can carry, for the tests that go
 * through them all (Blowfish in steps of 32 bits, as geli(8) accepts). */
#ifndef TEST_CIPHERS_H
#define TEST_CIPHERS_H

#include "geli.h"

static const struct { unsigned ealgo, keylen; } ciphers[] = {
	{ GELI_ALGO_AES_XTS, 128 }, { GELI_ALGO_AES_XTS, 256 },
	{ GELI_ALGO_AES_CBC, 128 }, { GELI_ALGO_AES_CBC, 192 }, { GELI_ALGO_AES_CBC, 256 },
	{ GELI_ALGO_CAMELLIA_CBC, 128 }, { GELI_ALGO_CAMELLIA_CBC, 192 },
	{ GELI_ALGO_CAMELLIA_CBC, 256 },
	{ GELI_ALGO_BLOWFISH_CBC, 128 }, { GELI_ALGO_BLOWFISH_CBC, 160 },
	{ GELI_ALGO_BLOWFISH_CBC, 192 }, { GELI_ALGO_BLOWFISH_CBC, 224 },
	{ GELI_ALGO_BLOWFISH_CBC, 256 }, { GELI_ALGO_BLOWFISH_CBC, 288 },
	{ GELI_ALGO_BLOWFISH_CBC, 320 }, { GELI_ALGO_BLOWFISH_CBC, 352 },
	{ GELI_ALGO_BLOWFISH_CBC, 384 }, { GELI_ALGO_BLOWFISH_CBC, 416 },
	{ GELI_ALGO_BLOWFISH_CBC, 448 },
	{ GELI_ALGO_3DES_CBC, 192 }, { GELI_ALGO_NULL, 512 },
};

#endif
