/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * common/fusefile.c: one FUSE file over a backend in memory, mounted for
 * real (root and /dev/fuse, else each check skips): reads and writes at any
 * offset reach the backend, the size and the sector-size attribute show,
 * open accounting, fallocate's zeroing and its refusals, read-only, a size
 * change, and the mount gone after stop.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
	struct fusefile_backend be = { .arg = &m, .sectorsize = 4096,
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
	free(m.b);
	remove_tree(dir);
	return tap_done();
}
