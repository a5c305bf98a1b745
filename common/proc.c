/* SPDX-License-Identifier: BSD-2-Clause */
/* /proc/PID/stat (see proc.h and proc(5)). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "proc.h"

bool
proc_stat_parse(const char *line, struct proc_stat *st)
{
	const char *p = strrchr(line, ')');

	/*
	 * The command name, in parentheses, may hold anything: the fields
	 * count from the last ")".  After it: state (3), then 10 fields to
	 * utime (14) and stime (15), then 6 to starttime (22).
	 */
	return p != NULL && sscanf(p + 1, " %c %*s %*s %*s %*s %*s %*s %*s "
	    "%*s %*s %*s %llu %llu %*s %*s %*s %*s %*s %*s %llu", &st->state,
	    &st->utime, &st->stime, &st->start) == 4;
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
