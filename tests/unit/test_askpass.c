/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * common/askpass.c with a stand-in systemd-ask-password first in $PATH (a
 * script that writes its arguments to a file and answers as told): the
 * question's arguments, one answer, an empty one, two lines, a cancelled
 * question, an answer too large, and no program at all; the cache read from
 * a key of the test's own in the user's keyring (removed at the end).
 * t_askpass runs the real program with a real agent.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "askpass.h"
#include "files.h"
#include "tap.h"

static char dir[] = "/tmp/test_askpass.XXXXXX";
static char argsfile[300];

/* The stand-in answers with printf's FORMAT and exits with STATUS. */
static void
stand_in(const char *format, int status)
{
	char path[300];
	FILE *f;

	snprintf(path, sizeof(path), "%s/systemd-ask-password", dir);
	f = fopen(path, "w");
	fprintf(f, "#!/bin/sh\nprintf '%%s\\n' \"$@\" >'%s'\nprintf '%s'\n"
	    "exit %d\n", argsfile, format, status);
	fclose(f);
	chmod(path, 0755);
}

static char *
args(void)
{
	static char buf[2000];

	(void)read_file(argsfile, buf, sizeof(buf));
	return buf;
}

int
main(void)
{
	struct askpass a = { .id = "geli:/dev/sdb", .message =
	    "Enter passphrase for /dev/sdb:", .keyname = "geli" };
	char out[64], path[4200], saved[4096];
	int n;

	if (mkdtemp(dir) == NULL)
		return 1;
	snprintf(argsfile, sizeof(argsfile), "%s/args", dir);
	snprintf(saved, sizeof(saved), "%s", getenv("PATH"));
	snprintf(path, sizeof(path), "%s:%s", dir, saved);
	setenv("PATH", path, 1);

	stand_in("secret\\n", 0);
	n = askpass_agent(&a, out, sizeof(out));
	tap_ok(n == 1 && strcmp(out, "secret") == 0, "one answer (%d)", n);
	tap_ok(strcmp(args(), "--no-tty\n--icon=drive-harddisk\n"
	    "--id=geli:/dev/sdb\n--keyname=geli\n"
	    "Enter passphrase for /dev/sdb:\n") == 0,
	    "the agents asked, the provider named, the cache named, nothing "
	    "secret in argv");

	stand_in("one\\ntwo\\n", 0);
	tap_ok(askpass_agent(&a, out, sizeof(out)) == -EPROTO,
	    "two lines are not one answer: -EPROTO");
	a.keyname = NULL;

	stand_in("\\n", 0);
	n = askpass_agent(&a, out, sizeof(out));
	tap_ok(n == 1 && out[0] == '\0' && strstr(args(), "--keyname") == NULL,
	    "an empty passphrase; no cache without a key name");
	stand_in("", 1);
	tap_ok(askpass_agent(&a, out, sizeof(out)) == -ECANCELED,
	    "no answer (the program failed): -ECANCELED");
	stand_in("0123456789012345678901234567890123456789012345678901234567890123456789\\n", 0);
	tap_ok(askpass_agent(&a, out, sizeof(out)) == -EMSGSIZE,
	    "an answer larger than the buffer: -EMSGSIZE");
	setenv("PATH", "/nonexistent", 1);
	tap_ok(askpass_agent(&a, out, sizeof(out)) == -ENOENT,
	    "no systemd-ask-password: -ENOENT");

	setenv("PATH", saved, 1);
	/* The cache, as systemd keeps it: the passphrases separated by NULs. */
	char name[64];
	long id;

	snprintf(name, sizeof(name), "geli-test-askpass-%d", (int)getpid());
	tap_ok(askpass_cached(name, out, sizeof(out)) == 0, "no key: none cached");
	id = syscall(SYS_add_key, "user", name, "one\0two", (size_t)7,
	    -4 /* KEY_SPEC_USER_KEYRING */);
	n = askpass_cached(name, out, sizeof(out));
	tap_ok(id > 0 && n == 2 && memcmp(out, "one\0two\0", 8) == 0,
	    "the cached passphrases, each ended by a NUL (%d)", n);
	tap_ok(askpass_cached(name, out, 4) == -EMSGSIZE,
	    "more than the buffer holds: -EMSGSIZE");
	if (id > 0)
		syscall(SYS_keyctl, 21 /* KEYCTL_INVALIDATE */, id);

	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	if (system(path) != 0)
		return 1;
	return tap_done();
}
