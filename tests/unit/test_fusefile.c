/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * common/fusefile.c: one FUSE file over a backend in memory, mounted for
 * real (root and /dev/fuse, else each check skips): reads and writes at any
 * offset reach the backend, the size and the sector-size attribute show,
 * open accounting, fallocate's zeroing and its refusals, read-only, a size
 * change, and the mount gone after stop.  Then a server killed with a read
 * in its hands, its session taken over by another (fusefile_adopt) through
 * a copy of its /dev/fuse descriptor: the read answered, the old open's
 * close reaching the new server (where the kernel resends, 6.9 and later).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "files.h"
#include "fusefile.h"
#include "geli.h"
#include "tap.h"

#define SIZE (1u << 20)

struct mem {
	uint8_t *b;
	uint64_t size;
	int opens, wopens, zeros, punches;
};

static uint64_t
m_size(void *a)
{
	return ((struct mem *)a)->size;
}

static ssize_t
m_read(void *a, void *buf, size_t len, uint64_t off)
{
	struct mem *m = a;

	if (off >= m->size)
		return 0;
	if (len > m->size - off)
		len = (size_t)(m->size - off);
	memcpy(buf, m->b + off, len);
	return (ssize_t)len;
}

static ssize_t
m_write(void *a, const void *buf, size_t len, uint64_t off)
{
	struct mem *m = a;

	if (off >= m->size)
		return -ENOSPC;
	if (len > m->size - off)
		len = (size_t)(m->size - off);
	memcpy(m->b + off, buf, len);
	return (ssize_t)len;
}

static int
m_flush(void *a)
{
	(void)a;
	return 0;
}

static int
m_zero(void *a, uint64_t off, uint64_t len, bool deallocate)
{
	struct mem *m = a;

	memset(m->b + off, 0, (size_t)len);
	if (deallocate)
		m->punches++;
	else
		m->zeros++;
	return 0;
}

static void
m_opened(void *a, bool w)
{
	((struct mem *)a)->opens++;
	((struct mem *)a)->wopens += w;
}

static void
m_closed(void *a, bool w)
{
	((struct mem *)a)->opens--;
	((struct mem *)a)->wopens -= w;
}

static bool mounted(const char *path);

/* ---- A server killed, its session adopted ------------------------------------ */

#define HELD_OFF 65536			/* the read the first server holds */

static int held_fd = -1;		/* the first server tells it got there */

static ssize_t
m_read_held(void *a, void *buf, size_t len, uint64_t off)
{
	if (off == HELD_OFF) {
		(void)!write(held_fd, "h", 1);
		for (;;)
			pause();	/* until it is killed */
	}
	return m_read(a, buf, len, off);
}

/* fd and what the kernel said, over a socket to the other process. */
static void
send_session(int sock, int fd, const struct fusefile_conn *c)
{
	char cm[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { (void *)c, sizeof(*c) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
	    .msg_control = cm, .msg_controllen = sizeof(cm) };
	struct cmsghdr *h = CMSG_FIRSTHDR(&mh);

	h->cmsg_level = SOL_SOCKET;
	h->cmsg_type = SCM_RIGHTS;
	h->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(h), &fd, sizeof(int));
	(void)!sendmsg(sock, &mh, 0);
}

