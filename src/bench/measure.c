/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * geli bench: one measurement of one configuration (see bench.c): write and
 * read MB/s and CPU over a provider in memory (or --target), through geli
 * attach's file (--attached), or the sector transform alone (--cipher-only).
 *
 * A provider is a memfd (memory, no disk); the volume on it is the same
 * libgeli data path that `geli attach` serves (1 MiB requests, all cores).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "geli.h"
#include "files.h"
#include "spawn.h"
#include "stats.h"
#include "study.h"
#include "volumes.h"

static ssize_t
vol_write(void *a, uint8_t *buf, size_t len, uint64_t off)
{
	return geli_volume_write(a, buf, len, off);
}

static ssize_t
vol_read(void *a, uint8_t *buf, size_t len, uint64_t off)
{
	return geli_volume_read(a, buf, len, off);
}

/*
 * The provider of one measurement: --target (an existing file or device,
 * used from offset 0; its data is overwritten), or a memfd with its pages
 * allocated.  With md, room for size decrypted bytes (md->provsize set),
 * else size bytes.
 */
static int
bench_provider(const struct bench_opts *o, struct geli_metadata *md, uint64_t size,
    struct geli_provider **p, int *fdout)
{
	uint64_t need = size;
	int error;

	if (o->target == NULL)
		return mem_provider(md, size, true, p, fdout);
	/* O_DIRECT where it works, else the page cache (see timed_io). */
	error = geli_provider_open_direct(o->target, true, p);
	if (error == -EINVAL)
		error = geli_provider_open(o->target, true, p);
	if (error != 0)
		return error;
	if (md != NULL) {
		need = geli_eli_provsize(md, size, geli_provider_sectorsize(*p), false);
		md->provsize = need;
	}
	if (need == 0 || geli_provider_mediasize(*p) < need) {
		geli_provider_close(*p);
		return need == 0 ? -EINVAL : -ENOSPC;
	}
	if (fdout != NULL)
		*fdout = dup(geli_provider_fd(*p));
	return 0;
}

/* The volume of one measurement, with a random key, with room for size
 * decrypted bytes (bench_provider). */
static int
bench_volume(const struct config *c, const struct bench_opts *o, uint64_t size,
    struct geli_volume **v)
{
	uint32_t S = c->sectorsize != 0 ? c->sectorsize : o->sectorsize;
	struct geli_provider *p;
	struct geli_metadata md;
	int error;

	bench_metadata(&md, c->ealgo, c->keylen, c->aalgo, S);
	error = bench_provider(o, &md, size, &p, NULL);
	if (error != 0)
		return error;
	error = random_volume(p, &md, o->threads, v);
	if (error != 0)
		geli_provider_close(p);
	return error;
}

/*
 * --attached: the same measurement end to end, through the file that
 * `geli init` + `geli attach` make of a provider in memory (/dev/shm).
 */
static int
measure_attached(const struct config *c, const struct bench_opts *o, uint8_t *buf,
    struct sample *s)
{
	char dir[] = "/dev/shm/geli-bench.XXXXXX", eli[128];
	const char *prov[] = { "prov" };
	struct attached a = { .geli = self_exe(), .dir = dir, .ealgo = c->ealgo,
	    .keylen = c->keylen, .aalgo = c->aalgo,
	    .sectorsize = c->sectorsize != 0 ? c->sectorsize : o->sectorsize,
	    .iterations = 1, .quiet = true };
	struct meter m = { o, -1, 0 };
	struct raw r;
	int error;

	if (mkdtemp(dir) == NULL)
		return -errno;
	/* Room for the measurement, as the memory provider has, and the tags. */
	error = attached_file(&a, prov[0], o->size);
	if (error == 0)
		error = attached_start(&a, prov, 1);
	if (error != 0) {
		error = -EIO;
		goto out;
	}
	m.daemon = attached_daemon(&a, prov[0]);
	(void)attached_path(&a, prov[0], RUNDIR_ELI, eli, sizeof(eli));
	r.fd = open(eli, O_RDWR);
	if (r.fd < 0) {
		error = -errno;
	} else {
		/* CPU: this process and the daemon. */
		error = write_read(&m, raw_write, raw_read, &r, buf, o->size, s);
		close(r.fd);
	}
	attached_stop(&a, prov, 1, false);
out:
	remove_tree(dir);
	return error;
}

/* --cipher-only: one request's worth of whole sectors transformed in
 * memory, as timed_io's "I/O" (encrypt for writes, decrypt for reads). */
struct xform {
	struct geli_volume *v;
	uint8_t *phys;		/* ciphertext and tags (== buf without integrity) */
	uint8_t *copy;		/* the raw baseline's other buffer */
};

