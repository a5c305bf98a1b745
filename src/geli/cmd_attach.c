/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The runtime verbs (§9.2–§9.4, §9.11, §9.16): attach, detach, onetime,
 * suspend, resume, list, status.  An attached provider is served by its own
 * daemon (src/attach/daemon.c); these verbs start it or talk to it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../attach/daemon.h"
#include "cli.h"

/* ---- Names of attached providers ------------------------------------------------- */

static void
name_of(const char *prov, char *name, size_t len)
{
	char buf[4096], path[4096];

	snprintf(path, sizeof(path), "%s", prov_path(prov, buf, sizeof(buf)));
	snprintf(name, len, "%s", basename(path));
}

bool
attached_name(const char *arg, char *name, size_t len)
{
	char cand[4096], rp1[4096], rp2[4096], buf[4096];
	struct ctl_status *st;
	bool found = false;
	size_t l;

	st = malloc(sizeof(*st));
	if (st == NULL)
		return false;
	/*
	 * As FreeBSD's g_eli_find_device, the newest device first: a device
	 * whose provider is arg (for "x.eli" that is the device stacked on
	 * x.eli, newer than x's), then "x.eli", "/run/geli/x.eli": x's.
	 */
	name_of(arg, cand, sizeof(cand));
	found = ctl_status(cand, st) == 0 &&
	    !(realpath(st->provpath, rp1) != NULL &&
	    realpath(prov_path(arg, buf, sizeof(buf)), rp2) != NULL &&
	    strcmp(rp1, rp2) != 0);
	if (!found) {
		snprintf(buf, sizeof(buf), "%s", arg);
		snprintf(cand, sizeof(cand), "%s", basename(buf));
		l = strlen(cand);
		if (l > 4 && strcmp(cand + l - 4, ".eli") == 0) {
			cand[l - 4] = '\0';
			found = ctl_status(cand, st) == 0;
		}
	}
	if (found)
		snprintf(name, len, "%s", cand);
	free(st);
	return found;
}

#define RUNDIR_NOT_PRIVATE \
	"the run directory is not a directory of yours that only you can write"

static void
rundir_refused(void)
{
	req_error("Cannot use %s: %s.", rundir(), RUNDIR_NOT_PRIVATE);
}

/* Every attached name, sorted; returns the count (free with
 * attached_names_free). */
int
attached_names(char ***out)
{
	char **names = NULL;
	struct dirent *e;
	DIR *dir;
	int n = 0;

	*out = NULL;
	/* Not ours alone: nothing in it is asked (ctl_call refuses), say why. */
	if (rundir_private() == -EPERM) {
		rundir_refused();
		return 0;
	}
	dir = opendir(rundir());
	if (dir == NULL)
		return 0;
	while ((e = readdir(dir)) != NULL) {
		size_t l = strlen(e->d_name);
		char nm[256];

		if (l <= 4 || strcmp(e->d_name + l - 4, ".ctl") != 0 || l - 4 >= sizeof(nm))
			continue;
		snprintf(nm, sizeof(nm), "%.*s", (int)(l - 4), e->d_name);
		if (ctl_status(nm, NULL) != 0)
			continue;
		char **nn = realloc(names, sizeof(*names) * (size_t)(n + 1));
		if (nn == NULL)
			break;
		names = nn;
		names[n++] = strdup(nm);
	}
	closedir(dir);
	for (int i = 1; i < n; i++)	/* insertion sort: a handful of names */
		for (int j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
			char *t = names[j];
			names[j] = names[j - 1];
			names[j - 1] = t;
		}
	*out = names;
	return n;
}

