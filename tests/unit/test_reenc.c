/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * In-place conversion (lib/reencrypt*.c) on a provider in memory: the order
 * of chunks is a permutation of the data area with the first and last 4 MiB
 * first when encrypting and last when decrypting; geli_reenc_converted
 * agrees with it; the locks of a conversion beside other I/O come around
 * every chunk, in order, and converted() turns at DONE; each kind ends with
 * the original plaintext; and a journal with any byte of its header changed
 * is refused by resume, which takes the intact one.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "geli.h"
#include "tap.h"

#define SIZE (12u << 20)
#define HOT (64u << 10)

#include "memprov.h"

static uint8_t *plain;
static char journal[64];

/* The plaintext [0, bytes) written through a volume of md and mk. */
static uint64_t
encrypted_provider(const struct geli_metadata *md, const uint8_t *mk)
{
	struct geli_volume *v;
	struct geli_metadata m = *md;
	uint64_t bytes;

	geli_volume_open(provider(), md, mk, 0, 1, &v);
	bytes = geli_volume_size(v);
	geli_volume_write(v, plain, bytes, 0);
	geli_volume_close(v);
	struct geli_provider *p = provider();
	geli_provider_write_metadata(p, &m);
	geli_provider_close(p);
	return bytes;
}

static bool
reads_plain(const struct geli_metadata *md, const uint8_t *mk, uint64_t bytes)
{
	uint8_t *buf = malloc(bytes);
	struct geli_volume *v;
	bool same;

	geli_volume_open(provider(), md, mk, 0, 1, &v);
	same = geli_volume_read(v, buf, bytes, 0) == (ssize_t)bytes &&
	    memcmp(buf, plain, bytes) == 0;
	geli_volume_close(v);
	free(buf);
	return same;
}

/* ---- Locks ------------------------------------------------------------------ */

struct locks {
	struct geli_reenc *r;
	uint64_t n, k, bad;
	bool held;
};

static void
on_lock(void *arg, uint64_t off, uint64_t len)
{
	struct locks *l = arg;
	uint64_t o, n;

	geli_reenc_chunk(l->r, l->k, &o, &n);
	if (l->held || o != off || n != len || geli_reenc_converted(l->r, off))
		l->bad++;
	l->held = true;
}

static void
on_unlock(void *arg, uint64_t off, uint64_t len)
{
	struct locks *l = arg;

	(void)len;
	if (!l->held || !geli_reenc_converted(l->r, off) ||
	    !geli_reenc_converted(l->r, off + len - 1))
		l->bad++;
	l->held = false;
	l->k++;
	l->n++;
}

/* ---- The order ------------------------------------------------------------------ */

static void
check_order(struct geli_reenc *r, const char *what)
{
	uint64_t done, total, bytes, off, len, sum = 0;
	uint8_t *seen;
	bool perm = true, edge_first = true;
	enum geli_reenc_kind kind = geli_reenc_kind(r);

	uint64_t nedge = 0;

	geli_reenc_progress(r, &done, &total, &bytes);
	seen = calloc(total, 1);
	/* A chunk with a byte in the first or last EDGE bytes is an edge. */
#define EDGE_CHUNK(off, len) ((off) < GELI_REENC_EDGE || \
	(off) + (len) > bytes - GELI_REENC_EDGE)
	for (uint64_t c = 0; c * HOT < bytes; c++)
		nedge += EDGE_CHUNK(c * HOT, bytes - c * HOT < HOT ?
		    bytes - c * HOT : HOT);
	for (uint64_t k = 0; k < total; k++) {
		geli_reenc_chunk(r, k, &off, &len);
		if (off % HOT != 0 || seen[off / HOT]++)
			perm = false;
		sum += len;
		bool edge = EDGE_CHUNK(off, len);
		if (kind == GELI_REENC_ENCRYPT && edge != (k < nedge))
			edge_first = false;
		if (kind == GELI_REENC_DECRYPT && edge != (k >= total - nedge))
			edge_first = false;
	}
	tap_ok(perm && sum == bytes, "%s: the chunks cover the data area once", what);
	if (kind != GELI_REENC_REKEY)
		tap_ok(edge_first, "%s: the first and last 4 MiB %s", what,
		    kind == GELI_REENC_ENCRYPT ? "first" : "last");
	free(seen);
}

static int
run_locked(struct geli_reenc *r, struct locks *l)
{
	int error;

	l->r = r;
	geli_reenc_set_locks(r, on_lock, on_unlock, l);
	while ((error = geli_reenc_step(r)) == 1)
		;
	return error;
}

