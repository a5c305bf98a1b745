/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Per-sector transforms, run by one thread with its own pre-keyed contexts.
 *
 * privacy.c: one GELI unit (a sector, or a chunk in integrity mode) at a
 * byte offset "off" (§6):
 *   key  = range key number keys_number(off) (§6.2)
 *   IV   = SHA256(IVK || LE64(off))[0..ivlen)   CBC ciphers (§6.3)
 *        = LE64(off) || 0^8                      AES-XTS (§6.4)
 *
 * integrity.c: a logical sector i of S bytes in lsec physical sectors of P
 * bytes (§7.2):
 *
 *   physical sector j of logical sector i, at phys = i*bps + j*P:
 *   +-----------+---------------------------+---------------+
 *   | tag alen  | ciphertext of len_j bytes | zeros         |
 *   +-----------+---------------------------+---------------+
 *   len_j = dps (last: S - (lsec-1)*dps); unit offset = phys
 *   tag   = HMAC_aalgo(SHA256(AK || LE64(phys)), ciphertext)
 */
#ifndef GELI_SECTOR_H
#define GELI_SECTOR_H

#include <stddef.h>
#include <stdint.h>

#include "accel.h"
#include "crypto.h"
#include "keys.h"

#define SECTOR_CIPHERS 4	/* pre-keyed ciphers per thread */
#define SECTOR_BATCH 256	/* most units per batch call (the IVs' room) */
#define SECTOR_IVMAX 16		/* most bytes of a unit's IV */

/* A volume's sector geometry, its algorithms in generic terms (algs.h). */
struct sector_geom {
	const struct gc_ops *crypto;	/* the backend of the volume's contexts */
	enum gc_cipher cipher;		/* of the data path (GC_NONE: NULL) */
	enum gc_mode mode;
	size_t keybytes;		/* of a range key's 64 bytes (0: NULL) */
	size_t ivlen;			/* 0: no IV (NULL) */
	enum gc_hash hash;		/* integrity: the HMAC's hash ... */
	unsigned alen;			/* ... and its tag length */
	uint32_t S, P;		/* GELI and provider sector sizes */
	uint32_t dps, lsec, bps;	/* integrity layout (§7.1); bps = S without */
	unsigned ivshift;		/* XTS tweak: off >> ivshift (LUKS2: 9) */
	bool auth;
};

/* sector_ctx.c: the geometry of metadata md on a provider of P-byte
 * sectors, with backend be; -EINVAL for what it cannot describe. */
int sector_geom_init(struct sector_geom *g, const struct gc_ops *be,
    const struct geli_metadata *md, uint32_t P);

/*
 * One thread's contexts.  Its keyed objects are sector_ctx.c's, reached
 * through the functions below; privacy.c and integrity.c read g, volume.c
 * links next.
 */
struct sector_ctx {
	struct sector_ctx *next;	/* free list of the volume */
	const struct sector_geom *g;
	struct geli_keys *keys;
	struct {
		uint64_t k;
		struct gc_cipher_ctx *c;
		struct gc_accel_cbc *a;	/* the same key for the accelerator */
	} ciph[SECTOR_CIPHERS];
	unsigned ciph_next;
	struct gc_accel *accel;		/* this thread's (AES-CBC), or NULL */
	bool accel_tried;
	struct gc_sha256_prefixed *ivh;	/* SHA256(IVK || .) */
	struct gc_sha256_prefixed *akh;	/* SHA256(AK || .) */
	uint8_t *akoff;			/* AK || LE64(phys), locked (HMAC/SHA256) */
	struct gc_mac *mac;
	uint8_t *buf;			/* the owner's bounce buffer */
	size_t buflen;			/* its allocation: a page more than asked */
	uint8_t ivs[SECTOR_BATCH * SECTOR_IVMAX];	/* one batch's IVs */
};

