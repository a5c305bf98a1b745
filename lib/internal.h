/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What libgeli's files share beyond their own headers (crypto.h, keys.h,
 * sector.h, workers.h), and what the unit tests reach in the static
 * geli_internal library.  Never installed; nothing here is public API.
 */
#ifndef GELI_INTERNAL_H
#define GELI_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "geli.h"
#include "sector.h"

/* ---- secmem.c ------------------------------------------------------------ */

/*
 * len bytes of the stack below the caller's frame wiped: where the crypto
 * libraries' calls it made ran and left what they had (libgcrypt burns
 * some of its stack, not all).  For the calls that handle a Master Key
 * or a user key, before a process that forks its daemon goes on.
 */
void secmem_burn_stack(size_t len);

/* ---- provider.c ---------------------------------------------------------- */

/* The alignment p's reads and writes need of a buffer: a page under
 * O_DIRECT, else 512 (a sector, as every caller has given so far). */
size_t provider_buffer_align(const struct geli_provider *p);
/* For geli_volume_grow(): the provider now has this many bytes. */
void provider_set_mediasize(struct geli_provider *p, uint64_t size);
/*
 * For geli_volume_zero(): [off, off+len) given back and reading as zeros
 * from now on (which BLKDISCARD does not promise): fallocate's PUNCH_HOLE,
 * a hole in a regular file and on a block device a zeroing that unmaps
 * (WRITE ZEROES with unmap; -EOPNOTSUPP from a device that cannot);
 * -EOPNOTSUPP for a provider of operations.
 */
int provider_punch(struct geli_provider *p, uint64_t off, uint64_t len);

/* ---- volume.c and volume_map.c ------------------------------------------- */

#define VOLUME_CHUNK_BYTES (1u << 20)	/* most logical bytes per I/O round */

/* A read-only shared mapping of a provider's first len bytes. */
struct volume_map {
	const uint8_t *base;	/* NULL: not mapped */
	size_t len, pagesize;
};

/* Map the first size bytes of p where that can work (not O_DIRECT, the
 * SIGBUS handler installed); else, quietly, no mapping (m->base NULL). */
void volume_map_open(struct volume_map *m, struct geli_provider *p,
    uint64_t size);
void volume_map_close(struct volume_map *m);
/*
 * Decrypt sectors [first, first+count) of c's geometry (no integrity) from
 * the mapping into plain: 0, an error from the cipher, or 1 when the
 * mapping cannot serve them (none, too short, some bytes not in memory,
 * or a fault); then nothing is known about plain and the caller reads
 * those sectors with pread.  At most VOLUME_CHUNK_BYTES.
 */
int volume_map_decrypt(const struct volume_map *m, struct sector_ctx *c,
    uint64_t first, size_t count, uint8_t *plain);
/* Read only resident pages from the mapping (true).  test_volume turns it
 * off to reach the SIGBUS path, which a cut file would otherwise never
 * take. */
extern bool volume_map_resident_only;

#endif
