/* SPDX-License-Identifier: BSD-2-Clause */
/* A secret typed at the controlling terminal (geli's passphrases). */
#ifndef GELI_COMMON_TTY_H
#define GELI_COMMON_TTY_H

#include <stddef.h>

/*
 * readpassphrase(3) with RPP_REQUIRE_TTY | RPP_ECHO_OFF: prompt written to
 * /dev/tty, one line read from it with echo off (echo restored after), its
 * first outlen - 1 bytes into out, NUL-terminated, without the newline.
 * 0, or -errno (-ENXIO and the like without a terminal); out may hold part
 * of the line on failure: the caller wipes it.
 */
int tty_read_secret(const char *prompt, char *out, size_t outlen);

#endif
