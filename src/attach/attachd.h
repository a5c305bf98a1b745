/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The attach daemon: one process per attached provider.  It holds the
 * Master Key, serves the decrypted provider as the file <name>.eli in the
 * run directory (rundir.h) through FUSE (optionally with a loop block
 * device on top), and answers the control socket <name>.ctl (ctl.h) for
 * status, detach, suspend/resume, setkey, delkey, kill and configure.
 */
#ifndef GELI_ATTACHD_H
#define GELI_ATTACHD_H

#include "frontends.h"

/*
 * Fork the daemon, hand it the Master Key and wait until the provider is
 * served (an attach_launch_fn, frontends.h).
 */
int attachd_start(const struct attach_req *r, const uint8_t *mkey,
    struct attach_result *res);
/* A waiting ublk device given up (an attach_release_fn: ublk.h). */
int ublk_release_waiting(uint32_t id);

#endif
