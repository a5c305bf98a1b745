/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A passphrase asked through systemd's password agents (the console,
 * Plymouth, systemd-tty-ask-password-agent), as systemd-cryptsetup asks for
 * LUKS at boot: systemd-ask-password is run with the question and reads the
 * answer back through a pipe, never through argv or the environment.  The
 * kernel keyring caches what was typed under a key name (systemd's own
 * format: the passphrases separated by NULs), so that one passphrase typed
 * at boot opens every provider that shares it.
 */
#ifndef GELI_COMMON_ASKPASS_H
#define GELI_COMMON_ASKPASS_H

#include <stdbool.h>
#include <stddef.h>

struct askpass {
	const char *id;		/* what asks, e.g. "geli:/dev/sdb" */
	const char *message;	/* the question */
	const char *keyname;	/* what is typed is cached under it; NULL:
				 * not cached */
};

/*
 * The question asked; the answer into out (outlen bytes, the caller's
 * locked memory), ended by a NUL.  1, or -errno: -ENOENT without
 * systemd-ask-password, -ECANCELED when nobody answered (a timeout, a
 * cancelled agent), -EMSGSIZE for an answer larger than out.  out may hold
 * part of an answer on failure: the caller wipes it.
 */
int askpass_agent(const struct askpass *a, char *out, size_t outlen);
/*
 * The passphrases cached under keyname in the user's keyring, into out,
 * each ended by a NUL: how many, 0 when none are, or -EMSGSIZE.
 */
int askpass_cached(const char *keyname, char *out, size_t outlen);

#endif
