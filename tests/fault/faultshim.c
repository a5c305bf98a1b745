/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * faultshim.so: an LD_PRELOAD shim for the CLI tests that makes the I/O of
 * one file fail (tests/cli/t_faults.sh).  It wraps pread, pwrite, fsync and
 * fdatasync (what the library calls on a provider: lib/provider.c) and acts
 * only on descriptors of the file FAULT_PATH names, matched by device and
 * inode (for a block device: by its device number), looked up on first use.
 * Everything else passes through untouched.  The environment says what to
 * inject:
 *
 *   FAULT_PATH=FILE          the file (nothing happens without it)
 *   FAULT_READ_EIO=OFF:LEN[,OFF:LEN]...
 *                            a read of these bytes fails with EIO; one that
 *                            starts before a range stops short at it, as a
 *                            disk's does, and the next call gets the EIO
 *   FAULT_WRITE_EIO=OFF:LEN[,...]   the same for writes
 *   FAULT_WRITE_ENOSPC=OFF   a write at or past OFF fails with ENOSPC; one
 *                            across OFF writes up to it (a full disk)
 *   FAULT_SHORT_READ=1, FAULT_SHORT_WRITE=1
 *                            every transfer moves about a third of what was
 *                            asked (len / 3 + 1 bytes: rarely sector-aligned)
 *   FAULT_EINTR=1            every other call fails with EINTR first
 *   FAULT_FSYNC_EIO=1        fsync and fdatasync fail with EIO
 *   FAULT_WRITE_DELAY_US=N   every write waits N microseconds first (a slow
 *                            disk: what writes the file takes at least
 *                            that long a write, however fast the machine)
 *   FAULT_LOG=FILE           one line per error injected, and one for the
 *                            first short transfer each way, appended
 *
 * Offsets are in bytes of the file, decimal or 0x hex.  It is built without
 * sanitizers (tests/fault/meson.build): under ASan it goes after libasan in
 * LD_PRELOAD and reaches ASan's interceptors through RTLD_NEXT.
 */
#undef _FILE_OFFSET_BITS	/* pread and pread64 are two symbols here */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define MAXRANGES 8

struct ranges {
	unsigned n;
	unsigned long long off[MAXRANGES], len[MAXRANGES];
};

static struct {
	bool on, blk;
	dev_t dev;
	ino_t ino;
	struct ranges read_eio, write_eio;
	bool enospc, short_read, short_write, eintr, fsync_eio;
	unsigned long long enospc_off;
	int logfd;
	unsigned long delay_us;
} F = { .logfd = -1 };

static pthread_once_t once = PTHREAD_ONCE_INIT;
static atomic_uint calls;
static atomic_bool shorted[2];

static ssize_t (*real_pread)(int, void *, size_t, off_t);
static ssize_t (*real_pwrite)(int, const void *, size_t, off_t);
static int (*real_fsync)(int);
static int (*real_fdatasync)(int);

static bool
flag(const char *name)
{
	const char *v = getenv(name);

	return v != NULL && strcmp(v, "0") != 0 && *v != '\0';
}

static void
parse_ranges(const char *name, struct ranges *r)
{
	const char *s = getenv(name);
	char *end;

	while (s != NULL && *s != '\0' && r->n < MAXRANGES) {
		r->off[r->n] = strtoull(s, &end, 0);
		if (*end != ':')
			break;
		r->len[r->n] = strtoull(end + 1, &end, 0);
		r->n++;
		s = *end == ',' ? end + 1 : NULL;
	}
}

static void
init(void)
{
	const char *path = getenv("FAULT_PATH"), *log = getenv("FAULT_LOG");
	struct stat st;

	real_pread = (ssize_t (*)(int, void *, size_t, off_t))
	    dlsym(RTLD_NEXT, "pread64");
	real_pwrite = (ssize_t (*)(int, const void *, size_t, off_t))
	    dlsym(RTLD_NEXT, "pwrite64");
	real_fsync = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
	real_fdatasync = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
	if (path == NULL || stat(path, &st) != 0)
		return;
	F.blk = S_ISBLK(st.st_mode);
	F.dev = F.blk ? st.st_rdev : st.st_dev;
	F.ino = st.st_ino;
	parse_ranges("FAULT_READ_EIO", &F.read_eio);
	parse_ranges("FAULT_WRITE_EIO", &F.write_eio);
	if (getenv("FAULT_WRITE_ENOSPC") != NULL) {
		F.enospc = true;
		F.enospc_off = strtoull(getenv("FAULT_WRITE_ENOSPC"), NULL, 0);
	}
	F.short_read = flag("FAULT_SHORT_READ");
	F.short_write = flag("FAULT_SHORT_WRITE");
	F.eintr = flag("FAULT_EINTR");
	F.fsync_eio = flag("FAULT_FSYNC_EIO");
	if (getenv("FAULT_WRITE_DELAY_US") != NULL)
		F.delay_us = strtoul(getenv("FAULT_WRITE_DELAY_US"), NULL, 0);
	if (log != NULL)
		F.logfd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
		    0644);
	F.on = true;
}

