/* SPDX-License-Identifier: BSD-2-Clause */
/* geli-truenas's pieces (main.c, keys.c, find.c): what they share. */
#ifndef GELI_TRUENAS_H
#define GELI_TRUENAS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backup.h"
#include "disks.h"
#include "geli.h"

#define MAXPASS (GELI_MAX_PASSLEN + 1)
#define MAXDISKS 64

struct opts {
	const char *disks[MAXDISKS];
	size_t ndisks;
	const char *keyfile, *recovery, *passfile;
	bool readonly;
	bool blockdev;	/* -L: geli attach -L, the pool found in the device directory */
};

/* Where each provider of a pool is, and whether the key opens it. */
enum where { W_MISSING, W_BY_UUID, W_BY_KEY };
enum keystate { K_UNTRIED, K_OPENS, K_WRONG, K_NOGELI, K_ERROR };
struct disk {
	const char *provider;	/* as the database names it; NULL: found by key */
	enum where where;
	struct part *part;
	enum keystate key;
	int slot;
	char why[160];		/* K_ERROR, K_NOGELI: what */
};

/* The key material for a pool: the key file's bytes and the passphrase. */
struct keys {
	uint8_t *key;		/* POOL_KEYLEN bytes, locked */
	size_t keylen;
	char *pass;		/* NULL: none; locked */
	bool recovery;
	const char *source;	/* where the key came from, for the listing */
};

/* "geli-truenas: <msg>" on stderr. */
void tn_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- keys.c ---------------------------------------------------------------- */

/*
 * The key material of pool p: -K (the recovery key, key only), else -k,
 * else the backup's geli/<uuid>.key; the passphrase when the pool has one
 * and ask is set (else only from -j).  0; 1 when there is no key; -1 on an
 * error, said.  keys_free() after, in every case.
 */
int get_keys(const struct opts *o, const struct pool *p, bool ask,
    struct keys *k);
void keys_free(struct keys *k);

/* ---- find.c ---------------------------------------------------------------- */

/*
 * Where pool p's providers are: by PARTUUID, then (with a key) the
 * freebsd-zfs partitions that no provider claimed and that the key opens.
 * disks gets one entry per provider and one per partition found by key
 * (at most max); their count.
 */
size_t locate(const struct pool *p, struct part *parts, size_t nparts,
    const struct keys *k, struct disk *disks, size_t max);
/* The disks printed, one line each; the count the key opens, and in
 * *missing those not found. */
size_t print_disks(const struct disk *disks, size_t n, const struct keys *k,
    size_t *missing);

#endif
