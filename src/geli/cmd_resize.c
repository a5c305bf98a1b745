/* geli resize -s oldsize (§8.5) and geli kill of detached providers (§9.9). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

void
cmd_resize(struct opts *o, int argc, char **argv)
{
	struct geli_metadata md;
	struct geli_provider *p;
	const char *prov;
	uint8_t *sector = NULL;
	uint64_t mediasize;
	uint32_t psize;
	intmax_t oldsize;
	int error;

	if (argc != 1) {
		req_error("Invalid number of arguments.");
		return;
	}
	prov = argv[0];
	error = prov_open(prov, true, &p);
	if (error != 0) {
		req_error("Cannot open %s: %s.", prov, strerror(-error));
		return;
	}
	mediasize = geli_provider_mediasize(p);
	psize = geli_provider_sectorsize(p);
	sector = malloc(psize);
	if (sector == NULL) {
		req_error("Cannot allocate memory.");
		goto out;
	}
	oldsize = opt_num(o, 's');
	if (oldsize < 0 || (uintmax_t)oldsize > mediasize) {
		req_error("Invalid oldsize: Out of range.");
		goto out;
	}
	if ((uintmax_t)oldsize < psize) {
		req_error("Cannot read old metadata: %s.", strerror(EINVAL));
		goto out;
	}
	error = geli_provider_pread(p, sector, psize,
	    (uint64_t)oldsize - psize);
	if (error != 0) {
		req_error("Cannot read old metadata: %s.", strerror(-error));
		goto out;
	}
	error = geli_metadata_decode(sector, psize, &md);
	switch (error) {
	case 0:
		break;
	case -EOPNOTSUPP:
		req_error("Provider's %s metadata version %u is too new.\n"
		    "geli: The highest supported version is %u.", prov,
		    (unsigned)md.version, GELI_VERSION);
		goto out;
	case -EINVAL:
	case -EBADMSG:
		req_error("Inconsistent provider's %s metadata.", prov);
		goto out;
	default:
		req_error("Unexpected error while decoding provider's %s "
		    "metadata: %s.", prov, strerror(-error));
		goto out;
	}
	if (md.provsize != (uint64_t)oldsize) {
		req_error("Provider size mismatch at oldsize.");
		goto out;
	}
	/* The metadata is valid and nothing has changed. */
	if ((uint64_t)oldsize == mediasize)
		goto out;
	md.provsize = mediasize;
	error = geli_provider_write_metadata(p, &md);
	if (error < 0) {
		req_error("Cannot write metadata to %s: %s.", prov,
		    strerror(-error));
		goto out;
	}
	/* Then trash the old copy. */
	error = trash_sector(p, (uint64_t)oldsize - psize);
	if (error != 0)
		req_error("Cannot trash metadata on provider %s: %s.", prov,
		    strerror(-error));
out:
	if (sector != NULL)
		geli_wipe(sector, psize);
	free(sector);
	geli_wipe(&md, sizeof(md));
	geli_provider_close(p);
}

static void
kill_detached(const char *prov)
{
	struct geli_provider *p;
	uint64_t size;
	uint32_t psize;
	int error;

	/* As geli(8): no check that this is a GELI provider. */
	error = prov_open(prov, true, &p);
	if (error != 0) {
		req_error("Cannot open provider %s: %s.", prov,
		    strerror(-error));
		return;
	}
	size = geli_provider_mediasize(p);
	psize = geli_provider_sectorsize(p);
	if (size <= psize) {
		req_error("Cannot obtain media size or sector size for "
		    "provider %s: %s.", prov, strerror(EINVAL));
		geli_provider_close(p);
		return;
	}
	error = trash_sector(p, size - psize);
	if (error != 0)
		req_error("Cannot trash metadata on provider %s: %s.", prov,
		    strerror(-error));
	geli_provider_close(p);
}

void
cmd_kill(struct opts *o, int argc, char **argv)
{
	char name[256], **names;
	int n;

	if (!opt_bool(o, 'a') && argc == 0) {
		req_error("Too few arguments.");
		return;
	}
	/* First the detached providers, then the attached ones. */
	for (int i = 0; i < argc; i++)
		if (!attached_name(argv[i], name, sizeof(name)))
			kill_detached(argv[i]);
	for (int i = 0; i < argc; i++)
		if (attached_name(argv[i], name, sizeof(name)) &&
		    attached_request(name, "kill", NULL, 0) == 0)
			wait_gone(name);
	if (opt_bool(o, 'a')) {
		n = attached_names(&names);
		for (int i = 0; i < n; i++)
			if (attached_request(names[i], "kill", NULL, 0) == 0)
				wait_gone(names[i]);
		attached_names_free(names, n);
	}
}
