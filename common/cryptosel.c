/* SPDX-License-Identifier: BSD-2-Clause */
/* The crypto backend of a front end (see cryptosel.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cryptosel.h"
#include "geli.h"

const char *
crypto_names(char *buf, size_t len, const char *more)
{
	const char *name, *words[8];
	size_t n = 0, k = 0;

	while (k < 7 && (name = geli_crypto_backend((unsigned)k)) != NULL)
		words[k++] = name;
	if (more != NULL)
		words[k++] = more;
	buf[0] = '\0';
	for (size_t i = 0; i < k && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i == 0 ? "" :
		    i + 1 == k ? " or " : ", ", words[i]);
	return buf;
}

int
crypto_start(char *msg, size_t len)
{
	const char *env = getenv("GELI_CRYPTO");
	char names[128];
	int error;

	error = geli_crypto_select(NULL);
	if (error == 0)
		return 0;
	crypto_names(names, sizeof(names), NULL);
	if (error == -EINVAL)
		snprintf(msg, len, "Unknown crypto backend GELI_CRYPTO=%s (%s).",
		    env, names);
	else
		snprintf(msg, len, "Cannot start the crypto library %s: %s.",
		    env != NULL && *env != '\0' ? env : geli_crypto_backend(0),
		    strerror(-error));
	return -1;
}
