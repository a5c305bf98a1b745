/* SPDX-License-Identifier: BSD-2-Clause */
/* The run directory (see rundir.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl.h"
#include "files.h"
#include "proc.h"
#include "rundir.h"

static const char *const suffix[] = {
	[RUNDIR_ELI] = ".eli", [RUNDIR_CTL] = ".ctl", [RUNDIR_PID] = ".pid",
	[RUNDIR_LOG] = ".log", [RUNDIR_DEV] = ".dev",
};

const char *
rundir(void)
{
	static char buf[4096];
	const char *d = getenv("GELI_RUNDIR"), *x = getenv("XDG_RUNTIME_DIR");

	if (d != NULL && *d != '\0')
		return d;
	if (geteuid() == 0)
		return "/run/geli";
	if (x != NULL && *x == '/')
		snprintf(buf, sizeof(buf), "%s/geli", x);
	else
		snprintf(buf, sizeof(buf), "/tmp/geli-%u", (unsigned)geteuid());
	return buf;
}

int
rundir_private(void)
{
	struct stat st;

	if (geteuid() == 0)
		return 0;
	if (lstat(rundir(), &st) != 0)
		return -errno;
	return S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
	    (st.st_mode & 022) == 0 ? 0 : -EPERM;
}

int
rundir_make(void)
{
	if (make_dirs(rundir(), 0755) != 0)
		return -errno;
	return rundir_private() == 0 ? 0 : -EPERM;
}

static int
path_of(const char *dir, const char *name, const char *sfx, char *buf,
    size_t len)
{
	int n = snprintf(buf, len, "%s/%s%s", dir != NULL ? dir : rundir(),
	    name, sfx);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int
rundir_entry(const char *dir, const char *name, enum rundir_entry e,
    char *buf, size_t len)
{
	return path_of(dir, name, suffix[e], buf, len);
}

int
rundir_names(char ***out)
{
	char **names = NULL;
	struct dirent *e;
	DIR *dir;
	int n = 0;

	*out = NULL;
	dir = opendir(rundir());
	if (dir == NULL)
		return 0;
	while ((e = readdir(dir)) != NULL) {
		size_t l = strlen(e->d_name);
		char nm[256];

		if (l <= 4 || strcmp(e->d_name + l - 4, ".ctl") != 0 ||
		    l - 4 >= sizeof(nm))
			continue;
		snprintf(nm, sizeof(nm), "%.*s", (int)(l - 4), e->d_name);
		if (ctl_status(nm, NULL) != 0)
			continue;
		char **nn = realloc(names, sizeof(*names) * (size_t)(n + 1));
		if (nn == NULL || (nn[n] = strdup(nm)) == NULL) {
			names = nn != NULL ? nn : names;
			break;
		}
		names = nn;
		n++;
	}
	closedir(dir);
	for (int i = 1; i < n; i++)	/* insertion sort: a handful of names */
		for (int j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
			char *t = names[j];
			names[j] = names[j - 1];
			names[j - 1] = t;
		}
	*out = names;
	return n;
}

