/* SPDX-License-Identifier: BSD-2-Clause */
/* A secret typed at the controlling terminal, echo off (see tty.h). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "tty.h"

int
tty_read_secret(const char *prompt, char *out, size_t outlen)
{
	struct termios old, noecho;
	size_t n = 0;
	char c;
	ssize_t r;
	int fd, error = 0;

	fd = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (tcgetattr(fd, &old) != 0) {
		error = -errno;
		close(fd);
		return error;
	}
	noecho = old;
	noecho.c_lflag &= ~(tcflag_t)(ECHO | ECHONL);
	/* A passphrase is never read with echo on. */
	if (tcsetattr(fd, TCSAFLUSH, &noecho) != 0) {
		error = -errno;
		close(fd);
		return error;
	}
	if (write(fd, prompt, strlen(prompt)) < 0)
		error = -errno;
	while (error == 0 && (r = read(fd, &c, 1)) == 1 && c != '\n' &&
	    c != '\r') {
		if (n + 1 < outlen)
			out[n++] = c;
	}
	out[n] = '\0';
	c = 0;
	/* The passphrase is read; if echo cannot come back, the terminal
	 * stays quiet (stty echo), which is no reason to fail the command. */
	(void)tcsetattr(fd, TCSAFLUSH, &old);
	if (write(fd, "\n", 1) < 0)
		error = error != 0 ? error : -errno;
	close(fd);
	return error;
}
