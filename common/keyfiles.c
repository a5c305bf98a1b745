/* SPDX-License-Identifier: BSD-2-Clause */
/* Keyfiles (see keyfiles.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "keyfiles.h"

int
keyfiles_read(struct geli_ukey_ctx *ctx, const char *const *files, size_t n,
    char *msg, size_t len)
{
	int fd, error;

	for (size_t i = 0; i < n; i++) {
		if (strcmp(files[i], "-") == 0) {
			fd = STDIN_FILENO;
		} else if ((fd = open(files[i], O_RDONLY | O_CLOEXEC)) < 0) {
			snprintf(msg, len, "Cannot open keyfile %s: %s.",
			    files[i], strerror(errno));
			return -1;
		}
		error = geli_ukey_update_fd(ctx, fd);
		if (fd != STDIN_FILENO)
			close(fd);
		if (error != 0) {
			snprintf(msg, len, "Cannot read keyfile %s: %s.",
			    files[i], strerror(-error));
			return -1;
		}
	}
	return 0;
}
