/* SPDX-License-Identifier: BSD-2-Clause */
/* What cmd_reencrypt.c (the verb, resume) and reenc_new.c (a new
 * conversion) share. */
#ifndef GELI_REENC_H
#define GELI_REENC_H

#include "cli.h"

/* The journal of uuid: -F, else the default place (made); 0, or -1 with
 * the request error. */
int reenc_journal_of(struct opts *o, const uint8_t uuid[16], char *buf,
    size_t len);
/* md's Master Key into mk from -j/-k/-p (-J/-K/-P with isnew) and -n; the
 * slot that opened in *slot, the user key in ukey (each may be NULL).  0,
 * or -1 with the request error in attach's words. */
int reenc_unlock(struct opts *o, bool isnew, struct geli_provider *p,
    const struct geli_metadata *md, const char *prov, uint8_t *mk,
    int *slot, uint8_t *ukey);
/* -J, -K or -P given. */
bool reenc_new_keys_given(struct opts *o);
/* Every step to the end, with the progress on a terminal; stopped after a
 * step by SIGINT, SIGTERM or SIGHUP.  0, or -1 with the request error. */
int reenc_run(const char *prov, struct geli_reenc *r);
/* SIGINT, SIGTERM and SIGHUP from here on only mark the conversion to stop
 * (reenc_run) or pause (reenc_wait): called before a request starts one. */
void reenc_catch_signals(void);
/* An attached provider's conversion (the daemon of name runs it) followed
 * to its end, with the progress on a terminal; paused by SIGINT, SIGTERM
 * or SIGHUP.  0, or -1 with the request error. */
int reenc_wait(const char *prov, const char *name);
/* A new conversion of p of this kind (md: p's record; NULL for -E), here
 * or, when attached names its daemon (p opened read-only), there. */
void reenc_start(struct opts *o, const char *prov, struct geli_provider *p,
    enum geli_reenc_kind kind, struct geli_metadata *md,
    const char *attached);

#endif
