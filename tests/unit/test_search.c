/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * geli_search (lib/search.c) over a device in memory: each record found
 * once, in order, with its provider's start and sector size (512, 4096 on
 * a 4 KiB boundary, the device's own), records astride the reads, a bad
 * MD5 and a provider that does not fit told apart, the callback's stop,
 * a read error, and the progress reaching the end.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "geli.h"
#include "tap.h"

#define DEVSIZE (12u << 20)
#define MAXFOUND 16

static uint8_t *dev;
static uint64_t fail_at = UINT64_MAX;	/* a read covering it fails */

static int
dev_pread(void *opaque, void *buf, size_t len, uint64_t off)
{
	(void)opaque;
	if (off + len > DEVSIZE)
		return -EIO;
	if (fail_at >= off && fail_at < off + len)
		return -EIO;
	memcpy(buf, dev + off, len);
	return 0;
}

/* A record at byte at for a provider of provsize bytes with S = ss. */
static void
put_md(uint64_t at, uint64_t provsize, uint32_t ss)
{
	struct geli_metadata md;

	memset(&md, 0, sizeof(md));
	memcpy(md.magic, GELI_MAGIC, sizeof(GELI_MAGIC));
	md.version = GELI_VERSION;
	md.ealgo = GELI_ALGO_AES_XTS;
	md.keylen = 256;
	md.provsize = provsize;
	md.sectorsize = ss;
	md.keys = 0x01;
	md.iterations = -1;
	geli_metadata_encode(&md, dev + at);
}

struct got {
	struct geli_found f[MAXFOUND];
	unsigned n, stop_after;
	uint64_t done, total;
};

static int
on_found(const struct geli_found *f, void *arg)
{
	struct got *g = arg;

	if (g->n < MAXFOUND)
		g->f[g->n] = *f;
	g->n++;
	return g->stop_after != 0 && g->n == g->stop_after ? 42 : 0;
}

static void
on_progress(uint64_t done, uint64_t total, void *arg)
{
	struct got *g = arg;

	g->done = done;
	g->total = total;
}

static int
run(uint32_t devsector, struct got *g)
{
	struct geli_provider_ops ops = { .pread = dev_pread };
	struct geli_provider *p;
	int rc;

	if (geli_provider_open_ops(&ops, NULL, DEVSIZE, devsector, &p) != 0)
		return -999;
	rc = geli_search(p, on_found, on_progress, g);
	geli_provider_close(p);
	return rc;
}

int
main(void)
{
	struct got g;
	int rc;

	dev = calloc(1, DEVSIZE);
	if (dev == NULL)
		return 1;

	/* A: 1 MiB at 64 KiB (512-byte sectors, as a GPT partition at LBA 128). */
	put_md(65536 + (1u << 20) - 512, 1u << 20, 4096);
	/* B: 256 KiB of a 4Kn disk at 3 MiB: the record in its last 4 KiB. */
	put_md(3u * (1u << 20) + (256u << 10) - 4096, 256u << 10, 4096);
	/* C: ends exactly on the 4 MiB read boundary, at an odd start. */
	put_md((4u << 20) - 512, (4u << 20) - 512 - 1536, 512);
	/* D: the first record of the second read. */
	put_md(4u << 20, 512u * 7, 512);
	/* E: a record whose MD5 is wrong. */
	put_md(6u << 20, 1u << 20, 512);
	dev[(6u << 20) + 100] ^= 1;
	/* F: a record for 16 MiB, more than there is before it. */
	put_md(8u << 20, 16u << 20, 512);
	/* G: the whole device. */
	put_md(DEVSIZE - 512, DEVSIZE, 4096);

	memset(&g, 0, sizeof(g));
	rc = run(512, &g);
	tap_ok(rc == 0 && g.n == 7, "seven records seen, in one pass (rc %d, %u)",
	    rc, g.n);
	tap_ok(g.f[0].decoded == 0 && g.f[0].start == 65536 &&
	    g.f[0].psectorsize == 512 && g.f[0].md.provsize == 1u << 20 &&
	    g.f[0].mdoffset == 65536 + (1u << 20) - 512,
	    "a partition at LBA 128: start 65536, 512-byte sectors");
	tap_ok(g.f[1].decoded == 0 && g.f[1].start == 3u << 20 &&
	    g.f[1].psectorsize == 4096,
	    "a 4Kn provider: its start on 4 KiB, 4096-byte sectors (%ju, %u)",
	    (uintmax_t)g.f[1].start, (unsigned)g.f[1].psectorsize);
	tap_ok(g.f[2].decoded == 0 && g.f[2].start == 2048 &&
	    g.f[2].psectorsize == 512,
	    "a record in the last sector of a read, an unaligned start");
	tap_ok(g.f[3].decoded == 0 && g.f[3].mdoffset == 4u << 20 &&
	    g.f[3].start == (4u << 20) + 512 - 512u * 7,
	    "a record in the first sector of the next read");
	tap_ok(g.f[4].decoded == -EBADMSG && g.f[4].mdoffset == 6u << 20,
	    "a bad MD5: rejected as such (%d)", g.f[4].decoded);
	tap_ok(g.f[5].decoded == -ERANGE,
	    "a provider larger than what precedes its record: -ERANGE (%d)",
	    g.f[5].decoded);
	tap_ok(g.f[6].decoded == 0 && g.f[6].start == 0 &&
	    g.f[6].md.provsize == DEVSIZE, "the whole device: start 0");
	tap_ok(g.done == DEVSIZE && g.total == DEVSIZE,
	    "progress reaches the end (%ju of %ju)", (uintmax_t)g.done,
	    (uintmax_t)g.total);

	/* A device of 4096-byte sectors: every provider on 4096. */
	memset(&g, 0, sizeof(g));
	rc = run(4096, &g);
	tap_ok(rc == 0 && g.n == 7 && g.f[1].decoded == 0 &&
	    g.f[1].psectorsize == 4096 && g.f[1].start == 3u << 20,
	    "on a 4Kn device: the 4Kn provider in 4096-byte sectors");
	tap_ok(g.f[0].decoded == -ERANGE && g.f[2].decoded == -ERANGE &&
	    g.f[6].decoded == -ERANGE,
	    "on a 4Kn device: records off its sectors do not fit");

	/* The callback ends it. */
	memset(&g, 0, sizeof(g));
	g.stop_after = 2;
	rc = run(512, &g);
	tap_ok(rc == 42 && g.n == 2, "found() returning 42 stops the search "
	    "with 42 (rc %d after %u)", rc, g.n);

	/* A read error in the second 4 MiB read: its code, nothing after. */
	memset(&g, 0, sizeof(g));
	fail_at = (5u << 20) + 7;
	rc = run(512, &g);
	tap_ok(rc == -EIO && g.n == 3, "a read error ends the search with -EIO "
	    "(rc %d after %u records)", rc, g.n);
	fail_at = UINT64_MAX;

	/* Nothing at all. */
	memset(dev, 0, DEVSIZE);
	memset(&g, 0, sizeof(g));
	rc = run(512, &g);
	tap_ok(rc == 0 && g.n == 0, "a device of zeros: nothing found");

	free(dev);
	return tap_done();
}
