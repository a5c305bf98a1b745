/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * geli_unlock_check and geli_unlock (lib/unlock.c): each refusal with its
 * own code and in FreeBSD's order, the user key from keyfiles and a
 * passphrase, each slot, -n, a user key made before, and -C (no key out).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "geli.h"
#include "tap.h"

#define PROVSIZE (1u << 20)

static const char pass0[] = "slot zero", pass1[] = "slot one";
static const uint8_t keyfile[] = "some keyfile bytes";

/* The user key of keyfile (when kf) and pass for md, as geli init makes it. */
static void
make_ukey(const struct geli_metadata *md, bool kf, const char *pass,
    uint8_t *ukey)
{
	struct geli_ukey_ctx *ctx;

	geli_ukey_new(&ctx);
	if (kf)
		geli_ukey_update(ctx, keyfile, sizeof(keyfile));
	geli_ukey_final(ctx, md, pass, pass != NULL ? strlen(pass) : 0, ukey);
	geli_ukey_free(ctx);
}

/* A v7 AES-XTS-128 record for a provider of PROVSIZE bytes: slot 0 opens
 * with keyfile + pass0, slot 1 with pass1 alone. */
static void
make_md(struct geli_metadata *md, uint8_t *mk)
{
	uint8_t ukey[GELI_USERKEYLEN];

	memset(md, 0, sizeof(*md));
	memcpy(md->magic, GELI_MAGIC, sizeof(GELI_MAGIC));
	md->version = GELI_VERSION;
	md->ealgo = GELI_ALGO_AES_XTS;
	md->keylen = 128;
	md->provsize = PROVSIZE;
	md->sectorsize = 4096;
	md->iterations = 1000;
	geli_random(md->salt, sizeof(md->salt));
	geli_random(mk, GELI_MKEY_DATALEN);
	make_ukey(md, true, pass0, ukey);
	geli_mkey_encrypt(md->ealgo, md->keylen, ukey, mk, md->mkeys);
	make_ukey(md, false, pass1, ukey);
	geli_mkey_encrypt(md->ealgo, md->keylen, ukey, mk,
	    md->mkeys + GELI_MKEYLEN);
	md->keys = 0x03;
}

