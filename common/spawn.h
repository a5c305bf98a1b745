/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Starting programs without a shell (geli bench, geli serve): fork, execvp
 * and waitpid, so that no path or option is ever parsed as shell syntax.
 */
#ifndef GELI_COMMON_SPAWN_H
#define GELI_COMMON_SPAWN_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#define SPAWN_NO_STDOUT	0x1	/* the child's stdout to /dev/null */
#define SPAWN_NO_STDERR	0x2	/* the child's stderr to /dev/null */
#define SPAWN_QUIET	(SPAWN_NO_STDOUT | SPAWN_NO_STDERR)

struct spawn {
	const char *const *argv;	/* argv[0] looked up in $PATH */
	const char *const *env;		/* "NAME=value" over ours; NULL-terminated, or NULL */
	const char *cwd;		/* the child's directory; NULL: ours */
	int flags;			/* SPAWN_* */
	int stdin_fd;			/* > 0: the child's standard input */
	int fd3;			/* > 0: the child's descriptor 3 (a
					 * secret's pipe, read as /dev/fd/3) */
};

/*
 * Start s.  With out != NULL the child's stdout is a pipe, *out its reading
 * end (fclose it before spawn_wait).  The child's PID, or -errno.
 */
pid_t spawn_start(const struct spawn *s, FILE **out);
/* The exit status of pid, or -1 when a signal ended it (as a shell reads it). */
int spawn_wait(pid_t pid);
/* spawn_start and spawn_wait: the exit status, -1, or 127 if it cannot start. */
int spawn_run(const struct spawn *s);
/* The same with argv given inline, NULL after the last. */
int run_cmd(int flags, const char *cwd, const char *const *env, const char *prog, ...)
    __attribute__((sentinel));

/* This program's own path, to run it again: the file it was started from
 * (AT_EXECFN, absolute), which under valgrind is the program and not
 * valgrind as /proc/self/exe is; "/proc/self/exe" if that fails. */
const char *self_exe(void);
/* True when name is an executable in $PATH (as `command -v`). */
bool have_program(const char *name);

#endif
