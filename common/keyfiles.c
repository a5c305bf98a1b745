/* SPDX-License-Identifier: BSD-2-Clause */
/* Keyfiles and passfiles (see keyfiles.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
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

int
keyfiles_join(const char *const *files, size_t n, size_t max, uint8_t **out,
    size_t *outlen, char *msg, size_t len)
{
	size_t have = 0, cap = 0;
	uint8_t *buf;
	struct stat st;
	ssize_t got = 0;
	int fd = -1;

	*out = NULL;
	*outlen = 0;
	/* Room for what the files hold (max for one that is no file). */
	for (size_t i = 0; i < n && cap < max; i++)
		cap = stat(files[i], &st) == 0 && S_ISREG(st.st_mode) ?
		    cap + (size_t)st.st_size : max;
	cap = cap < max ? cap : max;
	if ((buf = geli_secure_alloc(cap + 1)) == NULL) {
		snprintf(msg, len, "Cannot allocate memory.");
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		if (strcmp(files[i], "-") == 0) {
			snprintf(msg, len, "Keyfile - cannot be read twice: "
			    "give it as a file.");
			goto fail;
		}
		if ((fd = open(files[i], O_RDONLY | O_CLOEXEC)) < 0) {
			snprintf(msg, len, "Cannot open keyfile %s: %s.",
			    files[i], strerror(errno));
			goto fail;
		}
		/* One byte past cap tells files that are too large. */
		while (have <= cap && (got = read(fd, buf + have,
		    cap + 1 - have)) != 0) {
			if (got < 0 && errno == EINTR)
				continue;
			if (got < 0) {
				snprintf(msg, len, "Cannot read keyfile %s: %s.",
				    files[i], strerror(errno));
				goto fail;
			}
			have += (size_t)got;
			if (have > max) {
				snprintf(msg, len, "Keyfiles larger than %zu "
				    "bytes.", max);
				goto fail;
			}
			if (have > cap) {
				snprintf(msg, len, "Keyfile %s grew while it "
				    "was read.", files[i]);
				goto fail;
			}
		}
		close(fd);
		fd = -1;
	}
	*out = buf;
	*outlen = have;
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	geli_secure_free(buf);
	return -1;
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
