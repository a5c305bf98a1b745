/* SPDX-License-Identifier: BSD-2-Clause */
/* common/cryptosel.c: the crypto backend of a front end, and its words. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cryptosel.h"
#include "geli.h"
#include "tap.h"

int
main(void)
{
	char buf[128], msg[256], want[256];

	tap_ok(strcmp(crypto_names(buf, sizeof(buf), NULL),
	    "gcrypt or openssl") == 0, "the backends: %s", buf);
	tap_ok(strcmp(crypto_names(buf, sizeof(buf), "all"),
	    "gcrypt, openssl or all") == 0, "with all: %s", buf);
	tap_ok(crypto_names(buf, 5, "all") == buf && strlen(buf) < 5,
	    "a short buffer is cut, not overrun (\"%s\")", buf);

	setenv("GELI_CRYPTO", "nope", 1);
	tap_ok(crypto_start(msg, sizeof(msg)) == -1, "an unknown backend fails");
	tap_ok(strcmp(msg, "Unknown crypto backend GELI_CRYPTO=nope (gcrypt "
	    "or openssl).") == 0, "in these words: %s", msg);
	setenv("GELI_CRYPTO", "openssl", 1);
	tap_ok(crypto_start(msg, sizeof(msg)) == 0 &&
	    strcmp(geli_crypto_name(), "openssl") == 0,
	    "GELI_CRYPTO=openssl: %s", geli_crypto_name());
	setenv("GELI_CRYPTO", "", 1);
	tap_ok(crypto_start(msg, sizeof(msg)) == 0 &&
	    strcmp(geli_crypto_name(), geli_crypto_backend(0)) == 0,
	    "empty: the default, %s", geli_crypto_name());
	unsetenv("GELI_CRYPTO");
	tap_ok(crypto_start(msg, sizeof(msg)) == 0 &&
	    strcmp(geli_crypto_name(), "gcrypt") == 0,
	    "unset: gcrypt, the default");
	snprintf(want, sizeof(want), "%s", geli_crypto_version());
	tap_ok(strncmp(want, "libgcrypt ", 10) == 0, "its library: %s", want);
	return tap_done();
}
