/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A FreeNAS / TrueNAS CORE configuration backup: a tar (freenas-v1.db,
 * perhaps pwenc_secret and geli/<uuid>.key) or the bare freenas-v1.db, and
 * the encrypted pools its database lists.
 */
#ifndef GELI_TRUENAS_BACKUP_H
#define GELI_TRUENAS_BACKUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define POOL_KEYLEN 64		/* /data/geli/<uuid>.key: 64 random bytes */

struct pool {
	char *name;		/* vol_name */
	char *guid;		/* vol_guid, as stored (text) */
	int encrypt;		/* vol_encrypt: 0 none, 1 key, 2 key + passphrase */
	char *keyid;		/* vol_encryptkey (a uuid4) */
	uint8_t *key;		/* from the tar's geli/<keyid>.key, locked memory; or NULL */
	char **providers;	/* encrypted_provider: "gptid/<uuid>" or "ada1p2" */
	size_t nproviders;
};

struct backup {
	char *what;		/* "a configuration tar", "a bare database" */
	bool had_geli_dir;	/* the tar held geli/ (keys exported) */
	struct pool *pools;
	size_t npools;
};

/*
 * Read path (tar, compressed or not, or a bare SQLite database) into b.  0,
 * or -1 with the reason in err (not a backup, no database in it, a
 * TrueNAS SCALE database without GELI pools, an unreadable file).
 */
int backup_read(const char *path, struct backup *b, char *err, size_t errlen);
void backup_free(struct backup *b);
/* The pool named name, or NULL. */
struct pool *backup_pool(struct backup *b, const char *name);

#endif
