/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer harness: the metadata decoder, every version (lib/metadata.c).
 *
 * The input is a metadata sector.  It is decoded once as it is (magic and
 * MD5 as the fuzzer made them), then with the magic forced and the MD5 of
 * its version recomputed, as cryptsetup's header fuzzers recompute their
 * checksums, so that mutated fields reach the decoder.  A decoded record
 * must encode to the same bytes and decode to the same record, and the
 * functions that interpret a record (runtime flags, sizes, the integrity
 * layout, key lengths, setkey's checks) must not fail on any of them.
 */
#include <stdlib.h>
#include <string.h>

#include "crypto.h"
#include "endian.h"
#include "geli.h"

#define SECTOR 512

static void
interpret(const struct geli_metadata *md)
{
	static const uint32_t psizes[] = { 512, 4096, 1, 0, 65536 };
	uint32_t dps, lsec;
	uint64_t ms, ps;
	int32_t count;

	(void)geli_metadata_runtime_flags(md);
	(void)geli_algo_name(md->ealgo);
	(void)geli_algo_name(md->aalgo);
	(void)geli_keylen(md->ealgo, md->keylen);
	(void)geli_hashlen(md->aalgo);
	(void)geli_algo_is_legacy(md->ealgo);
	for (int k = -2; k <= 2; k++)
		(void)geli_setkey_check(md, k, k == 2 ? INT64_MAX : k, &count);
	for (size_t i = 0; i < sizeof(psizes) / sizeof(psizes[0]); i++) {
		uint32_t p = psizes[i];

		if (geli_auth_layout(md, p, &dps, &lsec) == 0 &&
		    (dps == 0 || dps > p || dps % 16 != 0 ||
		    (uint64_t)lsec * dps < md->sectorsize))
			abort();
		for (int onetime = 0; onetime <= 1; onetime++) {
			ms = geli_eli_mediasize(md, md->provsize, p, onetime);
			if (ms == 0)
				continue;
			/* The inverse fits in what it came from. */
			ps = geli_eli_provsize(md, ms, p, onetime);
			if (ps != 0 && ps > md->provsize)
				abort();
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct geli_metadata md, back;
	uint8_t buf[SECTOR], out[SECTOR];
	size_t len, mdsize;
	uint32_t version, layout;
	int error, n, want;

	len = size < SECTOR ? size : SECTOR;
	memset(buf, 0, sizeof(buf));
	memcpy(buf, data, len);

	/* As it is. */
	error = geli_metadata_decode(buf, len, &md);
	if (error == 0)
		interpret(&md);

	/* Magic forced, MD5 recomputed for the version the bytes name. */
	if (len < sizeof(GELI_MAGIC) + 4 + 2)
		return 0;
	memcpy(buf, GELI_MAGIC, sizeof(GELI_MAGIC));
	version = le32dec(buf + 16);
	/* A record marked by reencrypt keeps its version's layout in the low
	 * half; it decodes as -GELI_EINPROGRESS. */
	layout = GELI_REENC_MARKED(version) ? version & 0xffffu : version;
	want = layout != version ? -GELI_EINPROGRESS : 0;
	mdsize = geli_metadata_size(layout);
	if (layout <= GELI_VERSION && len >= mdsize &&
	    gc_md5(buf, mdsize - 16, buf + mdsize - 16) != 0)
		abort();
	error = geli_metadata_decode(buf, len, &md);
	if (len < GELI_MD_SIZE_V0) {
		if (error != -EINVAL)
			abort();
		return 0;
	}
	if (layout > GELI_VERSION) {
		if (error != -EOPNOTSUPP || md.version != version)
			abort();
		return 0;
	}
	if (len < mdsize) {
		if (error != -EINVAL)
			abort();
		return 0;
	}
	if (error != want)
		abort();	/* magic and MD5 right: it must decode */
	if (want == 0)
		interpret(&md);

	/* Round trip: the same bytes, the same record. */
	back = md;
	n = geli_metadata_encode(&back, out);
	if (n < 0 || (size_t)n != mdsize || memcmp(out, buf, mdsize) != 0)
		abort();
	if (geli_metadata_decode(out, sizeof(out), &back) != want ||
	    memcmp(&back, &md, sizeof(md)) != 0)
		abort();
	return 0;
}
