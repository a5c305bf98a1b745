/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer harness: the encryption-only data path (lib/privacy.c through
 * geli_volume_write and geli_volume_read), with and without the AES-CBC
 * accelerator (lib/accel.c), on both crypto backends.
 *
 * LLVMFuzzerInitialize makes four pairs of volumes in /dev/shm (AES-CBC
 * 128/512, 192/4096 and 256/16384, AES-XTS 128/4096), the two of a pair
 * with the same Master Key: A on libgcrypt with two threads, B on OpenSSL
 * with one.  Input: a selector (bits 0-1: the pair; bit 2: which of A and B
 * writes with the accelerator on; bit 3: its IVs from Nettle's state of the
 * IV key or as ipsec-mb's jobs; bit 4: runs decrypted by it or by the
 * backend), the write's offset and length and the read's offset
 * and length (3 bytes each), then the bytes written (repeated to the
 * length; zeros when none).  After the write to both, the two provider
 * files must hold the same bytes, and a read of each, with the accelerator
 * the other way, must return the bytes last written there.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "accel.h"
#include "geli.h"

#define NKIND 4
#define NSECT 24	/* GELI sectors of data per volume */

static const struct {
	uint16_t ealgo, keylen;
	uint32_t S;
} kinds[NKIND] = {
	{ GELI_ALGO_AES_CBC, 128, 512 },
	{ GELI_ALGO_AES_CBC, 192, 4096 },
	{ GELI_ALGO_AES_CBC, 256, 16384 },
	{ GELI_ALGO_AES_XTS, 128, 4096 },
};

static struct pair {
	struct geli_volume *v[2];	/* A (libgcrypt), B (OpenSSL) */
	int fd[2];
	uint64_t size, fsize;		/* of the .eli, of a provider file */
	uint8_t *model;			/* what the .eli should hold */
	uint8_t *f[2];			/* the files, read back */
	uint8_t *buf;
} pairs[NKIND];

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
open_one(struct pair *pa, int k, int which, const struct geli_metadata *md,
    const uint8_t *mkey)
{
	struct geli_provider *p;
	char path[64];

	snprintf(path, sizeof(path), "/dev/shm/fuzz_privacy.%d.%d.%d",
	    (int)getpid(), k, which);
	pa->fd[which] = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (pa->fd[which] < 0 || ftruncate(pa->fd[which], (off_t)md->provsize))
		abort();
	if (geli_crypto_select(which == 0 ? "gcrypt" : "openssl") != 0 ||
	    geli_provider_open(path, true, &p) != 0)
		abort();
	unlink(path);		/* gone when the fuzzer is */
	if (geli_volume_open(p, md, mkey, 0, which == 0 ? 2 : 1,
	    &pa->v[which]) != 0)
		abort();
}

static void
make(struct pair *pa, int k)
{
	struct geli_metadata md;
	uint8_t mkey[GELI_MKEY_DATALEN];

	memset(&md, 0, sizeof(md));
	md.version = GELI_VERSION;
	md.ealgo = kinds[k].ealgo;
	md.keylen = kinds[k].keylen;
	md.aalgo = GELI_ALGO_NONE;
	md.sectorsize = kinds[k].S;
	md.provsize = (uint64_t)(NSECT + 1) * kinds[k].S;
	geli_random(mkey, sizeof(mkey));
	open_one(pa, k, 0, &md, mkey);
	open_one(pa, k, 1, &md, mkey);
	pa->size = geli_volume_size(pa->v[0]);
	pa->fsize = md.provsize;
	if (pa->size != geli_volume_size(pa->v[1]) || pa->size < 2 * md.sectorsize)
		abort();
	pa->model = calloc(1, pa->size);
	pa->buf = malloc(pa->size);
	pa->f[0] = malloc(pa->fsize);
	pa->f[1] = malloc(pa->fsize);
	if (pa->model == NULL || pa->buf == NULL || pa->f[0] == NULL ||
	    pa->f[1] == NULL)
		abort();
	/* Both start as the encryption of zeros. */
	if (geli_volume_write(pa->v[0], pa->model, pa->size, 0) !=
	    (ssize_t)pa->size ||
	    geli_volume_write(pa->v[1], pa->model, pa->size, 0) !=
	    (ssize_t)pa->size)
		abort();
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	for (int k = 0; k < NKIND; k++)
		make(&pairs[k], k);
	geli_crypto_select("gcrypt");
	return 0;
}

static size_t
le24(const uint8_t *b)
{
	return (size_t)b[0] | (size_t)b[1] << 8 | (size_t)b[2] << 16;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pair *pa;
	size_t woff, wlen, roff, rlen;
	int first;

	if (size < 13)
		return 0;
	pa = &pairs[data[0] % NKIND];
	first = (data[0] >> 2) & 1;	/* the one that writes with it on */
	gc_accel_ivs_as_jobs((data[0] >> 3) & 1);
	gc_accel_decrypt_runs((data[0] >> 4) & 1);
	woff = le24(data + 1) % pa->size;
	wlen = le24(data + 4) % (pa->size - woff) + 1;
	roff = le24(data + 7) % pa->size;
	rlen = le24(data + 10) % (pa->size - roff) + 1;
	data += 13;
	size -= 13;
	for (size_t i = 0; i < wlen; i++)
		pa->model[woff + i] = size > 0 ? data[i % size] : 0;

	for (int w = 0; w < 2; w++) {
		geli_crypto_set_accel(w == first);
		if (geli_volume_write(pa->v[w], pa->model + woff, wlen,
		    (uint64_t)woff) != (ssize_t)wlen)
			abort();
	}
	for (int w = 0; w < 2; w++) {
		if (pread(pa->fd[w], pa->f[w], pa->fsize, 0) !=
		    (ssize_t)pa->fsize)
			abort();
	}
	if (memcmp(pa->f[0], pa->f[1], pa->fsize) != 0)
		abort();	/* the accelerator wrote other bytes */
	for (int w = 0; w < 2; w++) {
		geli_crypto_set_accel(w != first);
		if (geli_volume_read(pa->v[w], pa->buf, rlen, (uint64_t)roff) !=
		    (ssize_t)rlen || memcmp(pa->buf, pa->model + roff, rlen) != 0)
			abort();
	}
	geli_crypto_set_accel(true);
	return 0;
}
