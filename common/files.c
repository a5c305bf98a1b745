/* SPDX-License-Identifier: BSD-2-Clause */
/* Files and directories the front ends make and remove (see files.h). */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files.h"

int
make_dirs(const char *path, mode_t parents)
{
	char buf[4096];
	size_t len = strlen(path);

	if (len == 0 || len >= sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(buf, path, len + 1);
	while (len > 1 && buf[len - 1] == '/')
		buf[--len] = '\0';
	for (char *p = buf + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		(void)mkdir(buf, parents);
		*p = '/';
	}
	return mkdir(buf, 0700) == 0 || errno == EEXIST ? 0 : -1;
}

static int
remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	return remove(path) == 0 || errno == ENOENT ? 0 : -errno;
}

int
remove_tree(const char *dir)
{
	int r = nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);

	return r < 0 && errno == ENOENT ? 0 : r;
}

int
write_file(const char *path, const char *text)
{
	size_t len = strlen(text);
	int fd, error = 0;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (write(fd, text, len) != (ssize_t)len)
		error = -EIO;
	if (close(fd) != 0 && error == 0)
		error = -errno;
	return error;
}

ssize_t
read_file(const char *path, char *buf, size_t len)
{
	size_t got = 0;
	ssize_t n = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	buf[0] = '\0';
	if (fd < 0)
		return -errno;
	while (got + 1 < len && (n = read(fd, buf + got, len - 1 - got)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		got += (size_t)n;
	}
	n = n < 0 ? -errno : (ssize_t)got;
	close(fd);
	buf[n < 0 ? 0 : got] = '\0';
	return n;
}

int
sync_file_and_dir(const char *path)
{
	char dir[4096], *slash;
	int fd, error = 0;

	if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir))
		return -ENAMETOOLONG;
	slash = strrchr(dir, '/');
	if (slash == NULL)
		snprintf(dir, sizeof(dir), ".");
	else
		slash[slash == dir] = '\0';	/* ("/name": "/") */
	for (int i = 0; i < 2 && error == 0; i++) {
		fd = open(i == 0 ? path : dir, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		if (fsync(fd) != 0)
			error = -errno;
		close(fd);
	}
	return error;
}