void
attached_names_free(char **names, int n)
{
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* A daemon that died leaves its files: remove them (and a dead mount). */
static void
clean_stale(const char *name)
{
	char path[4096];
	int error = ctl_status(name, NULL);

	/* Gone only when nobody answers (a daemon that answered garbage is
	 * still there). */
	if (error != -ENOENT && error != -ECONNREFUSED)
		return;
	if (rundir_path(name, ".eli", path, sizeof(path)) == 0) {
		(void)umount2(path, MNT_DETACH);
		(void)unlink(path);
	}
	if (rundir_path(name, ".ctl", path, sizeof(path)) == 0)
		(void)unlink(path);
}

/* -L before anything is asked or read: only root makes loop devices. */
static bool
loop_allowed(struct opts *o)
{
	if (!opt_bool(o, 'L') || geteuid() == 0)
		return true;
	req_error("Cannot create a loop device: -L needs root.");
	return false;
}

static int
ensure_rundir(void)
{
	const char *d = rundir();

	if (make_dirs(d, 0755) != 0) {
		req_error("Cannot create %s: %s.", d, strerror(errno));
		return -1;
	}
	if (rundir_private() != 0) {
		rundir_refused();
		return -1;
	}
	return 0;
}

/* GELI_MMAP=0: the daemon reads the provider with pread only. */
static bool
mmap_off(void)
{
	const char *v = getenv("GELI_MMAP");

	return v != NULL && strcmp(v, "0") == 0;
}

/*
 * Attaches take turns from the stale-file check until their daemon has
 * answered: otherwise a second attach of a provider finds the first one's
 * daemon starting (its .eli made, its socket not yet bound), takes its files
 * for stale and removes them, and both fail.  A POSIX lock: the daemon, a
 * forked child, does not inherit it, and it ends with this process.
 */
static int
start_lock(void)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	char path[4096];
	int fd;

	if (rundir_path(".attach", ".lock", path, sizeof(path)) != 0)
		return -1;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	while (fcntl(fd, F_SETLKW, &fl) != 0) {
		if (errno != EINTR) {
			close(fd);
			return -1;	/* no turns, as before */
		}
	}
	return fd;
}

static void
start_unlock(int fd)
{
	if (fd >= 0)
		close(fd);
}

/* ---- attach ------------------------------------------------------------------------ */