static void
one_kind(enum geli_reenc_kind kind, uint32_t S)
{
	uint8_t oldmk[GELI_MKEY_DATALEN], newmk[GELI_MKEY_DATALEN], uuid[16];
	struct geli_metadata oldmd, newmd;
	struct geli_provider *p = provider();
	struct geli_reenc *r = NULL;
	struct locks l = { 0 };
	uint64_t done, total, bytes;
	char what[64];
	int error;

	snprintf(what, sizeof(what), "%s S=%u", kind == GELI_REENC_REKEY ?
	    "rekey" : kind == GELI_REENC_ENCRYPT ? "encrypt" : "decrypt", S);
	geli_random(oldmk, sizeof(oldmk));
	geli_random(newmk, sizeof(newmk));
	geli_random(uuid, sizeof(uuid));
	record(&oldmd, S, oldmk);
	record(&newmd, S, newmk);
	if (kind == GELI_REENC_ENCRYPT) {
		memset(dev, 0, SIZE);
		memcpy(dev, plain, SIZE - S);
	} else {
		encrypted_provider(&oldmd, oldmk);
	}
	unlink(journal);
	error = geli_reenc_start(p, kind,
	    kind == GELI_REENC_ENCRYPT ? NULL : &oldmd,
	    kind == GELI_REENC_ENCRYPT ? NULL : oldmk, 0,
	    kind == GELI_REENC_DECRYPT ? NULL : &newmd,
	    kind == GELI_REENC_DECRYPT ? NULL : newmk, uuid, journal, HOT, &r);
	tap_ok(error == 0, "%s: started (%d)", what, error);
	if (error != 0) {
		geli_provider_close(p);
		return;
	}
	check_order(r, what);
	geli_reenc_progress(r, &done, &total, &bytes);
	error = run_locked(r, &l);
	tap_ok(error == 0 && l.n == total && l.bad == 0 && !l.held,
	    "%s: %ju locks and unlocks around the chunks, in order", what,
	    (uintmax_t)l.n);
	tap_ok(geli_reenc_finish(r) == 0 && access(journal, F_OK) != 0,
	    "%s: finished, the journal removed", what);
	geli_reenc_free(r);
	if (kind == GELI_REENC_DECRYPT) {
		bool zeros = true;
		for (uint64_t i = bytes; i < SIZE; i++)
			zeros &= dev[i] == 0;
		tap_ok(memcmp(dev, plain, bytes) == 0 && zeros,
		    "%s: the provider is the plaintext, zeros after it", what);
	} else {
		tap_ok(reads_plain(&newmd, newmk, bytes),
		    "%s: the new record's key reads the plaintext", what);
	}
	geli_provider_close(p);
}

/* ---- A changed journal --------------------------------------------------------- */

static void
tampered(void)
{
	uint8_t oldmk[GELI_MKEY_DATALEN], newmk[GELI_MKEY_DATALEN], uuid[16];
	uint8_t head[1336], b;
	struct geli_metadata oldmd, newmd, marked;
	struct geli_provider *p = provider();
	struct geli_reenc *r = NULL;
	unsigned refused = 0, tried = 0;
	FILE *f;

	geli_random(oldmk, sizeof(oldmk));
	geli_random(newmk, sizeof(newmk));
	geli_random(uuid, sizeof(uuid));
	record(&oldmd, 4096, oldmk);
	record(&newmd, 4096, newmk);
	encrypted_provider(&oldmd, oldmk);
	unlink(journal);
	geli_reenc_start(p, GELI_REENC_REKEY, &oldmd, oldmk, 0, &newmd, newmk,
	    uuid, journal, HOT, &r);
	for (int i = 0; i < 5; i++)
		geli_reenc_step(r);
	geli_reenc_free(r);	/* interrupted */
	tap_ok(geli_provider_read_metadata(p, &marked) == -GELI_EINPROGRESS,
	    "an interrupted conversion leaves the record marked");
	f = fopen(journal, "r+b");
	if (f == NULL || fread(head, 1, sizeof(head), f) != sizeof(head)) {
		tap_ok(false, "the journal reads");
		return;
	}
	for (size_t i = 0; i < sizeof(head); i += 5) {
		b = head[i] ^ 0x01;
		fseek(f, (long)i, SEEK_SET);
		fwrite(&b, 1, 1, f);
		fflush(f);
		tried++;
		if (geli_reenc_resume(p, &marked, oldmk, journal, &r) != 0)
			refused++;
		else
			geli_reenc_free(r);
		fseek(f, (long)i, SEEK_SET);
		fwrite(&head[i], 1, 1, f);
		fflush(f);
	}
	fclose(f);
	tap_ok(refused == tried, "a journal with one header byte changed is "
	    "refused (%u of %u)", refused, tried);
	tap_ok(geli_reenc_resume(p, &marked, newmk, journal, &r) != 0,
	    "the new Master Key does not open the re-key's journal");
	tap_ok(geli_reenc_resume(p, &marked, oldmk, journal, &r) == 0,
	    "the intact journal resumes");
	while (geli_reenc_step(r) == 1)
		;
	tap_ok(geli_reenc_finish(r) == 0 && reads_plain(&newmd, newmk,
	    geli_eli_mediasize(&newmd, SIZE, 512, false)),
	    "and ends with the plaintext");
	geli_reenc_free(r);
	geli_provider_close(p);
}

int
main(void)
{
	snprintf(journal, sizeof(journal), "/tmp/test_reenc.%d.journal",
	    (int)getpid());
	dev = malloc(SIZE);
	plain = malloc(SIZE);
	geli_random(plain, SIZE);
	for (uint32_t S = 512; S <= 4096; S *= 8) {
		one_kind(GELI_REENC_REKEY, S);
		one_kind(GELI_REENC_ENCRYPT, S);
		one_kind(GELI_REENC_DECRYPT, S);
	}
	tampered();
	unlink(journal);
	free(dev);
	free(plain);
	return tap_done();
}
