/* SPDX-License-Identifier: BSD-2-Clause */
/* Keyfiles (geli's -k/-K, the nbdkit filter's keyfile=) and passfiles
 * (-j/-J), read once. */
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

/*
 * The bytes of files[0..n) joined, in order (what keyfiles_read hashes:
 * one file of them opens what they open), into *out (locked memory,
 * geli_secure_free; *outlen bytes), at most max bytes in all.  Not "-":
 * standard input is read once, by keyfiles_read.  0, or -1 with "Cannot
 * open keyfile F: ...", "Cannot read keyfile F: ...", "Keyfile - cannot
 * be read twice: give it as a file." or "Keyfiles larger than N bytes."
 * in msg.
 */
int keyfiles_join(const char *const *files, size_t n, size_t max,
    uint8_t **out, size_t *outlen, char *msg, size_t len);

/*
 * The first line of each of files[0..n) ("-" is stdin), without its
 * newline and up to a NUL, joined into pass (GELI_MAX_PASSLEN + 1 bytes,
 * locked), NUL-terminated; read through a locked buffer, wiped.  0, or -1
 * with "Cannot open passfile F: ...", "Cannot read passfile F: ..." or
 * "Passphrase in F too long." in msg.
 */
int passfiles_read(char *pass, const char *const *files, size_t n, char *msg,
    size_t len);

#endif
