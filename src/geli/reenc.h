/* SPDX-License-Identifier: BSD-2-Clause */
/* What cmd_reencrypt.c (the verb, resume) and reenc_new.c (a new
 * conversion) share. */
#ifndef GELI_REENC_H
#define GELI_REENC_H

#include "cli.h"

/* The journal of uuid: -F, else the default place (made); 0, or -1 with
 * the request error. */
int reenc_journal_of(struct opts *o, const uint8_t uuid[16], char *buf,
    size_t len);
struct luks2_keys;
/* md's Master Key into mk from -j/-k/-p (-J/-K/-P with isnew) and -n; the
 * slot that opened in *slot, the user key in ukey, the passphrase in
 * carry's (each may be NULL).  0, or -1 with the request error in attach's
 * words. */
int reenc_unlock(struct opts *o, bool isnew, struct geli_provider *p,
    const struct geli_metadata *md, const char *prov, uint8_t *mk,
    int *slot, uint8_t *ukey, struct luks2_keys *carry);
/* -J, -K or -P given. */
bool reenc_new_keys_given(struct opts *o);
struct luks2_end;
/* Every step to the end, with the progress on a terminal; stopped after a
 * step by SIGINT, SIGTERM or SIGHUP; for LUKS2 (end not NULL) the end only
 * once end's header holds the volume key, and where it goes on the disk,
 * once it is there.  0, or -1 with the request error. */
int reenc_run(const char *prov, struct geli_reenc *r,
    const struct luks2_end *end);
/* SIGINT, SIGTERM and SIGHUP from here on only mark the conversion to stop
 * (reenc_run) or pause (reenc_wait): called before a request starts one. */
void reenc_catch_signals(void);
/* An attached provider's conversion (the daemon of name runs it) followed
 * to its end, with the progress on a terminal; paused by SIGINT, SIGTERM
 * or SIGHUP.  0, 1 for a LUKS2 target whose every sector is converted
 * (its end: luks2_end_ready, then reenc_finish_attached), or -1 with the
 * request error. */
int reenc_wait(const char *prov, const char *name);
/* That end asked of the daemon of name: GELI's record and the journal go.
 * 0, or -1 with the request error. */
int reenc_finish_attached(const char *prov, const char *name);
/* A new conversion of p of this kind (md: p's record; NULL for -E), here
 * or, when attached names its daemon (p opened read-only), there; a
 * conversion to LUKS2 that ended leaves end's hdr set, for luks2_finish
 * once p is closed. */
void reenc_start(struct opts *o, const char *prov, struct geli_provider *p,
    enum geli_reenc_kind kind, struct geli_metadata *md,
    const char *attached, struct luks2_end *end);

/* ---- To LUKS2 (reenc_luks2.c) ------------------------------------------------ */

/* -t's target: 0 GELI (the default), 1 LUKS2; -1 with the request error
 * (an unknown one, or options LUKS2 cannot take). */
int reenc_target(struct opts *o);

/* The key material of LUKS2's keyslots, in locked memory: a passphrase,
 * keyfiles' bytes joined (nkeyfiles of them), or both (two keyslots). */
struct luks2_keys {
	uint8_t *pass, *keyfile;
	size_t passlen, keylen;
	unsigned nkeyfiles;
	/* The other GELI key slot's (-x or -X), its keyslot too; NULL: not
	 * carried. */
	struct luks2_keys *other;
	int other_slot;
};
void luks2_keys_free(struct luks2_keys *k);
/* LUKS2's volume key in a new Master Key (geli_reenc_newkey, GELI_REENC_LUKS2):
 * the Data Key's place. */
#define LUKS2_VK(mk)	((mk) + GELI_MKEY_DATALEN / 2)
#define LUKS2_VKLEN	(GELI_MKEY_DATALEN / 2)
/* reenc_left.c: -F names a journal that is there while the provider
 * (record cur, NULL: none) is not being converted: removed where its
 * conversion ended (1: nothing to do) or never marked the provider (0). */
int journal_left(const char *prov, struct geli_provider *p,
    const struct geli_metadata *cur, const char *jpath);
/* -t luks2 on a provider not marked (record cur, NULL: none), its header
 * named (-H) or its journal (-F): a conversion that ended before its
 * journal went (GELI's record gone, every sector converted): the journal
 * removed, 1; a start that never marked it: its journal and header
 * removed, so that it starts again, 0; else 0. */
int luks2_left(struct opts *o, const char *prov, struct geli_provider *p,
    const struct geli_metadata *cur);
/* -H given for any kind but LUKS2: refused (0, or -1 with the request
 * error). */
