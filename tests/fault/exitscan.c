/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * exitscan.so, preloaded by tests/cli/t_secrets.sh: when the process ends
 * (a library destructor, after the program's own exit handlers), count how
 * often each pattern of $EXITSCAN_PATTERNS (a file of hex strings, one per
 * line) is still in the process's writable memory, and write the counts,
 * one line, to $EXITSCAN_OUT.  That is what a program left of the secrets
 * it read: "wiped after use" means 0.  The patterns themselves live in a
 * mapping of their own that the scan cuts out of whatever region holds it
 * (the kernel may merge it with a neighbour), and it leaves out regions
 * over 1 GiB (AddressSanitizer's shadow memory).
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAXPAT 8
#define MAXLEN 512

struct pats {
	size_t n, len[MAXPAT];
	unsigned char pat[MAXPAT][MAXLEN];
	unsigned long count[MAXPAT];
	char line[4096];
	unsigned char chunk[1 << 20];	/* what is being scanned */
};

static int
unhex(const char *h, unsigned char *out, size_t max)
{
	size_t n = 0;
	unsigned v;

	while (h[0] != '\0' && h[0] != '\n' && h[1] != '\0' && n < max) {
		if (sscanf(h, "%2x", &v) != 1)
			return -1;
		out[n++] = (unsigned char)v;
		h += 2;
	}
	return (int)n;
}

/*
 * One region of our memory through /proc/self/mem (unreadable parts end
 * the region instead of faulting).  Each chunk owns the matches that start
 * in it before its last MAXLEN - 1 bytes, which the next chunk starts with;
 * the last chunk owns all of its own.
 */
static void
scan(struct pats *p, int mem, uintptr_t a, uintptr_t b)
{
	const size_t overlap = MAXLEN - 1;

	for (uintptr_t off = a; off < b;) {
		size_t want = b - off < sizeof(p->chunk) ?
		    b - off : sizeof(p->chunk);
		ssize_t n = pread(mem, p->chunk, want, (off_t)off);
		bool last;
		size_t own;

		if (n <= 0)
			return;
		last = (size_t)n < want || off + (uintptr_t)n >= b;
		own = last ? (size_t)n : (size_t)n - overlap;
		for (size_t i = 0; i < p->n; i++)
			for (size_t j = 0; j < own && j + p->len[i] <= (size_t)n;
			    j++)
				if (memcmp(p->chunk + j, p->pat[i],
				    p->len[i]) == 0)
					p->count[i]++;
		if (last)
			return;
		off += own;
	}
}

__attribute__((destructor)) static void
exitscan(void)
{
	const char *in = getenv("EXITSCAN_PATTERNS"), *out = getenv("EXITSCAN_OUT");
	struct pats *p;
	FILE *f, *maps;
	uintptr_t pa, pb;
	int mem;

	if (in == NULL || out == NULL)
		return;
	p = mmap(NULL, sizeof(*p), PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return;
	pa = (uintptr_t)p;
	pb = pa + ((sizeof(*p) + 4095) & ~(size_t)4095);
	memset(p, 0, sizeof(*p));
	f = fopen(in, "r");
	if (f == NULL)
		return;
	while (p->n < MAXPAT && fgets(p->line, sizeof(p->line), f) != NULL) {
		int n = unhex(p->line, p->pat[p->n], MAXLEN);
		if (n > 0)
			p->len[p->n++] = (size_t)n;
	}
	memset(p->line, 0, sizeof(p->line));
	fclose(f);
	maps = fopen("/proc/self/maps", "r");
	mem = open("/proc/self/mem", O_RDONLY);
	if (maps == NULL || mem < 0)
		return;
	while (fgets(p->line, sizeof(p->line), maps) != NULL) {
		unsigned long a, b;
		char perm[8];

		if (sscanf(p->line, "%lx-%lx %7s", &a, &b, perm) != 3 ||
		    perm[0] != 'r' || perm[1] != 'w')
			continue;
		/* A sanitizer's shadow: terabytes reserved, nothing of ours. */
		if (b - a > (1ul << 30))
			continue;
		/*
		 * The patterns themselves are left out: their mapping may
		 * have merged with a neighbour, so cut it out of the region.
		 */
		if (pa < b && pb > a) {
			if (a < pa)
				scan(p, mem, a, pa);
			if (pb < b)
				scan(p, mem, pb, b);
			continue;
		}
		scan(p, mem, a, b);
	}
	fclose(maps);
	close(mem);
	f = fopen(out, "w");
	if (f == NULL)
		return;
	for (size_t i = 0; i < p->n; i++)
		fprintf(f, "%s%lu", i > 0 ? " " : "", p->count[i]);
	fprintf(f, "\n");
	fclose(f);
	memset(p, 0, sizeof(*p));
	munmap(p, sizeof(*p));
}
