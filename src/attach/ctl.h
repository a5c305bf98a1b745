/*
 * The control channel between geli and the daemon of an attached provider:
 * a SOCK_SEQPACKET Unix socket $GELI_RUNDIR/<name>.ctl (mode 0600).  A
 * request is one packet, "verb arg..." and, for key material, a NUL and the
 * raw key bytes; the reply is one packet, "OK\n<text>" or "ERR <message>".
 */
#ifndef GELI_CTL_H
#define GELI_CTL_H

#include <stddef.h>

#define CTL_MAX 8192

/* $GELI_RUNDIR, or /run/geli. */
const char *rundir(void);
/* rundir/<name><suffix> into buf. */
int rundir_path(const char *name, const char *suffix, char *buf, size_t len);
/*
 * Send one request to the daemon of name and wait for its reply.  Returns 0
 * with the text after "OK\n" in reply, 1 with the message after "ERR " in
 * reply, or -errno when there is no daemon to talk to.
 */
int ctl_call(const char *name, const char *req, const void *key,
    size_t keylen, char *reply, size_t replylen);

#endif