static void
attach_one(struct opts *o, struct keysrc *ks, const char *prov)
{
	struct attach_req r;
	struct mdsrc src;
	struct msg_args a = { .prov = prov };
	uint8_t *ukey = NULL, *mkey = NULL;
	char name[256], path[4096], buf[4096], loopdev[64], msg[1200];
	intmax_t keyno = opt_num(o, 'n');
	int error, used, lk = -1;
	bool unlocked = false;

	memset(&r, 0, sizeof(r));
	name_of(prov, name, sizeof(name));
	if (mdsrc_open_provider(&src, prov, false, &r.md) != 0)
		return;
	/*
	 * What the kernel would refuse after the user key was made (or
	 * could not attach at all), refused before it is made: a hostile
	 * record may ask for any number of iterations.
	 */
	error = r.md.provsize != geli_provider_mediasize(src.prov) ?
	    -GELI_ESIZE : r.md.keys == 0 ? -GELI_ENOKEYS :
	    geli_metadata_check(&r.md, geli_provider_mediasize(src.prov),
	    geli_provider_sectorsize(src.prov));
	if (error != 0) {
		req_msg(OP_ATTACH, GELI_STEP_NONE, error, &a);
		goto out;
	}
	if (keyno < -1 || keyno >= GELI_MAXMKEYS) {
		req_error("Invalid '%s' argument.", "keyno");
		goto out;
	}
	ukey = geli_secure_alloc(GELI_USERKEYLEN);
	mkey = geli_secure_alloc(GELI_MKEY_DATALEN);
	if (ukey == NULL || mkey == NULL) {
		req_error("Cannot allocate memory.");
		goto out;
	}
	if (keysrc_ukey(ks, &r.md, ukey) != 0)
		goto out;
	error = geli_mkey_decrypt(&r.md, ukey, (int)keyno, mkey, &used);
	if (error == -GELI_EWRONGKEY) {
		req_msg(OP_ATTACH, GELI_STEP_NONE, error, &a);
		goto out;
	} else if (error != 0) {
		req_error("Cannot decrypt Master Key for %s (error=%d).", prov,
		    -error);
		goto out;
	}
	if (opt_bool(o, 'C'))
		goto out;	/* -C: the key is right; attach nothing */
	if (ensure_rundir() != 0)
		goto out;
	lk = start_lock();
	clean_stale(name);
	if (rundir_path(name, ".ctl", path, sizeof(path)) == 0 &&
	    access(path, F_OK) == 0) {
		req_error("Provider %s.eli already exists.", name);
		goto out;
	}
	r.prov = prov;
	/* The daemon runs in /: it needs the absolute path. */
	if (realpath(prov_path(prov, buf, sizeof(buf)), path) == NULL) {
		req_error("Cannot open %s: %s.", prov, strerror(errno));
		goto out;
	}
	r.provpath = path;
	r.name = name;
	r.used_key = used;
	r.flags = (opt_bool(o, 'r') ? GELI_FLAG_RO : 0) |
	    (opt_bool(o, 'd') ? GELI_FLAG_WO_DETACH : 0);
	r.loop = opt_bool(o, 'L');
	r.nomap = mmap_off();
	mdsrc_close(&src);
	if (daemon_start(&r, mkey, loopdev, sizeof(loopdev), &unlocked, msg,
	    sizeof(msg)) != 0) {
		req_error("%s", msg);
		goto out;
	}
	if (unlocked)
		warn_unlocked();
	if (verbose)
		printf("Attached to %s.\n", prov);
	if (r.loop)
		printf("%s\n", loopdev);
out:
	start_unlock(lk);
	mdsrc_close(&src);
	geli_secure_free(ukey);
	geli_secure_free(mkey);
	geli_wipe(&r.md, sizeof(r.md));
}

void
cmd_attach(struct opts *o, int argc, char **argv)
{
	struct keysrc *ks;
	bool failed = false;

	if (argc <= 0) {
		req_error("Too few arguments.");
		return;
	}
	if (opt_bool(o, 'd') && opt_bool(o, 'r')) {
		req_error("Options -d and -r are mutually exclusive.");
		return;
	}
	if (!loop_allowed(o) || keysrc_new(o, false, &ks) != 0)
		return;
	for (int i = 0; i < argc; i++) {
		attach_one(o, ks, argv[i]);
		if (req_failed()) {
			req_flush_as_warning();
			failed = true;
		}
	}
	keysrc_free(ks);
	if (failed)
		req_error("There was an error with at least one provider.");
}

/* ---- onetime ----------------------------------------------------------------------- */

