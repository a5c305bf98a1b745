/* SPDX-License-Identifier: BSD-2-Clause */
/* geli dump (§9.15): the metadata of providers and backup files. */
#include <stdio.h>

#include "cli.h"

static void
print_hex(const char *label, const uint8_t *p, size_t len)
{
	printf("%s: ", label);
	for (size_t i = 0; i < len; i++)
		printf("%02x", p[i]);
	printf("\n");
}

static void
metadata_dump(const struct geli_metadata *md)
{
	printf("     magic: %s\n", md->magic);
	printf("   version: %u\n", (unsigned)md->version);
	printf("     flags: 0x%x\n", (unsigned)md->flags);
	printf("     ealgo: %s\n", geli_algo_name(md->ealgo));
	printf("    keylen: %u\n", (unsigned)md->keylen);
	if (md->flags & GELI_FLAG_AUTH)
		printf("     aalgo: %s\n", geli_algo_name(md->aalgo));
	printf("  provsize: %ju\n", (uintmax_t)md->provsize);
	printf("sectorsize: %u\n", (unsigned)md->sectorsize);
	printf("      keys: 0x%02x\n", (unsigned)md->keys);
	printf("iterations: %d\n", (int)md->iterations);
	print_hex("      Salt", md->salt, sizeof(md->salt));
	print_hex("Master Key", md->mkeys, sizeof(md->mkeys));
	print_hex("  MD5 hash", md->hash, sizeof(md->hash));
}

void
cmd_dump(struct opts *o, int argc, char **argv)
{
	struct geli_metadata md;
	struct mdsrc src;

	(void)o;
	if (argc < 1) {
		req_error("Too few arguments.");
		return;
	}
	for (int i = 0; i < argc; i++) {
		/* Decode errors go straight to stderr, as in geli(8). */
		if (mdsrc_open(&src, argv[i], false, true, &md) != 0) {
			req_error("Not fully done.");
			continue;
		}
		mdsrc_close(&src);
		printf("Metadata on %s:\n", argv[i]);
		metadata_dump(&md);
		printf("\n");
	}
}
