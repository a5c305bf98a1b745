/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Known answers for every crypto backend (each test runs once per backend)
 * and the user-key derivation.  Oracles: RFC 1321 (MD5), RFC 2202/2286/4231
 * and RFC 2104 (HMACs), NIST SP 800-38A F.2.1 (AES-CBC), IEEE 1619-2007
 * vector 2 (AES-XTS), RFC 3713 (Camellia), Eric Young's libdes/blowfish CBC
 * vectors (Blowfish, 3DES), FreeBSD tests/sys/geom/class/eli/testvect.h
 * (PBKDF2-HMAC-SHA512, docs/format.md §10.1), Python's hashlib/hmac.
 */
#include <stdlib.h>
#include <unistd.h>

#include "tap.h"

#include "algs.h"
#include "crypto.h"
#include "geli.h"

static const char *be;	/* the backend under test, in every description */

static const struct {
	const char *salt, *pass;
	unsigned iter;
	const char *out;
} pbkdf2_vectors[] = {
	/* testvect.h entries 1, 2, 9, 10, 19, 28, 37, 1134 */
	{ "d97d1d8d00bae8b1", "d3c38899b0958f1d", 100,
	  "4aafbdea6ef9c0217470f7afe7632700a346a6febc48b3ca6ddec4e935509243621f2dcb5706379a14259daad21d956b159438a972ca5d76ce116a9994ad36e8" },
	{ "d18bbfd888458778", "2843f9e4ecee9a8ae60cdd4d289c6796", 100,
	  "1d4d6f42a50100cdda9dee3f616c4499495b2541faf717b72cc312d404c261c274afc653a9a83b2d7061a65a80032a2b16c55fa88c6ed1e02e1a6133f9e61522" },
	{ "5beb6594a233b86d", "7f36fcc26f3007c7771ac7b6fed0222fb6ea9b94cef136cc21600d64cef84c7b8142a5cff640561e97bb4985a9c64757802ae050b78223ecd8b64fe7ac2883b8f677bcfdba0ea0cb", 100,
	  "3f6a05e03d120a4e4d1499905f751340228c0c62fda913a479336dd8ffe1b97e5630b393bcd5526d756716447421e725b8a4f9407fe8a84ed0a61cd00b7cbe17" },
	{ "b2c428a4d6bab2c9", "884328bbfe0b2f1c", 200,
	  "362b9b81e8fc85330bff5341071fc31752797243f1c3d11995648dcc8b8806198f1d4c29ff270eb3c886d6faf298962e465cbff7eb3537288cb21ec840f32310" },
	{ "6317b6900819a1cb", "4623d39e37b0d3bb", 300,
	  "40801bac10a6864c2483162e549385f4f240842ace9a751bd18a3b6c82cb7385db3c317e89b78bde5abe9b57d2f621f2396ce3404f8e2b5b21b249e8b2ca12ef" },
	{ "af003b2b9b518c62", "656f717bb8a67561", 400,
	  "a942f8a56d003e5c07aefb01a9b22cc8f7fed3dc7b4b827f9dfe78f544282bf7f1fb19feac48a3c52f4eb7858838c12a154018c90a2eb19fff0d8568b122fa1c" },
	{ "d702b5e405df404f", "9bcfd6913aa03959", 500,
	  "5c11abeaf8cb79673c0d801262cf5671b290af664ccdc281b61e6c7851f911204adf292832e60f5632c88f18bc49ef8d8935bf70e99e0abae6563acf03d68632" },
	{ "75344ac8f3a3f516146ad4fa9155809da68c9e4cc049b8a077bc23502503d38bdf74d9535e243698fc057958fc991d95153fd80d0dcb50b9",
	  "1e0fe234dc64c10dfb78b599c075c6c164dad0e85e0944490d1bfa17ea04b948257e5e57bdf72ea986a00a738989776b4b99832e8411f42c87135a950d63351e9a188f1c17111e22", 9000,
	  "cedb88c2d976af4aaa1c3bda3be4e8fcb6da883f373cc79789e2630e0816f76353e6f821b6af19e1dfa3790428c70e39c161cb8ed75fd1b10fa111be02a0107c" },
};

