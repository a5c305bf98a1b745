/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * GELI metadata: the record in the last sector of a provider (§1).
 *
 * Layout, versions 1..7 (all integers little-endian; not aligned):
 *
 *   off size field          off size field
 *     0  16  magic           38   4  sectorsize
 *    16   4  version         42   1  keys (bit n = slot n valid)
 *    20   4  flags           43   4  iterations (signed; -1 = no passphrase)
 *    24   2  ealgo           47  64  salt
 *    26   2  keylen (bits)  111 384  mkeys (2 slots of 192 bytes)
 *    28   2  aalgo          495  16  MD5 over bytes [0, 495)
 *    30   8  provsize       511      total
 *
 * Version 0 has no aalgo: every field after keylen moves 2 bytes down and
 * the record is 509 bytes, MD5 over [0, 493) (§1.3).
 *
 * Version history (§1.6):
 *   0  initial                      4  IV offset little-endian (was host order)
 *   1  data authentication          5  a key per 2^20 sectors; AES-XTS
 *   2  read-only attach             6  fixed multi-key use with authentication
 *   3  configure                    7  range keys from the Data Key, not the IV Key
 */
#include <string.h>

#include "crypto.h"
#include "endian.h"
#include "geli.h"

size_t
geli_metadata_size(uint32_t version)
{
	return version == 0 ? GELI_MD_SIZE_V0 : GELI_MD_SIZE;
}

bool
geli_metadata_has_magic(const void *buf, size_t len)
{
	/* The kernel compares the magic as a C string: "GEOM::ELI" and a NUL. */
	return len >= sizeof(GELI_MAGIC) &&
	    memcmp(buf, GELI_MAGIC, sizeof(GELI_MAGIC)) == 0;
}

bool
geli_metadata_same(const struct geli_metadata *a, const struct geli_metadata *b)
{
	struct geli_metadata x = *a, y = *b;
	uint8_t ea[GELI_MD_SIZE], eb[GELI_MD_SIZE];
	bool same = geli_metadata_encode(&x, ea) > 0 &&
	    geli_metadata_encode(&y, eb) > 0 && memcmp(ea, eb, sizeof(ea)) == 0;

	geli_wipe(&x, sizeof(x));
	geli_wipe(&y, sizeof(y));
	geli_wipe(ea, sizeof(ea));
	geli_wipe(eb, sizeof(eb));
	return same;
}

int
geli_metadata_encode(struct geli_metadata *md, void *out)
{
	uint8_t *buf = out, *p = buf;
	uint32_t layout = GELI_REENC_MARKED(md->version) ?
	    md->version & 0xffffu : md->version;
	size_t size;

	if (layout > GELI_VERSION)
		return -EINVAL;
	size = geli_metadata_size(layout);
	memset(buf, 0, GELI_MD_SIZE);
	memcpy(p, md->magic, sizeof(md->magic));	p += 16;
	le32enc(p, md->version);			p += 4;
	le32enc(p, md->flags);				p += 4;
	le16enc(p, md->ealgo);				p += 2;
	le16enc(p, md->keylen);				p += 2;
	if (layout > 0) {
		le16enc(p, md->aalgo);			p += 2;
	}
	le64enc(p, md->provsize);			p += 8;
	le32enc(p, md->sectorsize);			p += 4;
	*p++ = md->keys;
	le32enc(p, (uint32_t)md->iterations);		p += 4;
	memcpy(p, md->salt, sizeof(md->salt));		p += sizeof(md->salt);
	memcpy(p, md->mkeys, sizeof(md->mkeys));	p += sizeof(md->mkeys);
	if (gc_md5(buf, (size_t)(p - buf), md->hash) != 0)
		return -EIO;
	memcpy(p, md->hash, sizeof(md->hash));		p += 16;
	return (int)size;
}

