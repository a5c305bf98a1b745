/* SPDX-License-Identifier: BSD-2-Clause */
/* Keyfiles and passfiles (see keyfiles.h). */
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

#define READBUF 1024

/* The first line of fd (file, for messages) appended to pass at *have. */
static int
passfile_line(int fd, const char *file, char *pass, size_t *have, char *buf,
    char *msg, size_t len)
{
	ssize_t done = 0;
	char *nl = NULL;

	while (nl == NULL && (done = read(fd, buf, READBUF - 1)) > 0) {
		buf[done] = '\0';
		nl = memchr(buf, '\n', (size_t)done);
		if (nl != NULL)
			*nl = '\0';
		/* strlen: the passphrase ends at a NUL, as in C. */
		size_t add = strlen(buf);
		if (*have + add > GELI_MAX_PASSLEN) {
			snprintf(msg, len, "Passphrase in %s too long.", file);
			return -1;
		}
		memcpy(pass + *have, buf, add);
		*have += add;
		pass[*have] = '\0';
	}
	if (nl == NULL && done < 0) {
		snprintf(msg, len, "Cannot read passfile %s: %s.", file,
		    strerror(errno));
		return -1;
	}
	return 0;
}

int
passfiles_read(char *pass, const char *const *files, size_t n, char *msg,
    size_t len)
{
	char *buf = geli_secure_alloc(READBUF);
	size_t have = 0;
	int fd, rc = 0;

	if (buf == NULL) {
		snprintf(msg, len, "Cannot allocate memory.");
		return -1;
	}
	pass[0] = '\0';
	for (size_t i = 0; i < n && rc == 0; i++) {
		if (strcmp(files[i], "-") == 0) {
			fd = STDIN_FILENO;
		} else if ((fd = open(files[i], O_RDONLY | O_CLOEXEC)) < 0) {
			snprintf(msg, len, "Cannot open passfile %s: %s.",
			    files[i], strerror(errno));
			rc = -1;
			break;
		}
		rc = passfile_line(fd, files[i], pass, &have, buf, msg, len);
		if (fd != STDIN_FILENO)
			close(fd);
	}
	geli_secure_free(buf);
	return rc;
}
