/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * geli-boot's configuration (/etc/default/geli: FreeBSD's rc.conf variables,
 * geli.8 "At boot"): a provider taken out of it, as geli reencrypt -t luks2
 * does once GELI's record is gone, so that the next boot no longer attaches
 * it.  Lines of rc.conf's simple form are understood (NAME="words",
 * NAME='words' or NAME=word, a comment after); the others are kept as they
 * are.  A provider is a word of geli_devices or of a group's
 * geli_GROUP_devices that names it (a name under /dev or a path, compared
 * as written and as resolved); its own lines (geli_NAME_flags, _autodetach,
 * _device_timeout) go with it, and a group left without providers leaves
 * geli_groups with its lines.
 */
#ifndef GELI_COMMON_BOOTCONF_H
#define GELI_COMMON_BOOTCONF_H

#include <stddef.h>

/* The configuration file: $GELI_BOOT_CONF, as geli-boot reads it, else
 * /etc/default/geli. */
const char *bootconf_path(void);
/*
 * prov (a path) taken out of the file conf, which is replaced whole
 * (written beside it, synced, renamed over it, its mode kept).  1: taken
 * out, the variables it was in named in what ("geli_devices"); 0: not
 * there (nor the file), nothing written; -errno: nothing changed, what
 * says why.
 */
int bootconf_forget(const char *conf, const char *prov, char *what,
    size_t len);

#endif
