/* SPDX-License-Identifier: BSD-2-Clause */
/* /proc/PID/stat and /proc/PID/fd (see proc.h and proc(5)). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc.h"

bool
proc_stat_parse(const char *line, struct proc_stat *st)
{
	const char *p = strrchr(line, ')');

	/*
	 * The command name, in parentheses, may hold anything: the fields
	 * count from the last ")".  After it: state (3), ppid (4), session
	 * (6), then 7 fields to utime (14) and stime (15), then 6 to
	 * starttime (22).
	 */
	return p != NULL && sscanf(p + 1, " %c %d %*s %d %*s %*s %*s %*s "
	    "%*s %*s %*s %llu %llu %*s %*s %*s %*s %*s %*s %llu", &st->state,
	    &st->ppid, &st->sid, &st->utime, &st->stime, &st->start) == 6;
}

bool
proc_stat_read(pid_t pid, struct proc_stat *st)
{
	char path[64], buf[1024];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "re")) == NULL)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return proc_stat_parse(buf, st);
}

double
proc_cpu_seconds(const struct proc_stat *st)
{
	long tck = sysconf(_SC_CLK_TCK);

	return (double)(st->utime + st->stime) / (double)(tck > 0 ? tck : 100);
}

static bool
same_file(const struct stat *a, const struct stat *want)
{
	if (S_ISBLK(want->st_mode))
		return S_ISBLK(a->st_mode) && a->st_rdev == want->st_rdev;
	return a->st_dev == want->st_dev && a->st_ino == want->st_ino;
}

bool
proc_holds_open(const struct stat *want, pid_t ignore)
{
	char path[300], link[600];
	struct dirent *p, *f;
	struct stat st;
	DIR *proc, *fds;
	bool found = false;

	proc = opendir("/proc");
	if (proc == NULL)
		return false;
	while (!found && (p = readdir(proc)) != NULL) {
		if (p->d_name[0] < '0' || p->d_name[0] > '9' ||
		    atoi(p->d_name) == getpid() ||
		    (ignore > 0 && atoi(p->d_name) == ignore))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/fd", p->d_name);
		fds = opendir(path);
		if (fds == NULL)
			continue;
		while (!found && (f = readdir(fds)) != NULL) {
			snprintf(link, sizeof(link), "%s/%s", path, f->d_name);
			found = stat(link, &st) == 0 && same_file(&st, want);
		}
		closedir(fds);
	}
	closedir(proc);
	return found;
}