static int
recv_session(int sock, struct fusefile_conn *c)
{
	char cm[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { c, sizeof(*c) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
	    .msg_control = cm, .msg_controllen = sizeof(cm) };
	struct cmsghdr *h;
	int fd = -1;

	if (recvmsg(sock, &mh, 0) != (ssize_t)sizeof(*c))
		return -1;
	h = CMSG_FIRSTHDR(&mh);
	if (h != NULL && h->cmsg_type == SCM_RIGHTS)
		memcpy(&fd, CMSG_DATA(h), sizeof(int));
	return fd;
}

struct held_read {
	int fd;
	uint8_t buf[4096];
	ssize_t n;
};

static void *
held_reader(void *a)
{
	struct held_read *h = a;

	h->n = pread(h->fd, h->buf, sizeof(h->buf), HELD_OFF);
	return NULL;
}

/*
 * The first server, in a child: its read of HELD_OFF never returns.  Its
 * session goes to us (as the keeper holds it), then it is killed in the
 * middle of that read; we take the session over.
 */
static void
adoption(const char *mnt, struct mem *m, struct blockio be)
{
	struct held_read h = { .fd = -1 };
	struct blockio hb = be;
	struct fusefile_conn c;
	struct fusefile *ff;
	int sv[2], hp[2], fd, status;
	pthread_t t;
	char x;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) != 0 || pipe(hp) != 0)
		return (void)tap_ok(0, "socketpair: %s", strerror(errno));
	pid = fork();
	if (pid == 0) {
		close(sv[0]);
		close(hp[0]);
		held_fd = hp[1];
		hb.read = m_read_held;
		if (fusefile_start(mnt, &hb, false, true, &ff) != 0)
			_exit(1);
		/* (the INIT has been answered once a request is) */
		struct stat st;
		(void)stat(mnt, &st);
		fusefile_conn(ff, &c);
		send_session(sv[1], fusefile_fd(ff), &c);
		for (;;)
			pause();
	}
	close(sv[1]);
	close(hp[1]);
	fd = recv_session(sv[0], &c);
	tap_ok(fd >= 0, "the first server's session, held by another process");
	if (!fusefile_resumable(&c)) {
		for (int i = 0; i < 6; i++)
			printf("ok %d # SKIP the kernel does not resend requests "
			    "(FUSE 7.%u)\n", ++tap_n, c.proto_minor);
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		close(fd);
		(void)umount2(mnt, MNT_DETACH);
		return;
	}
	h.fd = open(mnt, O_RDWR);
	m->opens = m->wopens = 0;
	pthread_create(&t, NULL, held_reader, &h);
	/* The read is in the first server's hands: it dies. */
	tap_ok(read(hp[0], &x, 1) == 1 && kill(pid, SIGKILL) == 0 &&
	    waitpid(pid, &status, 0) == pid && mounted(mnt),
	    "its server killed in the middle of a read, the file stays mounted");
	tap_ok(fusefile_adopt(fd, &c, mnt, &be, false, true, &ff) == 0,
	    "another server adopts the session");
	pthread_join(t, NULL);
	tap_ok(h.n == 4096 && memcmp(h.buf, m->b + HELD_OFF, 4096) == 0,
	    "the read the dead server held is answered, with the bytes");
	memset(h.buf, 0x5a, sizeof(h.buf));
	tap_ok(pwrite(h.fd, h.buf, 4096, 0) == 4096 && m->b[0] == 0x5a &&
	    m->b[4095] == 0x5a, "the old open writes through the new server");
	close(h.fd);
	for (int i = 0; i < 60000 && m->opens != -1; i++)
		usleep(1000);
	tap_ok(m->opens == -1 && m->wopens == -1,
	    "the old open's close reaches the new server");
	fusefile_stop(ff);
	tap_ok(!mounted(mnt), "stop unmounts the adopted mount");
	close(sv[0]);
	close(hp[0]);
}

static bool
mounted(const char *path)
{
	char line[4200];
	FILE *f = fopen("/proc/mounts", "r");
	bool found = false;

	while (f != NULL && fgets(line, sizeof(line), f) != NULL)
		found |= strstr(line, path) != NULL && strstr(line, "fuse") != NULL;
	if (f != NULL)
		fclose(f);
	return found;
}

