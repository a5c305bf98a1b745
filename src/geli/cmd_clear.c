/* geli clear (§9.14) and geli version (§9.13). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* g_metadata_clear(): zero the last sector if it holds GELI metadata. */
static int
clear_one(const char *name)
{
	struct geli_provider *p;
	uint8_t *sector;
	int error;

	error = prov_open(name, true, &p);
	if (error != 0)
		return error;
	error = read_magic_sector(p, &sector);
	if (error == 0) {
		geli_wipe(sector, geli_provider_sectorsize(p));
		error = geli_provider_write_last(p, sector);
		free(sector);
	}
	geli_provider_close(p);
	return error;
}

void
cmd_clear(struct opts *o, int argc, char **argv)
{
	int error;

	(void)o;
	if (argc < 1) {
		req_error("Too few arguments.");
		return;
	}
	for (int i = 0; i < argc; i++) {
		error = clear_one(argv[i]);
		if (error != 0) {
			fflush(stdout);
			fprintf(stderr, "Cannot clear metadata on %s: %s.\n",
			    argv[i], strerror(-error));
			req_error("Not fully done.");
			continue;
		}
		if (verbose)
			printf("Metadata cleared on %s.\n", argv[i]);
	}
}

void
cmd_version(struct opts *o, int argc, char **argv)
{
	struct geli_provider *p;
	uint8_t *sector;
	int error;

	(void)o;
	if (argc == 0) {
		/* The data path is this build's libgeli: no separate module. */
		printf("kernel: %u\n", GELI_VERSION);
		printf("userland: %u\n", GELI_VERSION);
		return;
	}
	for (int i = 0; i < argc; i++) {
		sector = NULL;
		error = prov_open(argv[i], false, &p);
		if (error == 0) {
			error = read_magic_sector(p, &sector);
			geli_provider_close(p);
		}
		if (error != 0) {
			warnmsg("%s: Unable to read metadata: %s.", argv[i],
			    strerror(-error));
			req_error("Not fully done.");
		} else {
			/* The raw LE32 at offset 16; only the magic is checked. */
			printf("%s: %u\n", argv[i], (unsigned)sector[16] |
			    (unsigned)sector[17] << 8 |
			    (unsigned)sector[18] << 16 |
			    (unsigned)sector[19] << 24);
		}
		free(sector);
	}
}
