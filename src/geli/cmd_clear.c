/* SPDX-License-Identifier: BSD-2-Clause */
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
	int error;

	error = prov_open(name, true, &p);
	if (error != 0)
		return error;
	error = geli_clear(p);
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
			struct msg_args a = { .prov = argv[i] };
			char msg[1200];

			fflush(stdout);
			fprintf(stderr, "%s\n", msg_format(msg, sizeof(msg),
			    OP_CLEAR, GELI_STEP_WRITE, error, false, &a));
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
	int error;

	(void)o;
	if (argc == 0) {
		/* The data path is this build's libgeli: no separate module. */
		printf("kernel: %u\n", GELI_VERSION);
		printf("userland: %u\n", GELI_VERSION);
		return;
	}
	for (int i = 0; i < argc; i++) {
		uint8_t *sector = NULL;
		uint32_t P = 0;

		error = prov_open(argv[i], false, &p);
		if (error == 0) {
			P = geli_provider_sectorsize(p);
			sector = calloc(1, P);
			error = sector == NULL ? -ENOMEM :
			    geli_provider_read_last(p, sector);
			if (error == 0 && !geli_metadata_has_magic(sector, P))
				error = -EINVAL;
			geli_provider_close(p);
		}
		if (error != 0) {
			warnmsg("%s: Unable to read metadata: %s.", argv[i],
			    strerror(-error));
			req_error("Not fully done.");
		} else {
			/* The raw LE32 at offset 16; only the magic is checked. */
			printf("%s: %u\n", argv[i], raw_md_version(sector));
		}
		free(sector);
	}
}
