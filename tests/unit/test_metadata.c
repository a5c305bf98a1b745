/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Metadata encode/decode for every version, golden bytes, decode errors,
 * the version-to-quirks function, size arithmetic, and FreeBSD's own
 * metadata (fixtures directory in argv[1]).
 */
#include <fcntl.h>
#include <unistd.h>

#include "tap.h"

#include "crypto.h"
#include "geli.h"

/*
 * SHA-256 of the whole encoded record of the sample metadata below, per
 * version, from an independent Python encoder (struct.pack('<IIHH[H]QIBi')
 * + hashlib.md5), see tests/unit/README.
 */
static const char *golden_sha256[8] = {
	"7c13ba1d93f7fbaf0ddade27bda171c01e08d68775c3ea9339551fb7140e32db",
	"931a197a643b288fa884fb6c6744ef4c0b71e124a7456c8a10ae3c8ff41cc799",
	"77bd40c4f2baef083e279ca21e3a5a85fd669aaff875b03bb39c6edaa45f0973",
	"b2a073a0447cdf0c0c849b601f4ab670f4458caf5a61f6f11ac77ec1f7135ad3",
	"4e8bbc27fe32cc8c41622c5b7b08169d240a93ac655a64cf37cb52f1e7ae1a39",
	"640a4fd98a6e7fc64eabd7b767f64224e2db27091ae4c411078e2f5781aeb2e5",
	"bd1467ee2f764606a714af90cdf72dd2a79900c71f5b04f84a3cea1459d2a85c",
	"c6e714b5e3de36cd7ec1cb744ac577bac6946a5301eaa220569dd2e4cd3420c9",
};

static void
sample(struct geli_metadata *md, unsigned v)
{
	memset(md, 0, sizeof(*md));
	memcpy(md->magic, GELI_MAGIC, sizeof(GELI_MAGIC));
	md->version = v;
	if (v == 0) {
		md->flags = 0x200;
		md->ealgo = GELI_ALGO_AES_CBC;
		md->keylen = 128;
		md->provsize = 1048576;
		md->sectorsize = 512;
		md->keys = 1;
		md->iterations = -1;
	} else {
		md->flags = 0x210;
		md->ealgo = GELI_ALGO_AES_XTS;
		md->keylen = 256;
		md->aalgo = GELI_ALGO_HMAC_SHA256;
		md->provsize = 1048576;
		md->sectorsize = 4096;
		md->keys = 3;
		md->iterations = 123456;
	}
	for (int i = 0; i < 64; i++)
		md->salt[i] = (uint8_t)i;
	for (int i = 0; i < 384; i++)
		md->mkeys[i] = (uint8_t)((i * 7 + 3) & 0xff);
}

static void
test_versions(void)
{
	struct geli_metadata md, back;
	uint8_t buf[GELI_MD_SIZE], sha[32];
	int len;

	for (unsigned v = 0; v <= GELI_VERSION; v++) {
		sample(&md, v);
		len = geli_metadata_encode(&md, buf);
		tap_ok(len == (v == 0 ? 509 : 511), "v%u record is %d bytes", v, len);
		tap_ok(geli_metadata_size(v) == (size_t)len,
		    "geli_metadata_size(%u) is the encoded length", v);
		gc_sha256(buf, (size_t)len, NULL, 0, sha);
		tap_is_hex(sha, 32, golden_sha256[v], "v%u encoding matches the golden bytes", v);
		tap_ok(geli_metadata_decode(buf, (size_t)len, &back) == 0 &&
		    memcmp(&back, &md, sizeof(md)) == 0, "v%u decodes to the same fields", v);
	}
}

static void
test_decode_errors(void)
{
	struct geli_metadata md;
	uint8_t buf[GELI_MD_SIZE];

	sample(&md, 7);
	geli_metadata_encode(&md, buf);
	buf[0] = 'X';
	tap_ok(geli_metadata_decode(buf, sizeof(buf), &md) == -EINVAL, "bad magic: -EINVAL");
	sample(&md, 7);
	geli_metadata_encode(&md, buf);
	buf[200] ^= 1;
	tap_ok(geli_metadata_decode(buf, sizeof(buf), &md) == -EBADMSG, "flipped bit: -EBADMSG");
	sample(&md, 7);
	geli_metadata_encode(&md, buf);
	buf[495] ^= 1;
	tap_ok(geli_metadata_decode(buf, sizeof(buf), &md) == -EBADMSG, "bad MD5: -EBADMSG");
	sample(&md, 7);
	geli_metadata_encode(&md, buf);
	buf[16] = 8;
	tap_ok(geli_metadata_decode(buf, sizeof(buf), &md) == -EOPNOTSUPP && md.version == 8,
	    "version 8: -EOPNOTSUPP and the version reported");
	sample(&md, 7);
	geli_metadata_encode(&md, buf);
	tap_ok(geli_metadata_decode(buf, 100, &md) == -EINVAL, "short buffer: -EINVAL");
	sample(&md, 7);
	md.version = 8;
	tap_ok(geli_metadata_encode(&md, buf) == -EINVAL, "encoding version 8 is refused");
	sample(&md, 7);
	geli_metadata_encode(&md, buf);
	buf[12] = 'x';	/* magic padding: not compared, but covered by the MD5 */
	tap_ok(geli_metadata_decode(buf, sizeof(buf), &md) == -EBADMSG,
	    "magic padding is covered by the MD5");
}

