/* SPDX-License-Identifier: BSD-2-Clause */
/* The keeper (see keeper.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <poll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "geli.h"
#include "keeper.h"

/* A server that dies this often (deaths within KEEPER_WINDOW seconds)
 * dies of what it serves: the keeper stops starting new ones. */
#define KEEPER_BURST	50
#define KEEPER_WINDOW	60

static void drop_fds(struct keeper *k);

static void __attribute__((noreturn))
keeper_end(struct keeper *k, int status)
{
	geli_secure_free(k->mkey);
	drop_fds(k);
	_exit(status);
}

/* A start that failed before any server ran: said on the status pipe. */
static void __attribute__((noreturn))
keeper_failed(struct keeper *k, int stfd, const char *msg)
{
	if (write(stfd, msg, strlen(msg)) < 0) {
		/* (the attaching process is gone: nobody to tell) */
	}
	if (k->mkey != NULL)
		geli_secure_free(k->mkey);
	_exit(1);
}

/* What a server tells its keeper. */
enum keeper_msg {
	KEEPER_UP = 1,		/* it serves; the descriptors to hold */
	KEEPER_END,		/* it ends in order: let them go, and say so */
};

/* The descriptors a server sends (UP), in this order. */
#define KEEPER_FDS	3

struct keeper_msg_hdr {
	int32_t kind;		/* enum keeper_msg */
	int32_t which[KEEPER_FDS];	/* UP: the control socket's, the FUSE
					 * session's, the loop's sent */
};

/* An UP's descriptors as they go and come: aligned for their header, and
 * zeroed before a send (three descriptors leave padding after them). */
union keeper_cm {
	char buf[CMSG_SPACE(KEEPER_FDS * sizeof(int))];
	struct cmsghdr align;
};

/* Where the keeper holds descriptor i of an UP. */
static int32_t *
fd_slot(struct keeper *k, int i)
{
	return i == 0 ? &k->st->ctl_fd : i == 1 ? &k->st->fuse_fd :
	    &k->st->loop_fd;
}

/* Let the descriptors go: the FUSE session's last holder, the kernel ends
 * it, and what waited on it fails, as when a server died before keepers
 * were; the loop device clears itself at its last close. */
static void
drop_fds(struct keeper *k)
{
	for (int i = 0; i < KEEPER_FDS; i++) {
		if (*fd_slot(k, i) >= 0)
			close(*fd_slot(k, i));
		*fd_slot(k, i) = -1;
	}
	k->st->resumable = false;
}

/* The messages a server sent: read after its death too (a descriptor in
 * flight holds its file as one received does). */
static void
receive(struct keeper *k, int sock)
{
	union keeper_cm cm;
	struct keeper_msg_hdr m;
	struct iovec iov = { &m, sizeof(m) };
	struct msghdr mh;
	struct cmsghdr *h;
	int fds[KEEPER_FDS];

	for (;;) {
		memset(&mh, 0, sizeof(mh));
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		mh.msg_control = cm.buf;
		mh.msg_controllen = sizeof(cm.buf);
		if (recvmsg(sock, &mh, MSG_DONTWAIT) != (ssize_t)sizeof(m))
			return;
		if (m.kind == KEEPER_END) {
			drop_fds(k);
			(void)send(sock, &m, sizeof(m), MSG_NOSIGNAL);
			continue;
		}
		h = CMSG_FIRSTHDR(&mh);
		if (m.kind != KEEPER_UP || h == NULL ||
		    h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS ||
		    h->cmsg_len != CMSG_LEN(sizeof(fds)))
			continue;
		memcpy(fds, CMSG_DATA(h), sizeof(fds));
		for (int i = 0; i < KEEPER_FDS; i++) {
			int32_t *slot = fd_slot(k, i);

			if (m.which[i] == 0) {
				close(fds[i]);
				continue;
			}
			if (*slot >= 0 && *slot != fds[i])
				close(*slot);
			*slot = fds[i];
		}
	}
}

/* Started too often of late (deaths[] holds the last KEEPER_BURST death
 * times, n of them so far)? */
static bool
dying_fast(time_t *deaths, unsigned *n)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (*n == KEEPER_BURST) {
		if (now.tv_sec - deaths[0] < KEEPER_WINDOW)
			return true;
		memmove(deaths, deaths + 1, (KEEPER_BURST - 1) * sizeof(*deaths));
		(*n)--;
	}
	deaths[(*n)++] = now.tv_sec;
	return false;
}

/* A server died and none follows it: what it left waiting undone (a
 * ublk device whose I/O would wait for ever), in a child (the keeper
 * itself starts nothing but servers). */
static void __attribute__((noreturn))
keeper_abandon(struct keeper *k, keeper_abandon_fn abandon, void *arg)
{
	int status;
	pid_t pid;

	geli_wipe(k->mkey, GELI_MKEY_DATALEN);
	if (abandon != NULL && (pid = fork()) >= 0) {
		if (pid == 0) {
			abandon(k, arg);
			_exit(0);
		}
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	}
	keeper_end(k, 1);
}

