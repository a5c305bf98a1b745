/* SPDX-License-Identifier: BSD-2-Clause */
/* What /proc says of processes: PID/stat (one parser for every reader) and
 * the files they hold open. */
#ifndef GELI_COMMON_PROC_H
#define GELI_COMMON_PROC_H

#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

struct proc_stat {
	char state;			/* R, S, D, Z, X, ... */
	int ppid, sid;			/* its parent, its session */
	unsigned long long utime, stime;	/* CPU time, clock ticks */
	unsigned long long start;	/* start time, clock ticks after boot */
};

/* false once pid is gone (or its stat line does not parse). */
bool proc_stat_read(pid_t pid, struct proc_stat *st);
/* Parse one stat line (the file's text, NUL-terminated) into st. */
bool proc_stat_parse(const char *line, struct proc_stat *st);
/* utime + stime in seconds. */
double proc_cpu_seconds(const struct proc_stat *st);
/*
 * Does any process but this one and ignore (0: none) hold want open (a file
 * descriptor in /proc/PID/fd)?  A block device is matched by its device
 * number, anything else by its file system and inode.
 */
bool proc_holds_open(const struct stat *want, pid_t ignore);

#endif