static void
logf_(const char *fmt, ...)
{
	char buf[200];
	va_list ap;
	int n;

	if (F.logfd < 0)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n > 0 && (size_t)n < sizeof(buf) - 1) {
		buf[n++] = '\n';
		(void)!write(F.logfd, buf, (size_t)n);
	}
}

static bool
target(int fd)
{
	struct stat st;

	pthread_once(&once, init);
	if (!F.on || fstat(fd, &st) != 0)
		return false;
	if (F.blk)
		return S_ISBLK(st.st_mode) && st.st_rdev == F.dev;
	return st.st_dev == F.dev && st.st_ino == F.ino;
}

/*
 * What a transfer of len bytes at off on the file may do: -1 with errno
 * set, or the number of bytes to pass on (at most len, at least 1).
 */
static ssize_t
plan(bool w, size_t len, off_t off)
{
	const struct ranges *r = w ? &F.write_eio : &F.read_eio;
	const char *op = w ? "pwrite" : "pread";
	unsigned long long a = (unsigned long long)off, b = a + len;

	if (F.eintr && (atomic_fetch_add(&calls, 1) & 1) == 0) {
		errno = EINTR;
		return -1;
	}
	for (unsigned i = 0; i < r->n; i++) {
		if (a >= r->off[i] + r->len[i] || b <= r->off[i])
			continue;
		if (a < r->off[i]) {
			b = r->off[i];	/* up to the bad range */
			continue;
		}
		logf_("%s off=%llu len=%zu: EIO", op, a, len);
		errno = EIO;
		return -1;
	}
	if (w && F.enospc) {
		if (a >= F.enospc_off) {
			logf_("%s off=%llu len=%zu: ENOSPC", op, a, len);
			errno = ENOSPC;
			return -1;
		}
		if (b > F.enospc_off)
			b = F.enospc_off;
	}
	if ((w ? F.short_write : F.short_read) && b - a > 1) {
		b = a + (b - a) / 3 + 1;
		if (!atomic_exchange(&shorted[w], true))
			logf_("%s off=%llu len=%zu: short, %llu", op, a, len,
			    b - a);
	}
	return (ssize_t)(b - a);
}

ssize_t
pread64(int fd, void *buf, size_t len, off64_t off)
{
	ssize_t n;

	if (!target(fd) || len == 0)
		return real_pread(fd, buf, len, off);
	/*
	 * No readahead where reads fail: the kernel's would bring the bad
	 * range into the page cache behind the shim's back (a read that
	 * stops short at the range, a sequential run up to it), where a
	 * disk's error would leave it out, and the daemon's mapped-read path
	 * would then serve it from there.
	 */
	if (F.read_eio.n > 0)
		(void)posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	n = plan(false, len, off);
	return n < 0 ? -1 : real_pread(fd, buf, (size_t)n, off);
}

ssize_t
pread(int fd, void *buf, size_t len, off_t off)
{
	return pread64(fd, buf, len, off);
}

ssize_t
pwrite64(int fd, const void *buf, size_t len, off64_t off)
{
	ssize_t n;

	if (!target(fd) || len == 0)
		return real_pwrite(fd, buf, len, off);
	if (F.delay_us != 0)
		usleep((useconds_t)F.delay_us);
	n = plan(true, len, off);
	return n < 0 ? -1 : real_pwrite(fd, buf, (size_t)n, off);
}

ssize_t
pwrite(int fd, const void *buf, size_t len, off_t off)
{
	return pwrite64(fd, buf, len, off);
}

static int
sync_fault(int fd, const char *op)
{
	if (!target(fd) || !F.fsync_eio)
		return 0;
	logf_("%s: EIO", op);
	errno = EIO;
	return -1;
}

int
fsync(int fd)
{
	return sync_fault(fd, "fsync") != 0 ? -1 : real_fsync(fd);
}

int
fdatasync(int fd)
{
	return sync_fault(fd, "fdatasync") != 0 ? -1 : real_fdatasync(fd);
}