void
keeper_main(int keyfd, int stfd, keeper_serve_fn serve,
    keeper_abandon_fn abandon, void *arg)
{
	static struct keeper k;
	static time_t deaths[KEEPER_BURST];
	unsigned ndeaths = 0;
	sigset_t set, old;
	int sv[2], status, fd, sfd;
	bool secret;
	pid_t pid;

	setsid();
	signal(SIGPIPE, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	/* Its signals are read (signalfd) and never run a handler. */
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, &old);
	sfd = signalfd(-1, &set, SFD_CLOEXEC);
	if (sfd < 0)
		keeper_failed(&k, stfd, "ERR Cannot create a signalfd.");
	(void)geli_protect_process(NULL);
	fd = open("/dev/null", O_RDWR);
	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		if (fd > 2)
			close(fd);
	}
	if (chdir("/") != 0)
		_exit(1);
	k.st = mmap(NULL, sizeof(*k.st), PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (k.st == MAP_FAILED)
		keeper_failed(&k, stfd, "ERR Cannot allocate memory.");
	k.mkey = geli_secure_alloc_shared(GELI_MKEY_DATALEN, &secret);
	if (k.mkey == NULL)
		keeper_failed(&k, stfd, "ERR Cannot allocate memory.");
	if (read(keyfd, k.mkey, GELI_MKEY_DATALEN) != GELI_MKEY_DATALEN)
		keeper_failed(&k, stfd, "ERR Cannot receive the key.");
	close(keyfd);
	k.st->keeper_pid = (int32_t)getpid();
	k.st->secret = secret;
	k.st->ctl_fd = k.st->fuse_fd = k.st->loop_fd = -1;
	k.st->ublk_id = -1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
		keeper_failed(&k, stfd, "ERR Cannot create a socket.");
	for (;;) {
		k.st->resumable = false;
		pid = fork();
		if (pid == 0) {
			close(sv[0]);
			k.sock = sv[1];
			sigprocmask(SIG_SETMASK, &old, NULL);
			_exit(serve(&k, stfd, arg));
		}
		if (pid < 0)
			keeper_end(&k, 1);
		/* The status goes to the first server's caller only. */
		if (stfd >= 0)
			close(stfd);
		stfd = -1;
		for (;;) {
			struct pollfd pf[2] = { { sfd, POLLIN, 0 },
			    { sv[0], POLLIN, 0 } };
			struct signalfd_siginfo si;

			if (poll(pf, 2, -1) < 0)
				continue;
			if (pf[1].revents & POLLIN)
				receive(&k, sv[0]);
			if (!(pf[0].revents & POLLIN) ||
			    read(sfd, &si, sizeof(si)) != (ssize_t)sizeof(si))
				continue;
			if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT)
				kill(pid, (int)si.ssi_signo);	/* a detach */
			else if (waitpid(pid, &status, WNOHANG) == pid)
				break;
		}
		receive(&k, sv[0]);
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
			keeper_end(&k, 0);
		if (!k.st->resumable || dying_fast(deaths, &ndeaths))
			keeper_abandon(&k, abandon, arg);
		k.st->death = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
		atomic_fetch_add(&k.st->restarts, 1);
	}
}

void
keeper_up(struct keeper *k, bool resumable, int ctlfd, int fusefd,
    int loopfd)
{
	int fds[KEEPER_FDS] = { ctlfd, fusefd, loopfd };
	struct keeper_msg_hdr m = { KEEPER_UP,
	    { ctlfd >= 0, fusefd >= 0, loopfd >= 0 } };
	union keeper_cm cm;
	struct iovec iov = { &m, sizeof(m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
	    .msg_control = cm.buf, .msg_controllen = sizeof(cm.buf) };
	struct cmsghdr *h;

	memset(&cm, 0, sizeof(cm));
	h = CMSG_FIRSTHDR(&mh);

	/* (a descriptor that is not there goes as one that is: stdin) */
	for (int i = 0; i < KEEPER_FDS; i++)
		if (fds[i] < 0)
			fds[i] = 0;
	h->cmsg_level = SOL_SOCKET;
	h->cmsg_type = SCM_RIGHTS;
	h->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(h), fds, sizeof(fds));
	if (resumable && sendmsg(k->sock, &mh, MSG_NOSIGNAL) !=
	    (ssize_t)sizeof(m))
		resumable = false;
	k->st->resumable = resumable;
}

void
keeper_ending(struct keeper *k)
{
	struct keeper_msg_hdr m = { KEEPER_END, { 0, 0, 0 } };

	k->st->resumable = false;
	/* Its answer, once it let them go (or nothing: it is dead). */
	if (send(k->sock, &m, sizeof(m), MSG_NOSIGNAL) == (ssize_t)sizeof(m))
		(void)recv(k->sock, &m, sizeof(m), 0);
}

void
keeper_resumable(struct keeper *k, bool resumable)
{
	k->st->resumable = resumable;
}

void
keeper_set_key(struct keeper *k, const uint8_t *mkey)
{
	if (mkey != NULL)
		memcpy(k->mkey, mkey, GELI_MKEY_DATALEN);
	else
		geli_wipe(k->mkey, GELI_MKEY_DATALEN);
}
