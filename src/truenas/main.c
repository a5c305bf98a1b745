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

#include "backup.h"
#include "disks.h"
#include "geli.h"
#include "rundir.h"
#include "spawn.h"
#include "tty.h"

#define MAXPASS (GELI_MAX_PASSLEN + 1)
#define MAXDISKS 64

static const char *progname = "geli-truenas";

struct opts {
	const char *disks[MAXDISKS];
	size_t ndisks;
	const char *keyfile, *recovery, *passfile;
	bool readonly;
};

/* Where each provider of a pool is, and whether the key opens it. */
enum where { W_MISSING, W_BY_UUID, W_BY_KEY };
enum keystate { K_UNTRIED, K_OPENS, K_WRONG, K_NOGELI, K_ERROR };
struct disk {
	const char *provider;	/* as the database names it; NULL: found by key */
	enum where where;
	struct part *part;
	enum keystate key;
	int slot;
	char why[160];		/* K_ERROR, K_NOGELI: what */
};

/* The key material for a pool: the key file's bytes and the passphrase. */
struct keys {
	uint8_t *key;		/* POOL_KEYLEN bytes, locked */
	size_t keylen;
	char *pass;		/* NULL: none; locked */
	bool recovery;
	const char *source;	/* where the key came from, for the listing */
};

static void __attribute__((format(printf, 1, 2)))
warnx(const char *fmt, ...)
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
	    "       %s attach [-r] [-d disk]... [-j passfile] [-k keyfile | -K "
	    "recoverykey] backup pool\n", progname, progname);
	exit(2);
}

/* A whole small file into locked memory: 0, or -1 with a message. */
static int
read_secret_file(const char *path, uint8_t **out, size_t *len, size_t max)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "re");
	uint8_t *buf;
	size_t n;

	if (f == NULL) {
		warnx("Cannot open %s: %s.", path, strerror(errno));
		return -1;
	}
	buf = geli_secure_alloc(max + 1);
	if (buf == NULL) {
		warnx("Cannot allocate memory.");
		if (f != stdin)
			fclose(f);
		return -1;
	}
	setvbuf(f, NULL, _IONBF, 0);	/* no copy in stdio's buffer */
	n = fread(buf, 1, max + 1, f);
	if (ferror(f) || n == 0 || n > max) {
		warnx("Cannot read %s: %s.", path, ferror(f) ? strerror(errno) :
		    n == 0 ? "it is empty" : "it is too large for a key");
		if (f != stdin)
			fclose(f);
		geli_secure_free(buf);
		return -1;
	}
	if (f != stdin)
		fclose(f);
	*out = buf;
	*len = n;
	return 0;
}

/* The passphrase: -j's first line (FreeNAS's passphrase files have no
 * newline), else typed at the terminal. */
static int
get_passphrase(const struct opts *o, const struct pool *p, char **out)
{
	char *pass = geli_secure_alloc(MAXPASS);
	int error;

	if (pass == NULL) {
		warnx("Cannot allocate memory.");
		return -1;
	}
	if (o->passfile != NULL) {
		uint8_t *buf;
		size_t len;

		if (read_secret_file(o->passfile, &buf, &len, MAXPASS - 1) != 0) {
			geli_secure_free(pass);
			return -1;
		}
		len = strcspn((char *)buf, "\n");
		memcpy(pass, buf, len < MAXPASS - 1 ? len : MAXPASS - 1);
		geli_secure_free(buf);
	} else {
		char prompt[300];

		snprintf(prompt, sizeof(prompt), "Enter passphrase for pool %s: ",
		    p->name);
		error = tty_read_secret(prompt, pass, MAXPASS);
		if (error != 0) {
			geli_secure_free(pass);
			warnx("Pool %s needs its passphrase: give it with -j "
			    "(cannot read it from a terminal: %s).", p->name,
			    strerror(-error));
			return -1;
		}
	}
	*out = pass;
	return 0;
}

static void
keys_free(struct keys *k)
{
	geli_secure_free(k->key);
	geli_secure_free(k->pass);
	memset(k, 0, sizeof(*k));
}

/*
 * The key material of pool p: -K (the recovery key, key only), else -k,
 * else the backup's geli/<uuid>.key; the passphrase when the pool has one
 * and ask is set.  0; 1 when there is no key (said in *k->source); -1 on
 * an error, said.
 */
