/*
 * Master-key slots (§5).  For a 64-byte UserKey and the 128-byte Master Key
 * MK = IV Key || Data Key:
 *
 *   HK   = HMAC_SHA512(UserKey, 0x00)         verifier key
 *   VER  = HMAC_SHA512(HK, MK)
 *   EK   = HMAC_SHA512(UserKey, 0x01)         slot encryption key
 *   slot = CBC_encrypt(cipher, EK[0 .. keylen/8), IV = 0, MK || VER)
 *
 * The cipher is the volume's own in CBC mode, except AES-XTS volumes, whose
 * slots use AES-CBC with the same key length; NULL stores MK in the clear.
 */
#include <string.h>

#include "crypto.h"
#include "geli.h"

/* EK, the slot cipher key; and HK, the verifier key. */
static int
mkey_keys(const uint8_t *ukey, uint8_t *ek, uint8_t *hk)
{
	static const uint8_t one = 0x01, zero = 0x00;
	int error;

	error = gc_hmac_sha512(ukey, GELI_USERKEYLEN, &one, 1, ek);
	if (error == 0)
		error = gc_hmac_sha512(ukey, GELI_USERKEYLEN, &zero, 1, hk);
	return error;
}

static int
mkey_crypt(unsigned ealgo, unsigned keylen, const uint8_t *ek,
    const uint8_t *in, uint8_t *out, int enc)
{
	static const uint8_t iv[16];

	if (keylen == 0 || keylen > 512)
		return -EINVAL;
	return gc_cbc(ealgo, ek, keylen, iv, in, out, GELI_MKEYLEN, enc);
}

int
geli_mkey_encrypt(unsigned ealgo, unsigned keylen, const uint8_t *ukey,
    const uint8_t *mkey, uint8_t *slot)
{
	uint8_t *sec, *ek, *hk, *plain;
	int error;

	sec = geli_secure_alloc(64 + 64 + GELI_MKEYLEN);
	if (sec == NULL)
		return -ENOMEM;
	ek = sec;
	hk = sec + 64;
	plain = sec + 128;
	error = mkey_keys(ukey, ek, hk);
	if (error == 0) {
		memcpy(plain, mkey, GELI_MKEY_DATALEN);
		error = gc_hmac_sha512(hk, 64, mkey, GELI_MKEY_DATALEN,
		    plain + GELI_MKEY_DATALEN);
	}
	if (error == 0)
		error = mkey_crypt(ealgo, keylen, ek, plain, slot, 1);
	geli_secure_free(sec);
	return error;
}

/* 0: slot n verified, MK in mkey; -GELI_EWRONGKEY: it did not. */
static int
mkey_decrypt_slot(const struct geli_metadata *md, const uint8_t *ek,
    const uint8_t *hk, int n, uint8_t *plain, uint8_t *mkey)
{
	uint8_t ver[64];
	int error;

	if ((md->keys & (1u << n)) == 0)
		return -GELI_EWRONGKEY;
	error = mkey_crypt(md->ealgo, md->keylen, ek,
	    md->mkeys + n * GELI_MKEYLEN, plain, 0);
	if (error != 0)
		return error;
	error = gc_hmac_sha512(hk, 64, plain, GELI_MKEY_DATALEN, ver);
	if (error != 0)
		return error;
	if (!geli_ct_equal(ver, plain + GELI_MKEY_DATALEN, sizeof(ver))) {
		geli_wipe(ver, sizeof(ver));
		return -GELI_EWRONGKEY;
	}
	geli_wipe(ver, sizeof(ver));
	memcpy(mkey, plain, GELI_MKEY_DATALEN);
	return 0;
}

int
geli_mkey_decrypt(const struct geli_metadata *md, const uint8_t *ukey,
    int keyno, uint8_t *mkey, int *used)
{
	uint8_t *sec, *ek, *hk, *plain;
	int error, n;

	if (keyno < -1 || keyno >= GELI_MAXMKEYS)
		return -EINVAL;
	sec = geli_secure_alloc(64 + 64 + GELI_MKEYLEN);
	if (sec == NULL)
		return -ENOMEM;
	ek = sec;
	hk = sec + 64;
	plain = sec + 128;
	error = mkey_keys(ukey, ek, hk);
	for (n = keyno == -1 ? 0 : keyno; error == 0 || error ==
	    -GELI_EWRONGKEY; n++) {
		if (n >= GELI_MAXMKEYS || (keyno != -1 && n != keyno)) {
			error = -GELI_EWRONGKEY;
			break;
		}
		/* The first slot that verifies wins; a cipher error stops. */
		error = mkey_decrypt_slot(md, ek, hk, n, plain, mkey);
		if (error == 0) {
			if (used != NULL)
				*used = n;
			break;
		}
	}
	geli_secure_free(sec);
	return error;
}