/* §1.6: the quirks of each version. */
static void
test_runtime_flags(void)
{
	static const struct { unsigned v; bool auth; uint32_t want; } cases[] = {
		{ 0, false, GELI_FLAG_NATIVE_BYTE_ORDER | GELI_FLAG_SINGLE_KEY | GELI_FLAG_ENC_IVKEY },
		{ 1, true, GELI_FLAG_NATIVE_BYTE_ORDER | GELI_FLAG_SINGLE_KEY | GELI_FLAG_FIRST_KEY | GELI_FLAG_ENC_IVKEY },
		{ 2, false, GELI_FLAG_NATIVE_BYTE_ORDER | GELI_FLAG_SINGLE_KEY | GELI_FLAG_ENC_IVKEY },
		{ 3, true, GELI_FLAG_NATIVE_BYTE_ORDER | GELI_FLAG_SINGLE_KEY | GELI_FLAG_FIRST_KEY | GELI_FLAG_ENC_IVKEY },
		{ 4, false, GELI_FLAG_SINGLE_KEY | GELI_FLAG_ENC_IVKEY },
		{ 4, true, GELI_FLAG_SINGLE_KEY | GELI_FLAG_FIRST_KEY | GELI_FLAG_ENC_IVKEY },
		{ 5, false, GELI_FLAG_ENC_IVKEY },
		{ 5, true, GELI_FLAG_FIRST_KEY | GELI_FLAG_ENC_IVKEY },
		{ 6, false, GELI_FLAG_ENC_IVKEY },
		{ 6, true, GELI_FLAG_ENC_IVKEY },
		{ 7, false, 0 },
		{ 7, true, 0 },
	};
	struct geli_metadata md;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		sample(&md, cases[i].v);
		md.flags = cases[i].auth ? GELI_FLAG_AUTH : 0;
		uint32_t got = geli_metadata_runtime_flags(&md) & ~md.flags;
		tap_ok(got == cases[i].want, "v%u%s runtime flags 0x%x (want 0x%x)",
		    cases[i].v, cases[i].auth ? " AUTH" : "", got, cases[i].want);
	}
}

/* §8.1, from online_resize_test.sh. */
static void
test_mediasize(void)
{
	static const struct {
		uint64_t n; uint32_t s; bool auth; bool onetime; uint64_t want;
	} cases[] = {
		{ 10485760, 512, false, false, 10485248 },
		{ 10485760, 4096, false, false, 10481664 },
		{ 10485760, 512, true, false, 5242368 },
		{ 10485760, 4096, true, false, 9318400 },
		{ 20971520, 512, false, false, 20971008 },
		{ 31457280, 4096, true, false, 27959296 },
		{ 11258999068426240ull, 512, false, false, 11258999068425728ull },
		{ 11258999068426240ull, 4096, false, false, 11258999068422144ull },
		{ 11258999068426240ull, 512, true, false, 5629499534212608ull },
		{ 11258999068426240ull, 4096, true, false, 10007999171932160ull },
		{ 10485760, 512, false, true, 10485760 },
		{ 10485760, 512, true, true, 5242880 },
		{ 10485760, 4096, true, true, 9318400 },
	};
	struct geli_metadata md;
	uint32_t dps, lsec;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		sample(&md, 7);
		md.sectorsize = cases[i].s;
		md.flags = cases[i].auth ? GELI_FLAG_AUTH : 0;
		md.aalgo = GELI_ALGO_HMAC_SHA256;
		uint64_t got = geli_eli_mediasize(&md, cases[i].n, 512, cases[i].onetime);
		tap_ok(got == cases[i].want, "size N=%ju S=%u%s%s -> %ju (want %ju)",
		    (uintmax_t)cases[i].n, cases[i].s, cases[i].auth ? " auth" : "",
		    cases[i].onetime ? " onetime" : "", (uintmax_t)got,
		    (uintmax_t)cases[i].want);
	}
	sample(&md, 7);
	md.flags = GELI_FLAG_AUTH;
	md.aalgo = GELI_ALGO_HMAC_SHA256;
	md.sectorsize = 4096;
	tap_ok(geli_auth_layout(&md, 512, &dps, &lsec) == 0 && dps == 480 && lsec == 9,
	    "SHA256, P=512, S=4096: 480 data bytes per sector, 9 sectors (§7.1)");
	md.aalgo = GELI_ALGO_HMAC_SHA1;
	md.sectorsize = 512;
	tap_ok(geli_auth_layout(&md, 512, &dps, &lsec) == 0 && dps == 480 && lsec == 2,
	    "SHA1, P=512: 492 rounded down to 480");
	md.aalgo = GELI_ALGO_HMAC_SHA512;
	tap_ok(geli_auth_layout(&md, 4096, &dps, &lsec) == 0 && dps == 4032,
	    "SHA512, P=4096: 4032");
	md.aalgo = GELI_ALGO_HMAC_MD5;
	tap_ok(geli_auth_layout(&md, 512, &dps, &lsec) == 0 && dps == 496,
	    "MD5, P=512: 496");
}

