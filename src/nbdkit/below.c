/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The provider below the filter, as libgeli sees it: a provider of
 * operations (geli_provider_open_ops) over the shared context into the
 * plugin.  A plugin that is not fully parallel gets one call at a time from
 * us: the shared context is one handle, whatever the connections.
 */
#define NBDKIT_API_VERSION 2
#include <nbdkit-filter.h>

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "filter.h"

bool serial;
static pthread_mutex_t serial_lock = PTHREAD_MUTEX_INITIALIZER;

static void
below_enter(void)
{
	if (serial)
		pthread_mutex_lock(&serial_lock);
}

static void
below_leave(void)
{
	if (serial)
		pthread_mutex_unlock(&serial_lock);
}

/* One NBD request carries at most 4 GiB; the volume asks for less. */
static int
below_io(void *opaque, void *buf, size_t len, uint64_t off, bool write)
{
	nbdkit_next *n = opaque;
	int err = 0, r;

	if (len > UINT32_MAX)
		return -EINVAL;
	below_enter();
	r = write ? n->pwrite(n, buf, (uint32_t)len, off, 0, &err) :
	    n->pread(n, buf, (uint32_t)len, off, 0, &err);
	below_leave();
	return r == -1 ? -(err != 0 ? err : EIO) : 0;
}

static int
below_pread(void *opaque, void *buf, size_t len, uint64_t off)
{
	return below_io(opaque, buf, len, off, false);
}

static int
below_pwrite(void *opaque, const void *buf, size_t len, uint64_t off)
{
	return below_io(opaque, (void *)(uintptr_t)buf, len, off, true);
}

static int
below_flush(void *opaque)
{
	nbdkit_next *n = opaque;
	int err = 0, r;

	if (n->can_flush(n) != 1)
		return 0;
	below_enter();
	r = n->flush(n, 0, &err);
	below_leave();
	return r == -1 ? -(err != 0 ? err : EIO) : 0;
}

static int
below_discard(void *opaque, uint64_t off, uint64_t len)
{
	nbdkit_next *n = opaque;
	int err = 0, r;

	if (n->can_trim(n) != 1)
		return -EOPNOTSUPP;
	if (len > UINT32_MAX)
		return -EINVAL;
	below_enter();
	r = n->trim(n, (uint32_t)len, off, 0, &err);
	below_leave();
	return r == -1 ? -(err != 0 ? err : EIO) : 0;
}

const struct geli_provider_ops below_rw = {
	.pread = below_pread, .pwrite = below_pwrite, .flush = below_flush,
	.discard = below_discard,
};
const struct geli_provider_ops below_ro = {
	.pread = below_pread, .flush = below_flush,
};