static int
get_keys(const struct opts *o, const struct pool *p, bool ask, struct keys *k)
{
	memset(k, 0, sizeof(*k));
	if (o->recovery != NULL || o->keyfile != NULL) {
		k->recovery = o->recovery != NULL;
		k->source = k->recovery ? o->recovery : o->keyfile;
		if (read_secret_file(k->source, &k->key, &k->keylen, 4096) != 0)
			return -1;
	} else if (p->key != NULL) {
		k->key = geli_secure_alloc(POOL_KEYLEN);
		if (k->key == NULL) {
			warnx("Cannot allocate memory.");
			return -1;
		}
		memcpy(k->key, p->key, POOL_KEYLEN);
		k->keylen = POOL_KEYLEN;
		k->source = "the backup";
	} else {
		return 1;
	}
	if (p->encrypt == 2 && !k->recovery && (ask || o->passfile != NULL) &&
	    get_passphrase(o, p, &k->pass) != 0) {
		keys_free(k);
		return -1;
	}
	return 0;
}

/* Does k open the GELI provider at dev?  Read-only; the slot in d. */
static void
try_key(const char *dev, const struct keys *k, struct disk *d)
{
	struct geli_provider *prov;
	struct geli_metadata md;
	struct geli_ukey_ctx *ctx = NULL;
	struct geli_keymat km = { 0 };
	int error;

	error = geli_provider_open(dev, false, &prov);
	if (error != 0) {
		d->key = K_ERROR;
		snprintf(d->why, sizeof(d->why), "cannot open it: %s",
		    strerror(-error));
		return;
	}
	error = geli_provider_read_metadata(prov, &md);
	if (error != 0) {
		d->key = K_NOGELI;
		snprintf(d->why, sizeof(d->why), "no GELI metadata on it");
		geli_provider_close(prov);
		return;
	}
	if (k == NULL || k->key == NULL ||
	    (k->pass == NULL && md.iterations != -1 && !k->recovery)) {
		d->key = K_UNTRIED;
		geli_provider_close(prov);
		return;
	}
	error = geli_ukey_new(&ctx);
	if (error == 0)
		error = geli_ukey_update(ctx, k->key, k->keylen);
	km.keyfiles = ctx;
	km.nkeyfiles = 1;
	km.passphrase = k->pass;
	km.passlen = k->pass != NULL ? strlen(k->pass) : 0;
	if (error == 0)
		error = geli_unlock(prov, &md, &km, -1, 0, NULL, &d->slot);
	geli_ukey_free(ctx);
	geli_provider_close(prov);
	if (error == 0)
		d->key = K_OPENS;
	else if (error == -GELI_EWRONGKEY || error == -GELI_ENOPASSPHRASE)
		d->key = K_WRONG;
	else {
		d->key = K_ERROR;
		snprintf(d->why, sizeof(d->why), "%s", geli_strerror(error));
	}
}

/* A partition by PARTUUID, not yet claimed. */
static struct part *
by_uuid(struct part *parts, size_t nparts, const char *uuid)
{
	char want[40];
	size_t i;

	/* 13.0's pool.save_encrypteddisks may have stored "gptid/<uuid>.eli". */
	for (i = 0; uuid[i] != '\0' && uuid[i] != '.' && i + 1 < sizeof(want); i++)
		want[i] = (char)(uuid[i] >= 'A' && uuid[i] <= 'F' ?
		    uuid[i] - 'A' + 'a' : uuid[i]);
	want[i] = '\0';
	for (i = 0; i < nparts; i++)
		if (!parts[i].claimed && strcmp(parts[i].uuid, want) == 0)
			return &parts[i];
	return NULL;
}

/*
 * Where pool p's providers are: by PARTUUID, then (with a key) the
 * freebsd-zfs partitions that no provider claimed and that the key opens,
 * for the providers left (stale names, changed tables).  disks gets one
 * entry per provider and one per partition found by key; their count.
 */
static size_t
locate(const struct pool *p, struct part *parts, size_t nparts,
    const struct keys *k, struct disk *disks, size_t max)
{
	size_t n = 0, missing = 0;

	for (size_t i = 0; i < p->nproviders && n < max; i++) {
		struct disk *d = &disks[n++];
		const char *prov = p->providers[i];

		memset(d, 0, sizeof(*d));
		d->provider = prov;
		d->slot = -1;
		if (strncmp(prov, "gptid/", 6) == 0)
			d->part = by_uuid(parts, nparts, prov + 6);
		if (d->part == NULL) {
			missing++;
			continue;
		}
		d->part->claimed = true;
		d->where = W_BY_UUID;
		try_key(d->part->dev, k, d);
	}
	if (missing == 0 || k == NULL || k->key == NULL)
		return n;
	for (size_t i = 0; i < nparts && n < max && missing > 0; i++) {
		struct disk d = { .where = W_BY_KEY, .part = &parts[i],
		    .slot = -1 };

		if (parts[i].claimed || strcmp(parts[i].type, GPT_FREEBSD_ZFS) != 0)
			continue;
		try_key(parts[i].dev, k, &d);
		if (d.key != K_OPENS)
			continue;
		parts[i].claimed = true;
		disks[n++] = d;
		missing--;
	}
	return n;
}

