/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Volumes on providers of operations and what zeroes their sectors:
 * providers of operations hold what files do; discard gives back whole
 * sectors only, and never with NODELETE or integrity; zeroing a range reads
 * zeros.  (The sector data path itself: test_volume.c.)
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"

#include "geli.h"
#include "internal.h"

static char tmpdir[] = "/tmp/geli-volops.XXXXXX";

/* A v7 AES-XTS-128 record with sector size S for a provider of size bytes. */
static void
xts_md(struct geli_metadata *md, uint32_t S, uint64_t size)
{
	memset(md, 0, sizeof(*md));
	memcpy(md->magic, "GEOM::ELI", 10);
	md->version = 7;
	md->ealgo = GELI_ALGO_AES_XTS;
	md->keylen = 128;
	md->sectorsize = S;
	md->provsize = size;
	md->keys = 1;
}

/* A provider in memory, reached through operations; discards recorded. */
struct memprov {
	uint8_t *b;
	uint64_t size, doff, dlen;
	int discards;
};

static int
mem_pread(void *o, void *buf, size_t len, uint64_t off)
{
	struct memprov *m = o;

	memcpy(buf, m->b + off, len);
	return 0;
}

static int
mem_pwrite(void *o, const void *buf, size_t len, uint64_t off)
{
	struct memprov *m = o;

	memcpy(m->b + off, buf, len);
	return 0;
}

static int
mem_discard(void *o, uint64_t off, uint64_t len)
{
	struct memprov *m = o;

	m->doff = off;
	m->dlen = len;
	m->discards++;
	memset(m->b + off, 0, len);
	return 0;
}

static const struct geli_provider_ops mem_ops = {
	.pread = mem_pread, .pwrite = mem_pwrite, .discard = mem_discard,
};

