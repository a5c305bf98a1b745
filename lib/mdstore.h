/* SPDX-License-Identifier: BSD-2-Clause */
/* Inside libgeli: the one reader and the one writer of metadata records. */
#ifndef GELI_MDSTORE_H
#define GELI_MDSTORE_H

#include <stddef.h>
#include <stdint.h>

#include "geli.h"

/*
 * Where a record's bytes are: a file descriptor (a backup file, or the
 * provider's own), or, for a provider of operations (no descriptor), the
 * provider's I/O.
 */
struct rec_at {
	int fd;
	struct geli_provider *prov;
};
static inline struct rec_at
rec_fd(int fd)
{
	return (struct rec_at){ fd, NULL };
}
static inline struct rec_at
rec_prov(struct geli_provider *p)
{
	return (struct rec_at){ geli_provider_fd(p), p };
}

/* Encode md into len zeroed bytes (len >= GELI_MD_SIZE), write them at off
 * and flush. */
int record_write(struct rec_at at, struct geli_metadata *md, uint64_t off,
    size_t len);
/* Read len bytes at off and decode them: -GELI_ENOMAGIC without the magic,
 * -GELI_ESHORT at end of file, else geli_metadata_decode's codes. */
int record_read(struct rec_at at, uint64_t off, size_t len,
    struct geli_metadata *md);

#endif
