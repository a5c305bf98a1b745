/*
 * Reading and storing metadata for the verbs, with geli(8)'s messages
 * (§9.7): a provider keeps it in its last sector, a backup file at offset 0.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* A backup file is at most one 4096-byte sector and starts with the magic. */
#define BACKUP_MAX 4096

static void __attribute__((format(printf, 2, 3)))
report(bool to_stderr, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (to_stderr) {
		fflush(stdout);
		fprintf(stderr, "%s\n", msg);
	} else {
		req_error("%s", msg);
	}
}

static bool
is_backup_file(const char *path)
{
	uint8_t head[16];
	struct stat st;
	bool ok = false;
	int fd;

	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_size > BACKUP_MAX)
		return false;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (read(fd, head, sizeof(head)) == (ssize_t)sizeof(head))
		ok = geli_metadata_has_magic(head, sizeof(head));
	close(fd);
	return ok;
}

int
prov_open(const char *name, bool writable, struct geli_provider **p)
{
	char buf[4096];

	return geli_provider_open(prov_path(name, buf, sizeof(buf)), writable,
	    p);
}

static int
mdsrc_open_any(struct mdsrc *src, const char *name, bool writable,
    bool to_stderr, bool allow_file, struct geli_metadata *md)
{
	uint8_t sector[BACKUP_MAX];
	char pbuf[4096];
	const char *path;
	ssize_t n;
	int error;

	memset(src, 0, sizeof(*src));
	src->name = name;
	src->fd = -1;
	path = prov_path(name, pbuf, sizeof(pbuf));
	if (allow_file && is_backup_file(path)) {
		src->isfile = true;
		src->fd = open(path, (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC);
		if (src->fd < 0) {
			report(to_stderr, "Cannot open %s: %s.", name,
			    strerror(errno));
			return -1;
		}
		n = pread(src->fd, sector, GELI_MD_SIZE, 0);
		if (n < 0) {
			report(to_stderr, "Cannot read metadata from %s: %s.",
			    name, strerror(errno));
			goto fail;
		}
		/* A version 0 record is 509 bytes; decode checks the rest. */
		memset(sector + n, 0, sizeof(sector) - (size_t)n);
		if ((size_t)n < GELI_MD_SIZE_V0) {
			report(to_stderr, "Cannot read metadata from %s: %s.",
			    name, "File too short");
			goto fail;
		}
		error = geli_metadata_decode(sector, (size_t)n, md);
	} else {
		error = geli_provider_open(path, writable, &src->prov);
		if (error != 0) {
			report(to_stderr, "Cannot read metadata from %s: %s.",
			    name, strerror(-error));
			return -1;
		}
		if (geli_provider_mediasize(src->prov) <
		    geli_provider_sectorsize(src->prov)) {
			report(to_stderr, "Cannot read metadata from %s: %s.",
			    name, "Provider smaller than one sector");
			goto fail;
		}
		error = geli_provider_read_last(src->prov, sector);
		if (error != 0) {
			report(to_stderr, "Cannot read metadata from %s: %s.",
			    name, strerror(-error));
			goto fail;
		}
		if (!geli_metadata_has_magic(sector, GELI_MD_SIZE)) {
			report(to_stderr, "Cannot read metadata from %s: %s.",
			    name, strerror(EINVAL));
			goto fail;
		}
		error = geli_metadata_decode(sector,
		    geli_provider_sectorsize(src->prov), md);
	}
	switch (error) {
	case 0:
		return 0;
	case -EOPNOTSUPP:
		report(to_stderr, "Provider's %s metadata version %u is too new.\n"
		    "geli: The highest supported version is %u.", name,
		    (unsigned)md->version, GELI_VERSION);
		break;
	case -EBADMSG:
	case -EINVAL:
		report(to_stderr, "Inconsistent provider's %s metadata.", name);
		break;
	default:
		report(to_stderr,
		    "Unexpected error while decoding provider's %s metadata: %s.",
		    name, strerror(-error));
	}
fail:
	mdsrc_close(src);
	return -1;
}

int
mdsrc_open(struct mdsrc *src, const char *name, bool writable,
    bool to_stderr, struct geli_metadata *md)
{
	return mdsrc_open_any(src, name, writable, to_stderr, true, md);
}

int
mdsrc_open_provider(struct mdsrc *src, const char *name, bool writable,
    struct geli_metadata *md)
{
	return mdsrc_open_any(src, name, writable, false, false, md);
}

int
mdsrc_store(struct mdsrc *src, struct geli_metadata *md)
{
	uint8_t rec[GELI_MD_SIZE];
	int error;

	if (src->isfile) {
		/* The record at offset 0; the file keeps its length. */
		error = geli_metadata_encode(md, rec);
		if (error >= 0) {
			ssize_t n = pwrite(src->fd, rec, sizeof(rec), 0);
			error = n == (ssize_t)sizeof(rec) ? 0 :
			    n < 0 ? -errno : -EIO;
		}
		if (error == 0 && fsync(src->fd) != 0)
			error = -errno;
		geli_wipe(rec, sizeof(rec));
	} else {
		error = geli_provider_write_metadata(src->prov, md);
	}
	if (error < 0) {
		req_error("Cannot write metadata to %s: %s.", src->name,
		    strerror(-error));
		return -1;
	}
	return 0;
}

void
mdsrc_close(struct mdsrc *src)
{
	if (src->fd >= 0)
		close(src->fd);
	src->fd = -1;
	geli_provider_close(src->prov);
	src->prov = NULL;
}

int
trash_sector(struct geli_provider *p, uint64_t off)
{
	uint32_t size = geli_provider_sectorsize(p);
	uint8_t *sector;
	int error = 0, e;

	sector = malloc(size);
	if (sector == NULL)
		return -ENOMEM;
	for (int i = 0; i < GELI_OVERWRITES; i++) {
		e = geli_random(sector, size);
		if (e == 0)
			e = geli_provider_pwrite(p, sector, size, off);
		if (e != 0 && error == 0)
			error = e;
		(void)geli_provider_flush(p);
	}
	free(sector);
	return error;
}

int
read_magic_sector(struct geli_provider *p, uint8_t **out)
{
	uint32_t psize = geli_provider_sectorsize(p);
	uint8_t *sector;
	int error;

	sector = calloc(1, psize);
	if (sector == NULL)
		return -ENOMEM;
	error = geli_provider_read_last(p, sector);
	if (error == 0 && !geli_metadata_has_magic(sector, psize))
		error = -EINVAL;
	if (error != 0) {
		free(sector);
		return error;
	}
	*out = sector;
	return 0;
}