static void
test_hmac(void)
{
	uint8_t key[20], out[64];

	memset(key, 0x0b, sizeof(key));
	gc_hmac_sha512(key, sizeof(key), "Hi There", 8, out);
	tap_is_hex(out, 64, "87aa7cdea5ef619d4ff0b4241a1d6cb02379f4e2ce4ec2787ad0b30545e17cdedaa833b7d6b8a702038b274eaea3f4e4be9d914eeb61f1702e696c203a126854",
	    "[%s] HMAC-SHA512 RFC 4231 case 1", be);
	gc_hmac_sha512("Jefe", 4, "what do ya want for nothing?", 28, out);
	tap_is_hex(out, 64, "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505549758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737",
	    "[%s] HMAC-SHA512 RFC 4231 case 2", be);
	/* The empty key of GELI's user key (Python: hmac.new(b'', ...)). */
	gc_hmac_sha512(NULL, 0, "", 0, out);
	tap_is_hex(out, 64, "b936cee86c9f87aa5d3c6f2e84cb5a4239a5fe50480a6ec66b70ab5b1f4ac6730c6c515421b327ec1d69402e53dfb49ad7381eb067b338fd7b0cb22247225d47",
	    "[%s] HMAC-SHA512 with an empty key, empty message", be);
	gc_hmac_sha512(NULL, 0, "abc", 3, out);
	tap_is_hex(out, 64, "29689f6b79a8dd686068c2eeae97fd8769ad3ba65cb5381f838358a8045a358ee3ba1739c689c7805e31734fb6072f87261d1256995370d55725cba00d10bdd0",
	    "[%s] HMAC-SHA512 with an empty key, \"abc\"", be);
}

/* GMAC-AES-256: McGrew-Viega's GCM test case 13 (no data), and a message in
 * two parts (Python's cryptography, AESGCM with empty plaintext). */
static void
test_gmac(void)
{
	uint8_t key[32] = { 0 }, iv[12] = { 0 }, tag[16], b[1280];

	gc_gmac_aes256(key, iv, NULL, 0, NULL, 0, tag);
	tap_is_hex(tag, 16, "530f8afbc74536b9a963b4f1c4cb738b",
	    "[%s] GMAC-AES-256 GCM test case 13", be);
	for (int i = 0; i < 32; i++)
		key[i] = (uint8_t)i;
	for (int i = 0; i < 12; i++)
		iv[i] = (uint8_t)i;
	for (size_t i = 0; i < sizeof(b); i++)
		b[i] = (uint8_t)i;
	gc_gmac_aes256(key, iv, "GELI journal record", 19, b, sizeof(b), tag);
	tap_is_hex(tag, 16, "021b6f8cd8cc21e426bdc34d18bf93c3",
	    "[%s] GMAC-AES-256 of a message in two parts", be);
}

/*
 * A Blowfish key libgcrypt calls weak (its S-boxes repeat an entry: about
 * one key in 30,000, found by counting up SHA-256("geli weak blowfish N")),
 * which FreeBSD and OpenSSL key like any other.  `openssl enc -bf-cbc -K
 * 50f1... -iv 0 -nopad` of "0000000000000000".
 */
static void
test_weak_blowfish(void)
{
	uint8_t key[16], iv[8] = { 0 }, out[16];
	struct gc_cipher_ctx *c = NULL;

	tap_unhex("50f168900cdd09fdff70e00b1503c3dc", key, sizeof(key));
	tap_ok(gc_cipher_new(NULL, GC_BLOWFISH, GC_CBC, key, sizeof(key), &c) == 0,
	    "[%s] a key libgcrypt calls weak keys Blowfish", be);
	if (c == NULL)
		return;
	gc_crypt(c, iv, (const uint8_t *)"0000000000000000", out, 16, 1);
	tap_is_hex(out, 16, "b983d55e4553692ba6cda808245a933a",
	    "[%s] and encrypts as OpenSSL's command does", be);
	gc_cipher_free(c);
}

static void
test_pbkdf2(void)
{
	uint8_t salt[128], pass[128], out[64];
	int sl, pl;

	for (size_t i = 0; i < sizeof(pbkdf2_vectors) / sizeof(pbkdf2_vectors[0]); i++) {
		sl = tap_unhex(pbkdf2_vectors[i].salt, salt, sizeof(salt));
		pl = tap_unhex(pbkdf2_vectors[i].pass, pass, sizeof(pass));
		memset(out, 0, sizeof(out));
		geli_pbkdf2_sha512(pass, (size_t)pl, salt, (size_t)sl,
		    pbkdf2_vectors[i].iter, out, 64);
		tap_is_hex(out, 64, pbkdf2_vectors[i].out,
		    "[%s] PBKDF2-HMAC-SHA512 testvect.h, salt %d, password %d, %u iterations",
		    be, sl, pl, pbkdf2_vectors[i].iter);
	}
	tap_ok(geli_pbkdf2_sha512("x", 1, salt, 8, 0, out, 64) == -EINVAL,
	    "[%s] PBKDF2 refuses 0 iterations", be);
}

