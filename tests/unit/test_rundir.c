/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * common/rundir.c: the run directory's place and entries, the names of the
 * daemons that answer (fake daemons here, speaking ctl.h), stale files,
 * the attach lock, and a daemon's identity and end.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ctl.h"
#include "files.h"
#include "rundir.h"
#include "tap.h"

static char dir[] = "/tmp/test_rundir.XXXXXX";

/* A daemon that answers status requests on name's socket until killed. */
static pid_t
fake_daemon(const char *name)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, ready[2];
	char c;
	pid_t pid;

	if (pipe(ready) != 0)
		return -1;
	rundir_entry(NULL, name, RUNDIR_CTL, sa.sun_path, sizeof(sa.sun_path));
	pid = fork();
	if (pid != 0) {
		close(ready[1]);
		if (read(ready[0], &c, 1) != 1)
			pid = -1;
		close(ready[0]);
		return pid;
	}
	/* Never outlives the test. */
	(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
	fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    listen(fd, 8) != 0)
		_exit(1);
	if (write(ready[1], "r", 1) != 1)
		_exit(1);
	for (;;) {
		static uint8_t msg[CTL_MAX];
		static struct ctl_request rq;
		static struct ctl_reply rp;
		int c2 = accept(fd, NULL, NULL);
		ssize_t n;

		if (c2 < 0)
			continue;
		n = recv(c2, msg, sizeof(msg), 0);
		memset(&rp, 0, sizeof(rp));
		if (n > 0 && ctl_request_decode(msg, (size_t)n, &rq) == 0) {
			rp.has_status = true;
			snprintf(rp.status.name, sizeof(rp.status.name), "%s", name);
		}
		n = ctl_reply_encode(&rp, msg, sizeof(msg));
		if (n > 0)
			(void)send(c2, msg, (size_t)n, MSG_NOSIGNAL);
		close(c2);
	}
}

static void
touch(const char *name, enum rundir_entry e)
{
	char path[4200];

	rundir_entry(NULL, name, e, path, sizeof(path));
	close(open(path, O_CREAT | O_WRONLY, 0600));
}

static bool
exists(const char *name, enum rundir_entry e)
{
	char path[4200];

	rundir_entry(NULL, name, e, path, sizeof(path));
	return access(path, F_OK) == 0;
}

static void
write_pid(const char *name, const char *text)
{
	char path[4200];

	rundir_entry(NULL, name, RUNDIR_PID, path, sizeof(path));
	write_file(path, text);
}

/*
 * A server and its keeper (src/attach/keeper.h): a session leader whose
 * child serves and writes the pid file; the keeper outlives its end until
 * told.  daemon_wait_gone returns once both are gone: a waiter that
 * returned while the keeper ran would say so.
 */