void
rundir_names_free(char **names, int n)
{
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

void
rundir_clean_stale(const char *name)
{
	char path[4096];
	int error = ctl_status(name, NULL);

	/* Gone only when nobody answers (a daemon that answered garbage is
	 * still there). */
	if (error != -ENOENT && error != -ECONNREFUSED)
		return;
	/* (first: it is known by the loop device's file, removed next) */
	devlink_remove(name, NULL);
	if (rundir_entry(NULL, name, RUNDIR_ELI, path, sizeof(path)) == 0) {
		(void)umount2(path, MNT_DETACH);
		(void)unlink(path);
	}
	if (rundir_entry(NULL, name, RUNDIR_CTL, path, sizeof(path)) == 0)
		(void)unlink(path);
}

const char *
devdir(void)
{
	const char *d = getenv("GELI_DEVDIR");

	return d != NULL && *d != '\0' ? d : "/dev";
}

int
devlink_path(const char *name, char *buf, size_t len)
{
	return path_of(devdir(), name, ".eli", buf, len);
}

/*
 * Is the link at path one that a daemon of name in this run directory
 * left (or is about to replace)?  Its target is gone, or is the device
 * NAME.dev records (a daemon killed with -9 leaves its link, and its loop
 * device, once cleared, may be another's by the next attach), or is a loop
 * device on our NAME.eli.
 */
static bool
devlink_ours(const char *path, const char *name)
{
	char target[4096], sys[128], back[4096], eli[4096], rec[4096];
	const char *base;
	struct stat st;
	ssize_t n;
	FILE *f;

	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return false;
	target[n] = '\0';
	if (stat(path, &st) != 0)
		return errno == ENOENT;
	if (rundir_entry(NULL, name, RUNDIR_DEV, rec, sizeof(rec)) == 0 &&
	    (f = fopen(rec, "re")) != NULL) {
		bool same = fgets(rec, sizeof(rec), f) != NULL &&
		    strcmp(rec, target) == 0;

		fclose(f);
		if (same)
			return true;
	}
	base = strrchr(target, '/') != NULL ? strrchr(target, '/') + 1 : target;
	if (!S_ISBLK(st.st_mode) || strncmp(base, "loop", 4) != 0 ||
	    rundir_entry(NULL, name, RUNDIR_ELI, eli, sizeof(eli)) != 0)
		return false;
	snprintf(sys, sizeof(sys), "/sys/block/%.64s/loop/backing_file", base);
	if ((f = fopen(sys, "re")) == NULL)
		return false;
	if (fgets(back, sizeof(back), f) == NULL)
		back[0] = '\0';
	fclose(f);
	back[strcspn(back, "\n")] = '\0';
	/* (the kernel adds " (deleted)" once the file is gone) */
	return strncmp(back, eli, strlen(eli)) == 0 &&
	    (back[strlen(eli)] == '\0' || back[strlen(eli)] == ' ');
}

int
devlink_make(const char *name, const char *dev)
{
	char path[4096], tmp[4200], rec[4096];
	struct stat st;
	int error;

	if (devlink_path(name, path, sizeof(path)) != 0 ||
	    rundir_entry(NULL, name, RUNDIR_DEV, rec, sizeof(rec)) != 0)
		return -ENAMETOOLONG;
	if (lstat(path, &st) == 0 &&
	    (!S_ISLNK(st.st_mode) || !devlink_ours(path, name)))
		return -EEXIST;
	/* Recorded before it is made: killed in between, the next attach
	 * still knows the link for ours. */
	if ((error = write_file(rec, dev)) != 0)
		return error;
	/* Made beside it and renamed over it: the name never points at
	 * nothing while it is replaced. */
	snprintf(tmp, sizeof(tmp), "%s.%ld.new", path, (long)getpid());
	(void)unlink(tmp);
	if (symlink(dev, tmp) != 0 || rename(tmp, path) != 0) {
		error = -errno;
		(void)unlink(tmp);
		(void)unlink(rec);
		return error;
	}
	return 0;
}

void
devlink_remove(const char *name, const char *dev)
{
	char path[4096], target[4096], rec[4096];
	ssize_t n;

	if (devlink_path(name, path, sizeof(path)) != 0 ||
	    rundir_entry(NULL, name, RUNDIR_DEV, rec, sizeof(rec)) != 0)
		return;
	n = readlink(path, target, sizeof(target) - 1);
	if (n >= 0) {
		target[n] = '\0';
		if (dev != NULL ? strcmp(target, dev) != 0 :
		    !devlink_ours(path, name))
			return;
		(void)unlink(path);
	}
	(void)unlink(rec);
}

/*
 * Without turns, a second attach of a provider finds the first one's
 * daemon starting (its .eli made, its socket not yet bound), takes its
 * files for stale and removes them, and both fail.  A POSIX lock: the
 * daemon, a forked child, does not inherit it, and it ends with this
 * process.
 */
int
rundir_lock(void)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	char path[4096];
	int fd;

	if (path_of(NULL, ".attach", ".lock", path, sizeof(path)) != 0)
		return -1;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	while (fcntl(fd, F_SETLKW, &fl) != 0) {
		if (errno != EINTR) {
			close(fd);
			return -1;
		}
	}
	return fd;
}

void
rundir_unlock(int fd)
{
	if (fd >= 0)
		close(fd);
}

/* Do processes a and b have the same name (/proc/PID/comm)?  (Not their
 * /proc/PID/exe: valgrind 3.19 aborts on a readlink of another's.) */
static bool
same_name(pid_t a, pid_t b)
{
	char path[64], na[32], nb[32];

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)a);
	if (read_file(path, na, sizeof(na)) <= 0)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)b);
	return read_file(path, nb, sizeof(nb)) > 0 && strcmp(na, nb) == 0;
}

struct daemon_ref
daemon_ref(const char *dir, const char *name)
{
	struct daemon_ref d = { 0, 0, 0, 0 };
	struct proc_stat st;
	char path[4096];
	FILE *f;
	int pid = 0;

	if (rundir_entry(dir, name, RUNDIR_PID, path, sizeof(path)) != 0 ||
	    (f = fopen(path, "re")) == NULL)
		return d;
	if (fscanf(f, "%d", &pid) != 1)
		pid = 0;
	fclose(f);
	if (pid <= 0 || !proc_stat_read(pid, &st))
		return d;
	d.pid = pid;
	d.start = st.start;
	pid = st.ppid;
	if (pid > 1 && pid != getpid() && proc_stat_read(pid, &st) &&
	    st.sid == pid && same_name(pid, d.pid)) {
		d.keeper = pid;
		d.keeper_start = st.start;
	}
	return d;
}

bool
daemon_running(struct daemon_ref d)
{
	struct proc_stat st;

	/* Exited: no such process, a zombie (PID 1 may not reap it), or
	 * another process with its PID. */
	return d.pid > 0 && proc_stat_read(d.pid, &st) && st.start == d.start &&
	    st.state != 'Z' && st.state != 'X';
}

void
daemon_wait_gone(struct daemon_ref d, const char *name)
{
	struct daemon_ref k = { d.keeper, d.keeper_start, 0, 0 };
	char path[4096];

	if (d.pid > 0) {
		while (daemon_running(d))
			usleep(10000);
		/* (a server that died before its orderly end is followed by
		 * another: then its keeper stays) */
		while (daemon_running(k) && daemon_ref(NULL, name).pid == 0)
			usleep(10000);
		return;
	}
	if (rundir_entry(NULL, name, RUNDIR_CTL, path, sizeof(path)) != 0)
		return;
	for (int i = 0; i < 100 && access(path, F_OK) == 0; i++)
		usleep(50000);
}