void
cmd_onetime(struct opts *o, int argc, char **argv)
{
	struct geli_provider *p;
	struct attach_req r;
	uint8_t *mkey;
	const char *str;
	char name[256], path[4096], buf[4096], loopdev[64], msg[1200];
	intmax_t val;
	uint32_t psize;
	int error, lk;
	bool unlocked = false;

	if (argc != 1) {
		req_error(argc < 1 ? "Too few arguments." : "Invalid number of arguments.");
		return;
	}
	if (!loop_allowed(o))
		return;
	memset(&r, 0, sizeof(r));
	memcpy(r.md.magic, GELI_MAGIC, sizeof(GELI_MAGIC));
	r.md.version = GELI_VERSION;
	r.flags = GELI_FLAG_ONETIME | GELI_FLAG_AUTORESIZE;
	if (opt_bool(o, 'R'))
		r.flags &= ~GELI_FLAG_AUTORESIZE;
	if (opt_bool(o, 'd'))
		r.flags |= GELI_FLAG_WO_DETACH;
	if (opt_bool(o, 'T'))
		r.flags |= GELI_FLAG_NODELETE;
	str = opt_str(o, 'a');
	if (*str != '\0') {
		r.md.aalgo = (uint16_t)geli_str2aalgo(str);
		if (r.md.aalgo != GELI_ALGO_NONE) {
			r.flags |= GELI_FLAG_AUTH;
		} else {
			r.md.ealgo = (uint16_t)geli_str2ealgo(str);
			if (r.md.ealgo == GELI_ALGO_NONE) {
				req_error("Invalid authentication algorithm.");
				return;
			}
			fprintf(stderr, "warning: The -e option, not the -a "
			    "option is now used to specify encryption "
			    "algorithm to use.\n");
		}
	}
	if (r.md.ealgo == GELI_ALGO_NONE) {
		r.md.ealgo = (uint16_t)geli_str2ealgo(opt_str(o, 'e'));
		if (r.md.ealgo == GELI_ALGO_NONE) {
			req_error("Invalid encryption algorithm.");
			return;
		}
	}
	val = opt_num(o, 'l');
	r.md.keylen = (uint16_t)(val < 0 || val > 65535 ? 0 :
	    geli_keylen(r.md.ealgo, (unsigned)val));
	if (r.md.keylen == 0) {
		req_error("Invalid '%s' argument.", "keylen");
		return;
	}
	if (!geli_algo_available(r.md.ealgo) || ((r.flags & GELI_FLAG_AUTH) &&
	    !geli_algo_available(r.md.aalgo))) {
		req_error("Invalid or unsupported algorithms.");
		return;
	}
	r.md.flags = r.flags & (GELI_FLAG_AUTH | GELI_FLAG_NODELETE |
	    GELI_FLAG_AUTORESIZE | GELI_FLAG_ONETIME);
	error = prov_open(argv[0], true, &p);
	if (error != 0) {
		req_error("Provider %s is invalid.", argv[0]);
		return;
	}
	psize = geli_provider_sectorsize(p);
	r.md.provsize = geli_provider_mediasize(p);
	geli_provider_close(p);
	val = opt_num(o, 's');
	/* onetime: any multiple of the provider's sector size (§8.2). */
	if (val == 0) {
		r.md.sectorsize = psize;
	} else if (val < 0 || val > UINT32_MAX || val % psize != 0) {
		req_error("Invalid sector size.");
		return;
	} else {
		r.md.sectorsize = (uint32_t)val;
		if (val > sysconf(_SC_PAGE_SIZE))
			fprintf(stderr, "warning: Using sectorsize bigger than "
			    "the page size!\n");
	}
	/* What the volume could not be opened with: a sector larger than
	 * GELI_MAX_SECTORSIZE, or none that fits. */
	error = geli_metadata_check(&r.md, r.md.provsize, psize);
	if (error != 0) {
		struct msg_args a = { .prov = argv[0] };

		req_msg(OP_ATTACH, GELI_STEP_NONE, error, &a);
		return;
	}
	name_of(argv[0], name, sizeof(name));
	if (ensure_rundir() != 0)
		return;
	lk = start_lock();
	clean_stale(name);
	if (rundir_path(name, ".ctl", path, sizeof(path)) == 0 &&
	    access(path, F_OK) == 0) {
		start_unlock(lk);
		req_error("Provider %s.eli already exists.", name);
		return;
	}
	mkey = geli_secure_alloc(GELI_MKEY_DATALEN);
	if (mkey == NULL || geli_random_key(mkey, GELI_MKEY_DATALEN) != 0) {
		start_unlock(lk);
		geli_secure_free(mkey);
		req_error("Cannot generate a key.");
		return;
	}
	r.prov = argv[0];
	if (realpath(prov_path(argv[0], buf, sizeof(buf)), path) == NULL) {
		start_unlock(lk);
		geli_secure_free(mkey);
		req_error("Cannot open %s: %s.", argv[0], strerror(errno));
		return;
	}
	r.provpath = path;
	r.name = name;
	r.used_key = -1;
	r.loop = opt_bool(o, 'L');
	r.nomap = mmap_off();
	if (daemon_start(&r, mkey, loopdev, sizeof(loopdev), &unlocked, msg,
	    sizeof(msg)) != 0)
		req_error("%s", msg);
	else if (r.loop)
		printf("%s\n", loopdev);
	if (unlocked)
		warn_unlocked();
	start_unlock(lk);
	geli_secure_free(mkey);
}

