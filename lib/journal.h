/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The journal of an in-place conversion (docs/reencrypt.md): a file of
 * 4096-byte blocks, all integers little-endian.
 *
 *   block 0   the header: what is converted into what
 *       0  16  magic "GELIREENCJOURNAL"    40  16  uuid
 *      16   4  format (2)                  56 512  old record (encoded; zeros)
 *      20   4  kind                       568 512  new record (encoded; zeros)
 *      24   4  hotzone bytes             1080 192  the new Master Key wrapped
 *      28   4  provider sector size                (REKEY; as a key slot)
 *      32   8  provider size             1272  64  HMAC-SHA512 of [0, 1272)
 *   blocks 1, 2  progress records, written in turn (seq odd: 1, even: 2)
 *       0   8  magic "GELIPROG"            24   4  state: 1 PREPARED, 2 DONE
 *       8   8  seq                         32  16  uuid
 *      16   8  chunk                       48  64  HMAC-SHA512 of [0, 48)
 *   blocks 3, 4  the hotzone records of even and odd chunks, their data
 *                from block 8 on (even) and a hotzone after it (odd)
 *       0   8  magic "GELIHOTZ"            32  16  uuid
 *       8   8  chunk                       48  16  nonce (random)
 *      16   8  offset                      64  16  GMAC-AES-256 of [0, 64)
 *      24   4  length                              || data
 *
 * The HMAC key: HMAC-SHA512(key = the Master Keys involved, old || new,
 * message = "GELI reencrypt auth" || uuid || kind).  A hotzone record's
 * GMAC key (one per record): HMAC-SHA512(that key, "hotzone" || nonce),
 * its first 32 bytes; the IV zeros.  The wrapping key of
 * the new Master Key: HMAC-SHA512(key = the old Master Key, "GELI
 * reencrypt wrap" || uuid), used as a user key is for a key slot.
 */
#ifndef GELI_JOURNAL_H
#define GELI_JOURNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "geli.h"

#define JOURNAL_BLOCK		4096u
#define JOURNAL_DATA		(8 * JOURNAL_BLOCK)
#define JOURNAL_KEYLEN		64
#define JOURNAL_HOTZONE_HEAD	80

enum journal_state { JSTATE_NONE = 0, JSTATE_PREPARED = 1, JSTATE_DONE = 2 };

struct journal_header {
	uint32_t kind, hotzone, psize;
	uint64_t provsize;
	uint8_t uuid[16];
	uint8_t oldrec[512], newrec[512];	/* encoded records, or zeros */
	uint8_t wrapped[GELI_MKEYLEN];
};

struct journal {
	int fd;
	char *path;
	struct journal_header h;
	uint8_t *key;		/* JOURNAL_KEYLEN, secure */
	uint64_t seq;		/* of the newest progress record */
};

/* The HMAC key for h and the Master Keys (mk2 may be NULL) into j->key
 * (allocated here). */
int journal_derive(struct journal *j, const uint8_t *mk1, const uint8_t *mk2);
/* The wrapping key of the new Master Key (a user key for a slot). */
int journal_wrap_key(const uint8_t uuid[16], const uint8_t *oldmk,
    uint8_t key[GELI_USERKEYLEN]);

/* A new journal file with header h (j->key derived): created exclusively,
 * written, synced, its directory synced.  -GELI_EJOURNALEXISTS. */
int journal_create(struct journal *j, const char *path);
/* An existing journal's header, unauthenticated (-GELI_EJOURNAL when it is
 * none); journal_verify() once the key is derived. */
int journal_open(struct journal *j, const char *path, bool writable);
int journal_verify(struct journal *j);
/* The newest progress record: state and chunk (JSTATE_NONE: none yet).
 * -GELI_EJOURNALAUTH for a record that fails (without a key: only read). */
int journal_progress(struct journal *j, enum journal_state *state,
    uint64_t *chunk);
int journal_set_progress(struct journal *j, enum journal_state state,
    uint64_t chunk, bool sync);
/* The hotzone record: its head made for data (no I/O: it may run beside
 * the writes of another chunk), written with data (then synced), or read
 * back (-GELI_EJOURNALAUTH when it is not chunk's or fails). */
int journal_seal_hotzone(const struct journal *j, uint64_t chunk,
    uint64_t off, const uint8_t *data, uint32_t len,
    uint8_t head[JOURNAL_HOTZONE_HEAD]);
int journal_put_hotzone(struct journal *j, uint64_t chunk,
    const uint8_t head[JOURNAL_HOTZONE_HEAD], const uint8_t *data,
    uint32_t len);
int journal_get_hotzone(struct journal *j, uint64_t chunk, uint64_t off,
    uint8_t *data, uint32_t len);
/* The file removed (its directory synced); closed either way. */
int journal_remove(struct journal *j);
void journal_close(struct journal *j);

#endif
