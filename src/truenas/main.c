/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * geli-truenas: a FreeNAS / TrueNAS CORE "legacy encrypted" pool (ZFS on
 * GELI) opened on Linux from the configuration backup (geli-truenas(8)).
 * The backup names the pool's providers (gptid/<PARTUUID>) and may hold
 * its key; each provider is looked for by its PARTUUID, else among the
 * freebsd-zfs partitions by trying the key, and attached with geli(8),
 * the secrets handed over through pipes.  Swap partitions are never
 * opened.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rundir.h"
#include "spawn.h"
#include "truenas.h"

static const char *progname = "geli-truenas";

void
tn_warn(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s: ", progname);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void __attribute__((noreturn))
usage(void)
{
	fprintf(stderr,
	    "usage: %s list [-d disk]... [-j passfile] [-k keyfile | -K "
	    "recoverykey] backup\n"
	    "       %s attach [-L] [-r] [-d disk]... [-j passfile] [-k keyfile | -K "
	    "recoverykey] backup pool\n", progname, progname);
	exit(2);
}

static const char *
encrypt_text(int e)
{
	return e == 1 ? "key" : e == 2 ? "key and passphrase" :
	    "unknown encryption";
}

static int
load(const struct opts *o, const char *path, struct backup *b,
    struct part **parts, size_t *nparts)
{
	char err[512];
	int error;

	if (backup_read(path, b, err, sizeof(err)) != 0) {
		tn_warn("%s", err);
		return -1;
	}
	error = parts_list(o->ndisks > 0 ? o->disks : NULL, o->ndisks, parts,
	    nparts);
	if (error != 0) {
		tn_warn("Cannot read the partition tables%s%s: %s.",
		    o->ndisks > 0 ? " of " : "", o->ndisks > 0 ? o->disks[0] : "",
		    strerror(-error));
		backup_free(b);
		return -1;
	}
	return 0;
}

static int
cmd_list(const struct opts *o, const char *path)
{
	struct backup b;
	struct part *parts;
	size_t nparts;
	int rc = 0;

	if (load(o, path, &b, &parts, &nparts) != 0)
		return 1;
	printf("Backup %s: %zu pool%s%s.\n", path, b.npools,
	    b.npools == 1 ? "" : "s", b.had_geli_dir ?
	    ", encryption keys included" : "");
	for (size_t i = 0; i < b.npools; i++) {
		struct pool *p = &b.pools[i];
		struct disk disks[MAXDISKS * 2];
		struct keys k;
		size_t n, missing;
		int kr;

		if (p->encrypt == 0) {
			printf("\nPool %s (GUID %s): not encrypted.\n", p->name,
			    p->guid);
			continue;
		}
		kr = get_keys(o, p, false, &k);
		if (kr < 0) {
			rc = 1;
			continue;
		}
		printf("\nPool %s (GUID %s): GELI, %s; %zu disk%s.\n", p->name,
		    p->guid, encrypt_text(p->encrypt), p->nproviders,
		    p->nproviders == 1 ? "" : "s");
		if (kr == 1)
			printf("  key: not in the backup (give the pool's key "
			    "file with -k, or its recovery key with -K)\n");
		else
			printf("  key: %s%s\n", k.recovery ? "recovery key " : "",
			    k.source);
		n = locate(p, parts, nparts, kr == 0 ? &k : NULL, disks,
		    sizeof(disks) / sizeof(disks[0]));
		print_disks(disks, n, kr == 0 ? &k : NULL, &missing);
		if (missing > 0)
			printf("  %zu of %zu disks not found: the pool would be "
			    "DEGRADED, or not import if it lacks more than its "
			    "redundancy.\n", missing, p->nproviders);
		keys_free(&k);
	}
	free(parts);
	backup_free(&b);
	return rc;
}

/* geli(8): $GELI, else the geli beside this program, else the PATH's. */
static const char *
geli_program(void)
{
	static char path[4096];
	const char *env = getenv("GELI"), *self = self_exe(), *slash;

	if (env != NULL && env[0] != '\0')
		return env;
	slash = strrchr(self, '/');
	if (slash != NULL && (size_t)(slash - self) + 6 < sizeof(path)) {
		snprintf(path, sizeof(path), "%.*s/geli", (int)(slash - self),
		    self);
		if (access(path, X_OK) == 0)
			return path;
	}
	return "geli";
}

/* A pipe holding len bytes of data and closed for writing: its reading
 * end, or -1.  (The pipe's buffer, 64 KiB, holds any key.) */
static int
secret_pipe(const void *data, size_t len)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC) != 0)
		return -1;
	if (write(p[1], data, len) != (ssize_t)len) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	close(p[1]);
	return p[0];
}

