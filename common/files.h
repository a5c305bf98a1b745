/* SPDX-License-Identifier: BSD-2-Clause */
/* Files and directories the front ends make and remove. */
#ifndef GELI_COMMON_FILES_H
#define GELI_COMMON_FILES_H

#include <sys/types.h>

/* mkdir -p: the missing parents with mode parents, path itself 0700; 0, or
 * -1 with errno. */
int make_dirs(const char *path, mode_t parents);
/* rm -rf dir; 0 or -errno of the first failure. */
int remove_tree(const char *dir);
/* path holds text (created or truncated, mode 0600); 0 or -errno. */
int write_file(const char *path, const char *text);
/* The text path holds, its first len - 1 bytes at most, NUL-terminated
 * into buf; its length, or -errno (buf then ""). */
ssize_t read_file(const char *path, char *buf, size_t len);
/* The file at path and its directory's entry of it on disk (fsync both); 0
 * or -errno. */
int sync_file_and_dir(const char *path);

#endif
