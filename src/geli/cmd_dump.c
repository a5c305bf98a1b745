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

/* A marked record: the conversion, as its journal says (not checked). */
static void
conversion_dump(const struct geli_metadata *md)
{
	struct geli_reenc_info info;
	uint8_t uuid[16];
	char path[4200];

	printf("conversion: in progress (geli reencrypt)\n");
	if (geli_reenc_uuid(md, uuid) != 0)
		return;
	printf("   journal: ");
	for (int i = 0; i < 16; i++)
		printf("%02x", uuid[i]);
	printf("\n");
	if (reenc_journal_path(uuid, false, path, sizeof(path)) != 0 ||
	    geli_reenc_peek(path, &info) != 0 || info.kind < GELI_REENC_REKEY ||
	    info.kind > GELI_REENC_LUKS2) {
		printf("  progress: unknown (no journal in the default place)\n");
		return;
	}
	printf("  progress: %s, %ju of %ju hotzones done (%.1f%%)\n",
	    msg_reenc_kind(info.kind), (uintmax_t)info.done, (uintmax_t)info.total,
	    info.total ? 100.0 * (double)info.done / (double)info.total : 0.0);
}

static void
metadata_dump(const struct geli_metadata *md)
{
	printf("     magic: %s\n", md->magic);
	if (GELI_REENC_MARKED(md->version))
		printf("   version: %u (being converted)\n",
		    (unsigned)(md->version & 0xffffu));
	else
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
	if (GELI_REENC_MARKED(md->version))
		conversion_dump(md);
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
		if (mdsrc_open_marked(&src, argv[i], &md) < 0) {
			req_error("Not fully done.");
			continue;
		}
		mdsrc_close(&src);
		printf("Metadata on %s:\n", argv[i]);
		metadata_dump(&md);
		printf("\n");
	}
}
