/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The provider size for a wanted decrypted size: the inverse of
 * geli_eli_mediasize() (§8.1, and §7.1 with integrity).
 *
 * With n = ceil(size / S) GELI sectors of S bytes on physical sectors of P:
 *
 *   no integrity:  provsize = n * S             + P (the metadata sector)
 *   integrity:     provsize = n * (lsec * P)    + P
 *                  lsec = ceil(S / dps), dps = floor((P - alen) / 16) * 16
 *
 * and no "+ P" for a one-time volume, which keeps no metadata.
 */
#include <stdint.h>

#include "geli.h"

uint64_t
geli_eli_provsize(const struct geli_metadata *md, uint64_t size,
    uint32_t psize, bool onetime)
{
	uint64_t n, per;
	uint32_t dps, lsec;

	if (md->sectorsize == 0 || psize == 0)
		return 0;
	n = size / md->sectorsize + (size % md->sectorsize != 0);
	if (md->flags & GELI_FLAG_AUTH) {
		if (geli_auth_layout(md, psize, &dps, &lsec) != 0)
			return 0;
		per = (uint64_t)lsec * psize;
	} else {
		per = md->sectorsize;
	}
	/* No size a provider can have: say so rather than wrap. */
	if (n > (UINT64_MAX - psize) / per)
		return 0;
	return n * per + (onetime ? 0 : psize);
}
