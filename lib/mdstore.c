/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Metadata stores (§1.1, §9.7, §8.6): where a record is read from and
 * written to.  A provider keeps its record in the last sector; a backup file
 * keeps it at offset 0.  This file is the only place that decodes a record
 * read from disk (record_read) and the only one that writes one
 * (record_write): every verb of admin.c, the provider helpers and the tools
 * go through these two.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "geli.h"
#include "mdstore.h"

/* A backup is one sector of at most 4096 bytes (geli backup copies P). */
#define BACKUP_MAX 4096

struct geli_mdstore {
	struct geli_provider *prov;	/* NULL for a backup file */
	bool own;			/* close prov with the store */
	int fd;				/* the backup file, else -1 */
};

/* Whole-buffer pwrite or pread on a file descriptor (EINTR, short I/O). */
static int
fd_io(int fd, void *buf, size_t len, uint64_t off, bool write)
{
	uint8_t *b = buf;
	ssize_t n;

	while (len > 0) {
		n = write ? pwrite(fd, b, len, (off_t)off) :
		    pread(fd, b, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return write ? -EIO : -GELI_ESHORT;
		b += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

/* The bytes of a record location: its descriptor, else its provider. */
static int
at_io(struct rec_at at, void *buf, size_t len, uint64_t off, bool write)
{
	if (at.fd >= 0)
		return fd_io(at.fd, buf, len, off, write);
	return write ? geli_provider_pwrite(at.prov, buf, len, off) :
	    geli_provider_pread(at.prov, buf, len, off);
}

static int
at_sync(struct rec_at at)
{
	if (at.fd >= 0)
		return fsync(at.fd) == 0 ? 0 : -errno;
	return geli_provider_flush(at.prov);
}

int
record_write(struct rec_at at, struct geli_metadata *md, uint64_t off,
    size_t len)
{
	uint8_t *buf;
	int error;

	if (len < GELI_MD_SIZE)
		return -EINVAL;
	buf = calloc(1, len);
	if (buf == NULL)
		return -ENOMEM;
	error = geli_metadata_encode(md, buf);
	if (error >= 0)
		error = at_io(at, buf, len, off, true);
	if (error >= 0)
		error = at_sync(at);
	geli_wipe(buf, len);
	free(buf);
	return error < 0 ? error : 0;
}

int
record_read(struct rec_at at, uint64_t off, size_t len,
    struct geli_metadata *md)
{
	uint8_t *buf;
	int error;

	if (len < GELI_MD_SIZE_V0)
		return -GELI_ETOOSMALL;
	/* Room for a whole record even when a v0 record is all there is. */
	buf = calloc(1, len < GELI_MD_SIZE ? GELI_MD_SIZE : len);
	if (buf == NULL)
		return -ENOMEM;
	error = at_io(at, buf, len, off, false);
	if (error == 0 && !geli_metadata_has_magic(buf, len))
		error = -GELI_ENOMAGIC;
	if (error == 0)
		error = geli_metadata_decode(buf, len, md);
	geli_wipe(buf, len);
	free(buf);
	return error;
}

bool
geli_is_backup_file(const char *path)
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
geli_mdstore_open(const char *path, unsigned flags, struct geli_mdstore **out)
{
	bool w = (flags & GELI_MDS_WRITABLE) != 0;
	struct geli_mdstore *s;
	int error = 0;

	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return -ENOMEM;
	s->fd = -1;
	if (!(flags & GELI_MDS_PROVIDER) && geli_is_backup_file(path)) {
		s->fd = open(path, (w ? O_RDWR : O_RDONLY) | O_CLOEXEC);
		if (s->fd < 0)
			error = -errno;
	} else {
		error = geli_provider_open(path, w, &s->prov);
		s->own = true;
	}
	if (error != 0) {
		free(s);
		return error;
	}
	*out = s;
	return 0;
}

int
geli_mdstore_wrap(struct geli_provider *p, struct geli_mdstore **out)
{
	struct geli_mdstore *s;

	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return -ENOMEM;
	s->prov = p;
	s->fd = -1;
	*out = s;
	return 0;
}

int
geli_mdstore_read(struct geli_mdstore *s, struct geli_metadata *md)
{
	uint64_t size;
	uint32_t P;
	struct stat st;

	if (s->prov == NULL) {
		/* A version 0 record is 509 bytes; decode checks the rest. */
		if (fstat(s->fd, &st) != 0)
			return -errno;
		if (st.st_size < GELI_MD_SIZE_V0)
			return -GELI_ESHORT;
		return record_read(rec_fd(s->fd), 0, st.st_size < GELI_MD_SIZE ?
		    (size_t)st.st_size : GELI_MD_SIZE, md);
	}
	size = geli_provider_mediasize(s->prov);
	P = geli_provider_sectorsize(s->prov);
	if (size < P)
		return -GELI_ETOOSMALL;
	return record_read(rec_prov(s->prov), size - P, P, md);
}

int
geli_mdstore_write(struct geli_mdstore *s, struct geli_metadata *md)
{
	uint64_t size;
	uint32_t P;

	if (s->prov == NULL)	/* the record at 0; the file keeps its length */
		return record_write(rec_fd(s->fd), md, 0, GELI_MD_SIZE);
	size = geli_provider_mediasize(s->prov);
	P = geli_provider_sectorsize(s->prov);
	if (size < P || P < GELI_MD_SIZE)
		return -GELI_ETOOSMALL;
	return record_write(rec_prov(s->prov), md, size - P, P);
}

bool
geli_mdstore_is_backup(const struct geli_mdstore *s)
{
	return s->prov == NULL;
}

struct geli_provider *
geli_mdstore_provider(const struct geli_mdstore *s)
{
	return s->prov;
}

void
geli_mdstore_close(struct geli_mdstore *s)
{
	if (s == NULL)
		return;
	if (s->fd >= 0)
		close(s->fd);
	if (s->own)
		geli_provider_close(s->prov);
	free(s);
}

int
geli_provider_read_metadata(struct geli_provider *p, struct geli_metadata *md)
{
	struct geli_mdstore s = { .prov = p, .fd = -1 };

	return geli_mdstore_read(&s, md);
}

int
geli_provider_write_metadata(struct geli_provider *p, struct geli_metadata *md)
{
	struct geli_mdstore s = { .prov = p, .fd = -1 };

	return geli_mdstore_write(&s, md);
}