/* ---- detach ------------------------------------------------------------------------ */

void
cmd_detach(struct opts *o, int argc, char **argv)
{
	struct ctl_request req;
	enum ctl_outcome outcome;
	char name[256];

	if (argc <= 0) {
		req_error("Missing device(s).");
		return;
	}
	ctl_request_init(&req, CTL_DETACH);
	req.flags = (opt_bool(o, 'f') ? CTL_F_FORCE : 0) |
	    (opt_bool(o, 'l') ? CTL_F_LAST : 0);
	for (int i = 0; i < argc && !req_failed(); i++) {
		if (!attached_name(argv[i], name, sizeof(name))) {
			req_error("No such device: %s.", argv[i]);
			return;
		}
		struct daemon_ref d = daemon_ref(name);

		if (attached_request(name, &req, &outcome) == 0 &&
		    outcome == CTL_DETACHED)
			wait_gone(d, name);
	}
}

/* ---- suspend, resume ------------------------------------------------------------------ */

void
cmd_suspend(struct opts *o, int argc, char **argv)
{
	struct ctl_request req;
	char name[256], **names;
	int n;

	ctl_request_init(&req, CTL_SUSPEND);
	if (opt_bool(o, 'a')) {
		n = attached_names(&names);
		for (int i = 0; i < n; i++)
			if (!geli_name_suspended(names[i]))
				(void)attached_request(names[i], &req, NULL);
		attached_names_free(names, n);
		return;
	}
	if (argc == 0) {
		req_error("Too few arguments.");
		return;
	}
	for (int i = 0; i < argc && !req_failed(); i++) {
		if (!attached_name(argv[i], name, sizeof(name))) {
			req_error("No such device: %s.", argv[i]);
			return;
		}
		(void)attached_request(name, &req, NULL);
	}
}

/*
 * The provider device name serves, as arg names it when arg is that
 * provider (messages then say what was given), else as the daemon has it.
 */
static const char *
served_provider(const char *arg, const char *name, char *buf, size_t len)
{
	char rp1[4096], rp2[4096], pbuf[4096];
	struct ctl_status *st;
	const char *p = arg;

	st = malloc(sizeof(*st));
	if (st == NULL)
		return arg;
	if (ctl_status(name, st) == 0 &&
	    !(realpath(prov_path(arg, pbuf, sizeof(pbuf)), rp1) != NULL &&
	    realpath(st->provpath, rp2) != NULL && strcmp(rp1, rp2) == 0)) {
		snprintf(buf, len, "%s", st->provpath);
		p = buf;
	}
	free(st);
	return p;
}

