/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * GELI's algorithm numbers (include/geli.h enum geli_algo, docs/format.md §3)
 * in the crypto seam's generic terms (crypto.h): one table, in algs.c, that
 * everything above the backends reads and the backends never see.
 *
 *   encryption algorithm = generic cipher + mode of the data path
 *     keys of keylen bits:   keybytes = nkeys * keylen / 8  (XTS: data || tweak)
 *     IV of a unit:          ivlen bytes (§6.3 CBC, §6.4 XTS; NULL: none)
 *     key lengths:           keydef when 0 is asked for, else
 *                            keymin <= keylen <= keymax, keylen = keymin + j*keystep
 *   HMAC                 = generic hash, tags of hashlen bytes (§7)
 *
 * The key slots use the same cipher in CBC mode (mkey.c, §5.1).
 */
#ifndef GELI_ALGS_H
#define GELI_ALGS_H

#include <stdbool.h>
#include <stddef.h>

#include "crypto.h"

struct geli_alg {
	unsigned algo;			/* GELI_ALGO_* */
	const char *name;		/* as g_eli_algo2str prints it */
	const char *words[3];		/* what -e / -a accept (any case), NULL-ended */
	bool legacy;			/* FreeBSD 13 dropped it */
	bool hmac;			/* an integrity HMAC, else an encryption algorithm */
	/* Encryption algorithms: */
	enum gc_cipher cipher;		/* GC_NONE: NULL */
	enum gc_mode mode;		/* of the data path */
	unsigned nkeys;			/* keys of keylen bits: 2 for XTS, 0 for NULL */
	unsigned ivlen;			/* bytes */
	unsigned keydef, keymin, keymax, keystep;	/* bits */
	/* HMACs: */
	enum gc_hash hash;
	unsigned hashlen;		/* bytes of a tag */
};

/* Entry i of the table, NULL past its end (for the unit tests). */
const struct geli_alg *algs_at(size_t i);
/* The encryption algorithm ealgo, or the HMAC aalgo; NULL when there is none. */
const struct geli_alg *algs_cipher(unsigned ealgo);
const struct geli_alg *algs_hmac(unsigned aalgo);

/* Bytes of cipher key for a key length of keylen bits. */
static inline size_t
algs_keybytes(const struct geli_alg *a, unsigned keylen)
{
	return (size_t)a->nkeys * keylen / 8;
}

#endif
