/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Starting programs without a shell (see spawn.h).  Everything the child
 * needs (its argv, its environment) is built before fork: the benchmarks
 * fork while worker threads may hold malloc's locks, and after fork only
 * async-signal-safe calls are allowed.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "spawn.h"

extern char **environ;

/* Our environment with s->env's entries replacing those of the same name. */
static char **
child_env(const char *const *add)
{
	size_t n = 0, k = 0, m = 0;
	char **env;

	while (environ[n] != NULL)
		n++;
	while (add != NULL && add[m] != NULL)
		m++;
	env = calloc(n + m + 1, sizeof(*env));
	if (env == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		bool replaced = false;
		for (size_t j = 0; j < m && !replaced; j++) {
			size_t len = strcspn(add[j], "=");
			replaced = strncmp(environ[i], add[j], len) == 0 &&
			    environ[i][len] == '=';
		}
		if (!replaced)
			env[k++] = environ[i];
	}
	for (size_t j = 0; j < m; j++)
		env[k++] = (char *)add[j];
	return env;
}

pid_t
spawn_start(const struct spawn *s, FILE **out)
{
	int pfd[2] = { -1, -1 }, error;
	char **env;
	pid_t pid;

	env = child_env(s->env);
	if (env == NULL)
		return -ENOMEM;
	if (out != NULL && pipe2(pfd, O_CLOEXEC) != 0) {
		error = -errno;
		free(env);
		return error;
	}
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);

		if (s->stdin_fd > 0)
			dup2(s->stdin_fd, STDIN_FILENO);
		if (s->fd3 > 0)
			dup2(s->fd3, 3);
		if (out != NULL)
			dup2(pfd[1], STDOUT_FILENO);
		else if (s->flags & SPAWN_NO_STDOUT)
			dup2(null, STDOUT_FILENO);
		if (s->flags & SPAWN_NO_STDERR)
			dup2(null, STDERR_FILENO);
		if (s->cwd != NULL && chdir(s->cwd) != 0)
			_exit(127);
		execvpe(s->argv[0], (char *const *)s->argv, env);
		_exit(127);	/* as the shell says "not found" */
	}
	error = pid < 0 ? -errno : 0;
	free(env);
	if (out != NULL) {
		close(pfd[1]);
		*out = error == 0 ? fdopen(pfd[0], "r") : NULL;
		if (error == 0 && *out == NULL) {
			error = -errno;
			close(pfd[0]);
			(void)spawn_wait(pid);
		} else if (error != 0) {
			close(pfd[0]);
		}
	}
	return error != 0 ? error : pid;
}

int
spawn_wait(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int
spawn_run(const struct spawn *s)
{
	pid_t pid = spawn_start(s, NULL);

	return pid < 0 ? 127 : spawn_wait(pid);
}

int
run_cmd(int flags, const char *cwd, const char *const *env, const char *prog, ...)
{
	const char *argv[64];
	struct spawn s = { .argv = argv, .env = env, .cwd = cwd,
	    .flags = flags };
	va_list ap;
	int n = 0;

	argv[n++] = prog;
	va_start(ap, prog);
	while (n < 63 && (argv[n] = va_arg(ap, const char *)) != NULL)
		n++;
	va_end(ap);
	argv[n] = NULL;
	return spawn_run(&s);
}

const char *
self_exe(void)
{
	static char path[PATH_MAX];
	const char *fn = (const char *)getauxval(AT_EXECFN);

	/* The file execve(2) was given, made absolute (geli bench keeps
	 * its directory); valgrind gives its client's. */
	if (path[0] == '\0' && (fn == NULL || realpath(fn, path) == NULL))
		return "/proc/self/exe";
	return path;
}

bool
have_program(const char *name)
{
	const char *path = getenv("PATH");
	char file[4096];

	if (strchr(name, '/') != NULL)
		return access(name, X_OK) == 0;
	for (const char *p = path != NULL ? path : "/usr/bin:/bin"; ; p++) {
		size_t len = strcspn(p, ":");

		snprintf(file, sizeof(file), "%.*s/%s", (int)len, len ? p : ".", name);
		if (access(file, X_OK) == 0)
			return true;
		p += len;
		if (*p == '\0')
			return false;
	}
}