/*
 * User key = HMAC512("", keyfiles || passpart).  Expected values from Python:
 *   salt = bytes(range(64))
 *   it=0:    hmac.new(b'', b'KEYFILE' + salt + b'secret', sha512)
 *   it=1000: hmac.new(b'', b'KEYFILE' + pbkdf2_hmac('sha512', b'secret', salt, 1000), sha512)
 *   none:    hmac.new(b'', b'KEYFILE', sha512)
 */
static void
test_ukey(void)
{
	struct geli_ukey_ctx *ctx;
	struct geli_metadata md;
	uint8_t ukey[64];

	memset(&md, 0, sizeof(md));
	for (int i = 0; i < 64; i++)
		md.salt[i] = (uint8_t)i;
	tap_ok(geli_ukey_new(&ctx) == 0, "[%s] user key context", be);
	/* Keyfiles split anywhere give the same key. */
	geli_ukey_update(ctx, "KEY", 3);
	geli_ukey_update(ctx, "FILE", 4);
	md.iterations = 0;
	geli_ukey_final(ctx, &md, "secret", 6, ukey);
	tap_is_hex(ukey, 64, "3167b177d7aa68888902e6153f41e65a8dda18c836bce9bd90caa260931b6f7ee83e1c8e075443fe711fb982fe96d1eb5259cedf78a67bff8725cf9f4a520228", "[%s] user key, keyfile + passphrase, iterations 0", be);
	md.iterations = 1000;
	geli_ukey_final(ctx, &md, "secret", 6, ukey);
	tap_is_hex(ukey, 64, "b8e34c25c0e14da7976102f8315d34dc7b1721ce3e20419e374d276f664e7f1f4df09921af0463b014b1ea5e5829cde369e59d839132b47d69a9f91456f0a309", "[%s] user key, keyfile + passphrase, 1000 iterations", be);
	md.iterations = -1;
	geli_ukey_final(ctx, &md, NULL, 0, ukey);
	tap_is_hex(ukey, 64, "eff1f2fb3dab1ee05f49199c9120480a6038d27effbc092dbb4b3091797fb8cbf3c3746c4df3431497f2ad63f19aeecba1345f7a74d7aaf73eeaeab8963bd4ad", "[%s] user key, keyfile only (-p)", be);
	tap_ok(geli_ukey_final(ctx, &md, "secret", 6, ukey) == -EINVAL,
	    "[%s] a passphrase with iterations -1 needs calibration first", be);
	geli_ukey_free(ctx);

	/* A keyfile read from a descriptor: the same key as its bytes given
	 * at once, also past the first 4096 (the buffer grows). */
	static uint8_t kf[10000];
	uint8_t want[64];
	int pp[2];
	for (size_t i = 0; i < sizeof(kf); i++)
		kf[i] = (uint8_t)(i * 7);
	md.iterations = 0;
	geli_ukey_new(&ctx);
	geli_ukey_update(ctx, kf, sizeof(kf));
	geli_ukey_final(ctx, &md, "secret", 6, want);
	geli_ukey_free(ctx);
	geli_ukey_new(&ctx);
	int w = pipe(pp) == 0 && write(pp[1], kf, sizeof(kf)) == (ssize_t)sizeof(kf);
	close(pp[1]);
	int r = geli_ukey_update_fd(ctx, pp[0]);
	close(pp[0]);
	geli_ukey_final(ctx, &md, "secret", 6, ukey);
	tap_ok(w && r == 0 && memcmp(ukey, want, 64) == 0,
	    "[%s] a keyfile of 10000 bytes read from a pipe gives the same key", be);
	tap_ok(geli_ukey_update_fd(ctx, -1) == -EBADF,
	    "[%s] a descriptor that cannot be read: -EBADF", be);
	geli_ukey_free(ctx);
}

