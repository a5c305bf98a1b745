/* SPDX-License-Identifier: BSD-2-Clause */
/* Keyfiles (geli's -k/-K, the nbdkit filter's keyfile=), read once. */
#ifndef GELI_COMMON_KEYFILES_H
#define GELI_COMMON_KEYFILES_H

#include <stddef.h>

#include "geli.h"

/*
 * The bytes of files[0..n) into ctx, in order, each to its end ("-" is
 * stdin), straight into locked memory (geli_ukey_update_fd).  0, or -1
 * with "Cannot open keyfile F: ..." or "Cannot read keyfile F: ..." in msg.
 */
int keyfiles_read(struct geli_ukey_ctx *ctx, const char *const *files,
    size_t n, char *msg, size_t len);

#endif