static void
keeper_wait(void)
{
	int spid[2], hold[2], said[2];
	pid_t k, w, s = 0;
	char c = '?', line[32], line2[4200];
	struct daemon_ref d;
	struct pollfd pf;

	if (pipe(spid) != 0 || pipe(hold) != 0 || pipe(said) != 0)
		return;
	k = fork();
	if (k == 0) {
		close(hold[1]);
		close(said[0]);
		close(said[1]);
		setsid();
		s = fork();
		if (s == 0) {
			pause();
			_exit(0);
		}
		if (write(spid[1], &s, sizeof(s)) != sizeof(s))
			_exit(1);
		waitpid(s, NULL, 0);
		/* until told: EOF */
		_exit(read(hold[0], &c, 1) == 0 ? 0 : 1);
	}
	close(hold[0]);
	if (read(spid[0], &s, sizeof(s)) != sizeof(s))
		return;
	snprintf(line, sizeof(line), "%d\n", (int)s);
	write_pid("srv", line);
	d = daemon_ref(NULL, "srv");
	tap_ok(d.pid == s && d.keeper == k && d.keeper_start > 0,
	    "daemon_ref: the server and its keeper, the session leader that "
	    "is its parent (%d %d)", (int)d.keeper, (int)k);
	/* (its orderly end removes it) */
	rundir_entry(NULL, "srv", RUNDIR_PID, line2, sizeof(line2));
	unlink(line2);
	w = fork();
	if (w == 0) {
		struct daemon_ref kr = { d.keeper, d.keeper_start, 0, 0 };

		close(hold[1]);
		daemon_wait_gone(d, "srv");
		c = daemon_running(kr) ? 'K' : 'k';
		_exit(write(said[1], &c, 1) == 1 ? 0 : 1);
	}
	close(said[1]);
	kill(s, SIGKILL);
	/* (the server reaped, the keeper waits; a waiter that returned now
	 * would say so, seen most of the time within 200 ms) */
	pf = (struct pollfd){ said[0], POLLIN, 0 };
	while (kill(s, 0) == 0)
		usleep(1000);
	tap_ok(poll(&pf, 1, 200) == 0, "daemon_wait_gone: not while the "
	    "server's keeper runs");
	close(hold[1]);
	if (read(said[0], &c, 1) != 1)
		c = '?';
	tap_ok(c == 'k', "... and returns once it is gone (%c)", c);
	waitpid(w, NULL, 0);
	waitpid(k, NULL, 0);
	close(spid[0]);
	close(spid[1]);
	close(said[0]);
}

