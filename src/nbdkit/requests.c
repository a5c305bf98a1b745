/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The filter's connections: every call goes to the one shared volume
 * (geli_volume_*), and each advertises what the volume does.
 */
#define NBDKIT_API_VERSION 2
#include <nbdkit-filter.h>

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>

#include "filter.h"
#include "geli.h"

static int handle_marker;

void *
geli_open(nbdkit_next_open *next, nbdkit_context *context, int ro,
    const char *exportname, int is_tls)
{
	(void)next;
	(void)context;
	(void)ro;
	(void)exportname;
	(void)is_tls;
	if (vol == NULL) {
		nbdkit_error("%s is not open", prov());
		return NULL;
	}
	return &handle_marker;
}

int64_t
geli_get_size(nbdkit_next *next, void *handle)
{
	(void)next;
	(void)handle;
	return (int64_t)geli_volume_size(vol);
}

const char *
geli_export_description(nbdkit_next *next, void *handle)
{
	(void)next;
	(void)handle;
	return NULL;
}

int
geli_block_size(nbdkit_next *next, void *handle, uint32_t *minimum,
    uint32_t *preferred, uint32_t *maximum)
{
	(void)next;
	(void)handle;
	/* Any offset works (partial sectors are read, merged and written
	 * back); whole GELI sectors save that. */
	*minimum = 1;
	*preferred = geli_volume_sectorsize(vol);
	*maximum = 0xffffffff;
	return 0;
}

int
geli_can_write(nbdkit_next *next, void *handle)
{
	(void)next;
	(void)handle;
	return !readonly && below->can_write(below) == 1;
}

int
geli_can_flush(nbdkit_next *next, void *handle)
{
	(void)next;
	(void)handle;
	return below->can_flush(below);
}

int
geli_is_rotational(nbdkit_next *next, void *handle)
{
	(void)next;
	(void)handle;
	return below->is_rotational(below);
}

int
geli_can_trim(nbdkit_next *next, void *handle)
{
	(void)next;
	(void)handle;
	return geli_can_write(NULL, NULL) == 1 &&
	    geli_volume_can_discard(vol) && below->can_trim(below) == 1;
}

int
geli_can_zero(nbdkit_next *next, void *handle)
{
	(void)next;
	(void)handle;
	return NBDKIT_ZERO_NATIVE;	/* .zero: geli_volume_zero */
}

int
geli_can_fast_zero(nbdkit_next *next, void *handle)
{
	(void)next;
	(void)handle;
	return 0;
}

int
geli_can_extents(nbdkit_next *next, void *handle)
{
	(void)next;
	(void)handle;
	return 0;
}

int
geli_can_fua(nbdkit_next *next, void *handle)
{
	(void)next;
	(void)handle;
	/* FUA is the write, then a flush of the plugin below. */
	return below->can_flush(below) == 1 ? NBDKIT_FUA_NATIVE :
	    NBDKIT_FUA_NONE;
}

int
geli_can_multi_conn(nbdkit_next *next, void *handle)
{
	(void)next;
	(void)handle;
	/* One volume for all connections: a flush covers every write. */
	return below->can_multi_conn(below);
}

int
geli_can_cache(nbdkit_next *next, void *handle)
{
	(void)next;
	(void)handle;
	return NBDKIT_CACHE_NONE;
}

/* A library code as an NBD error: an integrity failure is an I/O error. */
static int
io_error(int code, const char *what, uint32_t count, uint64_t offset,
    int *err)
{
	if (code == -EBADMSG)
		nbdkit_error("%s: %s failed authentication (offset=%" PRIu64
		    ", length=%" PRIu32 ")", prov(), what, offset, count);
	*err = code == -EBADMSG ? EIO : -code;
	return -1;
}

static int
flush_if_fua(uint32_t flags, int *err)
{
	int r;

	if (!(flags & NBDKIT_FLAG_FUA))
		return 0;
	r = geli_volume_flush(vol);
	return r == 0 ? 0 : io_error(r, "flush", 0, 0, err);
}

int
geli_pread(nbdkit_next *next, void *handle, void *buf, uint32_t count,
    uint64_t offset, uint32_t flags, int *err)
{
	ssize_t r;

	(void)next;
	(void)handle;
	(void)flags;
	r = geli_volume_read(vol, buf, count, offset);
	if (r < 0)
		return io_error((int)r, "read", count, offset, err);
	if ((size_t)r != count) {
		*err = EIO;
		return -1;
	}
	return 0;
}

int
geli_pwrite(nbdkit_next *next, void *handle, const void *buf, uint32_t count,
    uint64_t offset, uint32_t flags, int *err)
{
	ssize_t r;

	(void)next;
	(void)handle;
	r = geli_volume_write(vol, buf, count, offset);
	if (r < 0)
		return io_error((int)r, "write", count, offset, err);
	if ((size_t)r != count) {
		*err = ENOSPC;
		return -1;
	}
	return flush_if_fua(flags, err);
}

int
geli_flush(nbdkit_next *next, void *handle, uint32_t flags, int *err)
{
	int r;

	(void)next;
	(void)handle;
	(void)flags;
	r = geli_volume_flush(vol);
	return r == 0 ? 0 : io_error(r, "flush", 0, 0, err);
}

int
geli_trim(nbdkit_next *next, void *handle, uint32_t count, uint64_t offset,
    uint32_t flags, int *err)
{
	int r;

	(void)next;
	(void)handle;
	r = geli_volume_discard(vol, offset, count);
	if (r != 0)
		return io_error(r, "trim", count, offset, err);
	return flush_if_fua(flags, err);
}

int
geli_zero(nbdkit_next *next, void *handle, uint32_t count, uint64_t offset,
    uint32_t flags, int *err)
{
	int r;

	(void)next;
	(void)handle;
	/* Encrypted zeros: a provider below nbdkit cannot promise that what
	 * it trims reads as zeros (geli_volume_zero deallocates only where
	 * it can). */
	r = geli_volume_zero(vol, offset, count, false);
	if (r != 0)
		return io_error(r, "zero", count, offset, err);
	return flush_if_fua(flags, err);
}