int
geli_metadata_decode(const void *in, size_t len, struct geli_metadata *md)
{
	const uint8_t *buf = in, *p = buf;
	uint8_t hash[16];
	uint32_t layout;

	memset(md, 0, sizeof(*md));
	if (len < GELI_MD_SIZE_V0 || !geli_metadata_has_magic(buf, len))
		return -EINVAL;
	memcpy(md->magic, p, sizeof(md->magic));	p += 16;
	md->version = le32dec(p);			p += 4;
	layout = GELI_REENC_MARKED(md->version) ? md->version & 0xffffu :
	    md->version;
	if (layout > GELI_VERSION)
		return -EOPNOTSUPP;
	if (len < geli_metadata_size(layout))
		return -EINVAL;
	md->flags = le32dec(p);				p += 4;
	md->ealgo = le16dec(p);				p += 2;
	md->keylen = le16dec(p);			p += 2;
	if (layout > 0) {
		md->aalgo = le16dec(p);			p += 2;
	}
	md->provsize = le64dec(p);			p += 8;
	md->sectorsize = le32dec(p);			p += 4;
	md->keys = *p++;
	md->iterations = (int32_t)le32dec(p);		p += 4;
	memcpy(md->salt, p, sizeof(md->salt));		p += sizeof(md->salt);
	memcpy(md->mkeys, p, sizeof(md->mkeys));	p += sizeof(md->mkeys);
	memcpy(md->hash, p, sizeof(md->hash));
	if (gc_md5(buf, (size_t)(p - buf), hash) != 0)
		return -EIO;
	if (!geli_ct_equal(hash, md->hash, sizeof(hash)))
		return -EBADMSG;
	return layout != md->version ? -GELI_EINPROGRESS : 0;
}

uint32_t
geli_metadata_runtime_flags(const struct geli_metadata *md)
{
	uint32_t flags = md->flags;

	if (md->version < 4)
		flags |= GELI_FLAG_NATIVE_BYTE_ORDER;	/* same bytes on LE hosts */
	if (md->version < 5)
		flags |= GELI_FLAG_SINGLE_KEY;
	if (md->version < 6 && (md->flags & GELI_FLAG_AUTH) != 0)
		flags |= GELI_FLAG_FIRST_KEY;
	if (md->version < 7)
		flags |= GELI_FLAG_ENC_IVKEY;
	return flags;
}

int
geli_auth_layout(const struct geli_metadata *md, uint32_t psize,
    uint32_t *dps, uint32_t *lsec)
{
	unsigned alen;
	uint32_t d;

	if ((md->flags & GELI_FLAG_AUTH) == 0)
		return -EINVAL;
	alen = geli_hashlen(md->aalgo);
	if (alen == 0 || psize <= alen + 16 || md->sectorsize == 0)
		return -EINVAL;
	/* Data bytes per physical sector, rounded down to 16 (§7.1). */
	d = (psize - alen) / 16 * 16;
	*dps = d;
	*lsec = (md->sectorsize - 1) / d + 1;
	return 0;
}

uint64_t
geli_eli_mediasize(const struct geli_metadata *md, uint64_t provsize,
    uint32_t psize, bool onetime)
{
	uint64_t m = provsize;
	uint32_t dps, lsec;

	if (!onetime) {
		if (m < psize)
			return 0;
		m -= psize;
	}
	if (md->sectorsize == 0)
		return 0;
	if (geli_auth_layout(md, psize, &dps, &lsec) == 0)
		return m / ((uint64_t)lsec * psize) * md->sectorsize;
	return m - m % md->sectorsize;
}

int
geli_metadata_check(const struct geli_metadata *md, uint64_t provsize,
    uint32_t psize)
{
	uint32_t S = md->sectorsize, dps, lsec;
	bool onetime = (md->flags & GELI_FLAG_ONETIME) != 0;

	if (psize == 0)
		return -EINVAL;
	if (md->version > GELI_VERSION)
		return -EOPNOTSUPP;
	/* The algorithms first, as g_eli_ctl_attach (§3.4). */
	if (geli_keylen(md->ealgo, 0) == 0 || !geli_algo_available(md->ealgo))
		return -GELI_EEALGO;
	if (md->keylen == 0 || geli_keylen(md->ealgo, md->keylen) != md->keylen)
		return -GELI_EKEYLEN;
	if ((md->flags & GELI_FLAG_AUTH) != 0 &&
	    (geli_hashlen(md->aalgo) == 0 || !geli_algo_available(md->aalgo)))
		return -GELI_EAALGO;
	/* Every division below has a non-zero divisor after these. */
	if (S == 0 || S % psize != 0 || S % 16 != 0 ||
	    S > GELI_MAX_SECTORSIZE || (!onetime && (S & (S - 1)) != 0))
		return -GELI_ESECTORSIZE;
	if ((md->flags & GELI_FLAG_AUTH) != 0 &&
	    geli_auth_layout(md, psize, &dps, &lsec) != 0)
		return -GELI_ESECTORSIZE;
	if (provsize != 0 && geli_eli_mediasize(md, provsize, psize, onetime) == 0)
		return -GELI_ENOROOM;
	return 0;
}