static ssize_t
xf_crypt(struct xform *x, uint8_t *buf, size_t len, bool enc)
{
	size_t n = len / geli_volume_sectorsize(x->v);

	return geli_volume_transform(x->v, 0, n, buf, x->phys, enc) == 0 ?
	    (ssize_t)len : -1;
}

static ssize_t
xf_encrypt(void *a, uint8_t *buf, size_t len, uint64_t off)
{
	(void)off;
	return xf_crypt(a, buf, len, true);
}

static ssize_t
xf_decrypt(void *a, uint8_t *buf, size_t len, uint64_t off)
{
	(void)off;
	return xf_crypt(a, buf, len, false);
}

static ssize_t
xf_copy_out(void *a, uint8_t *buf, size_t len, uint64_t off)
{
	(void)off;
	memcpy(((struct xform *)a)->copy, buf, len);
	return (ssize_t)len;
}

static ssize_t
xf_copy_in(void *a, uint8_t *buf, size_t len, uint64_t off)
{
	(void)off;
	memcpy(buf, ((struct xform *)a)->copy, len);
	return (ssize_t)len;
}

/*
 * What the CPU does per cipher with no provider I/O (as cryptsetup
 * benchmark reports it): the sector transform of the data path on the
 * pool, in place, over one request (--bs) of sectors; the raw baseline is
 * a memory copy of as many bytes.  With integrity, decryption verifies the
 * tags the last encryption made.
 */
static int
measure_cipher(const struct config *c, const struct bench_opts *o, uint8_t *buf,
    struct sample *s)
{
	const size_t bs = o->bs != 0 ? o->bs : 1 << 20;
	uint32_t S = c->sectorsize != 0 ? c->sectorsize : o->sectorsize;
	struct xform x = { NULL, NULL, NULL };
	struct meter m = { o, -1, 0 };
	int error;

	if (c->ealgo == 0) {
		x.copy = aligned_alloc(4096, bs);
		if (x.copy == NULL)
			return -ENOMEM;
		error = write_read(&m, xf_copy_out, xf_copy_in, &x, buf, bs, s);
		free(x.copy);
		return error;
	}
	/* Two requests of room: the transform never touches the provider. */
	error = bench_volume(c, o, (uint64_t)(bs / S) * S * 2, &x.v);
	if (error != 0)
		return error;
	x.phys = c->aalgo != 0 ? aligned_alloc(4096,
	    bs / S * geli_volume_physical_sectorsize(x.v)) : buf;
	if (x.phys == NULL) {
		geli_volume_close(x.v);
		return -ENOMEM;
	}
	error = write_read(&m, xf_encrypt, xf_decrypt, &x, buf, bs, s);
	if (x.phys != buf)
		free(x.phys);
	geli_volume_close(x.v);
	return error;
}

/* No encryption: the provider's own write and read rates. */
static int
measure_raw(const struct bench_opts *o, uint8_t *buf, struct sample *s)
{
	struct geli_provider *p;
	struct raw r;
	int error, fd;

	error = bench_provider(o, NULL, o->size, &p, &fd);
	if (error != 0)
		return error;
	r.fd = fd;
	struct meter m = { o, o->target != NULL ? fd : -1, 0 };
	error = write_read(&m, raw_write, raw_read, &r, buf, o->size, s);
	close(fd);
	geli_provider_close(p);
	return error;
}

int
measure(const struct config *c, const struct bench_opts *o, uint8_t *buf,
    struct sample *s)
{
	struct geli_volume *v;
	int error;

	if (c->base == BASE_NOACCEL) {
		geli_crypto_set_accel(false);
		error = measure_cipher(c, o, buf, s);
		geli_crypto_set_accel(true);
		return error;
	}
	if (c->base != BASE_NONE)
		return measure_baseline(c, o, buf, s);
	if (o->cipher_only)
		return measure_cipher(c, o, buf, s);
	if (o->attached && c->ealgo != 0)
		return measure_attached(c, o, buf, s);
	if (c->ealgo == 0)
		return measure_raw(o, buf, s);
	/* With integrity the provider holds the tags too (§7.1). */
	error = bench_volume(c, o, o->size, &v);
	if (error != 0)
		return error;
	/* Reads stay within what was written: integrity volumes fail
	 * verification elsewhere (as on FreeBSD). */
	struct meter m = { o, o->target != NULL ?
	    geli_provider_fd(geli_volume_provider(v)) : -1, 0 };
	error = write_read(&m, vol_write, vol_read, v, buf, geli_volume_size(v), s);
	geli_volume_close(v);
	return error;
}