static const char *
state_text(const struct disk *d, const struct keys *k, char *buf, size_t len)
{
	switch (d->key) {
	case K_OPENS:
		snprintf(buf, len, "the %s opens it (slot %d)",
		    k->recovery ? "recovery key" : k->pass != NULL ?
		    "key and passphrase" : "key", d->slot);
		break;
	case K_WRONG:
		snprintf(buf, len, "the %s does not open it",
		    k->recovery ? "recovery key" : k->pass != NULL ?
		    "key and passphrase" : "key");
		break;
	case K_UNTRIED:
		snprintf(buf, len, "GELI provider; %s", k == NULL ||
		    k->key == NULL ? "no key to try" :
		    "the passphrase is needed to try the key (-j)");
		break;
	default:
		snprintf(buf, len, "%s", d->why);
	}
	return buf;
}

/* The disks of pool p, printed; the count of disks the key opens. */
static size_t
print_disks(const struct pool *p, const struct disk *disks, size_t n,
    const struct keys *k, size_t *missing)
{
	size_t opens = 0;
	char st[200];

	*missing = 0;
	for (size_t i = 0; i < n; i++) {
		const struct disk *d = &disks[i];

		if (d->where == W_MISSING) {
			(*missing)++;
			continue;
		}
		if (d->key == K_OPENS)
			opens++;
		if (d->where == W_BY_UUID)
			printf("  %s: %s, %s\n", d->provider, d->part->dev,
			    state_text(d, k, st, sizeof(st)));
		else
			printf("  found by its key: %s (PARTUUID %s), %s\n",
			    d->part->dev, d->part->uuid,
			    state_text(d, k, st, sizeof(st)));
	}
	/* Providers not found: those the key did not account for. */
	size_t unfound = *missing, bykey = 0;

	for (size_t i = 0; i < n; i++)
		bykey += disks[i].where == W_BY_KEY;
	*missing = unfound > bykey ? unfound - bykey : 0;
	for (size_t i = 0; i < n && unfound > 0; i++) {
		if (disks[i].where != W_MISSING)
			continue;
		printf("  %s: %s\n", disks[i].provider, bykey > 0 ?
		    "not found by its PARTUUID" : "not found");
	}
	(void)p;
	return opens;
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
		warnx("%s", err);
		return -1;
	}
	error = parts_list(o->ndisks > 0 ? o->disks : NULL, o->ndisks, parts,
	    nparts);
	if (error != 0) {
		warnx("Cannot read the partition tables%s%s: %s.",
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
		print_disks(p, disks, n, kr == 0 ? &k : NULL, &missing);
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
		warnx("No pool %s in %s (see: %s list %s).", poolname, path,
		    progname, path);
		goto out;
	}
	if (p->encrypt == 0) {
		warnx("Pool %s is not encrypted: import it as it is (zpool "
		    "import %s).", p->name, p->name);
		goto out;
	}
	kr = get_keys(o, p, true, &k);
	if (kr == 1)
		warnx("No key for pool %s: %s holds none (saved without its "
		    "encryption keys); give the pool's key file with -k, or "
		    "its recovery key with -K.", p->name, path);
	if (kr != 0)
		goto out;
	n = locate(p, parts, nparts, &k, disks, sizeof(disks) /
	    sizeof(disks[0]));
	printf("Pool %s (GUID %s): GELI, %s; %zu disk%s.\n", p->name, p->guid,
	    encrypt_text(p->encrypt), p->nproviders,
	    p->nproviders == 1 ? "" : "s");
	opens = print_disks(p, disks, n, &k, &missing);
	if (opens == 0) {
		bool wrong = false;

		for (size_t i = 0; i < n; i++)
			wrong |= disks[i].key == K_WRONG;
		if (wrong)
			warnx("Wrong %s for pool %s: it opens none of its "
			    "disks; nothing attached.", k.recovery ?
			    "recovery key" : k.pass != NULL ?
			    "key or passphrase" : "key", p->name);
		else
			warnx("None of pool %s's disks is on this machine%s; "
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
				warnx("Cannot run %s (see GELI in "
				    "geli-truenas(8)).", geli_program());
			warnx("Cannot attach %s; the disks attached before it "
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
	printf("Import it with:\n  zpool import -d %s%s %s\n", rundir(),
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
		warnx("Unknown command: %s.", verb);
		usage();
	}
	argv++;
	argc--;
	while ((c = getopt(argc, argv, "d:j:k:K:r")) != -1) {
		switch (c) {
		case 'd':
			if (o.ndisks == MAXDISKS) {
				warnx("Too many disks (at most %d).", MAXDISKS);
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
		case 'r':
			if (strcmp(verb, "attach") != 0)
				usage();
			o.readonly = true;
			break;
		default:
			usage();
		}
	}
	if (o.keyfile != NULL && o.recovery != NULL) {
		warnx("Options -k and -K are mutually exclusive.");
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
