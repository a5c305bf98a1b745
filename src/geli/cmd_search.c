/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * geli search (not in FreeBSD): the GELI providers inside a device or image
 * whose partition table is gone, found by their metadata (geli_search), each
 * with the losetup(8) line that opens it.  Read-only.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

struct scan {
	const char *name;	/* as given */
	const char *path;	/* as opened */
	uint64_t size;
	unsigned found, rejected;
	bool tty;
	double last;		/* when progress was last shown */
};

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
clear_progress(struct scan *s)
{
	if (s->tty && s->last > 0) {
		fprintf(stderr, "\r%*s\r", 60, "");
		s->last = 0;
	}
}

static void
progress(uint64_t done, uint64_t total, void *arg)
{
	struct scan *s = arg;
	double t = now();

	if (!s->tty || (t - s->last < 0.25 && done < total))
		return;
	s->last = t;
	fprintf(stderr, "\rSearching %.40s: %3u%%", s->name,
	    (unsigned)(total == 0 ? 100 : done * 100 / total));
}

/* The path for a shell: as it is when only safe characters, else quoted. */
static void
print_shell_word(const char *w)
{
	if (w[0] != '\0' && strspn(w, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789/._-+,:@%=") == strlen(w)) {
		fputs(w, stdout);
		return;
	}
	putchar('\'');
	for (; *w != '\0'; w++) {
		if (*w == '\'')
			fputs("'\\''", stdout);
		else
			putchar(*w);
	}
	putchar('\'');
}

static int
found(const struct geli_found *f, void *arg)
{
	struct scan *s = arg;
	const struct geli_metadata *md = &f->md;

	clear_progress(s);
	if (f->decoded != 0) {
		s->rejected++;
		if (verbose)
			printf("Metadata at offset %ju of %s rejected: %s.\n\n",
			    (uintmax_t)f->mdoffset, s->name,
			    f->decoded == -ERANGE ? "the provider it describes "
			    "does not fit" : f->decoded == -EBADMSG ?
			    "MD5 mismatch" : f->decoded == -EOPNOTSUPP ?
			    "version too new" : "not a GELI record");
		return 0;
	}
	s->found++;
	printf("GELI provider at offset %ju of %s%s:\n", (uintmax_t)f->start,
	    s->name, f->start == 0 && md->provsize == s->size ?
	    " (the whole of it)" : "");
	printf("     start: %ju (sector %ju of %u bytes)\n", (uintmax_t)f->start,
	    (uintmax_t)(f->start / f->psectorsize), (unsigned)f->psectorsize);
	printf("      size: %ju\n", (uintmax_t)md->provsize);
	printf("   version: %u\n", (unsigned)md->version);
	printf("     ealgo: %s\n", geli_algo_name(md->ealgo));
	printf("    keylen: %u\n", (unsigned)md->keylen);
	if (md->flags & GELI_FLAG_AUTH)
		printf("     aalgo: %s\n", geli_algo_name(md->aalgo));
	printf("sectorsize: %u\n", (unsigned)md->sectorsize);
	printf("      keys: 0x%02x\n", (unsigned)md->keys);
	printf("     flags: 0x%x\n", (unsigned)md->flags);
	printf("open with: losetup --find --show --read-only --offset %ju "
	    "--sizelimit %ju ", (uintmax_t)f->start, (uintmax_t)md->provsize);
	if (f->psectorsize != 512)
		printf("--sector-size %u ", (unsigned)f->psectorsize);
	print_shell_word(s->path);
	printf("\n\n");
	return 0;
}

/* 0, or -1 with the reason said on stderr. */
static int
search_one(const char *name)
{
	struct msg_args a = { .prov = name };
	struct geli_provider *p;
	struct scan s = { .name = name, .tty = isatty(STDERR_FILENO) == 1 };
	char pbuf[4096], msg[1200];
	int error;

	s.path = prov_path(name, pbuf, sizeof(pbuf));
	error = geli_provider_open(s.path, false, &p);
	if (error != 0) {
		warnmsg("%s", msg_format(msg, sizeof(msg), OP_SEARCH,
		    GELI_STEP_OPEN, error, false, &a));
		return -1;
	}
	s.size = geli_provider_mediasize(p);
	error = geli_search(p, found, progress, &s);
	clear_progress(&s);
	geli_provider_close(p);
	if (error != 0) {
		warnmsg("%s", msg_format(msg, sizeof(msg), OP_SEARCH,
		    GELI_STEP_READ, error, false, &a));
		return -1;
	}
	if (s.found == 0) {
		warnmsg("No GELI provider found on %s%s.", name,
		    s.rejected > 0 && !verbose ? " (records rejected: see -v)" :
		    "");
		return -1;
	}
	if (verbose)
		printf("%u GELI provider%s found on %s.\n", s.found,
		    s.found == 1 ? "" : "s", name);
	return 0;
}

void
cmd_search(struct opts *o, int argc, char **argv)
{
	(void)o;
	if (argc < 1) {
		req_error("Too few arguments.");
		return;
	}
	for (int i = 0; i < argc; i++) {
		fflush(stdout);
		if (search_one(argv[i]) != 0)
			req_error("Not fully done.");
	}
}