int
main(void)
{
	char dir[] = "/tmp/test_fusefile.XXXXXX", mnt[64], xa[16];
	struct mem m = { calloc(1, SIZE), SIZE, 0, 0, 0, 0 };
	struct blockio be = { .arg = &m, .sectorsize = 4096,
	    .size = m_size, .read = m_read, .write = m_write, .flush = m_flush,
	    .zero = m_zero, .opened = m_opened, .closed = m_closed };
	struct fusefile *ff;
	uint8_t buf[9000];
	struct stat st;
	ssize_t n;
	int fd;

	if (geteuid() != 0 || access("/dev/fuse", R_OK | W_OK) != 0 ||
	    mkdtemp(dir) == NULL) {
		printf("1..0 # SKIP needs root and /dev/fuse\n");
		return 0;
	}
	snprintf(mnt, sizeof(mnt), "%s/file", dir);
	write_file(mnt, "");
	for (size_t i = 0; i < SIZE; i++)
		m.b[i] = (uint8_t)(i * 7 + 3);

	tap_ok(fusefile_start(mnt, &be, false, true, &ff) == 0 && mounted(mnt),
	    "mounted over a regular file");
	tap_ok(stat(mnt, &st) == 0 && st.st_size == SIZE && S_ISREG(st.st_mode),
	    "a regular file of the backend's size");
	tap_ok(getxattr(mnt, GELI_XATTR_SECTORSIZE, xa, sizeof(xa)) == 4 &&
	    memcmp(xa, "4096", 4) == 0, "it says its sector size");
	fd = open(mnt, O_RDWR);
	tap_ok(fd >= 0 && m.opens == 1 && m.wopens == 1,
	    "an open for writing is counted");
	n = pread(fd, buf, 5000, 1234);
	tap_ok(n == 5000 && memcmp(buf, m.b + 1234, 5000) == 0,
	    "an unaligned read reaches the backend");
	memset(buf, 0xab, sizeof(buf));
	n = pwrite(fd, buf, 9000, 4095);
	tap_ok(n == 9000 && m.b[4094] == (uint8_t)(4094 * 7 + 3) &&
	    m.b[4095] == 0xab && m.b[4095 + 8999] == 0xab &&
	    m.b[4095 + 9000] == (uint8_t)((4095 + 9000) * 7 + 3),
	    "an unaligned write lands where it was aimed, nothing else");
	tap_ok(fsync(fd) == 0, "fsync");
	n = pread(fd, buf, 100, SIZE - 10);
	tap_ok(n == 10, "a read past the end is short (%zd)", n);
	n = pwrite(fd, buf, 10, SIZE);
	tap_ok(n < 0 && errno == ENOSPC, "a write past the end: ENOSPC");

	tap_ok(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 8192,
	    4096) == 0 && m.punches == 1 && m.b[8192] == 0 && m.b[12287] == 0,
	    "PUNCH_HOLE: zeros, given back below");
	tap_ok(fallocate(fd, FALLOC_FL_ZERO_RANGE, 20000, 100) == 0 &&
	    m.zeros == 1 && m.b[20000] == 0 && m.b[20099] == 0 &&
	    m.b[20100] != 0, "ZERO_RANGE: zeros, exactly the range");
	tap_ok(fallocate(fd, FALLOC_FL_PUNCH_HOLE, 0, 4096) < 0 &&
	    errno == EOPNOTSUPP, "a punch that would change the size: "
	    "EOPNOTSUPP");
	tap_ok(fallocate(fd, 0, SIZE - 10, 100) < 0 && errno == ENOSPC,
	    "preallocation past the end: ENOSPC");
	tap_ok(fallocate(fd, 0, 0, 4096) == 0, "preallocation inside: done");

	m.size = SIZE / 2;
	fusefile_size_changed(ff);
	tap_ok(fstat(fd, &st) == 0 && st.st_size == SIZE / 2,
	    "a size change shows at once (%jd)", (intmax_t)st.st_size);
	close(fd);
	/* Release is asynchronous: awaited (60 s, a hang's bound). */
	for (int i = 0; i < 60000 && (m.opens != 0 || m.wopens != 0); i++)
		usleep(1000);
	tap_ok(m.opens == 0 && m.wopens == 0, "the close is counted");
	fusefile_stop(ff);
	tap_ok(!mounted(mnt), "stop unmounts");

	/* Read-only. */
	tap_ok(fusefile_start(mnt, &be, true, false, &ff) == 0, "read-only");
	tap_ok(stat(mnt, &st) == 0 && (st.st_mode & 0777) == 0400,
	    "mode 0400");
	tap_ok(open(mnt, O_RDWR) < 0 && errno == EROFS,
	    "an open for writing: EROFS");
	fd = open(mnt, O_RDONLY);
	tap_ok(fd >= 0 && pread(fd, buf, 16, 0) == 16 &&
	    memcmp(buf, m.b, 16) == 0, "reads (through the page cache)");
	close(fd);
	tap_ok(!fusefile_ended(ff), "not ended while mounted");
	fusefile_stop(ff);
	tap_ok(!mounted(mnt), "stop unmounts");
	fusefile_stop(NULL);
	adoption(mnt, &m, be);
	free(m.b);
	remove_tree(dir);
	return tap_done();
}