/* geli attach of one partition, the key on its stdin, the passphrase on
 * descriptor 3: geli's exit status (its messages go to our stderr). */
static int
geli_attach(const struct opts *o, const struct keys *k, const char *dev)
{
	const char *argv[12];
	struct spawn s = { .argv = argv };
	int n = 0, rc;

	argv[n++] = geli_program();
	argv[n++] = "attach";
	if (o->readonly)
		argv[n++] = "-r";
	if (o->blockdev)
		argv[n++] = "-L";
	argv[n++] = "-k";
	argv[n++] = "-";
	argv[n++] = k->pass != NULL ? "-j" : "-p";
	if (k->pass != NULL)
		argv[n++] = "/dev/fd/3";
	argv[n++] = dev;
	argv[n] = NULL;
	s.stdin_fd = secret_pipe(k->key, k->keylen);
	if (k->pass != NULL) {
		/* The first line of the passfile is the passphrase. */
		char *line = geli_secure_alloc(MAXPASS + 1);
		size_t len = strlen(k->pass);

		if (line != NULL) {
			memcpy(line, k->pass, len);
			line[len] = '\n';
			s.fd3 = secret_pipe(line, len + 1);
			geli_secure_free(line);
		}
		if (s.fd3 <= 0) {
			if (s.stdin_fd > 0)
				close(s.stdin_fd);
			return -1;
		}
	}
	if (s.stdin_fd <= 0)
		return -1;
	fflush(stdout);		/* ours before geli's */
	rc = spawn_run(&s);
	close(s.stdin_fd);
	if (s.fd3 > 0)
		close(s.fd3);
	return rc;
}

static void
geli_detach(const char *name)
{
	run_cmd(SPAWN_NO_STDOUT, NULL, NULL, geli_program(), "detach", name,
	    NULL);
}

