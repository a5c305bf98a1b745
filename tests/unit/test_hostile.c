/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Hostile metadata: every field a record may carry that no volume can be
 * opened with gets its own code from geli_metadata_check, and
 * geli_volume_open refuses it with -EINVAL without dividing by zero or
 * allocating what the record asks for.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "tap.h"

#include "geli.h"

static char tmpdir[] = "/tmp/geli-hostile.XXXXXX";
static uint8_t mkey[GELI_MKEY_DATALEN];

/* A sparse provider file of size bytes, with sector size psize. */
static char *
mkprov(const char *name, uint64_t size, uint32_t psize)
{
	static char path[4096];
	char val[16];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)size) != 0)
		abort();
	close(fd);
	if (psize != 512) {
		snprintf(val, sizeof(val), "%u", psize);
		if (setxattr(path, GELI_XATTR_SECTORSIZE, val, strlen(val),
		    0) != 0)
			return NULL;
	}
	return path;
}

static struct geli_metadata
good_md(void)
{
	struct geli_metadata md;

	memset(&md, 0, sizeof(md));
	memcpy(md.magic, GELI_MAGIC, sizeof(GELI_MAGIC));
	md.version = GELI_VERSION;
	md.flags = GELI_FLAG_AUTORESIZE;
	md.ealgo = GELI_ALGO_AES_XTS;
	md.keylen = 128;
	md.provsize = 1 << 20;
	md.sectorsize = 512;
	md.keys = 1;
	md.iterations = 1000000000;
	return md;
}

/* geli_volume_open of md on a fresh provider: its result. */
static int
try_open(const struct geli_metadata *md, uint64_t size, uint32_t psize,
    unsigned flags)
{
	struct geli_provider *p;
	struct geli_volume *v;
	char *path = mkprov("prov", size, psize);
	int error;

	if (path == NULL)
		return 1;	/* no xattrs here */
	if (geli_provider_open(path, true, &p) != 0)
		return 2;
	error = geli_volume_open(p, md, mkey, flags, 2, &v);
	if (error == 0)
		geli_volume_close(v);
	else
		geli_provider_close(p);
	return error;
}

struct hostile {
	const char *what;
	void (*set)(struct geli_metadata *);
	int code;		/* geli_metadata_check's */
};

#define SET(name, stmt) \
	static void name(struct geli_metadata *md) { stmt; }
SET(ealgo99, md->ealgo = 99)
SET(ealgo0, md->ealgo = 0)
SET(ealgo_hmac, md->ealgo = GELI_ALGO_HMAC_SHA256)
SET(keylen7, md->keylen = 7)
SET(keylen0, md->keylen = 0)
SET(keylen192_xts, md->keylen = 192)
SET(keylen_big, md->keylen = 65535)
SET(cbc_keylen100, (md->ealgo = GELI_ALGO_AES_CBC, md->keylen = 100))
SET(null_keylen1024, (md->ealgo = GELI_ALGO_NULL, md->keylen = 1024))
SET(auth_aalgo0, (md->flags |= GELI_FLAG_AUTH, md->aalgo = 0))
SET(auth_aalgo99, (md->flags |= GELI_FLAG_AUTH, md->aalgo = 99))
SET(auth_cipher, (md->flags |= GELI_FLAG_AUTH, md->aalgo = GELI_ALGO_AES_XTS))
SET(ss0, md->sectorsize = 0)
SET(ss1000, md->sectorsize = 1000)
SET(ss256, md->sectorsize = 256)
SET(ss1, md->sectorsize = 1)
SET(ss1536, md->sectorsize = 1536)
SET(ss2g, md->sectorsize = 1u << 31)
SET(ss2m, md->sectorsize = 2u << 20)
SET(ssmax, md->sectorsize = UINT32_MAX)
SET(version8, md->version = 8)

static const struct hostile cases[] = {
	{ "unknown ealgo 99", ealgo99, -GELI_EEALGO },
	{ "ealgo 0", ealgo0, -GELI_EEALGO },
	{ "an HMAC as the cipher", ealgo_hmac, -GELI_EEALGO },
	{ "keylen 7", keylen7, -GELI_EKEYLEN },
	{ "keylen 0", keylen0, -GELI_EKEYLEN },
	{ "AES-XTS keylen 192", keylen192_xts, -GELI_EKEYLEN },
	{ "keylen 65535", keylen_big, -GELI_EKEYLEN },
	{ "AES-CBC keylen 100", cbc_keylen100, -GELI_EKEYLEN },
	{ "NULL keylen 1024", null_keylen1024, -GELI_EKEYLEN },
	{ "AUTH with aalgo 0", auth_aalgo0, -GELI_EAALGO },
	{ "AUTH with aalgo 99", auth_aalgo99, -GELI_EAALGO },
	{ "AUTH with a cipher as the HMAC", auth_cipher, -GELI_EAALGO },
	{ "sectorsize 0", ss0, -GELI_ESECTORSIZE },
	{ "sectorsize 1000", ss1000, -GELI_ESECTORSIZE },
	{ "sectorsize 256 (below the provider's)", ss256, -GELI_ESECTORSIZE },
	{ "sectorsize 1", ss1, -GELI_ESECTORSIZE },
	{ "sectorsize 1536 (not a power of two)", ss1536, -GELI_ESECTORSIZE },
	{ "sectorsize 2^31", ss2g, -GELI_ESECTORSIZE },
	{ "sectorsize 2 MiB (above MAXPHYS)", ss2m, -GELI_ESECTORSIZE },
	{ "sectorsize 2^32-1", ssmax, -GELI_ESECTORSIZE },
	{ "version 8", version8, -EOPNOTSUPP },
};

