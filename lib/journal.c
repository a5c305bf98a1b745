/* SPDX-License-Identifier: BSD-2-Clause */
/* The journal of an in-place conversion: its file format (see journal.h). */
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crypto.h"
#include "endian.h"
#include "journal.h"

#define MAGIC_HEADER	"GELIREENCJOURNAL"
#define MAGIC_PROGRESS	"GELIPROG"
#define MAGIC_HOTZONE	"GELIHOTZ"
#define HEADER_MACOFF	1272
#define RECORD_MACOFF	48
#define HOTZONE_NONCE	48
#define HOTZONE_TAG	64

static const char label_auth[] = "GELI reencrypt auth";
static const char label_wrap[] = "GELI reencrypt wrap";

int
journal_derive(struct journal *j, const uint8_t *mk1, const uint8_t *mk2)
{
	uint8_t mks[2 * GELI_MKEY_DATALEN], msg[sizeof(label_auth) + 20];
	size_t klen = GELI_MKEY_DATALEN;
	int error;

	if (j->key == NULL && (j->key = geli_secure_alloc(JOURNAL_KEYLEN)) ==
	    NULL)
		return -ENOMEM;
	memcpy(mks, mk1, GELI_MKEY_DATALEN);
	if (mk2 != NULL) {
		memcpy(mks + GELI_MKEY_DATALEN, mk2, GELI_MKEY_DATALEN);
		klen += GELI_MKEY_DATALEN;
	}
	memcpy(msg, label_auth, sizeof(label_auth));
	memcpy(msg + sizeof(label_auth), j->h.uuid, 16);
	le32enc(msg + sizeof(label_auth) + 16, j->h.kind);
	error = gc_hmac_sha512(mks, klen, msg, sizeof(msg), j->key);
	geli_wipe(mks, sizeof(mks));
	return error;
}

int
journal_wrap_key(const uint8_t uuid[16], const uint8_t *oldmk,
    uint8_t key[GELI_USERKEYLEN])
{
	uint8_t msg[sizeof(label_wrap) + 16];

	memcpy(msg, label_wrap, sizeof(label_wrap));
	memcpy(msg + sizeof(label_wrap), uuid, 16);
	return gc_hmac_sha512(oldmk, GELI_MKEY_DATALEN, msg, sizeof(msg), key);
}

/* ---- Blocks ---------------------------------------------------------------- */

