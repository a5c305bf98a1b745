/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * nbdkit-geli-filter's files: geli-filter.c (parameters, keys, the volume
 * and the registration), below.c (the plugin as libgeli's provider) and
 * requests.c (the connections, over the shared volume).
 */
#ifndef GELI_NBDKIT_FILTER_H
#define GELI_NBDKIT_FILTER_H

#include <stdbool.h>
#include <stdint.h>

#include "geli.h"

/* geli-filter.c: the served volume (.after_fork to .cleanup). */
extern nbdkit_next *below;		/* the shared context into the plugin */
extern struct geli_volume *vol;
extern bool readonly;			/* readonly=true */
/* The provider as messages name it (the plugin's file=). */
const char *prov(void);

/* below.c: the plugin below as a provider, read-write or read-only. */
extern bool serial;			/* the plugin is not fully parallel */
extern const struct geli_provider_ops below_rw, below_ro;

/* requests.c: the connections. */
void *geli_open(nbdkit_next_open *next, nbdkit_context *context, int ro,
    const char *exportname, int is_tls);
int64_t geli_get_size(nbdkit_next *next, void *handle);
const char *geli_export_description(nbdkit_next *next, void *handle);
int geli_block_size(nbdkit_next *next, void *handle, uint32_t *minimum,
    uint32_t *preferred, uint32_t *maximum);
int geli_can_write(nbdkit_next *next, void *handle);
int geli_can_flush(nbdkit_next *next, void *handle);
int geli_is_rotational(nbdkit_next *next, void *handle);
int geli_can_trim(nbdkit_next *next, void *handle);
int geli_can_zero(nbdkit_next *next, void *handle);
int geli_can_fast_zero(nbdkit_next *next, void *handle);
int geli_can_extents(nbdkit_next *next, void *handle);
int geli_can_fua(nbdkit_next *next, void *handle);
int geli_can_multi_conn(nbdkit_next *next, void *handle);
int geli_can_cache(nbdkit_next *next, void *handle);
int geli_pread(nbdkit_next *next, void *handle, void *buf, uint32_t count,
    uint64_t offset, uint32_t flags, int *err);
int geli_pwrite(nbdkit_next *next, void *handle, const void *buf,
    uint32_t count, uint64_t offset, uint32_t flags, int *err);
int geli_flush(nbdkit_next *next, void *handle, uint32_t flags, int *err);
int geli_trim(nbdkit_next *next, void *handle, uint32_t count,
    uint64_t offset, uint32_t flags, int *err);
int geli_zero(nbdkit_next *next, void *handle, uint32_t count,
    uint64_t offset, uint32_t flags, int *err);

#endif
