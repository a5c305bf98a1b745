/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Finding GELI providers inside a larger device or image whose partition
 * table is gone (geli search).  A provider's metadata is one sector at its
 * end and records the provider's size (md_provsize, every version), so a
 * record that decodes, MD5 and all, at byte X of the device says where its
 * provider starts: X + P - md_provsize, P being the sector size of the
 * device the provider lived on (the record fills the first bytes of P).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define SEARCH_CHUNK	(4u << 20)	/* bytes read at a time */

/*
 * Which sector size the provider lived on: 4096 (a 4Kn disk) when that
 * reading puts its start on a 4 KiB boundary and 512 does not, else 512 (or
 * the device's own, when larger).  Both cannot be 4 KiB-aligned, since the
 * two starts differ by 3584 bytes.  -1: no reading fits inside the device.
 */
static int
place(uint64_t mdoff, uint64_t devsize, uint32_t devsector,
    const struct geli_metadata *md, struct geli_found *f)
{
	static const uint32_t sizes[] = { 4096, 512 };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t p = sizes[i] > devsector ? sizes[i] : devsector;
		uint64_t end = mdoff + p, start;

		if (md->provsize < (uint64_t)p * 2 || md->provsize % p != 0 ||
		    md->sectorsize % p != 0 || end > devsize ||
		    end < md->provsize || mdoff % p != 0)
			continue;
		start = end - md->provsize;
		/* The 4096 reading only when it is the aligned one. */
		if (p == 4096 && devsector < 4096 && start % 4096 != 0)
			continue;
		f->start = start;
		f->psectorsize = p;
		return 0;
	}
	return -1;
}

int
geli_search(struct geli_provider *p, geli_search_found_fn found,
    geli_search_progress_fn progress, void *arg)
{
	uint64_t size = geli_provider_mediasize(p), off;
	uint32_t devsector = geli_provider_sectorsize(p);
	uint8_t *buf;
	int fd = geli_provider_fd(p), rc = 0;

	if (devsector < 512 || devsector % 512 != 0)
		return -EINVAL;
	buf = malloc(SEARCH_CHUNK);
	if (buf == NULL)
		return -ENOMEM;
	if (fd >= 0)
		(void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	for (off = 0; off < size && rc == 0; off += SEARCH_CHUNK) {
		size_t len = size - off < SEARCH_CHUNK ? (size_t)(size - off) :
		    SEARCH_CHUNK;

		len -= len % 512;
		if (len == 0)
			break;
		rc = geli_provider_pread(p, buf, len, off);
		if (rc != 0)
			break;
		for (size_t s = 0; s < len && rc == 0; s += 512) {
			struct geli_found f;

			if (!geli_metadata_has_magic(buf + s, 512))
				continue;
			memset(&f, 0, sizeof(f));
			f.mdoffset = off + s;
			f.decoded = geli_metadata_decode(buf + s, 512, &f.md);
			if (f.decoded == 0 && place(f.mdoffset, size, devsector,
			    &f.md, &f) != 0)
				f.decoded = -ERANGE;
			rc = found(&f, arg);
		}
		if (progress != NULL)
			progress(off + len, size, arg);
		/* Scanned data is read once: keep it out of the page cache. */
		if (fd >= 0)
			(void)posix_fadvise(fd, (off_t)off, (off_t)len,
			    POSIX_FADV_DONTNEED);
	}
	free(buf);
	return rc;
}
