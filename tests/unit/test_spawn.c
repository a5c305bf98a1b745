/* SPDX-License-Identifier: BSD-2-Clause */
/* common/spawn.c: programs started without a shell. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spawn.h"
#include "tap.h"

/* The first line argv prints, into line; the exit status. */
static int
first_line(const char *const *argv, const char *const *env, const char *cwd,
    char *line, size_t len)
{
	struct spawn s = { .argv = argv, .env = env, .cwd = cwd };
	FILE *f;
	pid_t pid;

	line[0] = '\0';
	pid = spawn_start(&s, &f);
	if (pid < 0)
		return (int)pid;
	if (fgets(line, (int)len, f) != NULL)
		line[strcspn(line, "\n")] = '\0';
	fclose(f);
	return spawn_wait(pid);
}

int
main(void)
{
	const char *echo[] = { "echo", "a;b", "$HOME", "'q'", NULL };
	const char *env_argv[] = { "sh", "-c", "echo \"$GELI_X/$PATH_TEST\"", NULL };
	const char *const env[] = { "GELI_X=replaced", "PATH_TEST=added", NULL };
	const char *pwd[] = { "pwd", NULL };
	const char *missing[] = { "geli-no-such-program", NULL };
	char line[256], cwd[] = "/tmp/test_spawn.XXXXXX", real[PATH_MAX];
	int status;

	/* Arguments reach the program as they are: no shell syntax. */
	status = first_line(echo, NULL, NULL, line, sizeof(line));
	tap_ok(status == 0 && strcmp(line, "a;b $HOME 'q'") == 0,
	    "argv as given, no shell (%s)", line);

	/* The environment: ours, with the given entries over it. */
	setenv("GELI_X", "ours", 1);
	status = first_line(env_argv, env, NULL, line, sizeof(line));
	tap_ok(status == 0 && strcmp(line, "replaced/added") == 0,
	    "env entries replace and add (%s)", line);
	status = first_line(env_argv, NULL, NULL, line, sizeof(line));
	tap_ok(strcmp(line, "ours/") == 0, "without env: ours (%s)", line);

	/* The directory. */
	if (mkdtemp(cwd) == NULL || realpath(cwd, real) == NULL) {
		tap_ok(0, "mkdtemp");
		return tap_done();
	}
	status = first_line(pwd, NULL, cwd, line, sizeof(line));
	tap_ok(status == 0 && strcmp(line, real) == 0, "cwd: %s", line);
	rmdir(cwd);

	/* Exit statuses as a shell reads them. */
	tap_ok(run_cmd(0, NULL, NULL, "sh", "-c", "exit 3", NULL) == 3,
	    "exit 3 is 3");
	tap_ok(run_cmd(0, NULL, NULL, "sh", "-c", "kill -9 $$", NULL) == -1,
	    "a signal is -1");
	tap_ok(run_cmd(SPAWN_QUIET, NULL, NULL, "true", NULL) == 0,
	    "true is 0");
	{
		struct spawn s = { .argv = missing, .flags = SPAWN_QUIET };
		tap_ok(spawn_run(&s) == 127, "a program that is not there: 127");
	}
	tap_ok(run_cmd(0, "/no/such/dir", NULL, "true", NULL) == 127,
	    "a directory that is not there: 127");

	/* Secrets through pipes: stdin and descriptor 3 (/dev/fd/3). */
	{
		const char *cat[] = { "sh", "-c", "read a; read b </dev/fd/3; "
		    "echo \"$a+$b\"", NULL };
		int in[2], three[2];
		struct spawn s = { .argv = cat };
		FILE *f;
		pid_t pid;

		if (pipe(in) != 0 || pipe(three) != 0 ||
		    write(in[1], "one\n", 4) != 4 ||
		    write(three[1], "two\n", 4) != 4) {
			tap_ok(0, "pipes");
			return tap_done();
		}
		close(in[1]);
		close(three[1]);
		s.stdin_fd = in[0];
		s.fd3 = three[0];
		pid = spawn_start(&s, &f);
		line[0] = '\0';
		if (pid > 0 && fgets(line, sizeof(line), f) != NULL)
			line[strcspn(line, "\n")] = '\0';
		if (pid > 0) {
			fclose(f);
			status = spawn_wait(pid);
		}
		close(in[0]);
		close(three[0]);
		tap_ok(pid > 0 && status == 0 && strcmp(line, "one+two") == 0,
		    "stdin_fd and fd3 reach the child (%s)", line);
	}

	/* Programs in $PATH. */
	tap_ok(have_program("sh"), "sh is in $PATH");
	tap_ok(have_program("/bin/sh"), "/bin/sh by its path");
	tap_ok(!have_program("geli-no-such-program"),
	    "a missing program is not");

	/* Ourselves, to run again. */
	tap_ok(self_exe()[0] == '/' &&
	    strstr(self_exe(), "test_spawn") != NULL, "self_exe: %s",
	    self_exe());
	return tap_done();
}
