/* SPDX-License-Identifier: BSD-2-Clause */
/* Inside libgeli: the one reader and the one writer of metadata records. */
#ifndef GELI_MDSTORE_H
#define GELI_MDSTORE_H

#include <stddef.h>
#include <stdint.h>

#include "geli.h"

/* Encode md into len zeroed bytes (len >= GELI_MD_SIZE), write them at off
 * of fd and fsync. */
int record_write(int fd, struct geli_metadata *md, uint64_t off, size_t len);
/* Read len bytes at off of fd and decode them: -GELI_ENOMAGIC without the
 * magic, -GELI_ESHORT at end of file, else geli_metadata_decode's codes. */
int record_read(int fd, uint64_t off, size_t len, struct geli_metadata *md);

#endif