void
cmd_resume(struct opts *o, int argc, char **argv)
{
	struct geli_metadata md;
	struct ctl_request *req;
	struct keysrc *ks = NULL;
	struct mdsrc src;
	struct msg_args a = { 0 };
	char name[256], prov[1024];
	int error;

	if (argc != 1) {
		req_error("Invalid number of arguments.");
		return;
	}
	if (!attached_name(argv[0], name, sizeof(name))) {
		req_error("No such device: %s.", argv[0]);
		return;
	}
	if (!geli_name_suspended(name)) {
		req_error("Device %s.eli is not suspended.", name);
		return;
	}
	/* The metadata of the provider the daemon serves: a device name
	 * ("x", "x.eli") is no path to it. */
	if (mdsrc_open_provider(&src, served_provider(argv[0], name, prov,
	    sizeof(prov)), false, &md) != 0)
		return;
	if (md.provsize != geli_provider_mediasize(src.prov)) {
		mdsrc_close(&src);
		req_error("Provider size mismatch.");
		return;
	}
	/*
	 * The kernel's checks before it decrypts a slot (g_eli_ctl_resume),
	 * made before the user key: only md_keys and the slots' cipher
	 * matter, the device keeps the rest of what it was attached with.
	 */
	error = geli_metadata_check(&md, 0, geli_provider_sectorsize(src.prov));
	mdsrc_close(&src);
	a.prov = argv[0];
	if (md.keys == 0)
		error = -GELI_ENOKEYS;
	else if (error != -GELI_EEALGO && error != -GELI_EKEYLEN)
		error = 0;
	if (error != 0) {
		req_msg(OP_RESUME, GELI_STEP_NONE, error, &a);
		geli_wipe(&md, sizeof(md));
		return;
	}
	/* The request holds the user key: locked memory. */
	req = geli_secure_alloc(sizeof(*req));
	if (req == NULL) {
		req_error("Cannot allocate memory.");
		return;
	}
	ctl_request_init(req, CTL_RESUME);
	req->keylen = GELI_USERKEYLEN;
	if (keysrc_new(o, false, &ks) == 0 &&
	    keysrc_ukey(ks, &md, req->key) == 0 &&
	    attached_request(name, req, NULL) == 0 && verbose)
		printf("Resumed %s.\n", argv[0]);
	keysrc_free(ks);
	geli_secure_free(req);
	geli_wipe(&md, sizeof(md));
}

/* ---- list, status ---------------------------------------------------------------------- */

/* The runtime flags as geli list names them, in FreeBSD's order. */
static void
flags_string(uint32_t flags, char *buf, size_t len)
{
	static const struct { uint32_t f; const char *n; } names[] = {
		{ GELI_FLAG_SUSPEND, "SUSPEND" },
		{ GELI_FLAG_SINGLE_KEY, "SINGLE-KEY" },
		{ GELI_FLAG_NATIVE_BYTE_ORDER, "NATIVE-BYTE-ORDER" },
		{ GELI_FLAG_ONETIME, "ONETIME" },
		{ GELI_FLAG_BOOT, "BOOT" },
		{ GELI_FLAG_WO_DETACH, "W-DETACH" },
		{ GELI_FLAG_RW_DETACH, "RW-DETACH" },
		{ GELI_FLAG_AUTH, "AUTH" },
		{ GELI_FLAG_WOPEN, "W-OPEN" },
		{ GELI_FLAG_DESTROY, "DESTROY" },
		{ GELI_FLAG_RO, "READ-ONLY" },
		{ GELI_FLAG_NODELETE, "NODELETE" },
		{ GELI_FLAG_GELIBOOT, "GELIBOOT" },
		{ GELI_FLAG_GELIDISPLAYPASS, "GELIDISPLAYPASS" },
		{ GELI_FLAG_AUTORESIZE, "AUTORESIZE" },
	};
	size_t n = 0;

	buf[0] = '\0';
	/* FIRST_KEY and ENC_IVKEY are ours to know, not geli list's. */
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if ((flags & names[i].f) == 0)
			continue;
		n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%s",
		    n > 0 ? ", " : "", names[i].n);
	}
	if (n == 0)
		snprintf(buf, len, "NONE");
}

static const char *
state_name(const struct ctl_status *st)
{
	return (st->flags & GELI_FLAG_SUSPEND) ? "SUSPENDED" : "ACTIVE";
}