int
main(void)
{
	char path[4200], pid[32], **names, sub[4200];
	struct daemon_ref d;
	pid_t a, b, child;
	int n, fd, st;

	if (mkdtemp(dir) == NULL) {
		tap_ok(0, "mkdtemp: %s", strerror(errno));
		return tap_done();
	}
	signal(SIGPIPE, SIG_IGN);

	/* Where: $GELI_RUNDIR, else root's /run/geli (or the user's). */
	setenv("GELI_RUNDIR", "", 1);
	if (geteuid() == 0)
		tap_ok(strcmp(rundir(), "/run/geli") == 0, "root: /run/geli");
	else
		tap_ok(rundir()[0] == '/', "a user: %s", rundir());
	snprintf(sub, sizeof(sub), "%s/run/a", dir);
	setenv("GELI_RUNDIR", sub, 1);
	tap_ok(strcmp(rundir(), sub) == 0, "$GELI_RUNDIR: %s", rundir());
	tap_ok(rundir_private() == -ENOENT || geteuid() == 0,
	    "not there yet: -ENOENT (for users)");
	tap_ok(rundir_make() == 0 && access(sub, F_OK) == 0,
	    "rundir_make makes it, parents too");
	tap_ok(rundir_private() == 0, "and it is private");

	/* Its entries. */
	tap_ok(rundir_entry(NULL, "sdb", RUNDIR_ELI, path, sizeof(path)) == 0 &&
	    strcmp(path + strlen(sub), "/sdb.eli") == 0, "NAME.eli: %s", path);
	rundir_entry(NULL, "sdb", RUNDIR_CTL, path, sizeof(path));
	tap_ok(strcmp(path + strlen(sub), "/sdb.ctl") == 0, "NAME.ctl");
	rundir_entry(NULL, "sdb", RUNDIR_PID, path, sizeof(path));
	tap_ok(strcmp(path + strlen(sub), "/sdb.pid") == 0, "NAME.pid");
	rundir_entry(NULL, "sdb", RUNDIR_LOG, path, sizeof(path));
	tap_ok(strcmp(path + strlen(sub), "/sdb.log") == 0, "NAME.log");
	tap_ok(rundir_entry("/other", "x", RUNDIR_ELI, path, sizeof(path)) == 0 &&
	    strcmp(path, "/other/x.eli") == 0, "in another directory: %s",
	    path);
	tap_ok(rundir_entry(NULL, "sdb", RUNDIR_ELI, path, 10) == -ENAMETOOLONG,
	    "too long for the buffer: -ENAMETOOLONG");

	/* The names of the daemons that answer, sorted; stale files not. */
	tap_ok(rundir_names(&names) == 0, "nothing attached: no names");
	rundir_names_free(names, 0);
	b = fake_daemon("vtbd1");
	a = fake_daemon("ada0p2");
	touch("gone", RUNDIR_CTL);
	touch("gone", RUNDIR_ELI);
	touch("ada0p2", RUNDIR_ELI);
	tap_ok(a > 0 && b > 0, "two fake daemons");
	n = rundir_names(&names);
	tap_ok(n == 2 && strcmp(names[0], "ada0p2") == 0 &&
	    strcmp(names[1], "vtbd1") == 0, "their names, sorted, not the "
	    "stale one (%d)", n);
	rundir_names_free(names, n);

	/* Stale files go; an answering daemon's stay. */
	rundir_clean_stale("gone");
	tap_ok(!exists("gone", RUNDIR_CTL) && !exists("gone", RUNDIR_ELI),
	    "a dead daemon's .ctl and .eli are removed");
	rundir_clean_stale("ada0p2");
	tap_ok(exists("ada0p2", RUNDIR_CTL) && exists("ada0p2", RUNDIR_ELI),
	    "a live one's stay");

	/* A daemon's identity, against PID reuse, and its end. */
	snprintf(pid, sizeof(pid), "%d\n", (int)a);
	write_pid("ada0p2", pid);
	d = daemon_ref(NULL, "ada0p2");
	tap_ok(d.pid == a && d.start > 0 && daemon_running(d),
	    "daemon_ref from the pid file: running");
	d.start++;
	tap_ok(!daemon_running(d), "another start time: another process");
	d = daemon_ref(dir, "ada0p2");
	tap_ok(d.pid == 0, "no pid file in that directory: none");
	write_pid("vtbd1", "garbage\n");
	tap_ok(daemon_ref(NULL, "vtbd1").pid == 0, "a pid file of garbage: none");
	kill(a, SIGKILL);
	d = daemon_ref(NULL, "ada0p2");
	/* Not reaped: a zombie has ended all the same. */
	daemon_wait_gone(d, "ada0p2");
	tap_ok(!daemon_running(d), "daemon_wait_gone returns once it died "
	    "(a zombie, not reaped)");
	waitpid(a, NULL, 0);
	tap_ok(daemon_ref(NULL, "ada0p2").pid == 0, "reaped: no daemon");
	kill(b, SIGKILL);
	waitpid(b, NULL, 0);
	/* Without a PID: until the socket is gone. */
	rundir_entry(NULL, "vtbd1", RUNDIR_CTL, path, sizeof(path));
	child = fork();
	if (child == 0) {
		usleep(200000);
		unlink(path);
		_exit(0);
	}
	d = (struct daemon_ref){ 0, 0, 0, 0 };
	daemon_wait_gone(d, "vtbd1");
	tap_ok(access(path, F_OK) != 0, "without a PID: until the socket "
	    "is gone");
	waitpid(child, NULL, 0);

	keeper_wait();

	/* The attach lock: one holder at a time. */
	fd = rundir_lock();
	tap_ok(fd >= 0, "rundir_lock");
	child = fork();
	if (child == 0) {
		struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
		char lp[4200];
		int lfd;

		snprintf(lp, sizeof(lp), "%s/.attach.lock", rundir());
		lfd = open(lp, O_RDWR);
		_exit(lfd >= 0 && fcntl(lfd, F_SETLK, &fl) != 0 &&
		    (errno == EAGAIN || errno == EACCES) ? 0 : 1);
	}
	waitpid(child, &st, 0);
	tap_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	    "another process cannot take it while held");
	rundir_unlock(fd);
	child = fork();
	if (child == 0)
		_exit(rundir_lock() >= 0 ? 0 : 1);
	waitpid(child, &st, 0);
	tap_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "and can once it is let go");
	rundir_unlock(-1);	/* no turns taken: nothing to do */

	remove_tree(dir);
	return tap_done();
}
