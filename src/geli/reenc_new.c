/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A new conversion of geli reencrypt (cmd_reencrypt.c has the verb): the
 * key that opens the provider, the record it goes to with its key slots
 * (init's rules, or the old user key kept), what -E may take, the start,
 * and the backup of the new record at the end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "reenc.h"

/* ---- Keys ------------------------------------------------------------------ */

/* See reenc.h. */
int
reenc_unlock(struct opts *o, bool isnew, struct geli_provider *p,
    const struct geli_metadata *md, const char *prov, uint8_t *mk,
    int *slot, uint8_t *ukey, struct luks2_keys *carry)
{
	struct msg_args a = { .prov = prov };
	struct geli_keymat km;
	struct keysrc *ks;
	int error;

	error = geli_unlock_check(p, md, (int)opt_num(o, 'n'), 0);
	if (error != 0) {
		req_msg(OP_ATTACH, GELI_STEP_NONE, error, &a);
		return -1;
	}
	if (keysrc_new(o, isnew, &ks) != 0)
		return -1;
	if (keysrc_keymat(ks, md, &km) != 0) {
		keysrc_free(ks);
		return -1;
	}
	error = geli_unlock(p, md, &km, (int)opt_num(o, 'n'), 0, mk, slot);
	/* The user key again, for new slots that keep it. */
	if (error == 0 && ukey != NULL)
		error = geli_ukey_final(km.keyfiles, md, km.passphrase,
		    km.passlen, ukey);
	/* The passphrase itself, for a LUKS2 keyslot. */
	if (error == 0 && carry != NULL && km.passphrase != NULL) {
		if ((carry->pass = geli_secure_alloc(km.passlen + 1)) == NULL)
			error = -ENOMEM;
		else
			memcpy(carry->pass, km.passphrase, km.passlen);
		carry->passlen = km.passlen;
	}
	keysrc_free(ks);
	if (error != 0) {
		req_msg(OP_ATTACH, GELI_STEP_NONE, error, &a);
		return -1;
	}
	return 0;
}

bool
reenc_new_keys_given(struct opts *o)
{
	return o->given['J'] || o->given['K'] || o->given['P'];
}

/*
 * nmd's slot 0: newmk (random) under the new user key, slot 1 random.  The
 * new key options make it (init's rules); without them the old user key,
 * with the old salt and count, so that the same passphrase opens it.
 */
static int
new_slots(struct opts *o, struct geli_metadata *nmd, uint8_t *newmk,
    const uint8_t *oldukey)
{
	uint8_t *ukey = geli_secure_alloc(GELI_USERKEYLEN);
	struct keysrc *ks = NULL;
	int error = -1;

	if (ukey == NULL) {
		req_error("Cannot allocate memory.");
		return -1;
	}
	if (geli_random_key(newmk, GELI_MKEY_DATALEN) != 0 ||
	    geli_random(nmd->mkeys, sizeof(nmd->mkeys)) != 0) {
		req_error("Cannot get random bytes.");
		goto out;
	}
	if (oldukey != NULL) {
		memcpy(ukey, oldukey, GELI_USERKEYLEN);
	} else {
		if (geli_random(nmd->salt, sizeof(nmd->salt)) != 0) {
			req_error("Cannot get random bytes.");
			goto out;
		}
		if (keysrc_new(o, true, &ks) != 0 ||
		    keysrc_ukey(ks, nmd, ukey) != 0)
			goto out;
	}
	nmd->keys = 0x01;
	if ((error = geli_mkey_encrypt(nmd->ealgo, nmd->keylen, ukey, newmk,
	    nmd->mkeys)) != 0)
		req_error("Cannot encrypt Master Key: %s.", strerror(-error));
out:
	keysrc_free(ks);
	geli_secure_free(ukey);
	return error == 0 ? 0 : -1;
}

/* ---- The new record ---------------------------------------------------------- */

static int
no_integrity_added(void)
{
	req_error("Integrity cannot be added in place.");
	return -1;
}

static int
refuse_auth(const char *prov, const struct geli_metadata *md)
{
	if (!(md->flags & GELI_FLAG_AUTH))
		return 0;
	req_error("Provider %s uses integrity (%s): its sectors cannot be "
	    "converted in place.", prov, geli_algo_name(md->aalgo));
	return -1;
}

/* REKEY: the old record with the version, cipher and key length asked for. */
static int
rekey_record(struct opts *o, const char *prov, const struct geli_metadata *md,
    struct geli_metadata *nmd)
{
	*nmd = *md;
	nmd->version = GELI_VERSION;
	if (*opt_str(o, 'a') != '\0')
		return no_integrity_added();
	if (opt_num(o, 's') != 0 && opt_num(o, 's') != md->sectorsize) {
		req_error("Provider %s has %u-byte sectors: the sector size "
		    "cannot change in place.", prov, (unsigned)md->sectorsize);
		return -1;
	}
	if (o->given['e'] || o->given['l']) {
		if (o->given['e'])
			nmd->ealgo = GELI_ALGO_NONE;
		if (parse_algorithms(o, PARAMS_INIT, nmd) != 0)
			return -1;
	}
	if (o->given['i'] && !reenc_new_keys_given(o)) {
		req_error("Option -i needs a new key (-J, -K or -P).");
		return -1;
	}
	if (reenc_new_keys_given(o))
		nmd->iterations = (int32_t)opt_num(o, 'i');
	if (opt_bool(o, 'P') && o->given['i']) {
		req_error("Options -i and -P are mutually exclusive.");
		return -1;
	}
	if (opt_bool(o, 'P'))
		nmd->iterations = -1;
	return 0;
}

/* -E: init's record for this provider, after what is on it was looked at. */
static int
encrypt_record(struct opts *o, const char *prov, const char *path,
    struct geli_provider *p, struct geli_metadata *nmd)
{
	uint64_t N = geli_provider_mediasize(p), keep;

	if (init_template(o, nmd) != 0)
		return -1;
	if (nmd->flags & GELI_FLAG_AUTH)
		return no_integrity_added();
	nmd->provsize = N;
	if (parse_sectorsize(o, PARAMS_INIT, geli_provider_sectorsize(p),
	    &nmd->sectorsize) != 0)
		return -1;
	keep = geli_eli_mediasize(nmd, N, geli_provider_sectorsize(p), false);
	if (keep == 0) {
		req_error("Provider %s is too small: %ju bytes.", prov,
		    (uintmax_t)N);
		return -1;
	}
	return plain_check(prov, path, keep, opt_bool(o, 'f'));
}

/* The backup of the record the provider ends with (-B, as init). */
static void
backup_new(struct opts *o, const char *prov, struct geli_metadata *nmd,
    uint32_t psize)
{
	struct msg_args a = { .prov = prov };
	enum geli_step step;
	char *file = backup_name(opt_str(o, 'B'), prov, 1);
	int error;

	if (file == NULL) {
		req_error("Cannot allocate memory.");
		return;
	}
	if (strcmp(file, "none") != 0) {
		a.file = file;
		error = geli_backup_metadata(nmd, psize, file, &step);
		if (error != 0)
			req_msg(OP_BACKUP, step, error, &a);
		else
			backup_notice(prov, file);
	}
	free(file);
}

/* LUKS2: what the provider goes to, refused where LUKS2 cannot map it. */
static int
luks2_record(const char *prov, struct geli_provider *p,
    const struct geli_metadata *md, struct geli_metadata *nmd)
{
	uint64_t N = geli_provider_mediasize(p);

	if (geli_luks2_record(md->sectorsize, N, nmd) != 0) {
		req_error("Provider %s has %u-byte sectors, which LUKS2 cannot "
		    "take.", prov, (unsigned)md->sectorsize);
		return -1;
	}
	/* dm-crypt maps whole sectors from byte 0 to the end. */
	if (N % nmd->sectorsize != 0) {
		req_error("Provider %s is %ju bytes, not a multiple of LUKS2's "
		    "%u-byte sectors.", prov, (uintmax_t)N,
		    (unsigned)nmd->sectorsize);
		return -1;
	}
	return 0;
}

/* The daemon of an attached provider asked to start: 0, or with the
 * request error -1, or -2 where the daemon refused (nothing started). */
static int
start_attached(struct opts *o, const char *name, enum geli_reenc_kind kind,
    int slot, const struct geli_metadata *nmd, const uint8_t *newmk,
    const uint8_t uuid[16], const char *jpath)
{
	/* Locked: it carries the new Master Key. */
	struct ctl_request *rq = geli_secure_alloc(sizeof(*rq));
	struct ctl_reenc *e;
	struct ctl_reply rp;
	int error = -1;

	if (rq == NULL) {
		req_error("Cannot allocate memory.");
		return -1;
	}
	e = &rq->reenc;
	if (strlen(jpath) >= sizeof(e->journal)) {
		req_error("Journal path too long: %s.", jpath);
		geli_secure_free(rq);
		return -1;
	}
	ctl_request_init(rq, CTL_REENCRYPT);
	rq->keyno = slot;
	e->kind = kind;
	e->hotzone = (uint32_t)opt_num(o, 'z');
	memcpy(e->uuid, uuid, 16);
	memcpy(e->journal, jpath, strlen(jpath) + 1);
	if (kind == GELI_REENC_REKEY || kind == GELI_REENC_LUKS2) {
		struct geli_metadata x = *nmd;

		e->mdlen = GELI_MD_SIZE;
		e->mklen = GELI_MKEY_DATALEN;
		memcpy(e->mk, newmk, GELI_MKEY_DATALEN);
		if (geli_metadata_encode(&x, e->md) <= 0)
			e->mdlen = 0;	/* refused below */
		geli_wipe(&x, sizeof(x));
	}
	reenc_catch_signals();
	if (ctl_call(name, rq, &rp) != 0)
		req_error("Cannot reach the daemon of %s.eli.", name);
	else if (rp.code != 0) {
		req_error("%s", rp.message);
		error = -2;
	} else
		error = 0;
	geli_secure_free(rq);
	return error;
}

void
reenc_start(struct opts *o, const char *prov, struct geli_provider *p,
    enum geli_reenc_kind kind, struct geli_metadata *md, const char *attached,
    struct luks2_end *end)
{
	uint8_t *keys = geli_secure_alloc(2 * GELI_MKEY_DATALEN +
	    GELI_USERKEYLEN);
	uint8_t *oldmk = keys, *newmk = keys + GELI_MKEY_DATALEN;
	uint8_t *ukey = keys + 2 * GELI_MKEY_DATALEN, uuid[16];
	struct geli_metadata nmd;
	struct geli_reenc *r = NULL;
	struct luks2_keys lk = { 0 };
	char pbuf[4096], jpath[4200], why[4400], *hdr = end != NULL ?
	    end->hdr : NULL;
	const char *path = prov_path(prov, pbuf, sizeof(pbuf));
	int slot = 0, error;

	memset(&nmd, 0, sizeof(nmd));
	if (keys == NULL) {
		req_error("Cannot allocate memory.");
		return;
	}
	if (luks2_header_opt(o, kind) != 0)
		goto out;
	if (kind == GELI_REENC_LUKS2) {
		if (refuse_auth(prov, md) != 0 || luks2_record(prov, p, md,
		    &nmd) != 0 || luks2_unlock(o, p, md, prov, oldmk, &slot,
		    &lk) != 0)
			goto out;
		/* Without -H, on the disk where there is room before it. */
		if (*opt_str(o, 'H') == '\0') {
			int rc = luks2_place_find(prov, path, &end->pl, why,
			    sizeof(why));

			if (rc < 0)
				goto out;
			end->ondisk = rc == 1;
			if (!end->ondisk && verbose)
				printf("The LUKS2 header of %s goes in a file: "
				    "%s.\n", prov, why);
		}
		luks2_end_keys(end, &lk);
		/* Its volume key where a Master Key's Data Key is. */
		memset(newmk, 0, GELI_MKEY_DATALEN);
		if (geli_random_key(LUKS2_VK(newmk), LUKS2_VKLEN) != 0) {
			req_error("Cannot get random bytes.");
			goto out;
		}
	} else if (kind == GELI_REENC_ENCRYPT) {
		if (encrypt_record(o, prov, path, p, &nmd) != 0 ||
		    new_slots(o, &nmd, newmk, NULL) != 0)
			goto out;
	} else {
		if (refuse_auth(prov, md) != 0 ||
		    (kind == GELI_REENC_REKEY &&
		    rekey_record(o, prov, md, &nmd) != 0) ||
		    reenc_unlock(o, false, p, md, prov, oldmk, &slot,
		    reenc_new_keys_given(o) ? NULL : ukey, NULL) != 0)
			goto out;
		if (kind == GELI_REENC_REKEY && new_slots(o, &nmd, newmk,
		    reenc_new_keys_given(o) ? NULL : ukey) != 0)
			goto out;
	}
	/* The journal is named after its UUID, which the record names. */
	if (geli_random(uuid, sizeof(uuid)) != 0) {
		req_error("Cannot get random bytes.");
		goto out;
	}
	if (reenc_journal_of(o, uuid, jpath, sizeof(jpath)) != 0)
		goto out;
	/* LUKS2's header before anything changes on the provider. */
	if (kind == GELI_REENC_LUKS2 && (luks2_header_path(o, uuid, hdr,
	    sizeof(end->hdr)) != 0 || luks2_header_write(o, hdr, path,
	    end->ondisk ? LUKS2_DISK_HDR : 0, nmd.sectorsize, uuid,
	    LUKS2_VK(newmk), &lk) != 0)) {
		hdr[0] = '\0';
		goto out;
	}
	if (kind == GELI_REENC_LUKS2 && luks2_header_backup(o, prov, hdr) != 0) {
		unlink(hdr);
		goto out;
	}
	if (attached != NULL && kind == GELI_REENC_LUKS2) {
		error = start_attached(o, attached, kind, slot, &nmd, newmk,
		    uuid, jpath);
		if (error == -2)
			unlink(hdr);	/* nothing refers to it */
		if (error == 0 && reenc_wait(prov, attached) == 1 &&
		    luks2_end_ready(prov, end, LUKS2_VK(newmk)) == 0 &&
		    reenc_finish_attached(prov, attached) == 0)
			end->done = end->attached = true;
		goto out;
	}
	if (attached != NULL) {
		if (start_attached(o, attached, kind, slot, &nmd, newmk, uuid,
		    jpath) == 0 && reenc_wait(prov, attached) == 0 &&
		    kind != GELI_REENC_DECRYPT)
			backup_new(o, prov, &nmd, geli_provider_sectorsize(p));
		goto out;
	}
	error = geli_reenc_start(p, kind, kind == GELI_REENC_ENCRYPT ? NULL : md,
	    kind == GELI_REENC_ENCRYPT ? NULL : oldmk, slot,
	    kind == GELI_REENC_DECRYPT ? NULL : &nmd,
	    kind == GELI_REENC_DECRYPT ? NULL : newmk, uuid, jpath,
	    (uint32_t)opt_num(o, 'z'), &r);
	if (error != 0) {
		req_error("Cannot start the conversion of %s: %s%s.", prov,
		    error == -GELI_EJOURNALEXISTS ? jpath : "",
		    error == -GELI_EJOURNALEXISTS ? " exists" :
		    geli_strerror(error));
		/* Nothing refers to the header: it goes too. */
		if (hdr != NULL && hdr[0] != '\0')
			unlink(hdr);
		goto out;
	}
	if (verbose)
		printf("Converting %s (%s); journal %s%s%s.\n", prov,
		    msg_reenc_kind(kind), jpath, kind == GELI_REENC_LUKS2 ?
		    ", header " : "", kind == GELI_REENC_LUKS2 ? hdr : "");
	if (reenc_run(prov, r, kind == GELI_REENC_LUKS2 ? end : NULL) != 0)
		goto out;
	if (kind == GELI_REENC_LUKS2)
		end->done = true;
	else if (kind != GELI_REENC_DECRYPT)
		backup_new(o, prov, &nmd, geli_provider_sectorsize(p));
out:
	luks2_keys_free(&lk);
	geli_reenc_free(r);
	geli_wipe(&nmd, sizeof(nmd));
	geli_secure_free(keys);
}

