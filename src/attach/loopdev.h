/* SPDX-License-Identifier: BSD-2-Clause */
/* Loop block devices on top of a file (the .eli file of an attached provider). */
#ifndef GELI_LOOPDEV_H
#define GELI_LOOPDEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A free loop device backed by file, with logical block size bs (512..4096). */
int loop_attach(const char *file, uint32_t bs, bool readonly, char *dev,
    size_t devlen);
/*
 * The next four act on dev only while it is still backed by file (the
 * device may have been removed and given to something else): -ENXIO, or
 * false, when it is not.
 */
int loop_detach(const char *dev, const char *file);
/* Re-read the backing file's size. */
int loop_set_capacity(const char *dev, const char *file);
/*
 * Discards offered again after the kernel turned them off (a discard was
 * refused while the provider had NODELETE): the block size set to 512 and
 * back, which makes the kernel work the limits out anew.  -EOPNOTSUPP for a
 * device of 512-byte blocks (no smaller size to pass through).
 */
int loop_refresh_discard(const char *dev, const char *file);
/* True when something (a mount, a process other than us) holds the device. */
bool loop_in_use(const char *dev, const char *file);

#endif