/* humanize_number(3) as geom list uses it: 512B, 10M, 1.0G. */
static void
humanize(uint64_t v, char *buf, size_t len)
{
	static const char units[] = "BKMGTPE";
	double d = (double)v;
	int u = 0;

	while (d >= 1024 && u < 6) {
		d /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%juB", (uintmax_t)v);
	else if (d < 10)
		snprintf(buf, len, "%.1f%c", d, units[u]);
	else
		snprintf(buf, len, "%.0f%c", d, units[u]);
}

static void
list_one(const struct ctl_status *st)
{
	char fl[512], h[32];

	flags_string(st->flags, fl, sizeof(fl));
	printf("Geom name: %s.eli\n", st->name);
	printf("State: %s\n", state_name(st));
	printf("EncryptionAlgorithm: %s\n", geli_algo_name(st->ealgo));
	printf("KeyLength: %u\n", (unsigned)st->keylen);
	if (st->flags & GELI_FLAG_AUTH)
		printf("AuthenticationAlgorithm: %s\n",
		    geli_algo_name(st->aalgo));
	printf("Crypto: accelerated software\n");
	printf("Version: %u\n", (unsigned)st->version);
	if (!(st->flags & GELI_FLAG_ONETIME))
		printf("UsedKey: %d\n", (int)st->usedkey);
	printf("Flags: %s\n", fl);
	printf("KeysAllocated: %ju\n", (uintmax_t)st->keysallocated);
	printf("KeysTotal: %ju\n", (uintmax_t)st->keystotal);
	printf("Providers:\n");
	printf("1. Name: %s.eli\n", st->name);
	humanize(st->mediasize, h, sizeof(h));
	printf("   Mediasize: %ju (%s)\n", (uintmax_t)st->mediasize, h);
	printf("   Sectorsize: %u\n", (unsigned)st->sectorsize);
	printf("   Mode: r%uw%ue0\n", (unsigned)st->opens, (unsigned)st->wopens);
	if (st->loop[0] != '\0')
		printf("   Loop: %s\n", st->loop);
	printf("   File: %s\n", st->elipath);
	printf("Consumers:\n");
	printf("1. Name: %s\n", st->prov);
	humanize(st->provsize, h, sizeof(h));
	printf("   Mediasize: %ju (%s)\n", (uintmax_t)st->provsize, h);
	printf("   Sectorsize: %u\n", (unsigned)st->psize);
	printf("   Mode: %s\n", (st->flags & GELI_FLAG_RO) ? "r1w0e0" :
	    "r1w1e1");
	printf("\n");
}

/* The names given (or every one), as attached names; 0 on error. */
static int
select_names(int argc, char **argv, char ***out)
{
	char **names, name[256];

	if (argc == 0)
		return attached_names(out);
	names = calloc((size_t)argc, sizeof(*names));
	if (names == NULL)
		return 0;
	for (int i = 0; i < argc; i++) {
		if (!attached_name(argv[i], name, sizeof(name))) {
			req_error("No such geom: %s.", argv[i]);
			attached_names_free(names, i);
			return 0;
		}
		names[i] = strdup(name);
	}
	*out = names;
	return argc;
}

/* The status of each name, in order; entries whose daemon went away are
 * left out.  Returns the count. */
static int
statuses(char **names, int n, struct ctl_status **out)
{
	struct ctl_status *st;
	int k = 0;

	*out = NULL;
	st = calloc(n > 0 ? (size_t)n : 1, sizeof(*st));
	if (st == NULL)
		return 0;
	for (int i = 0; i < n; i++)
		if (ctl_status(names[i], &st[k]) == 0)
			k++;
	*out = st;
	return k;
}

void
cmd_list(struct opts *o, int argc, char **argv)
{
	struct ctl_status *st;
	char **names;
	int n, k;

	(void)o;
	n = select_names(argc, argv, &names);
	k = statuses(names, n, &st);
	for (int i = 0; i < k; i++)
		list_one(&st[i]);
	free(st);
	if (n > 0)
		attached_names_free(names, n);
}

void
cmd_status(struct opts *o, int argc, char **argv)
{
	struct ctl_status *st;
	size_t wn = 4, ws = 6;
	char **names, full[300];
	int n, k;

	n = select_names(argc, argv, &names);
	if (n == 0)
		return;
	k = statuses(names, n, &st);
	for (int i = 0; i < k; i++) {
		if (strlen(st[i].name) + 4 > wn)
			wn = strlen(st[i].name) + 4;
		if (strlen(state_name(&st[i])) > ws)
			ws = strlen(state_name(&st[i]));
	}
	if (!opt_bool(o, 's'))
		printf("%*s  %*s  %s\n", (int)wn, "Name", (int)ws, "Status",
		    "Components");
	for (int i = 0; i < k; i++) {
		snprintf(full, sizeof(full), "%s.eli", st[i].name);
		printf("%*s  %*s  %s\n", (int)wn, full, (int)ws,
		    state_name(&st[i]), st[i].prov);
	}
	free(st);
	attached_names_free(names, n);
}

/* ---- Helpers for the other verbs -------------------------------------------------- */

bool
geli_name_suspended(const char *name)
{
	struct ctl_status st;

	return ctl_status(name, &st) == 0 && (st.flags & GELI_FLAG_SUSPEND);
}

/* The state letter and start time of process pid; false once it is gone. */
static bool
proc_state(pid_t pid, char *state, unsigned long long *start)
{
	char path[64], buf[1024], *p;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "re")) == NULL)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* After the command name in parentheses: state, then 18 fields to
	 * the start time. */
	if ((p = strrchr(buf, ')')) == NULL ||
	    sscanf(p + 1, " %c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s "
	    "%*s %*s %*s %*s %*s %*s %*s %llu", state, start) != 2)
		return false;
	return true;
}

