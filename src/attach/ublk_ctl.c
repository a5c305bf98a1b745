/* SPDX-License-Identifier: BSD-2-Clause */
/* ublk's control device: ublk_ctl.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "files.h"
#include "spawn.h"
#include "ublk.h"
#include "ublk_ctl.h"

#define UBLK_CONTROL	"/dev/ublk-control"
#define SETUP_LOCK	"/run/lock/geli-ublk.lock"

int
uctl_cmd(struct uctl *c, unsigned nr, uint32_t id, bool path, void *buf,
    uint16_t len, uint64_t data0)
{
	static const unsigned encoded[] = {
		[UBLK_CMD_GET_DEV_INFO] = UBLK_U_CMD_GET_DEV_INFO,
		[UBLK_CMD_GET_DEV_INFO2] = UBLK_U_CMD_GET_DEV_INFO2,
		[UBLK_CMD_ADD_DEV] = UBLK_U_CMD_ADD_DEV,
		[UBLK_CMD_DEL_DEV] = UBLK_U_CMD_DEL_DEV,
		[UBLK_CMD_START_DEV] = UBLK_U_CMD_START_DEV,
		[UBLK_CMD_STOP_DEV] = UBLK_U_CMD_STOP_DEV,
		[UBLK_CMD_SET_PARAMS] = UBLK_U_CMD_SET_PARAMS,
		[UBLK_CMD_START_USER_RECOVERY] = UBLK_U_CMD_START_USER_RECOVERY,
		[UBLK_CMD_END_USER_RECOVERY] = UBLK_U_CMD_END_USER_RECOVERY,
		[UBLK_CMD_GET_FEATURES] = UBLK_U_CMD_GET_FEATURES,
		[UBLK_CMD_DEL_DEV_ASYNC] = UBLK_U_CMD_DEL_DEV_ASYNC,
		[UBLK_CMD_UPDATE_SIZE] = UBLK_U_CMD_UPDATE_SIZE,
	};
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	struct ublk_ctrl_cmd cmd = {
		.dev_id = id, .queue_id = (uint16_t)-1, .len = len,
		.addr = (uint64_t)(uintptr_t)buf, .data = { data0 },
	};
	uint8_t withpath[64 + 256];
	int error, plen;

	if (path) {
		plen = snprintf((char *)withpath, 64, "/dev/ublkc%u", id);
		if (len > sizeof(withpath) - (size_t)plen)
			return -EINVAL;
		if (len > 0)
			memcpy(withpath + plen, buf, len);
		cmd.dev_path_len = (uint16_t)plen;
		cmd.len = (uint16_t)(plen + len);
		cmd.addr = (uint64_t)(uintptr_t)withpath;
	}
	sqe = io_uring_get_sqe(&c->ring);
	if (sqe == NULL)
		return -EAGAIN;
	memset(sqe, 0, 2 * sizeof(*sqe));
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = c->fd;
	/* (the commands from GET_FEATURES on have no plain number) */
	sqe->cmd_op = c->encoded || nr >= UBLK_CMD_GET_FEATURES ?
	    encoded[nr] : nr;
	memcpy(sqe->cmd, &cmd, sizeof(cmd));
	error = io_uring_submit_and_wait(&c->ring, 1);
	if (error < 0)
		return error;
	error = io_uring_wait_cqe(&c->ring, &cqe);
	if (error < 0)
		return error;
	error = cqe->res;
	io_uring_cqe_seen(&c->ring, cqe);
	if (path && len > 0)
		memcpy(buf, withpath + cmd.dev_path_len, len);
	return error;
}

int
uctl_set_params(struct uctl *ctl, uint32_t id, bool user,
    const struct ublk_conf *c, uint32_t max_io)
{
	uint32_t lbs = c->sectorsize > 4096 ? 4096 : c->sectorsize;
	struct ublk_params p;

	memset(&p, 0, sizeof(p));
	p.len = sizeof(p);
	p.types = UBLK_PARAM_TYPE_BASIC;
	p.basic.attrs = UBLK_ATTR_VOLATILE_CACHE | UBLK_ATTR_FUA |
	    (c->readonly ? UBLK_ATTR_READ_ONLY : 0);
	p.basic.logical_bs_shift = (uint8_t)__builtin_ctz(lbs);
	p.basic.physical_bs_shift = (uint8_t)__builtin_ctz(c->sectorsize);
	p.basic.io_min_shift = p.basic.physical_bs_shift;
	p.basic.io_opt_shift = p.basic.physical_bs_shift;
	p.basic.max_sectors = max_io >> 9;
	p.basic.dev_sectors = c->size >> 9;
	if (!c->readonly) {
		p.types |= UBLK_PARAM_TYPE_DISCARD;
		p.discard.discard_granularity = c->sectorsize;
		p.discard.max_discard_sectors = UINT32_MAX >> 9;
		p.discard.max_write_zeroes_sectors = UINT32_MAX >> 9;
		p.discard.max_discard_segments = 1;
	}
	return uctl_cmd(ctl, UBLK_CMD_SET_PARAMS, id, user, &p, sizeof(p), 0);
}

