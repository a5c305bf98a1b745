/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The crypto backend of a front end: started once from $GELI_CRYPTO (or
 * libgeli's default), with one wording of what went wrong.
 */
#ifndef GELI_COMMON_CRYPTOSEL_H
#define GELI_COMMON_CRYPTOSEL_H

#include <stddef.h>

/*
 * Select the backend ($GELI_CRYPTO or the default): 0, or -1 with the
 * reason in msg ("Unknown crypto backend GELI_CRYPTO=x (gcrypt or
 * openssl).", "Cannot start the crypto library x: ...").
 */
int crypto_start(char *msg, size_t len);
/* The backends' names as a list: "gcrypt or openssl"; with more: "gcrypt,
 * openssl or all".  Returns buf. */
const char *crypto_names(char *buf, size_t len, const char *more);

#endif
