/* geli backup / restore (§9.10). */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

void
cmd_backup(struct opts *o, int argc, char **argv)
{
	struct geli_provider *p;
	const char *prov, *file;
	uint8_t *sector = NULL;
	uint32_t psize;
	int error, fd;

	(void)o;
	if (argc != 2) {
		req_error("Invalid number of arguments.");
		return;
	}
	prov = argv[0];
	file = argv[1];
	error = prov_open(prov, false, &p);
	if (error != 0) {
		req_error("Cannot get informations about %s: %s.", prov,
		    strerror(-error));
		return;
	}
	psize = geli_provider_sectorsize(p);
	error = read_magic_sector(p, &sector);
	if (error != 0) {
		req_error("Unable to read metadata from %s: %s.", prov,
		    strerror(-error));
		goto out;
	}
	fd = open(file, O_WRONLY | O_TRUNC | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		req_error("Unable to open %s: %s.", file, strerror(errno));
		goto out;
	}
	if (write(fd, sector, psize) != (ssize_t)psize || fsync(fd) != 0) {
		req_error("Unable to write to %s: %s.", file,
		    strerror(errno != 0 ? errno : EIO));
		close(fd);
		unlink(file);
		goto out;
	}
	close(fd);
out:
	if (sector != NULL)
		geli_wipe(sector, psize);
	free(sector);
	geli_provider_close(p);
}

void
cmd_restore(struct opts *o, int argc, char **argv)
{
	struct geli_metadata md;
	struct geli_provider *p = NULL;
	struct mdsrc src;
	const char *file, *prov;
	uint64_t mediasize;
	int error;

	if (argc != 2) {
		req_error("Invalid number of arguments.");
		return;
	}
	file = argv[0];
	prov = argv[1];
	if (mdsrc_open(&src, file, false, false, &md) != 0)
		return;
	mdsrc_close(&src);
	error = prov_open(prov, true, &p);
	if (error != 0) {
		req_error("Cannot get informations about %s: %s.", prov,
		    strerror(-error));
		goto out;
	}
	mediasize = geli_provider_mediasize(p);
	if (md.provsize != mediasize) {
		if (opt_bool(o, 'f')) {
			md.provsize = mediasize;
		} else {
			req_error("Provider size mismatch: wrong backup file?");
			goto out;
		}
	}
	if (geli_provider_sectorsize(p) < GELI_MD_SIZE ||
	    mediasize < geli_provider_sectorsize(p)) {
		req_error("Cannot write metadata to %s: %s.", prov,
		    "Provider smaller than one sector");
		goto out;
	}
	error = geli_provider_write_metadata(p, &md);
	if (error < 0)
		req_error("Cannot write metadata to %s: %s.", prov,
		    strerror(-error));
out:
	geli_provider_close(p);
	geli_wipe(&md, sizeof(md));
}
