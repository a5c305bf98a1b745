/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * geli serve: the decrypted provider as an NBD export, by nbdkit with
 * nbdkit-geli-filter.so over its file plugin.  geli reads the passphrase
 * (when the volume has one) and hands it over through a pipe
 * (password=-FD): never in argv or the environment.  geli stays nbdkit's
 * parent: it holds the provider as attach does (an exclusive lock when
 * read-write), passes SIGTERM, SIGINT and SIGHUP on, and removes the socket
 * when nbdkit has stopped.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "spawn.h"
#include "cli.h"

/* nbdkit and its options, the filter's, and a keyfile= for each -k. */
#define GELI_SERVE_MAXARGS (24 + OPT_MULTI_MAX)

#ifndef GELI_NBDKIT_FILTER
#define GELI_NBDKIT_FILTER "nbdkit-geli-filter.so"
#endif

static volatile pid_t server;

static void
pass_on(int sig)
{
	if (server > 0)
		kill(server, sig);
}

/* $GELI_NBDKIT_FILTER (a build tree's filter), else the installed one. */
static const char *
filter_path(void)
{
	const char *f = getenv("GELI_NBDKIT_FILTER");

	return f != NULL && f[0] != '\0' ? f : GELI_NBDKIT_FILTER;
}

/* nbdkit's command line: words given as they are, and "key=value" words
 * made here (freed with it). */
struct cmdline {
	const char *argv[GELI_SERVE_MAXARGS];
	char *own[GELI_SERVE_MAXARGS];
	int n, nown;
};

static void
word(struct cmdline *c, const char *w)
{
	c->argv[c->n++] = w;
}

static int
param(struct cmdline *c, const char *key, const char *value)
{
	char *w;

	if (asprintf(&w, "%s=%s", key, value) < 0) {
		req_error("Cannot allocate memory.");
		return -1;
	}
	c->own[c->nown++] = w;
	word(c, w);
	return 0;
}

/* The passphrase into a pipe whose reading end nbdkit inherits: its fd. */
static int
pass_pipe(const char *const *passfiles, int npassfiles)
{
	char *pass = read_passphrase(passfiles, npassfiles);
	int pfd[2], error = 0;
	size_t len;

	if (pass == NULL)
		return -1;
	/* The reading end without O_CLOEXEC: nbdkit reads it. */
	if (pipe(pfd) != 0) {
		req_error("Cannot create pipe: %s.", strerror(errno));
		geli_secure_free(pass);
		return -1;
	}
	(void)fcntl(pfd[1], F_SETFD, FD_CLOEXEC);
	len = strlen(pass);
	pass[len] = '\n';	/* nbdkit reads one line */
	/* A passphrase is far shorter than a pipe's buffer: no blocking. */
	if (write(pfd[1], pass, len + 1) != (ssize_t)(len + 1))
		error = errno != 0 ? errno : EIO;
	geli_secure_free(pass);
	close(pfd[1]);
	if (error != 0) {
		req_error("Cannot write to pipe: %s.", strerror(error));
		close(pfd[0]);
		return -1;
	}
	return pfd[0];
}

