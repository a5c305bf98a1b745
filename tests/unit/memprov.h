/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the unit tests of conversions (test_reenc, test_online) share: a
 * provider of SIZE bytes in memory (dev, allocated by the test), whose
 * writes of exactly fail_len bytes fail with EIO while fail_len is set, and
 * a record of it with a Master Key in slot 0.  The test defines SIZE before
 * including this.
 */
#ifndef GELI_TEST_MEMPROV_H
#define GELI_TEST_MEMPROV_H

#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "geli.h"

static uint8_t *dev;
static atomic_size_t fail_len;

static int
dev_pread(void *o, void *buf, size_t len, uint64_t off)
{
	(void)o;
	memcpy(buf, dev + off, len);
	return 0;
}

static int
dev_pwrite(void *o, const void *buf, size_t len, uint64_t off)
{
	(void)o;
	if (len == atomic_load(&fail_len))
		return -EIO;
	memcpy(dev + off, buf, len);
	return 0;
}

static const struct geli_provider_ops dev_ops = { .pread = dev_pread,
	.pwrite = dev_pwrite };

static struct geli_provider *
provider(void)
{
	struct geli_provider *p = NULL;

	geli_provider_open_ops(&dev_ops, NULL, SIZE, 512, &p);
	return p;
}

/* An AES-XTS-128 record of S-byte sectors for dev, with mk in slot 0
 * under a random user key. */
static void
record(struct geli_metadata *md, uint32_t S, const uint8_t *mk)
{
	uint8_t ukey[GELI_USERKEYLEN];

	memset(md, 0, sizeof(*md));
	memcpy(md->magic, GELI_MAGIC, sizeof(GELI_MAGIC));
	md->version = GELI_VERSION;
	md->ealgo = GELI_ALGO_AES_XTS;
	md->keylen = 128;
	md->provsize = SIZE;
	md->sectorsize = S;
	md->keys = 1;
	md->iterations = -1;
	geli_random(ukey, sizeof(ukey));
	geli_random(md->mkeys, sizeof(md->mkeys));
	geli_mkey_encrypt(md->ealgo, md->keylen, ukey, mk, md->mkeys);
}

#endif
