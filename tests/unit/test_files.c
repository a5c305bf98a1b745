/* SPDX-License-Identifier: BSD-2-Clause */
/* common/files.c: make_dirs, remove_tree, write_file, read_file. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files.h"
#include "tap.h"

static mode_t
mode_of(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? st.st_mode & 07777 : (mode_t)-1;
}

int
main(void)
{
	char top[] = "/tmp/test_files.XXXXXX", path[4200], deep[4200], buf[64];
	char *longname;
	ssize_t n;
	int fd;

	if (mkdtemp(top) == NULL) {
		tap_ok(0, "mkdtemp: %s", strerror(errno));
		return tap_done();
	}
	umask(022);

	/* make_dirs: the parents with their mode, the leaf 0700. */
	snprintf(deep, sizeof(deep), "%s/a/b/c", top);
	tap_ok(make_dirs(deep, 0755) == 0, "make_dirs makes a/b/c");
	snprintf(path, sizeof(path), "%s/a", top);
	tap_ok(mode_of(path) == 0755, "a parent gets the parents' mode (%o)",
	    (unsigned)mode_of(path));
	tap_ok(mode_of(deep) == 0700, "the leaf is 0700 (%o)",
	    (unsigned)mode_of(deep));
	tap_ok(make_dirs(deep, 0755) == 0, "an existing directory is fine");
	snprintf(path, sizeof(path), "%s/d/e///", top);
	tap_ok(make_dirs(path, 0755) == 0, "trailing slashes are ignored");
	snprintf(path, sizeof(path), "%s/d/e", top);
	tap_ok(mode_of(path) == 0700, "d/e made 0700");
	longname = malloc(5000);
	memset(longname, 'x', 4999);
	longname[0] = '/';
	longname[4999] = '\0';
	errno = 0;
	tap_ok(make_dirs(longname, 0755) == -1 && errno == ENAMETOOLONG,
	    "a path too long for the buffer: -1 with ENAMETOOLONG");
	errno = 0;
	tap_ok(make_dirs("", 0755) == -1 && errno == ENAMETOOLONG,
	    "an empty path: -1");
	free(longname);
	snprintf(path, sizeof(path), "%s/file", top);
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	close(fd);
	snprintf(deep, sizeof(deep), "%s/file/sub", top);
	tap_ok(make_dirs(deep, 0755) == -1 && errno == ENOTDIR,
	    "under a regular file: -1 with ENOTDIR (errno %d)", errno);

	/* write_file: the text, 0600, truncating what was there. */
	snprintf(path, sizeof(path), "%s/a/text", top);
	tap_ok(write_file(path, "a longer first text\n") == 0, "write_file");
	tap_ok(write_file(path, "bench\n") == 0, "write_file again");
	n = read_file(path, buf, sizeof(buf));
	tap_ok(n == 6 && strcmp(buf, "bench\n") == 0,
	    "the file holds the last text only (%zd bytes)", n);
	tap_ok(read_file(path, buf, 4) == 3 && strcmp(buf, "ben") == 0,
	    "read_file: what fits, NUL-terminated");
	tap_ok(mode_of(path) == 0600, "mode 0600 (%o)", (unsigned)mode_of(path));
	snprintf(path, sizeof(path), "%s/no/such/dir/text", top);
	tap_ok(write_file(path, "x") == -ENOENT, "write_file in a missing "
	    "directory: -ENOENT");
	tap_ok(read_file(path, buf, sizeof(buf)) == -ENOENT && buf[0] == '\0',
	    "read_file of a missing file: -ENOENT, \"\"");

	/* remove_tree: everything, files and directories; a missing one is 0. */
	snprintf(path, sizeof(path), "%s/a/b/c/f", top);
	tap_ok(write_file(path, "x") == 0, "a file deep down");
	tap_ok(remove_tree(top) == 0, "remove_tree");
	tap_ok(access(top, F_OK) != 0 && errno == ENOENT, "the tree is gone");
	tap_ok(remove_tree(top) == 0, "remove_tree of a missing tree: 0");
	return tap_done();
}
