/* SPDX-License-Identifier: BSD-2-Clause */
/* common/keyfiles.c: keyfiles into a user-key context, in order. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "files.h"
#include "geli.h"
#include "keyfiles.h"
#include "tap.h"

/* The user key of ctx (no passphrase) for a record of version 7. */
static void
ukey_of(const struct geli_ukey_ctx *ctx, uint8_t *out)
{
	struct geli_metadata md;

	memset(&md, 0, sizeof(md));
	md.version = GELI_VERSION;
	md.iterations = -1;
	geli_ukey_final(ctx, &md, NULL, 0, out);
}

int
main(void)
{
	char dir[] = "/tmp/test_keyfiles.XXXXXX", a[4200], b[4200], e[4200];
	char missing[4200], msg[4300];
	struct geli_ukey_ctx *ctx, *want;
	uint8_t k1[64], k2[64];
	int pfd[2], saved;

	if (mkdtemp(dir) == NULL) {
		tap_ok(0, "mkdtemp");
		return tap_done();
	}
	snprintf(a, sizeof(a), "%s/a", dir);
	snprintf(b, sizeof(b), "%s/b", dir);
	snprintf(e, sizeof(e), "%s/empty", dir);
	snprintf(missing, sizeof(missing), "%s/missing", dir);
	write_file(a, "first part|");
	write_file(b, "second part");
	write_file(e, "");

	/* In order: the bytes of a, then b, exactly. */
	geli_ukey_new(&ctx);
	geli_ukey_new(&want);
	geli_ukey_update(want, "first part|second part", 22);
	const char *ab[] = { a, e, b };
	tap_ok(keyfiles_read(ctx, ab, 3, msg, sizeof(msg)) == 0,
	    "three keyfiles, one empty");
	ukey_of(ctx, k1);
	ukey_of(want, k2);
	tap_ok(memcmp(k1, k2, 64) == 0, "their bytes in order make the key");
	geli_ukey_free(ctx);

	geli_ukey_new(&ctx);
	const char *ba[] = { b, a };
	keyfiles_read(ctx, ba, 2, msg, sizeof(msg));
	ukey_of(ctx, k1);
	tap_ok(memcmp(k1, k2, 64) != 0, "another order, another key");
	geli_ukey_free(ctx);

	/* "-" is stdin. */
	saved = dup(STDIN_FILENO);
	if (pipe(pfd) == 0) {
		tap_ok(write(pfd[1], "first part|", 11) == 11, "stdin is a pipe");
		close(pfd[1]);
		dup2(pfd[0], STDIN_FILENO);
		close(pfd[0]);
	}
	geli_ukey_new(&ctx);
	const char *sb[] = { "-", b };
	tap_ok(keyfiles_read(ctx, sb, 2, msg, sizeof(msg)) == 0, "- and b");
	ukey_of(ctx, k1);
	tap_ok(memcmp(k1, k2, 64) == 0, "- read stdin to its end");
	geli_ukey_free(ctx);
	dup2(saved, STDIN_FILENO);
	close(saved);

	/* What cannot be read, said. */
	geli_ukey_new(&ctx);
	const char *am[] = { a, missing };
	tap_ok(keyfiles_read(ctx, am, 2, msg, sizeof(msg)) == -1,
	    "a missing keyfile fails");
	tap_ok(strstr(msg, "Cannot open keyfile ") == msg &&
	    strstr(msg, "/missing: No such file or directory.") != NULL,
	    "\"%s\"", msg);
	const char *d[] = { dir };
	tap_ok(keyfiles_read(ctx, d, 1, msg, sizeof(msg)) == -1 &&
	    strstr(msg, "Cannot read keyfile ") == msg &&
	    strstr(msg, ": Is a directory.") != NULL, "a directory: \"%s\"",
	    msg);
	tap_ok(keyfiles_read(ctx, NULL, 0, msg, sizeof(msg)) == 0,
	    "no keyfiles: nothing to do");
	geli_ukey_free(ctx);
	geli_ukey_free(want);

	/* Passfiles: the first line of each, joined; too long; missing. */
	char pass[GELI_MAX_PASSLEN + 1], p1[4200], p2[4200], big[4200];
	FILE *f;

	snprintf(p1, sizeof(p1), "%s/p1", dir);
	snprintf(p2, sizeof(p2), "%s/p2", dir);
	snprintf(big, sizeof(big), "%s/big", dir);
	if ((f = fopen(p1, "w")) != NULL) {
		fputs("one\nnot this\n", f);
		fclose(f);
	}
	if ((f = fopen(p2, "w")) != NULL) {
		fputs("two", f);
		fclose(f);
	}
	if ((f = fopen(big, "w")) != NULL) {
		for (int i = 0; i <= GELI_MAX_PASSLEN; i++)
			fputc('x', f);
		fclose(f);
	}
	const char *pp[] = { p1, p2 };
	tap_ok(passfiles_read(pass, pp, 2, msg, sizeof(msg)) == 0 &&
	    strcmp(pass, "onetwo") == 0, "passfiles: first lines joined (%s)",
	    pass);
	const char *pb[] = { big };
	tap_ok(passfiles_read(pass, pb, 1, msg, sizeof(msg)) == -1 &&
	    strstr(msg, "Passphrase in ") == msg &&
	    strstr(msg, "/big too long.") != NULL, "\"%s\"", msg);
	const char *pm[] = { p1, missing };
	tap_ok(passfiles_read(pass, pm, 2, msg, sizeof(msg)) == -1 &&
	    strstr(msg, "Cannot open passfile ") == msg,
	    "a missing passfile: \"%s\"", msg);
	remove_tree(dir);
	return tap_done();
}
