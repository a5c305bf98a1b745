/* SPDX-License-Identifier: BSD-2-Clause */
/* Algorithm names, numbers and key lengths (docs/format.md §3). */
#include <strings.h>

#include "crypto.h"
#include "geli.h"

static const struct {
	unsigned algo;
	const char *name;	/* as g_eli_algo2str prints it */
} algo_names[] = {
	{ GELI_ALGO_3DES_CBC, "3DES-CBC" },
	{ GELI_ALGO_BLOWFISH_CBC, "Blowfish-CBC" },
	{ GELI_ALGO_HMAC_MD5, "HMAC/MD5" },
	{ GELI_ALGO_HMAC_SHA1, "HMAC/SHA1" },
	{ GELI_ALGO_HMAC_RMD160, "HMAC/RIPEMD160" },
	{ GELI_ALGO_AES_CBC, "AES-CBC" },
	{ GELI_ALGO_NULL, "NULL" },
	{ GELI_ALGO_HMAC_SHA256, "HMAC/SHA256" },
	{ GELI_ALGO_HMAC_SHA384, "HMAC/SHA384" },
	{ GELI_ALGO_HMAC_SHA512, "HMAC/SHA512" },
	{ GELI_ALGO_CAMELLIA_CBC, "CAMELLIA-CBC" },
	{ GELI_ALGO_AES_XTS, "AES-XTS" },
};

/* Names accepted by -e (case-insensitive); "aes" is AES-XTS (§13.1). */
static const struct {
	const char *name;
	unsigned algo;
} ealgo_words[] = {
	{ "aes", GELI_ALGO_AES_XTS },
	{ "aes-xts", GELI_ALGO_AES_XTS },
	{ "aes-cbc", GELI_ALGO_AES_CBC },
	{ "camellia", GELI_ALGO_CAMELLIA_CBC },
	{ "camellia-cbc", GELI_ALGO_CAMELLIA_CBC },
	{ "null", GELI_ALGO_NULL },
	{ "null-cbc", GELI_ALGO_NULL },
	{ "blowfish", GELI_ALGO_BLOWFISH_CBC },
	{ "blowfish-cbc", GELI_ALGO_BLOWFISH_CBC },
	{ "3des", GELI_ALGO_3DES_CBC },
	{ "3des-cbc", GELI_ALGO_3DES_CBC },
};

static const struct {
	const char *name;
	unsigned algo;
} aalgo_words[] = {
	{ "hmac/md5", GELI_ALGO_HMAC_MD5 },
	{ "hmac/sha1", GELI_ALGO_HMAC_SHA1 },
	{ "hmac/ripemd160", GELI_ALGO_HMAC_RMD160 },
	{ "hmac/sha256", GELI_ALGO_HMAC_SHA256 },
	{ "hmac/sha384", GELI_ALGO_HMAC_SHA384 },
	{ "hmac/sha512", GELI_ALGO_HMAC_SHA512 },
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

const char *
geli_algo_name(unsigned algo)
{
	for (size_t i = 0; i < NELEM(algo_names); i++)
		if (algo_names[i].algo == algo)
			return algo_names[i].name;
	return "unknown";
}

unsigned
geli_str2ealgo(const char *name)
{
	for (size_t i = 0; i < NELEM(ealgo_words); i++)
		if (strcasecmp(name, ealgo_words[i].name) == 0)
			return ealgo_words[i].algo;
	return GELI_ALGO_NONE;
}

unsigned
geli_str2aalgo(const char *name)
{
	for (size_t i = 0; i < NELEM(aalgo_words); i++)
		if (strcasecmp(name, aalgo_words[i].name) == 0)
			return aalgo_words[i].algo;
	return GELI_ALGO_NONE;
}

unsigned
geli_keylen(unsigned ealgo, unsigned keylen)
{
	switch (ealgo) {
	case GELI_ALGO_NULL:
		if (keylen == 0)
			return 512;	/* 64 bytes */
		return keylen <= 512 ? keylen : 0;
	case GELI_ALGO_BLOWFISH_CBC:
		if (keylen == 0)
			return 128;
		if (keylen < 128 || keylen > 448 || keylen % 32 != 0)
			return 0;
		return keylen;
	case GELI_ALGO_3DES_CBC:
		return keylen == 0 || keylen == 192 ? 192 : 0;
	case GELI_ALGO_AES_CBC:
	case GELI_ALGO_CAMELLIA_CBC:
		if (keylen == 0)
			return 128;
		return keylen == 128 || keylen == 192 || keylen == 256 ?
		    keylen : 0;
	case GELI_ALGO_AES_XTS:
		if (keylen == 0)
			return 128;
		return keylen == 128 || keylen == 256 ? keylen : 0;
	}
	return 0;
}

unsigned
geli_hashlen(unsigned aalgo)
{
	switch (aalgo) {
	case GELI_ALGO_HMAC_MD5:	return 16;
	case GELI_ALGO_HMAC_SHA1:	return 20;
	case GELI_ALGO_HMAC_RMD160:	return 20;
	case GELI_ALGO_HMAC_SHA256:	return 32;
	case GELI_ALGO_HMAC_SHA384:	return 48;
	case GELI_ALGO_HMAC_SHA512:	return 64;
	}
	return 0;
}

bool
geli_algo_is_legacy(unsigned algo)
{
	return algo == GELI_ALGO_BLOWFISH_CBC || algo == GELI_ALGO_3DES_CBC ||
	    algo == GELI_ALGO_HMAC_MD5;
}

bool
geli_algo_available(unsigned algo)
{
	return gc_available(algo) != 0;
}
