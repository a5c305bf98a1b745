/* SPDX-License-Identifier: BSD-2-Clause */
/* A passphrase asked through systemd's password agents (see askpass.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "askpass.h"
#include "spawn.h"

#define ASK_PROGRAM "systemd-ask-password"

int
askpass_agent(const struct askpass *a, char *out, size_t outlen)
{
	char id[1100], key[300];
	const char *argv[10];
	size_t n = 0, argc = 0;
	ssize_t r;
	FILE *f;
	pid_t pid;
	int status;

	if (!have_program(ASK_PROGRAM))
		return -ENOENT;
	snprintf(id, sizeof(id), "--id=%s", a->id);
	argv[argc++] = ASK_PROGRAM;
	argv[argc++] = "--no-tty";	/* the agents, even with a terminal */
	argv[argc++] = "--icon=drive-harddisk";
	argv[argc++] = id;
	if (a->keyname != NULL) {
		snprintf(key, sizeof(key), "--keyname=%s", a->keyname);
		argv[argc++] = key;
	}
	argv[argc++] = a->message;
	argv[argc] = NULL;
	pid = spawn_start(&(struct spawn){ .argv = argv }, &f);
	if (pid < 0)
		return (int)pid;
	/* Straight from the pipe into out: no stdio buffer holds it. */
	while (n < outlen && (r = read(fileno(f), out + n, outlen - n)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		n += (size_t)r;
	}
	if (n == outlen) {
		char c;
		while (read(fileno(f), &c, 1) == 1)
			;
	}
	fclose(f);
	status = spawn_wait(pid);
	if (status != 0)
		return -ECANCELED;
	if (n == outlen)
		return -EMSGSIZE;
	/* One line: the newline, if any, becomes its end. */
	if (n > 0 && out[n - 1] == '\n')
		n--;
	if (memchr(out, '\n', n) != NULL)
		return -EPROTO;
	out[n] = '\0';
	return 1;
}

/* keyctl(2) by its number: no libkeyutils needed. */
#define KEYCTL_SEARCH	10
#define KEYCTL_READ	11
#define KEY_SPEC_USER_KEYRING	-4

int
askpass_cached(const char *keyname, char *out, size_t outlen)
{
	long id, n;
	int count = 0;

	id = syscall(SYS_keyctl, KEYCTL_SEARCH, KEY_SPEC_USER_KEYRING, "user",
	    keyname, 0);
	if (id < 0)
		return 0;
	n = syscall(SYS_keyctl, KEYCTL_READ, id, out, outlen);
	if (n < 0)
		return 0;
	/* Room for the last one's NUL, which systemd does not keep. */
	if ((size_t)n >= outlen)
		return -EMSGSIZE;
	if (n == 0)
		return 0;
	for (long i = 0; i < n; i++)
		count += out[i] == '\0';
	if (out[n - 1] != '\0') {
		out[n] = '\0';
		count++;
	}
	return count;
}
