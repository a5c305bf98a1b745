/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Secure memory: every secret (passphrase, user key, master key, derived
 * keys) lives in pages that are locked in RAM, excluded from core dumps and
 * wiped before they are returned.  Each allocation gets its own mapping so a
 * wipe can never miss a neighbour's bytes.
 *
 * The wipe and the constant-time compare need no crypto library, so they
 * work before a backend is chosen and whichever one is: glibc's
 * explicit_bzero() is a memset the compiler may not drop, and the compare
 * reads every byte through a volatile pointer and branches on nothing but
 * the length.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "crypto.h"
#include "geli.h"

/* Under AddressSanitizer the shadow mappings make mlockall() impossible. */
#if defined(__SANITIZE_ADDRESS__)
#define GELI_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GELI_ASAN 1
#endif
#endif
#ifndef GELI_ASAN
#define GELI_ASAN 0
#endif

/* Header in front of the caller's bytes: the mapping's total length. */
struct secmem_hdr {
	size_t maplen;
	size_t pad;	/* keeps the payload 16-byte aligned */
};

static atomic_bool unlocked;

bool
geli_secure_unlocked(void)
{
	return atomic_load(&unlocked);
}

/* How a secret's mapping is shared with the children fork(2) makes. */
enum secmem_fork {
	SECMEM_WIPED,		/* they see zeros */
	SECMEM_COPIED,		/* they get a copy of their own */
	SECMEM_SHARED,		/* they share it (memfd_secret where offered) */
};

/* A memfd_secret(2) mapping of maplen, or MAP_FAILED where the kernel
 * offers none (-ENOSYS: too old, or secretmem.enable=0). */
static void *
secret_map(size_t maplen)
{
#ifdef SYS_memfd_secret
	void *p = MAP_FAILED;
	int fd = (int)syscall(SYS_memfd_secret, O_CLOEXEC);

	if (fd < 0)
		return MAP_FAILED;
	if (ftruncate(fd, (off_t)maplen) == 0)
		p = mmap(NULL, maplen, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	return p;
#else
	(void)maplen;
	return MAP_FAILED;
#endif
}

static void *
secure_map(size_t size, enum secmem_fork fork_mode, bool *secret)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t maplen;
	struct secmem_hdr *h = MAP_FAILED;

	if (size > SIZE_MAX - sizeof(*h) - page)
		return NULL;
	maplen = (size + sizeof(*h) + page - 1) / page * page;
	if (fork_mode == SECMEM_SHARED)
		h = secret_map(maplen);
	if (secret != NULL)
		*secret = h != MAP_FAILED;
	if (h == MAP_FAILED)
		h = mmap(NULL, maplen, PROT_READ | PROT_WRITE, MAP_ANONYMOUS |
		    (fork_mode == SECMEM_SHARED ? MAP_SHARED : MAP_PRIVATE),
		    -1, 0);
	if (h == MAP_FAILED)
		return NULL;
	/* Over RLIMIT_MEMLOCK (an ordinary user's is small): unlocked, and
	 * said so (geli_secure_unlocked); any other refusal is a failure.
	 * (memfd_secret's pages are locked by the kernel, and charged: it
	 * refuses mlock.) */
	if ((secret == NULL || !*secret) && mlock(h, maplen) != 0) {
		if (errno != ENOMEM && errno != EPERM && errno != EAGAIN) {
			munmap(h, maplen);
			return NULL;
		}
		atomic_store(&unlocked, true);
	}
	/*
	 * Defence in depth, so a refusal is no failure: geli_protect_process
	 * turns core dumps off anyway, and kernels before 4.14 refuse
	 * WIPEONFORK; failing there would leave no secure memory at all.
	 */
	(void)madvise(h, maplen, MADV_DONTDUMP);
	if (fork_mode == SECMEM_WIPED)
		(void)madvise(h, maplen, MADV_WIPEONFORK);
	h->maplen = maplen;
	return h + 1;
}

void *
geli_secure_alloc(size_t size)
{
	return secure_map(size, SECMEM_WIPED, NULL);
}

void *
geli_secure_alloc_inherited(size_t size)
{
	return secure_map(size, SECMEM_COPIED, NULL);
}

void *
geli_secure_alloc_shared(size_t size, bool *secret)
{
	return secure_map(size, SECMEM_SHARED, secret);
}

void
geli_secure_free(void *p)
{
	struct secmem_hdr *h;
	size_t maplen;

	if (p == NULL)
		return;
	h = (struct secmem_hdr *)p - 1;
	maplen = h->maplen;
	explicit_bzero(h, maplen);
	/* Our own whole mapping (locked above, or not: then munlock has
	 * nothing to do). */
	(void)munlock(h, maplen);
	(void)munmap(h, maplen);
}

void
geli_wipe(void *p, size_t len)
{
	if (p != NULL && len > 0)
		explicit_bzero(p, len);
}

/*
 * 4 KiB of this frame, and recursively the frames below it, wiped: the
 * recursion is no tail call (buf is used after it), so each call has a
 * frame of its own.
 */
static __attribute__((noinline)) void
burn(size_t len)
{
	uint8_t buf[4096];

	explicit_bzero(buf, sizeof(buf));
	if (len > sizeof(buf))
		burn(len - sizeof(buf));
	__asm__ __volatile__("" : : "r"(buf) : "memory");
}

void
secmem_burn_stack(size_t len)
{
	burn(len);
}

bool
geli_ct_equal(const void *a, const void *b, size_t len)
{
	/* Volatile: every byte is loaded, so no early exit on a difference. */
	const volatile uint8_t *x = a, *y = b;
	uint8_t d = 0;

	for (size_t i = 0; i < len; i++)
		d |= (uint8_t)(x[i] ^ y[i]);
	return d == 0;
}

int
geli_random(void *buf, size_t len)
{
	return gc_random(buf, len, false);
}

int
geli_random_key(void *buf, size_t len)
{
	return gc_random(buf, len, true);
}

int
geli_protect_dumps(void)
{
	struct rlimit rl = { 0, 0 };

	if (setrlimit(RLIMIT_CORE, &rl) != 0)
		return -errno;
	/* Not dumpable: no core, no ptrace or /proc/PID/mem by other users. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
		return -errno;
	return 0;
}

int
geli_protect_process(bool *locked)
{
	struct rlimit rl;
	bool lk = false;
	int error;

	if ((error = geli_protect_dumps()) != 0)
		return error;
	/*
	 * Lock everything only where the lock limit cannot make later
	 * allocations fail: unlimited, or root (CAP_IPC_LOCK).  Otherwise the
	 * secrets' own pages are still locked one by one.
	 */
	if (!GELI_ASAN && getrlimit(RLIMIT_MEMLOCK, &rl) == 0 &&
	    (rl.rlim_cur == RLIM_INFINITY || geteuid() == 0))
		lk = mlockall(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT) == 0;
	if (locked != NULL)
		*locked = lk;
	return 0;
}
