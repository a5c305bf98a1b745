/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Reading a FreeNAS / TrueNAS configuration backup (see backup.h): the
 * archive through libarchive, the database through SQLite from memory (no
 * file is written), the pool keys straight into locked memory.
 */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backup.h"
#include "geli.h"

#define MAX_DB		(512u << 20)	/* a database larger is no backup of ours */
#define MAX_KEYS	256
#define DB_NAME		"freenas-v1.db"
static const char sqlite_magic[16] = "SQLite format 3";

struct keyfile {
	char id[64];		/* the <uuid> of geli/<uuid>.key */
	uint8_t *key;		/* POOL_KEYLEN bytes, locked */
};

struct loaded {
	uint8_t *db;
	size_t dblen;
	struct keyfile keys[MAX_KEYS];
	size_t nkeys;
	bool geli_dir;
};

static void __attribute__((format(printf, 3, 4)))
say(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
}

/* The entry's name without "./" and leading slashes. */
static const char *
member_name(struct archive_entry *e)
{
	const char *n = archive_entry_pathname(e);

	if (n == NULL)
		return "";
	while (n[0] == '/' || (n[0] == '.' && n[1] == '/'))
		n += n[0] == '/' ? 1 : 2;
	return n;
}

static int
read_member(struct archive *a, void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		la_ssize_t r = archive_read_data(a, (char *)buf + done,
		    len - done);
		if (r <= 0)
			return -1;
		done += (size_t)r;
	}
	return 0;
}

/* geli/<id>.key, 64 bytes: kept (locked); anything else under geli/ noted. */
static int
take_key(struct archive *a, struct archive_entry *e, const char *name,
    struct loaded *l)
{
	const char *id = name + strlen("geli/");
	size_t idlen = strlen(id);
	struct keyfile *k;

	l->geli_dir = true;
	if (idlen <= 4 || strcmp(id + idlen - 4, ".key") != 0 ||
	    archive_entry_size(e) != POOL_KEYLEN || l->nkeys == MAX_KEYS ||
	    idlen - 4 >= sizeof(l->keys[0].id))
		return 0;
	k = &l->keys[l->nkeys];
	k->key = geli_secure_alloc(POOL_KEYLEN);
	if (k->key == NULL)
		return -ENOMEM;
	if (read_member(a, k->key, POOL_KEYLEN) != 0) {
		geli_secure_free(k->key);
		k->key = NULL;
		return -EIO;
	}
	memcpy(k->id, id, idlen - 4);
	k->id[idlen - 4] = '\0';
	l->nkeys++;
	return 0;
}

static int
load_archive(const char *path, struct loaded *l, char *err, size_t errlen)
{
	struct archive *a = archive_read_new();
	struct archive_entry *e;
	int r, rc = 0;
	bool any = false;

	if (a == NULL) {
		say(err, errlen, "Cannot allocate memory.");
		return -1;
	}
	archive_read_support_filter_all(a);
	archive_read_support_format_tar(a);
	if (archive_read_open_filename(a, path, 64 << 10) != ARCHIVE_OK) {
		/* libarchive's ARCHIVE_ERRNO_FILE_FORMAT: no format it knows. */
		if (archive_errno(a) == EILSEQ)
			say(err, errlen, "%s is neither a configuration backup "
			    "(tar) nor a " DB_NAME " database.", path);
		else
			say(err, errlen, "Cannot read %s: %s.", path,
			    archive_error_string(a));
		archive_read_free(a);
		return -1;
	}
	while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
		const char *name = member_name(e);

		any = true;
		if (strcmp(name, DB_NAME) == 0 && l->db == NULL) {
			la_int64_t size = archive_entry_size(e);

			if (size <= 0 || (uint64_t)size > MAX_DB ||
			    (l->db = malloc((size_t)size)) == NULL ||
			    read_member(a, l->db, (size_t)size) != 0) {
				say(err, errlen, "Cannot read %s from %s.",
				    DB_NAME, path);
				rc = -1;
				break;
			}
			l->dblen = (size_t)size;
		} else if (strncmp(name, "geli/", 5) == 0 &&
		    archive_entry_filetype(e) == AE_IFREG) {
			if (take_key(a, e, name, l) != 0) {
				say(err, errlen, "Cannot read %s from %s.",
				    name, path);
				rc = -1;
				break;
			}
		} else if (strcmp(name, "geli") == 0 ||
		    strcmp(name, "geli/") == 0) {
			l->geli_dir = true;
		}
	}
	if (rc == 0 && r != ARCHIVE_EOF) {
		say(err, errlen, any ? "Cannot read %s: %s." :
		    "%s is neither a configuration backup (tar) nor a "
		    DB_NAME " database.", path, archive_error_string(a));
		rc = -1;
	}
	if (rc == 0 && l->db == NULL) {
		say(err, errlen, "%s holds no %s: not a FreeNAS/TrueNAS "
		    "configuration backup.", path, DB_NAME);
		rc = -1;
	}
	archive_read_free(a);
	return rc;
}

/* A bare database (SQLite's magic at its start), or the archive. */
static int
load(const char *path, struct loaded *l, char *err, size_t errlen)
{
	char head[16];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;
	off_t size;

	if (fd < 0) {
		say(err, errlen, "Cannot open %s: %s.", path, strerror(errno));
		return -1;
	}
	n = pread(fd, head, sizeof(head), 0);
	if (n == (ssize_t)sizeof(head) &&
	    memcmp(head, sqlite_magic, sizeof(head)) == 0) {
		size = lseek(fd, 0, SEEK_END);
		if (size <= 0 || (uint64_t)size > MAX_DB ||
		    (l->db = malloc((size_t)size)) == NULL ||
		    pread(fd, l->db, (size_t)size, 0) != size) {
			say(err, errlen, "Cannot read %s.", path);
			close(fd);
			return -1;
		}
		l->dblen = (size_t)size;
		close(fd);
		return 0;
	}
	close(fd);
	return load_archive(path, l, err, errlen);
}