struct daemon_ref
daemon_ref(const char *name)
{
	struct daemon_ref d = { 0, 0 };
	char path[4096], state;
	FILE *f;
	int pid = 0;

	if (rundir_path(name, ".pid", path, sizeof(path)) != 0 ||
	    (f = fopen(path, "re")) == NULL)
		return d;
	if (fscanf(f, "%d", &pid) != 1)
		pid = 0;
	fclose(f);
	if (pid > 0 && proc_state(pid, &state, &d.start))
		d.pid = pid;
	return d;
}

/*
 * After a detach: wait until the daemon has exited, and so has flushed and
 * closed the provider (and let go of its lock) and removed its files, as
 * FreeBSD's detach returns once the provider is closed.  Exited: no such
 * process, a zombie (PID 1 may not reap it), or another process with its
 * PID.  Without a daemon_ref, until its control socket is gone (at most 5 s).
 */
void
wait_gone(struct daemon_ref d, const char *name)
{
	unsigned long long start;
	char path[4096], state;

	if (d.pid > 0) {
		while (proc_state(d.pid, &state, &start) && start == d.start &&
		    state != 'Z' && state != 'X')
			usleep(10000);
		return;
	}
	if (rundir_path(name, ".ctl", path, sizeof(path)) != 0)
		return;
	for (int i = 0; i < 100 && access(path, F_OK) == 0; i++)
		usleep(50000);
}

int
attached_request(const char *name, const struct ctl_request *req,
    enum ctl_outcome *outcome)
{
	struct ctl_reply *reply;
	int error;

	if (outcome != NULL)
		*outcome = CTL_DONE;
	reply = malloc(sizeof(*reply));
	if (reply == NULL) {
		req_error("Cannot allocate memory.");
		return -1;
	}
	error = ctl_call(name, req, reply);
	if (error == -EPERM)
		req_error("Cannot reach %s.eli: %s, or another user serves it.",
		    name, RUNDIR_NOT_PRIVATE);
	else if (error < 0)
		req_error("No such device: %s.", name);
	else if (reply->code != 0)
		req_error("%s", reply->message);
	if (error == 0 && outcome != NULL)
		*outcome = reply->outcome;
	error = error == 0 && reply->code == 0 ? 0 : -1;
	free(reply);
	return error;
}
