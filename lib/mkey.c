/* SPDX-License-Identifier: BSD-2-Clause */
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
 * That rule is slot_crypt's, and nobody else's.
 */
#include <string.h>

#include "algs.h"
#include "crypto.h"
#include "geli.h"

/* Secrets of one slot operation, in one locked allocation. */
struct mkey_scratch {
	uint8_t ek[64];			/* EK, the slot cipher key */
	uint8_t hk[64];			/* HK, the verifier key */
	uint8_t plain[GELI_MKEYLEN];	/* MK || VER */
};

/* A scratch area with EK and HK derived from ukey; NULL on failure (*error). */
static struct mkey_scratch *
mkey_scratch_new(const uint8_t *ukey, int *error)
{
	static const uint8_t one = 0x01, zero = 0x00;
	struct mkey_scratch *s;

	s = geli_secure_alloc(sizeof(*s));
	if (s == NULL) {
		*error = -ENOMEM;
		return NULL;
	}
	*error = gc_hmac_sha512(ukey, GELI_USERKEYLEN, &one, 1, s->ek);
	if (*error == 0)
		*error = gc_hmac_sha512(ukey, GELI_USERKEYLEN, &zero, 1, s->hk);
	if (*error != 0) {
		geli_secure_free(s);
		return NULL;
	}
	return s;
}

/*
 * The slot cipher: the generic cipher of the volume's algorithm (algs.h) in
 * CBC mode, whatever mode its data path uses, with one key of keylen bits:
 * the slots of an AES-XTS volume use AES-CBC of the same key length, every
 * other cipher its own in CBC mode, and NULL (GC_NONE, no key) stores
 * MK || VER in the clear.  192 bytes are whole 8- and 16-byte blocks.
 */
static int
slot_crypt(unsigned ealgo, unsigned keylen, const uint8_t *ek,
    const uint8_t *in, uint8_t *out, int enc)
{
	static const uint8_t iv[16];
	const struct geli_alg *a = algs_cipher(ealgo);
	struct gc_cipher_ctx *c;
	int error;

	/* A key is whole bytes; NULL, which has none, takes any length. */
	if (a == NULL || keylen == 0 || keylen > 512 ||
	    (a->nkeys > 0 && keylen % 8 != 0))
		return -EINVAL;
	error = gc_cipher_new(NULL, a->cipher, GC_CBC, ek, keylen / 8, &c);
	if (error != 0)
		return error;
	error = gc_crypt(c, iv, in, out, GELI_MKEYLEN, enc);
	gc_cipher_free(c);	/* the library wipes the key schedule */
	return error;
}

int
geli_mkey_encrypt(unsigned ealgo, unsigned keylen, const uint8_t *ukey,
    const uint8_t *mkey, uint8_t *slot)
{
	struct mkey_scratch *s;
	int error;

	s = mkey_scratch_new(ukey, &error);
	if (s == NULL)
		return error;
	memcpy(s->plain, mkey, GELI_MKEY_DATALEN);
	error = gc_hmac_sha512(s->hk, 64, mkey, GELI_MKEY_DATALEN,
	    s->plain + GELI_MKEY_DATALEN);
	if (error == 0)
		error = slot_crypt(ealgo, keylen, s->ek, s->plain, slot, 1);
	geli_secure_free(s);
	return error;
}

/* 0: slot n verified, MK in mkey; -GELI_EWRONGKEY: it did not. */
static int
mkey_decrypt_slot(const struct geli_metadata *md, struct mkey_scratch *s,
    int n, uint8_t *mkey)
{
	uint8_t ver[64];
	int error;

	if ((md->keys & (1u << n)) == 0)
		return -GELI_EWRONGKEY;
	error = slot_crypt(md->ealgo, md->keylen, s->ek,
	    md->mkeys + n * GELI_MKEYLEN, s->plain, 0);
	if (error == 0)
		error = gc_hmac_sha512(s->hk, 64, s->plain, GELI_MKEY_DATALEN,
		    ver);
	if (error == 0 && !geli_ct_equal(ver, s->plain + GELI_MKEY_DATALEN,
	    sizeof(ver)))
		error = -GELI_EWRONGKEY;
	if (error == 0)
		memcpy(mkey, s->plain, GELI_MKEY_DATALEN);
	geli_wipe(ver, sizeof(ver));
	return error;
}

int
geli_mkey_decrypt(const struct geli_metadata *md, const uint8_t *ukey,
    int keyno, uint8_t *mkey, int *used)
{
	struct mkey_scratch *s;
	int error, n;

	if (keyno < -1 || keyno >= GELI_MAXMKEYS)
		return -EINVAL;
	s = mkey_scratch_new(ukey, &error);
	if (s == NULL)
		return error;
	/* Slot 0 then 1 (or only keyno): the first that verifies wins; a
	 * cipher error stops the search. */
	error = -GELI_EWRONGKEY;
	for (n = 0; n < GELI_MAXMKEYS && error == -GELI_EWRONGKEY; n++) {
		if (keyno != -1 && n != keyno)
			continue;
		error = mkey_decrypt_slot(md, s, n, mkey);
		if (error == 0 && used != NULL)
			*used = n;
	}
	geli_secure_free(s);
	return error;
}