static int
pwrite_all(int fd, const void *buf, size_t len, off_t off)
{
	const uint8_t *p = buf;

	while (len > 0) {
		ssize_t n = pwrite(fd, p, len, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
		off += n;
	}
	return 0;
}

/* len bytes at off; a short file reads as zeros past its end. */
static int
pread_all(int fd, void *buf, size_t len, off_t off)
{
	uint8_t *p = buf;

	while (len > 0) {
		ssize_t n = pread(fd, p, len, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0) {
			memset(p, 0, len);
			return 0;
		}
		p += n;
		len -= (size_t)n;
		off += n;
	}
	return 0;
}

static void
header_encode(const struct journal_header *h, uint8_t *b)
{
	memset(b, 0, JOURNAL_BLOCK);
	memcpy(b, MAGIC_HEADER, 16);
	le32enc(b + 16, 2);
	le32enc(b + 20, h->kind);
	le32enc(b + 24, h->hotzone);
	le32enc(b + 28, h->psize);
	le64enc(b + 32, h->provsize);
	memcpy(b + 40, h->uuid, 16);
	memcpy(b + 56, h->oldrec, 512);
	memcpy(b + 568, h->newrec, 512);
	memcpy(b + 1080, h->wrapped, GELI_MKEYLEN);
}

static int
header_decode(struct journal_header *h, const uint8_t *b)
{
	if (memcmp(b, MAGIC_HEADER, 16) != 0 || le32dec(b + 16) != 2)
		return -GELI_EJOURNAL;
	h->kind = le32dec(b + 20);
	h->hotzone = le32dec(b + 24);
	h->psize = le32dec(b + 28);
	h->provsize = le64dec(b + 32);
	memcpy(h->uuid, b + 40, 16);
	memcpy(h->oldrec, b + 56, 512);
	memcpy(h->newrec, b + 568, 512);
	memcpy(h->wrapped, b + 1080, GELI_MKEYLEN);
	return 0;
}

/* HMAC of a || b under the journal's key. */
static int
mac(const struct journal *j, const uint8_t *a, size_t alen, const uint8_t *b,
    size_t blen, uint8_t out[64])
{
	struct gc_hmac *h;
	int error;

	error = gc_hmac_sha512_new(j->key, JOURNAL_KEYLEN, &h);
	if (error != 0)
		return error;
	error = gc_hmac_update(h, a, alen);
	if (error == 0 && blen > 0)
		error = gc_hmac_update(h, b, blen);
	if (error == 0)
		error = gc_hmac_final(h, out, 64);
	gc_hmac_free(h);
	return error;
}

static int
mac_check(const struct journal *j, const uint8_t *a, size_t alen,
    const uint8_t *b, size_t blen, const uint8_t *want)
{
	uint8_t got[64];
	int error = mac(j, a, alen, b, blen, got);

	if (error != 0)
		return error;
	return geli_ct_equal(got, want, 64) ? 0 : -GELI_EJOURNALAUTH;
}

static int
sync_dir(const char *path)
{
	char *copy = strdup(path);
	int fd, error = 0;

	if (copy == NULL)
		return -ENOMEM;
	fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(copy);
	if (fd < 0)
		return -errno;
	if (fsync(fd) != 0)
		error = -errno;
	close(fd);
	return error;
}

/* ---- The file ----------------------------------------------------------------- */

int
journal_create(struct journal *j, const char *path)
{
	uint8_t b[JOURNAL_BLOCK];
	int error;

	j->fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (j->fd < 0)
		return errno == EEXIST ? -GELI_EJOURNALEXISTS : -errno;
	j->path = strdup(path);
	if (j->path == NULL) {
		error = -ENOMEM;
		goto fail;
	}
	j->seq = 0;
	header_encode(&j->h, b);
	error = mac(j, b, HEADER_MACOFF, NULL, 0, b + HEADER_MACOFF);
	if (error == 0)
		error = pwrite_all(j->fd, b, sizeof(b), 0);
	if (error == 0 && fsync(j->fd) != 0)
		error = -errno;
	if (error == 0)
		error = sync_dir(path);
	if (error == 0)
		return 0;
fail:
	unlink(path);
	close(j->fd);
	j->fd = -1;
	return error;
}

int
journal_open(struct journal *j, const char *path, bool writable)
{
	uint8_t b[JOURNAL_BLOCK];
	int error;

	j->fd = open(path, (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC);
	if (j->fd < 0)
		return -errno;
	j->path = strdup(path);
	error = j->path == NULL ? -ENOMEM : pread_all(j->fd, b, sizeof(b), 0);
	if (error == 0)
		error = header_decode(&j->h, b);
	if (error != 0) {
		close(j->fd);
		j->fd = -1;
	}
	return error;
}

int
journal_verify(struct journal *j)
{
	uint8_t b[JOURNAL_BLOCK];
	int error = pread_all(j->fd, b, sizeof(b), 0);

	if (error != 0)
		return error;
	return mac_check(j, b, HEADER_MACOFF, NULL, 0, b + HEADER_MACOFF);
}

int
journal_progress(struct journal *j, enum journal_state *state,
    uint64_t *chunk)
{
	uint8_t b[2][RECORD_MACOFF + 64];
	uint64_t best = 0;
	int error;

	*state = JSTATE_NONE;
	*chunk = 0;
	j->seq = 0;
	for (int i = 0; i < 2; i++) {
		error = pread_all(j->fd, b[i], sizeof(b[i]),
		    (off_t)(1 + i) * JOURNAL_BLOCK);
		if (error != 0)
			return error;
		if (memcmp(b[i], MAGIC_PROGRESS, 8) != 0)
			continue;	/* never written */
		if (memcmp(b[i] + 32, j->h.uuid, 16) != 0)
			return -GELI_EJOURNALAUTH;
		if (j->key != NULL && (error = mac_check(j, b[i],
		    RECORD_MACOFF, NULL, 0, b[i] + RECORD_MACOFF)) != 0)
			return error;
		if (le64dec(b[i] + 8) > best) {
			best = le64dec(b[i] + 8);
			*chunk = le64dec(b[i] + 16);
			*state = (enum journal_state)le32dec(b[i] + 24);
		}
	}
	if (*state != JSTATE_NONE && *state != JSTATE_PREPARED &&
	    *state != JSTATE_DONE)
		return -GELI_EJOURNALAUTH;
	j->seq = best;
	return 0;
}

int
journal_set_progress(struct journal *j, enum journal_state state,
    uint64_t chunk, bool sync)
{
	uint8_t b[RECORD_MACOFF + 64];
	uint64_t seq = j->seq + 1;
	int error;

	memset(b, 0, sizeof(b));
	memcpy(b, MAGIC_PROGRESS, 8);
	le64enc(b + 8, seq);
	le64enc(b + 16, chunk);
	le32enc(b + 24, state);
	memcpy(b + 32, j->h.uuid, 16);
	error = mac(j, b, RECORD_MACOFF, NULL, 0, b + RECORD_MACOFF);
	if (error == 0)
		error = pwrite_all(j->fd, b, sizeof(b),
		    (off_t)(seq % 2 ? 1 : 2) * JOURNAL_BLOCK);
	if (error == 0 && sync && fsync(j->fd) != 0)
		error = -errno;
	if (error == 0)
		j->seq = seq;
	return error;
}

/* Chunks take the two hotzone records in turn: writing one never touches
 * the record of the chunk before, whose DONE may not be on disk yet. */
static off_t
hotzone_head_at(uint64_t chunk)
{
	return (off_t)(3 + chunk % 2) * JOURNAL_BLOCK;
}

static off_t
hotzone_data(const struct journal *j, uint64_t chunk)
{
	return (off_t)JOURNAL_DATA + (off_t)(chunk % 2) * j->h.hotzone;
}

static void
hotzone_head(const struct journal *j, uint64_t chunk, uint64_t off,
    uint32_t len, uint8_t *b)
{
	memset(b, 0, HOTZONE_NONCE);
	memcpy(b, MAGIC_HOTZONE, 8);
	le64enc(b + 8, chunk);
	le64enc(b + 16, off);
	le32enc(b + 24, len);
	memcpy(b + 32, j->h.uuid, 16);
}

/* The record's tag: GMAC-AES-256 of [0, 64) || data under a key of its
 * own, HMAC-SHA512(journal key, "hotzone" || nonce). */
static int
hotzone_tag(const struct journal *j, const uint8_t *head, const uint8_t *data,
    uint32_t len, uint8_t tag[16])
{
	static const uint8_t iv[12];
	uint8_t msg[7 + 16], key[64];
	int error;

	memcpy(msg, "hotzone", 7);
	memcpy(msg + 7, head + HOTZONE_NONCE, 16);
	error = gc_hmac_sha512(j->key, JOURNAL_KEYLEN, msg, sizeof(msg), key);
	if (error == 0)
		error = gc_gmac_aes256(key, iv, head, HOTZONE_TAG, data, len, tag);
	geli_wipe(key, sizeof(key));
	return error;
}

int
journal_seal_hotzone(const struct journal *j, uint64_t chunk, uint64_t off,
    const uint8_t *data, uint32_t len, uint8_t head[JOURNAL_HOTZONE_HEAD])
{
	int error;

	hotzone_head(j, chunk, off, len, head);
	error = geli_random(head + HOTZONE_NONCE, 16);
	if (error == 0)
		error = hotzone_tag(j, head, data, len, head + HOTZONE_TAG);
	return error;
}

int
journal_put_hotzone(struct journal *j, uint64_t chunk,
    const uint8_t head[JOURNAL_HOTZONE_HEAD], const uint8_t *data,
    uint32_t len)
{
	int error;

	error = pwrite_all(j->fd, data, len, hotzone_data(j, chunk));
	if (error == 0)
		error = pwrite_all(j->fd, head, JOURNAL_HOTZONE_HEAD,
		    hotzone_head_at(chunk));
	if (error == 0 && fsync(j->fd) != 0)
		error = -errno;
	return error;
}

int
journal_get_hotzone(struct journal *j, uint64_t chunk, uint64_t off,
    uint8_t *data, uint32_t len)
{
	uint8_t b[JOURNAL_HOTZONE_HEAD], want[HOTZONE_NONCE], tag[16];
	int error;

	error = pread_all(j->fd, b, sizeof(b), hotzone_head_at(chunk));
	if (error == 0)
		error = pread_all(j->fd, data, len, hotzone_data(j, chunk));
	if (error != 0)
		return error;
	hotzone_head(j, chunk, off, len, want);
	if (memcmp(b, want, HOTZONE_NONCE) != 0)
		return -GELI_EJOURNALAUTH;
	error = hotzone_tag(j, b, data, len, tag);
	if (error != 0)
		return error;
	return geli_ct_equal(tag, b + HOTZONE_TAG, 16) ? 0 : -GELI_EJOURNALAUTH;
}

int
journal_remove(struct journal *j)
{
	static const uint8_t zeros[65536];
	int error = 0;

	/* The hotzones overwritten first: a decryption's hold plaintext,
	 * which has no business on the journal's disk once it is done. */
	for (off_t off = JOURNAL_DATA; j->fd >= 0 && error == 0 &&
	    off < JOURNAL_DATA + 2 * (off_t)j->h.hotzone; off += sizeof(zeros))
		error = pwrite_all(j->fd, zeros, sizeof(zeros), off);
	if (error == 0 && j->fd >= 0 && fsync(j->fd) != 0)
		error = -errno;
	if (error == 0 && j->path != NULL) {
		if (unlink(j->path) != 0)
			error = -errno;
		else
			error = sync_dir(j->path);
	}
	journal_close(j);
	return error;
}

void
journal_close(struct journal *j)
{
	if (j->fd >= 0)
		close(j->fd);
	j->fd = -1;
	free(j->path);
	j->path = NULL;
	geli_secure_free(j->key);
	j->key = NULL;
}