/* Device id's description: GET_DEV_INFO2 where the kernel takes ioctl
 * numbers (it has it from 6.2; an ordinary user's device answers nothing
 * else), GET_DEV_INFO before. */
int
uctl_dev_info(struct uctl *c, uint32_t id, struct ublk_dev_info *info)
{
	return c->encoded ? uctl_cmd(c, UBLK_CMD_GET_DEV_INFO2, id, true, info,
	    sizeof(*info), 0) : uctl_cmd(c, UBLK_CMD_GET_DEV_INFO, id, false,
	    info, sizeof(*info), 0);
}

void
uctl_close(struct uctl *c)
{
	if (c->fd < 0)
		return;
	io_uring_queue_exit(&c->ring);
	close(c->fd);
	c->fd = -1;
}

int
uctl_open(struct uctl *c, char *why, size_t len)
{
	int error;

	c->user = geteuid() != 0;
	c->fd = open(UBLK_CONTROL, O_RDWR | O_CLOEXEC);
	if (c->fd < 0 && errno == ENOENT && !c->user) {
		(void)run_cmd(SPAWN_QUIET, NULL, NULL, "modprobe", "ublk_drv",
		    NULL);
		c->fd = open(UBLK_CONTROL, O_RDWR | O_CLOEXEC);
	}
	if (c->fd < 0) {
		error = -errno;
		if (error == -ENOENT)
			snprintf(why, len, c->user ? "no %s: ublk_drv is not "
			    "loaded" : "no %s, and ublk_drv does not load",
			    UBLK_CONTROL);
		else
			snprintf(why, len, "%s: %s", UBLK_CONTROL,
			    strerror(-error));
		return error;
	}
	error = io_uring_queue_init(4, &c->ring, IORING_SETUP_SQE128);
	if (error < 0) {
		snprintf(why, len, "io_uring: %s", strerror(-error));
		close(c->fd);
		c->fd = -1;
		return error;
	}
	/* 6.5+ answers; before, only the plain numbers exist. */
	c->features = 0;
	c->encoded = uctl_cmd(c, UBLK_CMD_GET_FEATURES, 0, false, &c->features,
	    sizeof(c->features), 0) == 0;
	if (c->user && !(c->features & UBLK_F_UNPRIVILEGED_DEV)) {
		snprintf(why, len, "the kernel does not say it makes ublk "
		    "devices for ordinary users (Linux 6.5 and later do)");
		uctl_close(c);
		return -EPERM;
	}
	return 0;
}

/*
 * Device id deleted (user: an ordinary user's device).  DEL_DEV waits until
 * nobody holds the device (a file system still mounted from it after detach
 * -f): the asynchronous one (6.9+, not for an ordinary user's device) does
 * not, and where it is refused a child of ours waits in our place.
 */
void
uctl_delete_dev(struct uctl *c, uint32_t id, bool user, int lock)
{
	char why[100];
	struct uctl cc;
	pid_t pid;

	int error = c->encoded ? uctl_cmd(c, UBLK_CMD_DEL_DEV_ASYNC, id, user,
	    NULL, 0, 0) : -EOPNOTSUPP;

	/* (being deleted already: -ENODEV or the like) */
	if (error != -EOPNOTSUPP && error != -EINVAL)
		return;
	pid = fork();
	if (pid != 0)
		return;
	if (lock >= 0)
		close(lock);
	if (uctl_open(&cc, why, sizeof(why)) == 0)
		(void)uctl_cmd(&cc, UBLK_CMD_DEL_DEV, id, user, NULL, 0, 0);
	_exit(0);
}

/*
 * Devices of ours (marked) whose daemon is gone: a daemon killed with -9
 * leaves its device stopped but not deleted (its server PID -1), and nobody
 * else will.  Root's sweep reaches every such device, an ordinary user's
 * their own (the kernel answers for the nodes they may open).  Under the
 * setup lock, where no daemon of root is between ADD_DEV and START_DEV, or
 * between STOP_DEV and DEL_DEV.
 */
/* No such process (or none named). */
static bool
gone(pid_t pid)
{
	return pid <= 0 || (kill(pid, 0) != 0 && errno == ESRCH);
}

