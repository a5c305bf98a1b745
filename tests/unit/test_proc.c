/* SPDX-License-Identifier: BSD-2-Clause */
/* common/proc.c: /proc/PID/stat parsed once; files held open. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc.h"
#include "tap.h"

/* Until pid is in state c (60 s, a hang's bound: a loaded machine
 * schedules the child late, never not at all). */
static void
until_state(pid_t pid, char c)
{
	struct proc_stat st;

	for (int i = 0; i < 60000; i++) {
		if (proc_stat_read(pid, &st) && st.state == c)
			return;
		usleep(1000);
	}
}

int
main(void)
{
	struct proc_stat st;
	/* Fields 1..22 of proc(5); the name may hold spaces and ")". */
	const char *line = "4242 (geli (x) y) S 1 4242 4242 0 -1 4194560 "
	    "100 0 0 0 17 23 0 0 20 0 3 0 987654 1000000 200 "
	    "18446744073709551615\n";
	pid_t pid;

	memset(&st, 0, sizeof(st));
	tap_ok(proc_stat_parse(line, &st), "a stat line parses");
	tap_ok(st.state == 'S', "state S (%c)", st.state);
	tap_ok(st.ppid == 1 && st.sid == 4242, "parent 1, session 4242 "
	    "(%d, %d)", st.ppid, st.sid);
	tap_ok(st.utime == 17 && st.stime == 23, "utime 17, stime 23 "
	    "(%llu, %llu)", st.utime, st.stime);
	tap_ok(st.start == 987654, "start time 987654 (%llu)", st.start);
	tap_ok(!proc_stat_parse("4242 (geli) S 1 2", &st),
	    "a short line does not parse");
	tap_ok(!proc_stat_parse("no parenthesis at all", &st),
	    "a line without the name does not parse");
	tap_ok(!proc_stat_parse("", &st), "an empty line does not parse");

	tap_ok(proc_stat_read(getpid(), &st) && st.state == 'R' && st.start > 0,
	    "this process: running, with a start time (%c, %llu)", st.state,
	    st.start);
	tap_ok(proc_cpu_seconds(&st) >= 0, "its CPU seconds");

	/* A child: sleeping, then a zombie, then gone. */
	pid = fork();
	if (pid == 0) {
		pause();
		_exit(0);
	}
	until_state(pid, 'S');
	tap_ok(proc_stat_read(pid, &st) && st.state == 'S',
	    "a child in pause(): S (%c)", st.state);
	kill(pid, SIGKILL);
	until_state(pid, 'Z');
	tap_ok(proc_stat_read(pid, &st) && st.state == 'Z',
	    "killed and not reaped: a zombie (%c)", st.state);
	waitpid(pid, NULL, 0);
	tap_ok(!proc_stat_read(pid, &st), "reaped: gone");

	/* Files held open: by this process they do not count. */
	char tmpl[] = "/tmp/test_proc.XXXXXX";
	struct stat f;
	int fd = mkstemp(tmpl);

	tap_ok(fd >= 0 && fstat(fd, &f) == 0, "a file made");
	tap_ok(!proc_holds_open(&f, 0), "open only here: no other holder");
	pid = fork();
	if (pid == 0) {
		pause();
		_exit(0);
	}
	close(fd);
	tap_ok(proc_holds_open(&f, 0), "a child holds it: held");
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	tap_ok(!proc_holds_open(&f, 0), "the child gone: not held");
	unlink(tmpl);
	return tap_done();
}
