/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The seam between a front end that serves an attached provider to the
 * kernel (the FUSE file, common/fusefile.c; the ublk device,
 * src/attach/ublk.c) and what answers it (the volume, src/attach/serve.c;
 * memory, in geli bench's baseline and the unit tests): the bytes of a
 * disk, its size, flushes, zeroing, and the opens a front end sees.
 */
#ifndef GELI_BLOCKIO_H
#define GELI_BLOCKIO_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct blockio {
	void *arg;
	/* The sector size the file says it has (the extended attribute
	 * GELI_XATTR_SECTORSIZE), so that a provider stacked on it takes it;
	 * 0: none. */
	uint32_t sectorsize;
	uint64_t (*size)(void *arg);
	ssize_t (*read)(void *arg, void *buf, size_t len, uint64_t off);
	ssize_t (*write)(void *arg, const void *buf, size_t len, uint64_t off);
	int (*flush)(void *arg);
	/* Bytes that read as zeros afterwards; deallocate: given back below
	 * (fallocate's PUNCH_HOLE; else ZERO_RANGE). */
	int (*zero)(void *arg, uint64_t off, uint64_t len, bool deallocate);
	/* Open/close accounting: called with the open's write intent. */
	void (*opened)(void *arg, bool writable);
	void (*closed)(void *arg, bool writable);
};

#endif