static char *
col_text(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	return strdup(t != NULL ? (const char *)t : "");
}

static bool
has_column(sqlite3 *db, const char *table, const char *column)
{
	char sql[128];
	sqlite3_stmt *st;
	bool found = false;

	snprintf(sql, sizeof(sql), "PRAGMA table_info(%s)", table);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return false;
	while (!found && sqlite3_step(st) == SQLITE_ROW) {
		const unsigned char *n = sqlite3_column_text(st, 1);
		found = n != NULL && strcmp((const char *)n, column) == 0;
	}
	sqlite3_finalize(st);
	return found;
}

static int
read_providers(sqlite3 *db, sqlite3_int64 id, struct pool *p)
{
	sqlite3_stmt *st;
	int r;

	if (sqlite3_prepare_v2(db, "SELECT encrypted_provider FROM "
	    "storage_encrypteddisk WHERE encrypted_volume_id = ? ORDER BY id",
	    -1, &st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		char **np = realloc(p->providers,
		    (p->nproviders + 1) * sizeof(*np));
		if (np == NULL)
			break;
		p->providers = np;
		p->providers[p->nproviders++] = col_text(st, 0);
	}
	sqlite3_finalize(st);
	return r == SQLITE_DONE ? 0 : -1;
}

static int
read_pools(sqlite3 *db, struct backup *b, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	int r;

	if (!has_column(db, "storage_volume", "vol_name")) {
		say(err, errlen, "The database has no pools (no table "
		    "storage_volume): not a FreeNAS/TrueNAS configuration.");
		return -1;
	}
	if (!has_column(db, "storage_volume", "vol_encrypt") ||
	    !has_column(db, "storage_encrypteddisk", "encrypted_provider")) {
		say(err, errlen, "This is a TrueNAS SCALE configuration: it "
		    "records no GELI pools and no GELI keys. Use a backup made "
		    "by FreeNAS or TrueNAS CORE, or attach the disks' ZFS "
		    "partitions with geli attach and the pool's key file.");
		return -1;
	}
	if (sqlite3_prepare_v2(db, "SELECT id, vol_name, vol_guid, "
	    "vol_encrypt, vol_encryptkey FROM storage_volume ORDER BY id", -1,
	    &st, NULL) != SQLITE_OK) {
		say(err, errlen, "Cannot read the pools: %s.", sqlite3_errmsg(db));
		return -1;
	}
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		struct pool *np = realloc(b->pools, (b->npools + 1) * sizeof(*np));

		if (np == NULL)
			break;
		b->pools = np;
		np = &b->pools[b->npools++];
		memset(np, 0, sizeof(*np));
		np->name = col_text(st, 1);
		np->guid = col_text(st, 2);
		np->encrypt = sqlite3_column_int(st, 3);
		np->keyid = col_text(st, 4);
		if (np->encrypt != 0 &&
		    read_providers(db, sqlite3_column_int64(st, 0), np) != 0)
			r = SQLITE_ERROR;
		if (r == SQLITE_ERROR)
			break;
	}
	sqlite3_finalize(st);
	if (r != SQLITE_DONE) {
		say(err, errlen, "Cannot read the pools: %s.", sqlite3_errmsg(db));
		return -1;
	}
	return 0;
}

int
backup_read(const char *path, struct backup *b, char *err, size_t errlen)
{
	struct loaded l;
	sqlite3 *db = NULL;
	int rc = -1;

	memset(b, 0, sizeof(*b));
	memset(&l, 0, sizeof(l));
	if (load(path, &l, err, errlen) != 0)
		goto out;
	b->had_geli_dir = l.geli_dir;
	if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE, NULL) !=
	    SQLITE_OK ||
	    sqlite3_deserialize(db, "main", l.db, (sqlite3_int64)l.dblen,
	    (sqlite3_int64)l.dblen, SQLITE_DESERIALIZE_READONLY) != SQLITE_OK) {
		say(err, errlen, "Cannot open the database of %s: %s.", path,
		    db != NULL ? sqlite3_errmsg(db) : "out of memory");
		goto out;
	}
	if (read_pools(db, b, err, errlen) != 0)
		goto out;
	for (size_t i = 0; i < b->npools; i++) {
		for (size_t k = 0; k < l.nkeys; k++) {
			if (strcmp(l.keys[k].id, b->pools[i].keyid) != 0 ||
			    b->pools[i].keyid[0] == '\0')
				continue;
			b->pools[i].key = l.keys[k].key;
			l.keys[k].key = NULL;
			break;
		}
	}
	rc = 0;
out:
	if (db != NULL)
		sqlite3_close(db);
	free(l.db);
	for (size_t k = 0; k < l.nkeys; k++)
		geli_secure_free(l.keys[k].key);
	if (rc != 0)
		backup_free(b);
	return rc;
}

void
backup_free(struct backup *b)
{
	for (size_t i = 0; i < b->npools; i++) {
		struct pool *p = &b->pools[i];

		free(p->name);
		free(p->guid);
		free(p->keyid);
		geli_secure_free(p->key);
		for (size_t j = 0; j < p->nproviders; j++)
			free(p->providers[j]);
		free(p->providers);
	}
	free(b->pools);
	memset(b, 0, sizeof(*b));
}

struct pool *
backup_pool(struct backup *b, const char *name)
{
	for (size_t i = 0; i < b->npools; i++)
		if (strcmp(b->pools[i].name, name) == 0)
			return &b->pools[i];
	return NULL;
}