void
cmd_serve(struct opts *o, int argc, char **argv)
{
	const char *const *passfiles, *const *keyfiles;
	const char *sock = opt_str(o, 'U'), *addr = opt_str(o, 'i');
	intmax_t port = opt_num(o, 'p'), keyno = opt_num(o, 'n');
	int npassfiles = opt_multi(o, 'j', &passfiles);
	int nkeyfiles = opt_multi(o, 'k', &keyfiles);
	bool ro = opt_bool(o, 'r');
	struct geli_provider *lock = NULL;
	struct geli_metadata md;
	struct mdsrc src;
	struct cmdline cmd = { .n = 0 };
	char path[4096], buf[4096], num[32], portstr[8];
	int pfd = -1, status, error;
	uint32_t psize;
	pid_t pid;

	if (argc != 1) {
		req_error("Invalid number of arguments.");
		return;
	}
	if (sock[0] != '\0' && o->given['p']) {
		req_error("Options -U and -p are mutually exclusive.");
		return;
	}
	if (o->given['p'] && (port < 1 || port > 65535)) {
		req_error("Invalid port %jd.", port);
		return;
	}
	if (keyno < -1 || keyno >= GELI_MAXMKEYS) {
		req_error("Invalid '%s' argument.", "keyno");
		return;
	}
	if (mdsrc_open_provider(&src, argv[0], false, &md) != 0)
		return;
	psize = geli_provider_sectorsize(src.prov);
	mdsrc_close(&src);
	if (md.iterations == -1 && nkeyfiles == 0) {
		req_error("No key components given.");
		goto out;
	}
	if (realpath(prov_path(argv[0], buf, sizeof(buf)), path) == NULL) {
		req_error("Cannot open %s: %s.", argv[0], strerror(errno));
		return;
	}
	/* Served read-write, the provider is held as attach holds it. */
	if (!ro) {
		error = geli_provider_open_exclusive(path, &lock);
		if (error != 0) {
			req_error("Cannot open %s: %s.", argv[0],
			    strerror(-error));
			return;
		}
		/* nbdkit keeps the lock too, should geli go first. */
		(void)fcntl(geli_provider_fd(lock), F_SETFD, 0);
	}

	word(&cmd, "nbdkit");
	word(&cmd, "-f");
	word(&cmd, "--exit-with-parent");
	if (ro)
		word(&cmd, "-r");
	if (sock[0] != '\0') {
		word(&cmd, "-U");
		word(&cmd, sock);
	}
	if (o->given['p']) {
		snprintf(portstr, sizeof(portstr), "%jd", port);
		word(&cmd, "-p");
		word(&cmd, portstr);
	}
	if (addr[0] != '\0') {
		word(&cmd, "-i");
		word(&cmd, addr);
	}
	if (param(&cmd, "--filter", filter_path()) != 0)
		goto out;
	word(&cmd, "file");
	/* The sector size geli takes (a stacked .eli says its own). */
	snprintf(num, sizeof(num), "%u", psize);
	if (param(&cmd, "file", path) != 0 || param(&cmd, "psize", num) != 0)
		goto out;
	if (keyno >= 0) {
		snprintf(num, sizeof(num), "%jd", keyno);
		if (param(&cmd, "keyno", num) != 0)
			goto out;
	}
	for (int i = 0; i < nkeyfiles; i++) {
		/* "-": the keyfile is geli's stdin, which nbdkit inherits. */
		if (param(&cmd, "keyfile", strcmp(keyfiles[i], "-") == 0 ?
		    "/dev/stdin" : keyfiles[i]) != 0)
			goto out;
	}
	if (md.iterations != -1) {
		pfd = pass_pipe(passfiles, npassfiles);
		if (pfd < 0)
			goto out;
		snprintf(num, sizeof(num), "-%d", pfd);
		if (param(&cmd, "password", num) != 0)
			goto out;
	}
	cmd.argv[cmd.n] = NULL;

	struct spawn s = { .argv = cmd.argv };
	struct sigaction sa;

	pid = spawn_start(&s, NULL);
	if (pid < 0) {
		req_error("Cannot start nbdkit: %s.", strerror((int)-pid));
		goto out;
	}
	server = pid;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = pass_on;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	status = spawn_wait(pid);
	server = 0;
	if (status == 127)
		req_error("Cannot start nbdkit (is it installed?).");
	else if (status != 0)
		req_error("nbdkit stopped with %s %d.", status < 0 ?
		    "a signal, status" : "status", status);
	/* nbdkit leaves its socket behind. */
	{
		struct stat st;

		if (sock[0] != '\0' && lstat(sock, &st) == 0 &&
		    S_ISSOCK(st.st_mode))
			(void)unlink(sock);
	}
out:
	if (pfd >= 0)
		close(pfd);
	for (int i = 0; i < cmd.nown; i++)
		free(cmd.own[i]);
	geli_provider_close(lock);
	geli_wipe(&md, sizeof(md));
}