static void
test_secmem(void)
{
	uint8_t *p = geli_secure_alloc(100);

	tap_ok(p != NULL, "[%s] secure allocation", be);
	tap_ok(p != NULL && p[0] == 0 && p[99] == 0, "[%s] secure memory starts zeroed", be);
	geli_secure_free(p);
	tap_ok(geli_ct_equal("abcd", "abcd", 4) && !geli_ct_equal("abcd", "abce", 4),
	    "[%s] constant-time compare", be);
}

static void
test_digests(void)
{
	uint8_t out[64];

	gc_md5("abc", 3, out);
	tap_is_hex(out, 16, "900150983cd24fb0d6963f7d28e17f72", "[%s] MD5(\"abc\") RFC 1321", be);
	gc_sha256("a", 1, "bc", 2, out);
	tap_is_hex(out, 32, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
	    "[%s] SHA256(\"a\" || \"bc\") FIPS 180-2", be);
	gc_sha256("abc", 3, NULL, 0, out);
	tap_is_hex(out, 32, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
	    "[%s] SHA256(\"abc\") in one part", be);
}

/* Every integrity HMAC through the per-chunk MAC (RFC 2202/2286/4231 "Jefe"). */
static void
test_chunk_macs(void)
{
	static const struct { unsigned aalgo; const char *hex; } v[] = {
		{ GELI_ALGO_HMAC_MD5, "750c783e6ab0b503eaa86e310a5db738" },
		{ GELI_ALGO_HMAC_SHA1, "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79" },
		{ GELI_ALGO_HMAC_RMD160, "dda6c0213a485a9e24f4742064a7f033b43c4069" },
		{ GELI_ALGO_HMAC_SHA256, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843" },
		{ GELI_ALGO_HMAC_SHA384, "af45d2e376484031617f78d2b58a6b1b9c7ef464f5a01b47e42ec3736322445e8e2240ca5e69e2c78b3239ecfab21649" },
		{ GELI_ALGO_HMAC_SHA512, "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505549758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737" },
	};
	static const char msg[] = "what do ya want for nothing?";

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		unsigned len = geli_hashlen(v[i].aalgo);
		uint8_t out[64], again[64];
		struct gc_mac *m;

		memset(out, 0, sizeof(out));
		tap_ok(gc_mac_new(gc_current(), algs_hmac(v[i].aalgo)->hash, &m) == 0,
		    "[%s] %s context", be,
		    geli_algo_name(v[i].aalgo));
		gc_mac(m, (const uint8_t *)"Jefe", 4, msg, sizeof(msg) - 1, out, len);
		tap_is_hex(out, len, v[i].hex, "[%s] %s of the RFC test case", be,
		    geli_algo_name(v[i].aalgo));
		/* A shorter tag is the digest's first bytes; re-keying resets. */
		gc_mac(m, (const uint8_t *)"other", 5, "x", 1, again, len);
		gc_mac(m, (const uint8_t *)"Jefe", 4, msg, sizeof(msg) - 1, again, 8);
		tap_ok(memcmp(again, out, 8) == 0, "[%s] %s: re-keyed, truncated to 8", be,
		    geli_algo_name(v[i].aalgo));
		gc_mac_free(m);
	}
}