static int
cmd_attach(const struct opts *o, const char *path, const char *poolname)
{
	struct backup b;
	struct part *parts;
	size_t nparts;
	struct disk disks[MAXDISKS * 2];
	struct pool *p;
	struct keys k;
	size_t n, missing, opens, done = 0;
	const char *names[MAXDISKS * 2];
	int kr, rc = 1;

	if (load(o, path, &b, &parts, &nparts) != 0)
		return 1;
	memset(&k, 0, sizeof(k));
	p = backup_pool(&b, poolname);
	if (p == NULL) {
		tn_warn("No pool %s in %s (see: %s list %s).", poolname, path,
		    progname, path);
		goto out;
	}
	if (p->encrypt == 0) {
		tn_warn("Pool %s is not encrypted: import it as it is (zpool "
		    "import %s).", p->name, p->name);
		goto out;
	}
	kr = get_keys(o, p, true, &k);
	if (kr == 1)
		tn_warn("No key for pool %s: %s holds none (saved without its "
		    "encryption keys); give the pool's key file with -k, or "
		    "its recovery key with -K.", p->name, path);
	if (kr != 0)
		goto out;
	n = locate(p, parts, nparts, &k, disks, sizeof(disks) /
	    sizeof(disks[0]));
	printf("Pool %s (GUID %s): GELI, %s; %zu disk%s.\n", p->name, p->guid,
	    encrypt_text(p->encrypt), p->nproviders,
	    p->nproviders == 1 ? "" : "s");
	opens = print_disks(disks, n, &k, &missing);
	if (opens == 0) {
		bool wrong = false;

		for (size_t i = 0; i < n; i++)
			wrong |= disks[i].key == K_WRONG;
		if (wrong)
			tn_warn("Wrong %s for pool %s: it opens none of its "
			    "disks; nothing attached.", k.recovery ?
			    "recovery key" : k.pass != NULL ?
			    "key or passphrase" : "key", p->name);
		else
			tn_warn("None of pool %s's disks is on this machine%s; "
			    "nothing attached.", p->name, o->ndisks > 0 ?
			    " (among the disks given with -d)" : "");
		goto out;
	}
	/* All that open, or none: a failure undoes the attaches before it. */
	for (size_t i = 0; i < n; i++) {
		if (disks[i].key != K_OPENS)
			continue;
		int st = geli_attach(o, &k, disks[i].part->dev);

		if (st != 0) {
			if (st == 127)
				tn_warn("Cannot run %s (see GELI in "
				    "geli-truenas(8)).", geli_program());
			tn_warn("Cannot attach %s; the disks attached before it "
			    "are detached again.", disks[i].part->dev);
			while (done > 0)
				geli_detach(names[--done]);
			goto out;
		}
		names[done++] = disks[i].part->name;
	}
	printf("Attached %zu of %zu disks of pool %s%s.\n", done, p->nproviders,
	    p->name, o->readonly ? ", read-only" : "");
	if (done < p->nproviders)
		printf("%zu disk%s missing or not opened: the pool will be "
		    "DEGRADED, or will not import if it lacks more than its "
		    "redundancy.\n", p->nproviders - done,
		    p->nproviders - done == 1 ? " is" : "s are");
	printf("Import it with:\n  zpool import -d %s%s %s\n",
	    o->blockdev ? devdir() : rundir(),
	    o->readonly ? " -o readonly=on" : "", p->name);
	printf("Detach the disks after zpool export with:\n  geli detach");
	for (size_t i = 0; i < done; i++)
		printf(" %s", names[i]);
	printf("\n");
	rc = 0;
out:
	keys_free(&k);
	free(parts);
	backup_free(&b);
	return rc;
}

int
main(int argc, char **argv)
{
	struct opts o = { .ndisks = 0 };
	const char *verb;
	int c;

	if (argc < 2)
		usage();
	verb = argv[1];
	if (strcmp(verb, "list") != 0 && strcmp(verb, "attach") != 0) {
		if (strcmp(verb, "help") == 0 || strcmp(verb, "-h") == 0)
			usage();
		tn_warn("Unknown command: %s.", verb);
		usage();
	}
	argv++;
	argc--;
	while ((c = getopt(argc, argv, "d:j:k:K:Lr")) != -1) {
		switch (c) {
		case 'd':
			if (o.ndisks == MAXDISKS) {
				tn_warn("Too many disks (at most %d).", MAXDISKS);
				return 2;
			}
			o.disks[o.ndisks++] = optarg;
			break;
		case 'j':
			o.passfile = optarg;
			break;
		case 'k':
			o.keyfile = optarg;
			break;
		case 'K':
			o.recovery = optarg;
			break;
		case 'L':
		case 'r':
			if (strcmp(verb, "attach") != 0)
				usage();
			if (c == 'L')
				o.blockdev = true;
			else
				o.readonly = true;
			break;
		default:
			usage();
		}
	}
	if (o.keyfile != NULL && o.recovery != NULL) {
		tn_warn("Options -k and -K are mutually exclusive.");
		return 2;
	}
	argc -= optind;
	argv += optind;
	if (strcmp(verb, "list") == 0) {
		if (argc != 1)
			usage();
		return cmd_list(&o, argv[0]);
	}
	if (argc != 2)
		usage();
	return cmd_attach(&o, argv[0], argv[1]);
}
