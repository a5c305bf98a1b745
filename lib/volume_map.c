/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The mapped-read path of a volume (GELI_VOLUME_MMAP): the provider mapped
 * read-only and shared, and sectors decrypted straight from the mapping
 * into the caller's buffer, one copy less than pread + decrypt in place.
 * Only pages already resident are read this way, and a page the kernel
 * cannot fill (SIGBUS) sends the read back to pread, which reports the
 * error.  volume.c decides when to try it.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

/*
 * A page of the mapping that the kernel cannot fill (a read error on the
 * disk, a file truncated underneath) raises SIGBUS in the thread that
 * touched it.  While a thread decrypts from a mapping it points map_jb at
 * its jump buffer, and the handler takes it back there; every other SIGBUS
 * goes to whatever handled it before.
 */
static _Thread_local sigjmp_buf *volatile map_jb;
bool volume_map_resident_only = true;
static _Thread_local const uint8_t *map_lo, *map_hi;
static struct sigaction map_old_bus;
static pthread_once_t map_bus_once = PTHREAD_ONCE_INIT;
static int map_bus_error;	/* sigaction's errno when the install failed */

static void
map_bus(int sig, siginfo_t *si, void *uc)
{
	const uint8_t *a = si->si_addr;

	if (map_jb != NULL && a >= map_lo && a < map_hi)
		siglongjmp(*map_jb, 1);
	/* Not ours: put the old disposition back and let the fault recur. */
	if (map_old_bus.sa_flags & SA_SIGINFO)
		map_old_bus.sa_sigaction(sig, si, uc);
	else if (map_old_bus.sa_handler != SIG_DFL &&
	    map_old_bus.sa_handler != SIG_IGN)
		map_old_bus.sa_handler(sig);
	else
		sigaction(SIGBUS, &map_old_bus, NULL);
}

static void
map_bus_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = map_bus;
	/* NODEFER: the jump leaves the handler; SIGBUS must stay deliverable. */
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, &map_old_bus) != 0)
		map_bus_error = errno;
}

void
volume_map_open(struct volume_map *m, struct geli_provider *p, uint64_t size)
{
	int fd = geli_provider_fd(p), fl = fcntl(fd, F_GETFL);
	void *a;

	memset(m, 0, sizeof(*m));
	if (size == 0 || size > SIZE_MAX || fl < 0 || (fl & O_DIRECT))
		return;
	/* Without the handler a bad page would kill the process: no mapping. */
	pthread_once(&map_bus_once, map_bus_install);
	if (map_bus_error != 0)
		return;
	a = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, fd, 0);
	if (a == MAP_FAILED)
		return;
	/*
	 * Never locked: in a process locked with mlockall(MCL_FUTURE), as the
	 * attach daemon is, every page read through the mapping would stay
	 * locked, up to the provider's size (seen: a 512 MiB machine whose
	 * attach daemons the OOM killer took, with 100-150 MiB of the disks
	 * each, under a pool).  Unlocked, they are page cache like any other.
	 */
	(void)munlock(a, (size_t)size);
	m->base = a;
	m->len = (size_t)size;
	m->pagesize = (size_t)sysconf(_SC_PAGESIZE);
}

void
volume_map_close(struct volume_map *m)
{
	/* munmap fails only for a range that is not a mapping: not this one. */
	if (m->base != NULL)
		(void)munmap((void *)(uintptr_t)m->base, m->len);
	memset(m, 0, sizeof(*m));
}

__attribute__((noinline)) int
volume_map_decrypt(const struct volume_map *m, struct sector_ctx *c,
    uint64_t first, size_t count, uint8_t *plain)
{
	const uint32_t S = c->g->S;
	const size_t pg = m->pagesize;
	unsigned char resident[VOLUME_CHUNK_BYTES / 4096 + 2];
	uintptr_t a, b;
	size_t npages;
	sigjmp_buf jb;
	int error = 0;

	if (m->base == NULL || (first + count) * S > m->len)
		return 1;
	a = (uintptr_t)(m->base + first * S);
	b = a + count * S;
	/*
	 * Only bytes already in the page cache: the others are better read
	 * with pread, whose readahead suits a disk and whose errors are
	 * errors, not signals.
	 */
	a &= ~(uintptr_t)(pg - 1);
	npages = (b - a + pg - 1) / pg;
	if (volume_map_resident_only) {
		if (npages > sizeof(resident) ||
		    mincore((void *)a, b - a, resident) != 0)
			return 1;
		for (size_t i = 0; i < npages; i++)
			if (!(resident[i] & 1))
				return 1;
	}
	if (sigsetjmp(jb, 0) != 0) {
		map_jb = NULL;
		return 1;
	}
	map_lo = m->base;
	map_hi = m->base + m->len;
	map_jb = &jb;
	error = sector_read_stored(c, first * S, count, m->base + first * S,
	    plain, S);
	map_jb = NULL;
	return error;
}
