/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The cipher, HMAC, key length and sector size of a new provider, from
 * -e, -a, -l and -s: one parser for init (§9.1) and onetime (§9.4).
 * FreeBSD checks them in two places, geli(8) for init and its kernel for
 * onetime, and words some failures differently; the table below keeps each
 * verb's words.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

enum word { W_KEYLEN, W_UNAVAILABLE };

static const struct {
	const char *init;	/* geli(8)'s */
	const char *onetime;	/* the kernel's (g_eli_ctl_onetime) */
} words[] = {
	[W_KEYLEN] = { "Invalid key length.", "Invalid 'keylen' argument." },
	[W_UNAVAILABLE] = { "The %s algorithm is not available in this "
	    "OpenSSL.", "Invalid or unsupported algorithms." },
};

/* The request error of w for verb v; %s is name (init's words only). */
static int
refuse(enum params_verb v, enum word w, const char *name)
{
	char buf[256];

	if (v == PARAMS_INIT)
		snprintf(buf, sizeof(buf), words[w].init, name);
	else
		snprintf(buf, sizeof(buf), "%s", words[w].onetime);
	req_error("%s", buf);
	return -1;
}

/* Cipher and version: what each metadata version could record. */
static int
check_version(const struct geli_metadata *md)
{
	if (md->ealgo == GELI_ALGO_CAMELLIA_CBC && md->version < 4) {
		req_error("Camellia-CBC algorithm is supported starting from "
		    "version %u.", 4);
		return -1;
	}
	if (md->ealgo == GELI_ALGO_AES_XTS && md->version < 5) {
		req_error("AES-XTS algorithm is supported starting from "
		    "version %u.", 5);
		return -1;
	}
	return 0;
}

int
parse_algorithms(struct opts *o, enum params_verb v, struct geli_metadata *md)
{
	const char *str = opt_str(o, 'a');
	intmax_t val;

	if (*str != '\0') {
		if (md->version < 1) {
			req_error("Data authentication is supported starting "
			    "from version %u.", 1);
			return -1;
		}
		md->aalgo = (uint16_t)geli_str2aalgo(str);
		if (md->aalgo != GELI_ALGO_NONE) {
			md->flags |= GELI_FLAG_AUTH;
		} else {
			/* Backward compatibility: -a naming a cipher. */
			md->ealgo = (uint16_t)geli_str2ealgo(str);
			if (md->ealgo == GELI_ALGO_NONE) {
				req_error("Invalid authentication algorithm.");
				return -1;
			}
			fprintf(stderr, "warning: The -e option, not the -a "
			    "option is now used to specify encryption "
			    "algorithm to use.\n");
		}
	}
	if (md->ealgo == GELI_ALGO_NONE) {
		str = opt_str(o, 'e');
		if (*str == '\0')
			str = md->version < 5 ? "aes-cbc" : "aes";
		md->ealgo = (uint16_t)geli_str2ealgo(str);
		if (md->ealgo == GELI_ALGO_NONE) {
			req_error("Invalid encryption algorithm.");
			return -1;
		}
	}
	if (check_version(md) != 0)
		return -1;
	val = opt_num(o, 'l');
	md->keylen = (uint16_t)(val < 0 || val > 65535 ? 0 :
	    geli_keylen(md->ealgo, (unsigned)val));
	if (md->keylen == 0)
		return refuse(v, W_KEYLEN, NULL);
	if (!geli_algo_available(md->ealgo))
		return refuse(v, W_UNAVAILABLE, geli_algo_name(md->ealgo));
	if ((md->flags & GELI_FLAG_AUTH) && !geli_algo_available(md->aalgo))
		return refuse(v, W_UNAVAILABLE, geli_algo_name(md->aalgo));
	if (v != PARAMS_INIT)
		return 0;
	/* Current FreeBSD refuses these; we write them for old systems. */
	if (geli_algo_is_legacy(md->ealgo))
		fprintf(stderr, "warning: The %s encryption algorithm is "
		    "deprecated; current FreeBSD cannot attach this provider.\n",
		    geli_algo_name(md->ealgo));
	if ((md->flags & GELI_FLAG_AUTH) && geli_algo_is_legacy(md->aalgo))
		fprintf(stderr, "warning: The %s authentication algorithm is "
		    "deprecated; current FreeBSD cannot attach this provider.\n",
		    geli_algo_name(md->aalgo));
	return 0;
}

int
parse_sectorsize(struct opts *o, enum params_verb v, uint32_t psize,
    uint32_t *out)
{
	intmax_t val = opt_num(o, 's');

	/*
	 * A multiple of the provider's sector size; for init a power of two
	 * too (onetime takes any multiple, §8.2).
	 */
	if (val == 0) {
		*out = psize;
		return 0;
	}
	if (val < 0 || val > UINT32_MAX || val % psize != 0 ||
	    (v == PARAMS_INIT && (val & (val - 1)) != 0)) {
		req_error("Invalid sector size.");
		return -1;
	}
	*out = (uint32_t)val;
	return 0;
}

void
warn_sectorsize(struct opts *o)
{
	if (opt_num(o, 's') > sysconf(_SC_PAGE_SIZE))
		fprintf(stderr,
		    "warning: Using sectorsize bigger than the page size!\n");
}