/* One CBC chain or XTS unit per cipher, against published ciphertexts. */
static void
test_ciphers(void)
{
	static const struct {
		unsigned ealgo, keylen;
		const char *key, *iv, *plain, *cipher, *what;
	} v[] = {
		{ GELI_ALGO_AES_CBC, 128, "2b7e151628aed2a6abf7158809cf4f3c",
		  "000102030405060708090a0b0c0d0e0f", "6bc1bee22e409f96e93d7e117393172a",
		  "7649abac8119b246cee98e9b12e9197d", "AES-CBC-128 SP 800-38A F.2.1" },
		{ GELI_ALGO_CAMELLIA_CBC, 128, "0123456789abcdeffedcba9876543210",
		  "00000000000000000000000000000000", "0123456789abcdeffedcba9876543210",
		  "67673138549669730857065648eabe43", "Camellia-128 RFC 3713" },
		{ GELI_ALGO_BLOWFISH_CBC, 128, "0123456789abcdeff0e1d2c3b4a59687",
		  "fedcba9876543210",
		  "37363534333231204e6f77206973207468652074696d6520666f722000000000",
		  "6b77b4d63006dee605b156e27403979358deb9e7154616d959f1652bd5ff92cc",
		  "Blowfish-CBC-128 libdes cbc_ok" },
		{ GELI_ALGO_3DES_CBC, 192,
		  "0123456789abcdeff1e0d3c2b5a49786fedcba9876543210", "fedcba9876543210",
		  "37363534333231204e6f77206973207468652074696d6520666f722000000000",
		  "3fe301c962ac01d02213763c1cbd4cdc799657c064ecf5d41c673812cfde9675",
		  "3DES-CBC libdes cbc3_ok" },
		{ GELI_ALGO_AES_XTS, 128,
		  "1111111111111111111111111111111122222222222222222222222222222222",
		  "33333333330000000000000000000000",
		  "4444444444444444444444444444444444444444444444444444444444444444",
		  "c454185e6a16936e39334038acef838bfb186fff7480adc4289382ecd6d394f0",
		  "AES-XTS-128 IEEE 1619 vector 2" },
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		/* The GELI algorithm in generic terms, as the volume keys it. */
		const struct geli_alg *a = algs_cipher(v[i].ealgo);
		uint8_t key[64], iv[16], plain[64], out[64], back[64];
		struct gc_cipher_ctx *c;
		int len;

		tap_unhex(v[i].key, key, sizeof(key));
		tap_unhex(v[i].iv, iv, sizeof(iv));
		len = tap_unhex(v[i].plain, plain, sizeof(plain));
		tap_ok(gc_cipher_new(gc_current(), a->cipher, a->mode, key,
		    algs_keybytes(a, v[i].keylen), &c) == 0, "[%s] %s: keyed", be,
		    v[i].what);
		gc_crypt(c, iv, plain, out, (size_t)len, 1);
		tap_is_hex(out, (size_t)len, v[i].cipher, "[%s] %s: encrypt", be, v[i].what);
		gc_crypt(c, iv, out, back, (size_t)len, 0);
		tap_ok(memcmp(back, plain, (size_t)len) == 0, "[%s] %s: decrypt", be, v[i].what);
		/* In place, as the data path runs it. */
		memcpy(back, plain, (size_t)len);
		gc_crypt(c, iv, back, back, (size_t)len, 1);
		tap_ok(memcmp(back, out, (size_t)len) == 0, "[%s] %s: in place", be, v[i].what);
		gc_cipher_free(c);
		if (a->mode == GC_CBC) {
			/* Keyed, used once and freed, as the key slots are. */
			memset(out, 0, sizeof(out));
			if (gc_cipher_new(NULL, a->cipher, GC_CBC, key,
			    algs_keybytes(a, v[i].keylen), &c) == 0) {
				gc_crypt(c, iv, plain, out, (size_t)len, 1);
				gc_cipher_free(c);
			}
			tap_is_hex(out, (size_t)len, v[i].cipher,
			    "[%s] %s: one-shot CBC", be, v[i].what);
		}
	}
}

static void
test_all(void)
{
	test_hmac();
	test_gmac();
	test_weak_blowfish();
	test_pbkdf2();
	test_ukey();
	test_secmem();
	test_digests();
	test_chunk_macs();
	test_ciphers();
	tap_ok(gc_random(NULL, 0, false) == 0, "[%s] zero random bytes", be);
}

int
main(void)
{
	/* Every backend in one process: each object keeps its own. */
	for (unsigned i = 0; (be = geli_crypto_backend(i)) != NULL; i++) {
		tap_ok(geli_crypto_select(be) == 0 && strcmp(geli_crypto_name(), be) == 0,
		    "[%s] selected (%s)", be, geli_crypto_version());
		test_all();
	}
	tap_ok(geli_crypto_select("bogus") == -EINVAL, "an unknown backend is refused");
	unsetenv("GELI_CRYPTO");
	int r = geli_crypto_select(NULL);
	tap_ok(r == 0 && strcmp(geli_crypto_name(), "gcrypt") == 0,
	    "without GELI_CRYPTO the default is libgcrypt (%s)", geli_crypto_name());
	setenv("GELI_CRYPTO", "openssl", 1);
	r = geli_crypto_select(NULL);
	tap_ok(r == 0 && strcmp(geli_crypto_name(), "openssl") == 0,
	    "GELI_CRYPTO=openssl selects OpenSSL (%s)", geli_crypto_name());
	setenv("GELI_CRYPTO", "", 1);
	r = geli_crypto_select(NULL);
	tap_ok(r == 0 && strcmp(geli_crypto_name(), "gcrypt") == 0,
	    "an empty GELI_CRYPTO is the default (%s)", geli_crypto_name());
	return tap_done();
}