int
main(void)
{
	char path[] = "/tmp/test_unlock.XXXXXX";
	struct geli_metadata md, bad;
	struct geli_provider *p;
	struct geli_ukey_ctx *kf, *empty;
	uint8_t mk[GELI_MKEY_DATALEN], out[GELI_MKEY_DATALEN], ukey[64];
	int fd, used;

	fd = mkstemp(path);
	if (fd < 0 || ftruncate(fd, PROVSIZE) != 0 ||
	    geli_provider_open(path, false, &p) != 0) {
		tap_ok(0, "a provider of %u bytes", PROVSIZE);
		return tap_done();
	}
	close(fd);
	make_md(&md, mk);
	geli_ukey_new(&kf);
	geli_ukey_update(kf, keyfile, sizeof(keyfile));
	geli_ukey_new(&empty);

	/* ---- The refusals, each its own code, in FreeBSD's order. */
	tap_ok(geli_unlock_check(p, &md, -1, 0) == 0, "good metadata passes");
	bad = md;
	bad.provsize--;
	bad.keys = 0;
	tap_ok(geli_unlock_check(p, &bad, -1, 0) == -GELI_ESIZE,
	    "md_provsize is not the provider's: -GELI_ESIZE, first");
	tap_ok(geli_unlock_check(NULL, &bad, -1, 0) == -GELI_ENOKEYS,
	    "no provider (a backup file): no size to compare");
	bad = md;
	bad.keys = 0;
	bad.ealgo = 99;
	tap_ok(geli_unlock_check(p, &bad, -1, 0) == -GELI_ENOKEYS,
	    "md_keys 0: -GELI_ENOKEYS, before the cipher");
	bad = md;
	bad.ealgo = 99;
	tap_ok(geli_unlock_check(p, &bad, -1, 0) == -GELI_EEALGO,
	    "an unknown cipher: -GELI_EEALGO");
	bad = md;
	bad.keylen = 192;
	tap_ok(geli_unlock_check(p, &bad, -1, 0) == -GELI_EKEYLEN,
	    "AES-XTS 192: -GELI_EKEYLEN");
	bad = md;
	bad.flags |= GELI_FLAG_AUTH;
	bad.aalgo = 0;
	tap_ok(geli_unlock_check(p, &bad, -1, 0) == -GELI_EAALGO,
	    "AUTH without an HMAC: -GELI_EAALGO");
	bad = md;
	bad.sectorsize = 3000;
	tap_ok(geli_unlock_check(p, &bad, -1, 0) == -GELI_ESECTORSIZE,
	    "a sector size of 3000: -GELI_ESECTORSIZE");
	bad = md;
	bad.sectorsize = 1u << 20;
	tap_ok(geli_unlock_check(p, &bad, -1, 0) == -GELI_ENOROOM,
	    "no sector fits beside the metadata: -GELI_ENOROOM");
	tap_ok(geli_unlock_check(p, &md, 2, 0) == -GELI_EKEYNO &&
	    geli_unlock_check(p, &md, -2, 0) == -GELI_EKEYNO,
	    "keyno 2 and -2: -GELI_EKEYNO");
	bad = md;
	bad.sectorsize = 3000;
	tap_ok(geli_unlock_check(p, &bad, 5, 0) == -GELI_ESECTORSIZE,
	    "the metadata before keyno");

	/* Only the slots (resume, setkey): the size still, with a provider. */
	bad = md;
	bad.sectorsize = 3000;
	bad.flags |= GELI_FLAG_AUTH;
	tap_ok(geli_unlock_check(p, &bad, -1, GELI_UNLOCK_SLOTS) == 0,
	    "slots only: the sector size and the HMAC are not looked at");
	bad.ealgo = 99;
	tap_ok(geli_unlock_check(p, &bad, -1, GELI_UNLOCK_SLOTS) == -GELI_EEALGO,
	    "slots only: the cipher is");
	bad = md;
	bad.keylen = 100;
	tap_ok(geli_unlock_check(NULL, &bad, -1, GELI_UNLOCK_SLOTS) ==
	    -GELI_EKEYLEN, "slots only: and its key length");
	bad = md;
	bad.provsize++;
	tap_ok(geli_unlock_check(p, &bad, -1, GELI_UNLOCK_SLOTS) == -GELI_ESIZE &&
	    geli_unlock_check(NULL, &bad, -1, GELI_UNLOCK_SLOTS) == 0,
	    "slots only: the size with a provider, none without");

	/* ---- Unlocking. */
	struct geli_keymat km0 = { kf, 1, pass0, strlen(pass0), NULL };
	struct geli_keymat km1 = { NULL, 0, pass1, strlen(pass1), NULL };
	used = -1;
	memset(out, 0, sizeof(out));
	tap_ok(geli_unlock(p, &md, &km0, -1, 0, out, &used) == 0 && used == 0 &&
	    memcmp(out, mk, sizeof(mk)) == 0,
	    "keyfile + passphrase: slot 0, the Master Key");
	memset(out, 0, sizeof(out));
	tap_ok(geli_unlock(p, &md, &km1, -1, 0, out, &used) == 0 && used == 1 &&
	    memcmp(out, mk, sizeof(mk)) == 0,
	    "the passphrase alone: slot 1");
	tap_ok(geli_unlock(p, &md, &km1, 0, 0, out, &used) == -GELI_EWRONGKEY,
	    "-n 0 with slot 1's key: a wrong key");
	tap_ok(geli_unlock(p, &md, &km1, 1, 0, out, &used) == 0 && used == 1,
	    "-n 1 with it: slot 1");
	struct geli_keymat wrong = { kf, 1, pass1, strlen(pass1), NULL };
	tap_ok(geli_unlock(p, &md, &wrong, -1, 0, out, &used) == -GELI_EWRONGKEY,
	    "a keyfile more than slot 1 wants: a wrong key");
	struct geli_keymat nopass = { kf, 1, NULL, 0, NULL };
	tap_ok(geli_unlock(p, &md, &nopass, -1, 0, out, &used) ==
	    -GELI_EWRONGKEY, "-p on a passphrase slot: a wrong key");
	struct geli_keymat none = { NULL, 0, NULL, 0, NULL };
	tap_ok(geli_unlock(p, &md, &none, -1, 0, out, &used) == -GELI_ENOKEYMAT,
	    "neither keyfile nor passphrase: -GELI_ENOKEYMAT");
	struct geli_keymat emptykf = { empty, 1, NULL, 0, NULL };
	tap_ok(geli_unlock(p, &md, &emptykf, -1, 0, out, &used) ==
	    -GELI_EWRONGKEY, "an empty keyfile is a key component");
	tap_ok(geli_unlock(p, &md, &km0, -1, 0, NULL, &used) == 0 && used == 0,
	    "no place for the Master Key (-C): checked only");
	tap_ok(geli_unlock(p, &md, &km0, -1, 0, out, NULL) == 0,
	    "no place for the slot number");
	bad = md;
	bad.ealgo = 99;
	tap_ok(geli_unlock(p, &bad, &km0, -1, 0, out, &used) == -GELI_EEALGO,
	    "the refusals come first");

	/* A user key made before (the daemon's resume). */
	make_ukey(&md, false, pass1, ukey);
	struct geli_keymat made = { NULL, 0, NULL, 0, ukey };
	memset(out, 0, sizeof(out));
	tap_ok(geli_unlock(NULL, &md, &made, -1, GELI_UNLOCK_SLOTS, out,
	    &used) == 0 && used == 1 && memcmp(out, mk, sizeof(mk)) == 0,
	    "a user key made before: slot 1");

	/* No passphrase on the provider (-P at init). */
	md.iterations = -1;
	tap_ok(geli_unlock(p, &md, &km0, -1, 0, out, &used) ==
	    -GELI_ENOPASSPHRASE, "a passphrase for metadata without one: "
	    "-GELI_ENOPASSPHRASE");
	make_ukey(&md, true, NULL, ukey);
	geli_mkey_encrypt(md.ealgo, md.keylen, ukey, mk, md.mkeys);
	md.keys = 0x01;
	tap_ok(geli_unlock(p, &md, &nopass, -1, 0, out, &used) == 0 &&
	    used == 0, "-p and the keyfile: slot 0");
	tap_ok(strcmp(geli_strerror(-GELI_ENOKEYMAT), "No key components "
	    "given") == 0 && strcmp(geli_strerror(-GELI_ENOPASSPHRASE),
	    "No passphrase on this provider") == 0, "their texts");

	geli_ukey_free(kf);
	geli_ukey_free(empty);
	geli_provider_close(p);
	unlink(path);
	return tap_done();
}
