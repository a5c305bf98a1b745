/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer harness: the integrity read path (lib/integrity.c through
 * geli_volume_read), on small authenticated volumes in /dev/shm.
 *
 * LLVMFuzzerInitialize makes three volumes (AES-XTS with HMAC/SHA256 and
 * 4096-byte sectors, AES-CBC with HMAC/SHA1 and 512, Camellia with
 * HMAC/SHA512 and 1024) and writes two sectors of known plaintext to each.
 * Input: a volume selector (bit 7: XOR instead of overwrite), the read's
 * offset and length (2 bytes each), where in GELI sector 0's physical
 * bytes (tags and data) to put the rest of the input (2 bytes), then the
 * bytes.  The read must fail with -EBADMSG, and only when sector 0 was in
 * the read and its bytes changed, or return all it asked for and exactly
 * the plaintext written.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "geli.h"

#define NVOL 3

static const struct {
	uint16_t ealgo, keylen, aalgo;
	uint32_t S;
} kinds[NVOL] = {
	{ GELI_ALGO_AES_XTS, 128, GELI_ALGO_HMAC_SHA256, 4096 },
	{ GELI_ALGO_AES_CBC, 256, GELI_ALGO_HMAC_SHA1, 512 },
	{ GELI_ALGO_CAMELLIA_CBC, 128, GELI_ALGO_HMAC_SHA512, 1024 },
};

static struct vol {
	struct geli_volume *v;
	int fd;			/* the provider file, for the damage */
	uint32_t S, bps;	/* GELI sector, physical bytes of one */
	uint8_t *plain;		/* two sectors written */
	uint8_t *phys;		/* sector 0 as written */
	uint8_t *work, *buf;
} vols[NVOL];

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
make(struct vol *vo, int k)
{
	struct geli_provider *p;
	struct geli_metadata md;
	uint8_t mkey[GELI_MKEY_DATALEN];
	char path[64];
	uint64_t size;

	memset(&md, 0, sizeof(md));
	md.version = GELI_VERSION;
	md.flags = GELI_FLAG_AUTH;
	md.ealgo = kinds[k].ealgo;
	md.keylen = kinds[k].keylen;
	md.aalgo = kinds[k].aalgo;
	md.sectorsize = kinds[k].S;
	/* Room for two GELI sectors of at most 9 physical sectors, and the
	 * metadata sector. */
	size = 2 * 9 * 512 + 512;
	md.provsize = size;
	snprintf(path, sizeof(path), "/dev/shm/fuzz_integrity.%d.%d",
	    (int)getpid(), k);
	vo->fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (vo->fd < 0 || ftruncate(vo->fd, (off_t)size) != 0)
		abort();
	geli_random(mkey, sizeof(mkey));
	if (geli_provider_open(path, true, &p) != 0)
		abort();
	unlink(path);		/* gone when the fuzzer is */
	if (geli_volume_open(p, &md, mkey, 0, 1, &vo->v) != 0)
		abort();
	vo->S = geli_volume_sectorsize(vo->v);
	vo->bps = geli_volume_physical_sectorsize(vo->v);
	if (geli_volume_size(vo->v) < 2 * (uint64_t)vo->S)
		abort();
	vo->plain = malloc(2 * vo->S);
	vo->buf = malloc(2 * vo->S);
	vo->phys = malloc(vo->bps);
	vo->work = malloc(vo->bps);
	if (vo->plain == NULL || vo->buf == NULL || vo->phys == NULL ||
	    vo->work == NULL)
		abort();
	geli_random(vo->plain, 2 * vo->S);
	if (geli_volume_write(vo->v, vo->plain, 2 * vo->S, 0) !=
	    (ssize_t)(2 * vo->S) || geli_volume_flush(vo->v) != 0)
		abort();
	if (pread(vo->fd, vo->phys, vo->bps, 0) != (ssize_t)vo->bps)
		abort();
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	for (int k = 0; k < NVOL; k++)
		make(&vols[k], k);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vol *vo;
	size_t off, len, at, n;
	bool changed;
	ssize_t r;

	if (size < 7)
		return 0;
	vo = &vols[data[0] % NVOL];
	off = (size_t)(data[1] | data[2] << 8) % (2 * vo->S);
	len = (size_t)(data[3] | data[4] << 8) % (2 * vo->S - off) + 1;
	at = (size_t)(data[5] | data[6] << 8) % vo->bps;
	data += 7;
	size -= 7;
	n = size < vo->bps - at ? size : vo->bps - at;

	memcpy(vo->work, vo->phys, vo->bps);
	for (size_t i = 0; i < n; i++) {
		if (data[-7] & 0x80)
			vo->work[at + i] ^= data[i];
		else
			vo->work[at + i] = data[i];
	}
	changed = memcmp(vo->work, vo->phys, vo->bps) != 0;
	if (pwrite(vo->fd, vo->work, vo->bps, 0) != (ssize_t)vo->bps)
		abort();

	r = geli_volume_read(vo->v, vo->buf, len, off);
	if (r == -EBADMSG) {
		if (!changed || off >= vo->S)
			abort();	/* an intact sector must read */
	} else if (r != (ssize_t)len ||
	    memcmp(vo->buf, vo->plain + off, len) != 0) {
		abort();
	}
	return 0;
}