void
uctl_delete_orphans(struct uctl *c, int lock)
{
	struct dirent *e;
	DIR *dir;

	dir = opendir("/sys/class/ublk-char");
	if (dir == NULL)
		return;
	while ((e = readdir(dir)) != NULL) {
		struct ublk_dev_info info = { 0 };
		unsigned id;

		if (sscanf(e->d_name, "ublkc%u", &id) != 1 ||
		    uctl_dev_info(c, id, &info) != 0)
			continue;
		/* (a device added with recovery whose server died waits for
		 * another, or is about to: the kernel may quiesce it a while
		 * after the death, and its mark may name a keeper that an
		 * attach replaced.  Its provider's next attach takes it back,
		 * its keeper or detach deletes it.  One that never started
		 * is an orphan.) */
		if ((info.flags & UBLK_F_USER_RECOVERY) &&
		    info.state != UBLK_STATE_DEAD)
			continue;
		if (GELI_UBLK_MARKED(info.ublksrv_flags) &&
		    gone(info.ublksrv_pid) &&
		    gone(GELI_UBLK_KEEPER(info.ublksrv_flags)))
			uctl_delete_dev(c, id, (info.flags &
			    UBLK_F_UNPRIVILEGED_DEV) != 0, lock);
	}
	closedir(dir);
}

/*
 * The setup lock, one for every daemon of root whatever its run directory
 * (-1 for an ordinary user's, whose sweep meets only their own devices and
 * who must not be able to hold root's back).  Root's alone: one that
 * someone else made in /run/lock is replaced.
 */
int
uctl_setup_lock(void)
{
	struct stat st;
	int fd = -1;

	if (geteuid() != 0)
		return -1;
	for (int i = 0; i < 2 && fd < 0; i++) {
		fd = open(SETUP_LOCK, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
		    0600);
		if (fd >= 0 && (fstat(fd, &st) != 0 || st.st_uid != 0)) {
			close(fd);
			fd = -1;
			(void)unlink(SETUP_LOCK);
		}
	}
	if (fd >= 0 && flock(fd, LOCK_EX) != 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

void
uctl_setup_unlock(int fd)
{
	if (fd >= 0)
		close(fd);
}

int
ublk_probe(char *why, size_t len)
{
	struct uctl c;
	int error;

	error = uctl_open(&c, why, len);
	uctl_close(&c);
	return error;
}

int
ublk_release_waiting(uint32_t id)
{
	struct ublk_dev_info info;
	struct uctl c;
	char why[160];
	int error, lock;

	if ((error = uctl_open(&c, why, sizeof(why))) != 0)
		return error;
	lock = uctl_setup_lock();
	error = uctl_dev_info(&c, id, &info);
	/* (waiting, or about to: the kernel may quiesce it a while after
	 * its server's death) */
	if (error == 0 && !(GELI_UBLK_MARKED(info.ublksrv_flags) &&
	    gone(info.ublksrv_pid) &&
	    gone(GELI_UBLK_KEEPER(info.ublksrv_flags))))
		error = -ENOENT;
	if (error == 0)
		uctl_delete_dev(&c, id, (info.flags &
		    UBLK_F_UNPRIVILEGED_DEV) != 0, lock);
	uctl_setup_unlock(lock);
	uctl_close(&c);
	return error == -ENODEV ? -ENOENT : error;
}

int
ublk_owner(uint32_t id, uint32_t *uid, uint32_t *gid)
{
	struct ublk_dev_info info;
	struct uctl c;
	char why[160];
	int error;

	if ((error = uctl_open(&c, why, sizeof(why))) != 0)
		return error;
	/* (a kernel without GET_FEATURES makes no ordinary user's device) */
	error = uctl_dev_info(&c, id, &info);
	uctl_close(&c);
	if (error != 0)
		return error;
	if (!(info.flags & UBLK_F_UNPRIVILEGED_DEV))
		return 1;
	*uid = info.owner_uid;
	*gid = info.owner_gid;
	return 0;
}

int
uctl_node_ready(const char *path, bool user, int mode)
{
	for (int i = 0; i < 250; i++) {
		if (access(path, mode) == 0)
			return 0;
		if (errno != ENOENT && (!user || errno != EACCES))
			return -errno;
		usleep(20000);
	}
	return -errno;
}

/* Is a kernel worker inside the quiesce work? */
static bool
quiescing(void)
{
	char path[64], buf[4096];
	struct dirent *e;
	bool found = false;
	DIR *dir = opendir("/proc");

	if (dir == NULL)
		return false;
	while (!found && (e = readdir(dir)) != NULL) {
		int pid = atoi(e->d_name);

		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/comm", pid);
		if (read_file(path, buf, sizeof(buf)) < 8 ||
		    memcmp(buf, "kworker/", 8) != 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/stack", pid);
		if (read_file(path, buf, sizeof(buf)) < 0)
			continue;
		found = strstr(buf, "ublk_quiesce_work_fn") != NULL;
	}
	closedir(dir);
	return found;
}

bool
uctl_quiesce_settled(void)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (quiescing()) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec >= 5)
			return false;
		usleep(1000);
	}
	return true;
}