static void
test_ops_discard(void)
{
	const uint64_t size = 1 << 20;
	struct memprov m = { .size = size };
	struct geli_provider *p, *fp;
	struct geli_metadata md, back;
	struct geli_volume *v, *fv;
	uint8_t mkey[128], *data, *fbuf;
	char path[4200];
	struct stat st;
	blkcnt_t before;
	int fd;

	m.b = calloc(1, size);
	data = malloc(size);
	fbuf = malloc(size);
	geli_random(data, size);
	geli_random(mkey, sizeof(mkey));
	xts_md(&md, 4096, size);
	tap_ok(geli_provider_open_ops(&mem_ops, &m, size, 512, &p) == 0,
	    "a provider of operations opens");
	tap_ok(geli_provider_fd(p) == -1, "... it has no descriptor");
	int w = geli_provider_write_metadata(p, &md);
	int r = geli_provider_read_metadata(p, &back);
	tap_ok(w == 0 && r == 0 && back.provsize == size && back.sectorsize == 4096,
	    "its metadata is written and read through its operations");
	tap_ok(geli_volume_open(p, &md, mkey, 0, 2, &v) == 0, "a volume opens on it");
	tap_ok(geli_volume_write(v, data, geli_volume_size(v), 0) ==
	    (ssize_t)geli_volume_size(v), "the whole volume written");

	/* The same volume on a file: the same ciphertext. */
	snprintf(path, sizeof(path), "%s/ops-file", tmpdir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	tap_ok(fd >= 0 && ftruncate(fd, (off_t)size) == 0, "a file provider of the same size");
	close(fd);
	geli_provider_open(path, true, &fp);
	geli_provider_write_metadata(fp, &md);
	geli_volume_open(fp, &md, mkey, 0, 1, &fv);
	geli_volume_write(fv, data, geli_volume_size(fv), 0);
	geli_volume_flush(fv);
	fd = open(path, O_RDONLY);
	tap_ok(pread(fd, fbuf, size, 0) == (ssize_t)size &&
	    memcmp(fbuf, m.b, size) == 0,
	    "the provider of operations holds the bytes a file would");
	close(fd);

	/* Discard: whole GELI sectors inside the range, nothing else. */
	tap_ok(geli_volume_can_discard(v), "discard offered (no NODELETE, no integrity)");
	tap_ok(geli_volume_discard(v, 100, 3 * 4096) == 0 && m.discards == 1 &&
	    m.doff == 4096 && m.dlen == 2 * 4096,
	    "discard [100, 100+3S): sectors 1 and 2 given back, not the edges");
	tap_ok(geli_volume_discard(v, 4097, 4000) == 0 && m.discards == 1,
	    "a range with no whole sector: nothing given back, success");
	memset(fbuf, 0, 4096);
	tap_ok(geli_volume_read(v, fbuf, 100, 0) == 100 && memcmp(fbuf, data, 100) == 0 &&
	    geli_volume_read(v, fbuf, 4096, 3 * 4096) == 4096 &&
	    memcmp(fbuf, data + 3 * 4096, 4096) == 0,
	    "the data around it reads as written");
	stat(path, &st);
	before = st.st_blocks;
	int d = geli_volume_discard(fv, 0, 512 * 1024);
	stat(path, &st);
	tap_ok(d == 0 && before - st.st_blocks >= 512 * 1024 / 512,
	    "on a file, a hole is punched (%lld -> %lld blocks)",
	    (long long)before, (long long)st.st_blocks);
	geli_volume_close(fv);
	geli_volume_close(v);

	md.flags = GELI_FLAG_NODELETE;
	geli_provider_open_ops(&mem_ops, &m, size, 512, &p);
	geli_volume_open(p, &md, mkey, 0, 1, &v);
	tap_ok(!geli_volume_can_discard(v) && geli_volume_discard(v, 0, size) == -EOPNOTSUPP,
	    "NODELETE: discard refused with EOPNOTSUPP");
	geli_volume_close(v);
	md.flags = GELI_FLAG_AUTH;
	md.aalgo = GELI_ALGO_HMAC_SHA256;
	geli_provider_open_ops(&mem_ops, &m, size, 512, &p);
	geli_volume_open(p, &md, mkey, 0, 1, &v);
	tap_ok(geli_volume_discard(v, 0, size) == -EOPNOTSUPP,
	    "integrity: discard refused with EOPNOTSUPP");
	geli_volume_close(v);
	md.flags = 0;
	md.aalgo = 0;
	geli_provider_open_ops(&mem_ops, &m, size, 512, &p);
	geli_volume_open(p, &md, mkey, GELI_VOLUME_READONLY, 1, &v);
	tap_ok(geli_volume_discard(v, 0, size) == -EROFS, "read-only: -EROFS");
	geli_volume_close(v);
	tap_ok(geli_provider_open_ops(&mem_ops, &m, size, 500, &p) == -EINVAL,
	    "a sector size that is no power of two is refused");
	free(m.b);
	free(data);
	free(fbuf);
}

/* Zeros: a punched hole (whole sectors deleted, edges written), reads of
 * sectors stored as zeros, NODELETE at run time, and the refusals. */
static void
test_zero(void)
{
	const uint64_t size = 1 << 20;
	const uint32_t S = 4096;
	struct geli_provider *p;
	struct geli_metadata md;
	struct geli_volume *v;
	uint8_t mkey[128], *data, *buf, *zero;
	char path[4200];
	struct stat st;
	blkcnt_t before;
	int fd;

	data = malloc(size);
	buf = malloc(size);
	zero = calloc(1, size);
	geli_random(data, size);
	geli_random(mkey, sizeof(mkey));
	xts_md(&md, S, size);
	snprintf(path, sizeof(path), "%s/zero-file", tmpdir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	tap_ok(fd >= 0 && ftruncate(fd, (off_t)size) == 0, "zero: a sparse file provider");
	close(fd);
	geli_provider_open(path, true, &p);
	geli_provider_write_metadata(p, &md);
	tap_ok(geli_volume_open(p, &md, mkey, 0, 2, &v) == 0, "zero: a volume on it");
	tap_ok(geli_volume_read(v, buf, 3 * S, 5 * S) == 3 * S && memcmp(buf, zero, 3 * S) == 0,
	    "sectors never written (stored as zeros) read as zeros");
	geli_volume_write(v, data, geli_volume_size(v), 0);
	geli_volume_flush(v);
	stat(path, &st);
	before = st.st_blocks;

	/* [1000, 1000 + 3S + 500): sectors 1 and 2 deleted, 0 and 3 partly written. */
	const uint64_t off = 1000, len = 3 * S + 500;
	tap_ok(geli_volume_zero(v, off, len, true) == 0, "punch [1000, 1000+3S+500)");
	stat(path, &st);
	tap_ok(before - st.st_blocks == 2 * S / 512,
	    "... the two whole sectors inside are given back (%lld -> %lld blocks)",
	    (long long)before, (long long)st.st_blocks);
	tap_ok(geli_volume_read(v, buf, 5 * S, 0) == 5 * S &&
	    memcmp(buf + off, zero, len) == 0,
	    "... the whole range reads as zeros, the edges too");
	tap_ok(memcmp(buf, data, off) == 0 &&
	    memcmp(buf + off + len, data + off + len, 5 * S - off - len) == 0,
	    "... the bytes around it read as written");
	geli_volume_close(v);
	geli_provider_open(path, true, &p);
	geli_volume_open(p, &md, mkey, 0, 1, &v);
	tap_ok(geli_volume_read(v, buf, len, off) == (ssize_t)len && memcmp(buf, zero, len) == 0,
	    "... and as zeros after the volume is opened again");

	/* Zeros without deallocation: written, nothing given back. */
	stat(path, &st);
	before = st.st_blocks;
	tap_ok(geli_volume_zero(v, 8 * S, 4 * S, false) == 0 &&
	    geli_volume_read(v, buf, 4 * S, 8 * S) == 4 * S && memcmp(buf, zero, 4 * S) == 0,
	    "zero range without deallocation: reads as zeros");
	stat(path, &st);
	tap_ok(st.st_blocks == before, "... and the provider keeps its blocks");
	fd = open(path, O_RDONLY);
	tap_ok(pread(fd, buf, S, 8 * S) == S && memcmp(buf, zero, S) != 0,
	    "... stored as ciphertext, not as zeros");
	close(fd);

	/* NODELETE from now on: refused, and nothing written (the edges neither). */
	geli_volume_set_nodelete(v, true);
	tap_ok(!geli_volume_can_discard(v) &&
	    geli_volume_zero(v, 20 * S + 7, 2 * S, true) == -EOPNOTSUPP,
	    "NODELETE set at run time: punch refused with EOPNOTSUPP");
	tap_ok(geli_volume_read(v, buf, 3 * S, 20 * S) == 3 * S &&
	    memcmp(buf, data + 20 * S, 3 * S) == 0, "... and nothing of the range changed");
	tap_ok(geli_volume_zero(v, 20 * S, S, false) == 0,
	    "... zeros without deallocation still work");
	geli_volume_set_nodelete(v, false);
	tap_ok(geli_volume_zero(v, 24 * S, S, true) == 0, "NODELETE cleared: punch works again");
	tap_ok(geli_volume_zero(v, size, S, true) == 0 && geli_volume_zero(v, 0, 0, true) == 0,
	    "a range past the end or empty: nothing to do");
	geli_volume_close(v);

	/* The sector transform alone (benchmarks) still decrypts zeros. */
	geli_provider_open(path, true, &p);
	geli_volume_open(p, &md, mkey, 0, 1, &v);
	memset(buf, 0, S);
	tap_ok(geli_volume_transform(v, 0, 1, buf, buf, false) == 0 && memcmp(buf, zero, S) != 0,
	    "the transform alone decrypts a sector of zeros (no shortcut)");
	geli_volume_close(v);

	/* Integrity: no deletion, zeros written. */
	md.flags = GELI_FLAG_AUTH;
	md.aalgo = GELI_ALGO_HMAC_SHA256;
	geli_provider_open(path, true, &p);
	geli_volume_open(p, &md, mkey, 0, 1, &v);
	tap_ok(geli_volume_zero(v, 0, 2 * S, true) == -EOPNOTSUPP,
	    "integrity: punch refused with EOPNOTSUPP");
	tap_ok(geli_volume_zero(v, 0, 2 * S, false) == 0 &&
	    geli_volume_read(v, buf, 2 * S, 0) == 2 * S && memcmp(buf, zero, 2 * S) == 0,
	    "integrity: zeros without deallocation are written and authenticate");
	geli_volume_close(v);
	md.flags = 0;
	md.aalgo = 0;
	geli_provider_open(path, false, &p);
	geli_volume_open(p, &md, mkey, GELI_VOLUME_READONLY, 1, &v);
	tap_ok(geli_volume_zero(v, 0, S, true) == -EROFS &&
	    geli_volume_zero(v, 0, S, false) == -EROFS, "read-only: -EROFS");
	geli_volume_close(v);

	/* A provider of operations: no hole it could promise. */
	struct memprov m = { .size = size };
	m.b = calloc(1, size);
	geli_provider_open_ops(&mem_ops, &m, size, 512, &p);
	geli_volume_open(p, &md, mkey, 0, 1, &v);
	geli_volume_write(v, data, 4 * S, 0);
	tap_ok(geli_volume_zero(v, 100, 3 * S, true) == -EOPNOTSUPP && m.discards == 0 &&
	    geli_volume_read(v, buf, 4 * S, 0) == 4 * S && memcmp(buf, data, 4 * S) == 0,
	    "a provider of operations: punch refused, nothing changed");
	geli_volume_close(v);
	free(m.b);
	free(data);
	free(buf);
	free(zero);
}

int
main(void)
{
	char cmd[200];

	if (mkdtemp(tmpdir) == NULL)
		return 1;
	test_ops_discard();
	test_zero();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		return 1;
	return tap_done();
}