static void
test_algs(void)
{
	tap_ok(geli_str2ealgo("aes") == GELI_ALGO_AES_XTS, "\"aes\" is AES-XTS");
	tap_ok(geli_str2ealgo("AES-CBC") == GELI_ALGO_AES_CBC, "names are case-insensitive");
	tap_ok(geli_str2ealgo("rot13") == GELI_ALGO_NONE, "unknown cipher");
	tap_ok(geli_str2aalgo("HMAC/sha384") == GELI_ALGO_HMAC_SHA384, "HMAC/SHA384");
	tap_ok(strcmp(geli_algo_name(GELI_ALGO_CAMELLIA_CBC), "CAMELLIA-CBC") == 0 &&
	    strcmp(geli_algo_name(99), "unknown") == 0, "algorithm names");
	tap_ok(geli_keylen(GELI_ALGO_AES_XTS, 0) == 128 && geli_keylen(GELI_ALGO_AES_XTS, 192) == 0,
	    "AES-XTS key lengths");
	tap_ok(geli_keylen(GELI_ALGO_BLOWFISH_CBC, 160) == 160 &&
	    geli_keylen(GELI_ALGO_BLOWFISH_CBC, 170) == 0 &&
	    geli_keylen(GELI_ALGO_BLOWFISH_CBC, 480) == 0, "Blowfish 128..448 by 32");
	tap_ok(geli_keylen(GELI_ALGO_3DES_CBC, 0) == 192 && geli_keylen(GELI_ALGO_3DES_CBC, 128) == 0,
	    "3DES is 192 bits");
	tap_ok(geli_keylen(GELI_ALGO_NULL, 0) == 512 && geli_keylen(GELI_ALGO_NULL, 8) == 8 &&
	    geli_keylen(GELI_ALGO_NULL, 513) == 0, "NULL key lengths");
	for (unsigned a = 0; a < 32; a++)
		if (strcmp(geli_algo_name(a), "unknown") != 0 && !geli_algo_available(a))
			tap_ok(0, "%s is not available in this OpenSSL", geli_algo_name(a));
	tap_ok(geli_algo_available(GELI_ALGO_BLOWFISH_CBC), "Blowfish through the legacy provider");
}

/* FreeBSD's own metadata decodes (tests/fixtures/README.md). */
static void
test_fixtures(const char *dir)
{
	static const struct { const char *file; unsigned v, ealgo; int32_t it; } f[] = {
		{ "fbsd11-v7-aesxts128-openwall.raw", 7, GELI_ALGO_AES_XTS, 1073769 },
		{ "fbsd60-v0-aescbc128-openwall12345.raw", 0, GELI_ALGO_AES_CBC, 256 },
		{ "fbsd62-v3-aescbc128-openwall123.raw", 3, GELI_ALGO_AES_CBC, 256 },
		{ "fbsd93-v6-aesxts128-openwall.raw", 6, GELI_ALGO_AES_XTS, 256 },
	};
	struct geli_metadata md;
	struct geli_provider *p;
	char path[4096];

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, f[i].file);
		int err = geli_provider_open(path, false, &p);
		if (err == 0) {
			err = geli_provider_read_metadata(p, &md);
			geli_provider_close(p);
		}
		tap_ok(err == 0 && md.version == f[i].v && md.ealgo == f[i].ealgo &&
		    md.keylen == 128 && md.iterations == f[i].it && md.keys == 1 &&
		    md.provsize == 1073741824,
		    "FreeBSD metadata %s decodes (v%u)", f[i].file, f[i].v);
		/* Re-encoding FreeBSD's fields gives FreeBSD's bytes. */
		uint8_t enc[GELI_MD_SIZE], raw[512];
		int fd = open(path, O_RDONLY);
		ssize_t n = pread(fd, raw, sizeof(raw), 8192 - 512);
		close(fd);
		int len = geli_metadata_encode(&md, enc);
		tap_ok(n == 512 && len > 0 && memcmp(enc, raw, (size_t)len) == 0,
		    "%s re-encodes byte for byte", f[i].file);
	}
}

int
main(int argc, char **argv)
{
	test_versions();
	test_decode_errors();
	test_runtime_flags();
	test_mediasize();
	test_algs();
	if (argc > 1)
		test_fixtures(argv[1]);
	else
		printf("ok %d # SKIP no fixtures directory given\n", ++tap_n);
	return tap_done();
}
