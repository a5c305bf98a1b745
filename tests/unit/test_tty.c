/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tty_read_secret (common/tty.c) on a real pseudo-terminal: the prompt is
 * shown, the line typed is read without its newline and never echoed, the
 * terminal's echo is back afterwards, a long line is cut to the buffer,
 * and without a controlling terminal it fails.
 */
#include <errno.h>
#include <poll.h>
#include <pty.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "tap.h"
#include "tty.h"

/* Everything the child wrote to the terminal until it ends. */
static size_t
drain(int master, char *buf, size_t len)
{
	size_t n = 0;
	ssize_t r;
	struct pollfd p = { .fd = master, .events = POLLIN };

	while (n + 1 < len && poll(&p, 1, 5000) > 0 &&
	    (r = read(master, buf + n, len - 1 - n)) > 0)
		n += (size_t)r;
	buf[n] = '\0';
	return n;
}

/*
 * The child reads a secret of outlen bytes at most from its terminal (the
 * pty), then prints "<rc>:<secret>:<echo back>" to it.  typed is what the
 * test types once the prompt shows.
 */
static void
one(const char *typed, size_t outlen, char *shown, size_t shownlen)
{
	int master;
	pid_t pid = forkpty(&master, NULL, NULL, NULL);

	if (pid == 0) {
		char secret[256];
		struct termios t;
		int rc = tty_read_secret("Secret: ", secret, outlen);

		tcgetattr(STDIN_FILENO, &t);
		printf("[%d:%s:%d]\n", rc, rc == 0 ? secret : "",
		    (t.c_lflag & ECHO) != 0);
		fflush(stdout);
		_exit(0);
	}
	if (pid < 0) {
		snprintf(shown, shownlen, "forkpty: %s", strerror(errno));
		return;
	}
	/* Type once the prompt is there (echo is off by then). */
	char prompt[64];
	size_t n = 0;
	struct pollfd p = { .fd = master, .events = POLLIN };
	ssize_t r;

	while (n < 8 && poll(&p, 1, 5000) > 0 &&
	    (r = read(master, prompt + n, sizeof(prompt) - 1 - n)) > 0)
		n += (size_t)r;
	prompt[n] = '\0';
	if (write(master, typed, strlen(typed)) < 0)
		perror("write");
	n = strlen(prompt);
	memcpy(shown, prompt, n < shownlen ? n : shownlen - 1);
	drain(master, shown + n, shownlen - n);
	waitpid(pid, NULL, 0);
	/* One line for TAP's messages. */
	for (char *c = shown; *c != '\0'; c++)
		if (*c == '\r' || *c == '\n')
			*c = '|';
	close(master);
}

int
main(void)
{
	char shown[1024], secret[16];
	int rc;

	one("hunter2\n", 256, shown, sizeof(shown));
	tap_ok(strncmp(shown, "Secret: ", 8) == 0, "the prompt is shown (%.20s)",
	    shown);
	tap_ok(strstr(shown, "[0:hunter2:1]") != NULL,
	    "the line is read without its newline, echo is back after (%s)",
	    shown);
	tap_ok(strstr(shown, "hunter2||") == NULL &&
	    strncmp(shown + 8, "hunter2", 7) != 0, "the secret is not echoed");

	one("0123456789abcdef\r", 8, shown, sizeof(shown));
	tap_ok(strstr(shown, "[0:0123456:1]") != NULL,
	    "a line longer than the buffer is cut, CR ends it (%s)", shown);

	/* No controlling terminal: a new session without one. */
	pid_t pid = fork();

	if (pid == 0) {
		setsid();
		_exit(tty_read_secret("x", secret, sizeof(secret)) < 0 ? 0 : 1);
	}
	waitpid(pid, &rc, 0);
	tap_ok(WIFEXITED(rc) && WEXITSTATUS(rc) == 0,
	    "without a controlling terminal it fails");
	return tap_done();
}