static void
test_fields(void)
{
	struct geli_metadata md;

	md = good_md();
	tap_ok(geli_metadata_check(&md, 1 << 20, 512) == 0,
	    "the unchanged record passes the check");
	tap_ok(try_open(&md, 1 << 20, 512, 0) == 0,
	    "... and opens (10^9 iterations are no reason to refuse)");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int code;

		md = good_md();
		cases[i].set(&md);
		code = geli_metadata_check(&md, 1 << 20, 512);
		tap_ok(code == cases[i].code, "%s: check says %d (want %d)",
		    cases[i].what, code, cases[i].code);
		tap_ok(try_open(&md, 1 << 20, 512, 0) == -EINVAL,
		    "%s: geli_volume_open is -EINVAL", cases[i].what);
		/* With integrity too: the layout divides by the data size. */
		md.flags |= GELI_FLAG_AUTH;
		if (md.aalgo == 0 && cases[i].code != -GELI_EAALGO)
			md.aalgo = GELI_ALGO_HMAC_SHA256;
		tap_ok(try_open(&md, 1 << 20, 512, 0) == -EINVAL,
		    "%s: ... with AUTH as well", cases[i].what);
	}
}

static void
test_sizes(void)
{
	struct geli_metadata md = good_md();
	int r;

	/* Provider sizes: nothing beside the metadata. */
	tap_ok(geli_metadata_check(&md, 512, 512) == -GELI_ENOROOM,
	    "a provider of one sector has no room");
	tap_ok(try_open(&md, 512, 512, 0) == -EINVAL,
	    "... and geli_volume_open refuses it");
	tap_ok(geli_metadata_check(&md, 1024, 512) == 0,
	    "two sectors: one of data");
	md.sectorsize = 4096;
	tap_ok(geli_metadata_check(&md, 4096, 512) == -GELI_ENOROOM,
	    "S = 4096 on 4096 bytes: no whole GELI sector beside the metadata");
	tap_ok(try_open(&md, 4096, 512, 0) == -EINVAL,
	    "... and geli_volume_open refuses it");
	tap_ok(geli_metadata_check(&md, 0, 512) == 0,
	    "provsize 0: the size is not checked");
	tap_ok(geli_metadata_check(&md, 8192, 0) == -EINVAL,
	    "a provider sector size of 0 is -EINVAL");
	/* The largest sector. */
	md.sectorsize = GELI_MAX_SECTORSIZE;
	tap_ok(geli_metadata_check(&md, 4u << 20, 512) == 0,
	    "S = GELI_MAX_SECTORSIZE is accepted");
	tap_ok(try_open(&md, 4u << 20, 512, 0) == 0, "... and opens");
	/* Onetime: any multiple of P, none of it reserved. */
	md = good_md();
	md.sectorsize = 1536;
	tap_ok(try_open(&md, 1 << 20, 512, GELI_VOLUME_ONETIME) == 0,
	    "onetime: S = 1536 opens (onetime -s allows it)");
	md.flags |= GELI_FLAG_ONETIME;
	tap_ok(geli_metadata_check(&md, 1536, 512) == 0,
	    "onetime: 1536 bytes hold one sector of 1536");
	md.sectorsize = 1000;
	tap_ok(geli_metadata_check(&md, 1 << 20, 512) == -GELI_ESECTORSIZE,
	    "onetime: S = 1000 is still not a multiple of P");
	/* Integrity on a provider sector with no room for data. */
	md = good_md();
	md.flags |= GELI_FLAG_AUTH;
	md.aalgo = GELI_ALGO_HMAC_SHA512;
	r = try_open(&md, 1 << 20, 512, 0);
	tap_ok(r == 0, "AUTH HMAC/SHA512 on 512-byte sectors opens");
	md.sectorsize = 64;
	r = try_open(&md, 1 << 20, 64, 0);
	if (r == 1) {
		tap_ok(1, "# SKIP no extended attributes here");
	} else {
		tap_ok(geli_metadata_check(&md, 1 << 20, 64) ==
		    -GELI_ESECTORSIZE && r == -EINVAL,
		    "AUTH HMAC/SHA512 on 64-byte sectors: no data beside the "
		    "tag, refused (FreeBSD divides by zero)");
	}
}

int
main(void)
{
	if (mkdtemp(tmpdir) == NULL)
		return 1;
	memset(mkey, 0x5a, sizeof(mkey));
	test_fields();
	test_sizes();
	{
		char path[4096];

		snprintf(path, sizeof(path), "%s/prov", tmpdir);
		unlink(path);
		rmdir(tmpdir);
	}
	printf("1..%d\n", tap_n);
	return tap_failed != 0;
}