/* sector_ctx.c: a context for geometry g and keys (both outlive it), keyed
 * lazily; NULL without memory. */
struct sector_ctx *sector_ctx_new(const struct sector_geom *g,
    struct geli_keys *keys);
/* Drop every key-dependent context (suspend); they are rebuilt on use. */
void sector_ctx_drop_keys(struct sector_ctx *c);
/* Wipe and free everything, c too (NULL is fine). */
void sector_ctx_free(struct sector_ctx *c);
/*
 * The keyed objects, made on first use; NULL with *error set when that
 * fails.  The pre-keyed cipher for range key k (the last SECTOR_CIPHERS
 * are kept); SHA256(IVK || .) and SHA256(AK || .) with the key absorbed;
 * the 72-byte locked buffer AK || offset (integrity with HMAC/SHA256); the
 * tag MAC of g->hash.
 */
struct gc_cipher_ctx *sector_ctx_cipher(struct sector_ctx *c, uint64_t k,
    int *error);
/* The accelerator's key for range key k, for runs of units of len bytes;
 * NULL when the accelerator does not take them (then the backend does). */
struct gc_accel_cbc *sector_ctx_accel(struct sector_ctx *c, uint64_t k,
    size_t len);
struct gc_sha256_prefixed *sector_ctx_ivh(struct sector_ctx *c, int *error);
struct gc_sha256_prefixed *sector_ctx_akh(struct sector_ctx *c, int *error);
uint8_t *sector_ctx_akoff(struct sector_ctx *c, int *error);
struct gc_mac *sector_ctx_mac(struct sector_ctx *c, int *error);
/*
 * The owner's bounce buffer of at least len bytes, aligned to align (a power
 * of two, at most a page: what the provider's I/O needs); NULL without
 * memory.  With beside (the other buffer of an out-of-place transform), its
 * address lies half a page from beside's, modulo a page: multi-buffer CBC
 * walks the sectors of a run side by side, and with each sector's input and
 * output at the same page offset it ran at half speed (AES-CBC-128 out of
 * place, one thread: 2.4-3.5 GB/s, against 4.2-6.3 with the output 512 to
 * 3968 bytes above; docs/benchmarks.md).  NULL beside: page-aligned.
 */
#define BOUNCE_PAGE 4096u
#define BOUNCE_BESIDE 2048u
uint8_t *sector_ctx_buf(struct sector_ctx *c, size_t len, const void *beside,
    size_t align);

/*
 * privacy.c: en/decrypt n consecutive units of len bytes from byte offset
 * off (unit i: offset off + i*len, bytes in + i*len and out + i*len; in and
 * out may be the same).  Each run of units that share a range key goes to
 * the cipher in one batch call, SECTOR_BATCH units at most.
 */
int sector_crypt_run(struct sector_ctx *c, uint64_t off, size_t n,
    const uint8_t *in, uint8_t *out, size_t len, int enc);

/* privacy.c: one unit, as sector_crypt_run with n = 1. */
int sector_crypt(struct sector_ctx *c, uint64_t off, const uint8_t *in,
    uint8_t *out, size_t len, int enc);

/*
 * privacy.c: n stored sectors of len bytes from off into plaintext, as
 * sector_crypt_run.  One whose bytes are all zero is a hole (never written,
 * or deleted: geli_volume_zero) and reads as zeros; the runs between holes
 * are decrypted.
 */
int sector_read_stored(struct sector_ctx *c, uint64_t off, size_t n,
    const uint8_t *in, uint8_t *out, size_t len);

/* integrity.c: logical sector i between S plaintext bytes and bps bytes. */
int sector_auth_encrypt(struct sector_ctx *c, uint64_t i, const uint8_t *plain,
    uint8_t *phys);
/* -EBADMSG when a tag does not verify; plain is then not written. */
int sector_auth_decrypt(struct sector_ctx *c, uint64_t i, const uint8_t *phys,
    uint8_t *plain);

#endif
