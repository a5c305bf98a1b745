/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unlocking a provider (geli.h): the one way from metadata and key material
 * to a Master Key, for every front end.  The order is FreeBSD's attach,
 * with the kernel's refusals moved before the user key is made:
 *
 *   refusals   md_provsize == mediasize, md_keys != 0, metadata the code
 *              behind it can open (§8.2), keyno in range
 *   user key   UK = HMAC_SHA512("", keyfiles || PASSPART)        (§4.2)
 *   slot       MK || VER = CBC_decrypt(..., slot keyno), VER checked (§5)
 */
#include <errno.h>
#include <stdlib.h>

#include "geli.h"
#include "internal.h"

/* The stack the key derivation and slot decryption may use, and more. */
#define UNLOCK_STACK (64u << 10)

int
geli_unlock_check(struct geli_provider *p, const struct geli_metadata *md,
    int keyno, unsigned flags)
{
	bool slots = (flags & GELI_UNLOCK_SLOTS) != 0;
	uint64_t size = p != NULL ? geli_provider_mediasize(p) : 0;
	int error;

	if (p != NULL && md->provsize != size)
		return -GELI_ESIZE;
	if (md->keys == 0)
		return -GELI_ENOKEYS;
	error = geli_metadata_check(md, slots ? 0 : size,
	    p != NULL ? geli_provider_sectorsize(p) : 512);
	if (slots && error != -GELI_EEALGO && error != -GELI_EKEYLEN)
		error = 0;
	if (error != 0)
		return error;
	if (keyno < -1 || keyno >= GELI_MAXMKEYS)
		return -GELI_EKEYNO;
	return 0;
}

/* The user key of km for md into ukey (GELI_USERKEYLEN bytes). */
static int
user_key(const struct geli_metadata *md, const struct geli_keymat *km,
    uint8_t *ukey)
{
	struct geli_ukey_ctx *none = NULL;
	int error;

	if (km->nkeyfiles == 0 && km->passphrase == NULL)
		return -GELI_ENOKEYMAT;
	if (km->passphrase != NULL && md->iterations < 0)
		return -GELI_ENOPASSPHRASE;
	if (km->keyfiles == NULL && (error = geli_ukey_new(&none)) != 0)
		return error;
	error = geli_ukey_final(km->keyfiles != NULL ? km->keyfiles : none, md,
	    km->passphrase, km->passlen, ukey);
	geli_ukey_free(none);
	return error;
}

int
geli_unlock(struct geli_provider *p, const struct geli_metadata *md,
    const struct geli_keymat *km, int keyno, unsigned flags, uint8_t *mkey,
    int *used)
{
	uint8_t *ukey = NULL, *scratch = NULL;
	int error;

	error = geli_unlock_check(p, md, keyno, flags);
	if (error != 0)
		return error;
	if (km->ukey == NULL) {
		ukey = geli_secure_alloc(GELI_USERKEYLEN);
		if (ukey == NULL)
			return -ENOMEM;
		error = user_key(md, km, ukey);
	}
	/* attach -C: the key is checked, the Master Key kept nowhere. */
	if (error == 0 && mkey == NULL &&
	    (mkey = scratch = geli_secure_alloc(GELI_MKEY_DATALEN)) == NULL)
		error = -ENOMEM;
	if (error == 0)
		error = geli_mkey_decrypt(md, km->ukey != NULL ? km->ukey : ukey,
		    keyno, mkey, used);
	geli_secure_free(ukey);
	geli_secure_free(scratch);
	/* What PBKDF2, the HMACs and the slot cipher left below this frame
	 * (an attach forks its daemon from here on, stack and all). */
	secmem_burn_stack(UNLOCK_STACK);
	return error;
}