int luks2_header_opt(struct opts *o, enum geli_reenc_kind kind);
/* -J and -K's material. */
int luks2_keys_new(struct opts *o, struct luks2_keys *k);
/* reenc_unlock's, and the material that opened md (or -J/-K's) into k;
 * refused for a keyfile and a passphrase together; the other key slot's
 * where -x or -X give it (checked against that slot), else said where that
 * slot is set.  0 or -1 with the request error. */
int luks2_unlock(struct opts *o, struct geli_provider *p,
    const struct geli_metadata *md, const char *prov, uint8_t *mk, int *slot,
    struct luks2_keys *k);
/* The header of the conversion of uuid: -H, else STATE/luks2/UUID.header
 * (its directory made); 0 or -1 with the request error. */
int luks2_header_path(struct opts *o, const uint8_t uuid[16], char *buf,
    size_t len);
/* A new header hdr (refused when it exists) for data of S-byte sectors at
 * byte offset of data (0: a detached header's; LUKS2_DISK_HDR: one that
 * goes on the disk before it): LUKS2 UUID uuid, volume key vk (64 bytes,
 * aes-xts-plain64), a keyslot for each of k's, argon2id (-i: PBKDF2);
 * synced.  0, or -1 with the request error and no file. */
int luks2_header_write(struct opts *o, const char *hdr, const char *data,
    uint64_t offset, uint32_t S, const uint8_t uuid[16], const uint8_t *vk,
    const struct luks2_keys *k);
/* The LUKS2 UUID and data offset (bytes) header file hdr holds; 0 or
 * -errno (libcryptsetup's words in no message). */
int luks2_header_info(const char *hdr, uint8_t uuid[16], uint64_t *offset);
/* hdr backed up as -B says (init's default name with .luks2, a name, or
 * none), replacing a backup of that name; 0, or -1 with the request error. */
int luks2_header_backup(struct opts *o, const char *prov, const char *hdr);
/* Does hdr hold volume key vk?  0, or -1 with the request error. */
int luks2_header_check(const char *prov, const char *hdr, const uint8_t *vk);
/* ---- The header on the disk (luks2_disk.c) ------------------------------------ */

/* What a header on the disk takes: LUKS2's defaults for a 512-bit key. */
#define LUKS2_DISK_HDR	(16u << 20)
/* LUKS2_DISK_HDR before a GPT partition, over free space or the end of an
 * unused swap partition right before it.  LBAs of ss bytes. */
struct luks2_place {
	char disk[4096], diskname[64], part[4096], swap[4096];
	unsigned num, swapnum;		/* swapnum 0: free space */
	unsigned long ss;
	uint64_t start, size;		/* the partition's */
	uint64_t swapsize;		/* the swap partition's, shrunk */
};
/* Can prov (at path) take its header before it?  1 yes, into pl; 0 no (why
 * says why); -1 refused with the request error (a swap partition in use). */
int luks2_place_find(const char *prov, const char *path,
    struct luks2_place *pl, char *why, size_t len);
/* hdr's first LUKS2_DISK_HDR bytes written into the place, synced, read
 * back; 0, or -1 with the request error. */
int luks2_place_copy(const struct luks2_place *pl, const char *hdr);
/* The partition table edited (the swap partition ends at the header, the
 * partition begins there) and the kernel told; 0, or -1 with the request
 * error. */
int luks2_place_move(struct luks2_place *pl);

/* Where the header of a conversion is and goes, from its start (or
 * resume) to its end. */
struct luks2_end {
	char hdr[4200];			/* the header file; "": none */
	bool done;			/* converted, GELI's record gone */
	bool attached;			/* ... by the daemon, which holds it */
	bool ondisk;			/* and goes before the partition: */
	struct luks2_place pl;
	bool known;			/* the keyslots' material (not on a resume): */
	bool pass, keyfile;
	unsigned nkeyfiles;
	bool other;			/* the other GELI slot's too (-x, -X): */
	int other_slot;
};
/* Before GELI's record goes: end's header holds vk (the volume key), and
 * where it goes on the disk, it is there.  0, or -1 with the request
 * error. */
int luks2_end_ready(const char *prov, const struct luks2_end *end,
    const uint8_t *vk);
/* The keyslots' material into end, for the last words. */
void luks2_end_keys(struct luks2_end *end, const struct luks2_keys *k);
/* The end of a conversion to LUKS2 that converted every sector, once the
 * provider is closed: the partition grown over the header where it went on
 * the disk, then how to open it and crypttab's line. */
void luks2_finish(struct opts *o, const char *prov, struct luks2_end *end);
/* A provider without GELI's record (-t luks2): the end of a conversion
 * whose partition table was not yet edited, when the header before it is
 * the one its conversion kept; 0 done, 1 not such a provider, -1 with the
 * request error. */
int luks2_complete(struct opts *o, const char *prov, const char *path);

#endif
