/*
 * The runtime verbs (§9.2–§9.4, §9.11, §9.16): attach, detach, onetime,
 * suspend, resume, list, status.  An attached provider is served by its own
 * daemon (src/attach/daemon.c); these verbs start it or talk to it.
 */
#include <dirent.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../attach/ctl.h"
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

/* A value from a status reply ("key=value" lines). */
static const char *
status_get(const char *reply, const char *key, char *out, size_t len)
{
	size_t kl = strlen(key);

	for (const char *l = reply; l != NULL && *l != '\0';) {
		const char *nl = strchr(l, '\n');
		size_t ll = nl != NULL ? (size_t)(nl - l) : strlen(l);

		if (ll > kl && strncmp(l, key, kl) == 0 && l[kl] == '=') {
			snprintf(out, len, "%.*s", (int)(ll - kl - 1), l + kl + 1);
			return out;
		}
		l = nl != NULL ? nl + 1 : NULL;
	}
	snprintf(out, len, "%s", "");
	return out;
}

bool
attached_name(const char *arg, char *name, size_t len)
{
	char cand[4096], reply[CTL_MAX], pp[4096], rp1[4096], rp2[4096];
	char buf[4096];
	size_t l;

	/* "x.eli", "/run/geli/x.eli": the daemon of x. */
	snprintf(buf, sizeof(buf), "%s", arg);
	snprintf(cand, sizeof(cand), "%s", basename(buf));
	l = strlen(cand);
	if (l > 4 && strcmp(cand + l - 4, ".eli") == 0) {
		cand[l - 4] = '\0';
		if (ctl_call(cand, "status", NULL, 0, reply, sizeof(reply)) == 0) {
			snprintf(name, len, "%s", cand);
			return true;
		}
	}
	/* A provider: the daemon named after it, if it serves this file. */
	name_of(arg, cand, sizeof(cand));
	if (ctl_call(cand, "status", NULL, 0, reply, sizeof(reply)) != 0)
		return false;
	status_get(reply, "provpath", pp, sizeof(pp));
	if (realpath(pp, rp1) != NULL &&
	    realpath(prov_path(arg, buf, sizeof(buf)), rp2) != NULL &&
	    strcmp(rp1, rp2) != 0)
		return false;
	snprintf(name, len, "%s", cand);
	return true;
}

/* Every attached name, sorted; returns the count (free with
 * attached_names_free). */
int
attached_names(char ***out)
{
	char **names = NULL, reply[CTL_MAX];
	struct dirent *e;
	DIR *dir;
	int n = 0;

	*out = NULL;
	dir = opendir(rundir());
	if (dir == NULL)
		return 0;
	while ((e = readdir(dir)) != NULL) {
		size_t l = strlen(e->d_name);
		char nm[256];

		if (l <= 4 || strcmp(e->d_name + l - 4, ".ctl") != 0 || l - 4 >= sizeof(nm))
			continue;
		snprintf(nm, sizeof(nm), "%.*s", (int)(l - 4), e->d_name);
		if (ctl_call(nm, "status", NULL, 0, reply, sizeof(reply)) != 0)
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
	char path[4096], reply[64];

	if (ctl_call(name, "status", NULL, 0, reply, sizeof(reply)) >= 0)
		return;
	if (rundir_path(name, ".eli", path, sizeof(path)) == 0) {
		(void)umount2(path, MNT_DETACH);
		(void)unlink(path);
	}
	if (rundir_path(name, ".ctl", path, sizeof(path)) == 0)
		(void)unlink(path);
}

static int
ensure_rundir(void)
{
	const char *d = rundir();
	char buf[4096];

	for (char *p = strcpy(buf, d) + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		(void)mkdir(buf, 0755);
		*p = '/';
	}
	if (mkdir(d, 0700) != 0 && errno != EEXIST) {
		req_error("Cannot create %s: %s.", d, strerror(errno));
		return -1;
	}
	return 0;
}

/* ---- attach ------------------------------------------------------------------------ */

static void
attach_one(struct opts *o, struct keysrc *ks, const char *prov)
{
	struct attach_req r;
	struct mdsrc src;
	uint8_t *ukey = NULL, *mkey = NULL;
	char name[256], path[4096], buf[4096], loopdev[64], msg[1200];
	intmax_t keyno = opt_num(o, 'n');
	int error, used;

	memset(&r, 0, sizeof(r));
	name_of(prov, name, sizeof(name));
	if (mdsrc_open_provider(&src, prov, false, &r.md) != 0)
		return;
	if (r.md.provsize != geli_provider_mediasize(src.prov)) {
		req_error("Provider size mismatch.");
		goto out;
	}
	if (r.md.keys == 0) {
		req_error("No valid keys on %s.", prov);
		goto out;
	}
	if (geli_keylen(r.md.ealgo, r.md.keylen) != r.md.keylen ||
	    !geli_algo_available(r.md.ealgo) ||
	    ((r.md.flags & GELI_FLAG_AUTH) && (geli_hashlen(r.md.aalgo) == 0 ||
	    !geli_algo_available(r.md.aalgo))) ||
	    r.md.sectorsize == 0 ||
	    r.md.sectorsize % geli_provider_sectorsize(src.prov) != 0) {
		req_error("Invalid or unsupported algorithms.");
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
		req_error("Wrong key for %s.", prov);
		goto out;
	} else if (error != 0) {
		req_error("Cannot decrypt Master Key for %s (error=%d).", prov,
		    -error);
		goto out;
	}
	if (opt_bool(o, 'C'))
		goto out;	/* -C: the key is right; attach nothing */
	clean_stale(name);
	if (rundir_path(name, ".ctl", path, sizeof(path)) == 0 &&
	    access(path, F_OK) == 0) {
		req_error("Provider %s.eli already exists.", name);
		goto out;
	}
	if (ensure_rundir() != 0)
		goto out;
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
	mdsrc_close(&src);
	if (daemon_start(&r, mkey, loopdev, sizeof(loopdev), msg,
	    sizeof(msg)) != 0) {
		req_error("%s", msg);
		goto out;
	}
	if (verbose)
		printf("Attached to %s.\n", prov);
	if (r.loop)
		printf("%s\n", loopdev);
out:
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
	if (keysrc_new(o, false, &ks) != 0)
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
	int error;

	if (argc != 1) {
		req_error(argc < 1 ? "Too few arguments." : "Invalid number of arguments.");
		return;
	}
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
	if (geli_eli_mediasize(&r.md, r.md.provsize, psize, true) == 0) {
		req_error("Provider %s is too small.", argv[0]);
		return;
	}
	name_of(argv[0], name, sizeof(name));
	clean_stale(name);
	if (rundir_path(name, ".ctl", path, sizeof(path)) == 0 &&
	    access(path, F_OK) == 0) {
		req_error("Provider %s.eli already exists.", name);
		return;
	}
	if (ensure_rundir() != 0)
		return;
	mkey = geli_secure_alloc(GELI_MKEY_DATALEN);
	if (mkey == NULL || geli_random_key(mkey, GELI_MKEY_DATALEN) != 0) {
		geli_secure_free(mkey);
		req_error("Cannot generate a key.");
		return;
	}
	r.prov = argv[0];
	if (realpath(prov_path(argv[0], buf, sizeof(buf)), path) == NULL) {
		geli_secure_free(mkey);
		req_error("Cannot open %s: %s.", argv[0], strerror(errno));
		return;
	}
	r.provpath = path;
	r.name = name;
	r.used_key = -1;
	r.loop = opt_bool(o, 'L');
	if (daemon_start(&r, mkey, loopdev, sizeof(loopdev), msg,
	    sizeof(msg)) != 0)
		req_error("%s", msg);
	else if (r.loop)
		printf("%s\n", loopdev);
	geli_secure_free(mkey);
}

/* ---- detach ------------------------------------------------------------------------ */

void
cmd_detach(struct opts *o, int argc, char **argv)
{
	char name[256], req[64], reply[CTL_MAX];
	int r;

	if (argc <= 0) {
		req_error("Missing device(s).");
		return;
	}
	snprintf(req, sizeof(req), "detach %d %d", opt_bool(o, 'f'),
	    opt_bool(o, 'l'));
	for (int i = 0; i < argc && !req_failed(); i++) {
		if (!attached_name(argv[i], name, sizeof(name))) {
			req_error("No such device: %s.", argv[i]);
			return;
		}
		r = ctl_call(name, req, NULL, 0, reply, sizeof(reply));
		if (r == 1)
			req_error("%s", reply);
		else if (r < 0)
			req_error("Cannot destroy device %s.eli (error=%d).",
			    name, -r);
		else if (strncmp(reply, "detached", 8) == 0)
			wait_gone(name);
	}
}

/* ---- suspend, resume ------------------------------------------------------------------ */

void
cmd_suspend(struct opts *o, int argc, char **argv)
{
	char name[256], **names;
	int n;

	if (opt_bool(o, 'a')) {
		n = attached_names(&names);
		for (int i = 0; i < n; i++)
			if (!geli_name_suspended(names[i]))
				(void)attached_request(names[i], "suspend", NULL, 0);
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
		(void)attached_request(name, "suspend", NULL, 0);
	}
}

void
cmd_resume(struct opts *o, int argc, char **argv)
{
	struct geli_metadata md;
	struct keysrc *ks = NULL;
	struct mdsrc src;
	uint8_t *ukey;
	char name[256], reply[CTL_MAX];
	int r;

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
	if (mdsrc_open_provider(&src, argv[0], false, &md) != 0)
		return;
	if (md.provsize != geli_provider_mediasize(src.prov)) {
		mdsrc_close(&src);
		req_error("Provider size mismatch.");
		return;
	}
	mdsrc_close(&src);
	ukey = geli_secure_alloc(GELI_USERKEYLEN);
	if (ukey == NULL) {
		req_error("Cannot allocate memory.");
		return;
	}
	if (keysrc_new(o, false, &ks) == 0 && keysrc_ukey(ks, &md, ukey) == 0) {
		r = ctl_call(name, "resume", ukey, GELI_USERKEYLEN, reply,
		    sizeof(reply));
		if (r == 1)
			req_error("%s", reply);
		else if (r < 0)
			req_error("No such device: %s.", argv[0]);
		else if (verbose)
			printf("Resumed %s.\n", argv[0]);
	}
	keysrc_free(ks);
	geli_secure_free(ukey);
	geli_wipe(&md, sizeof(md));
}

/* ---- list, status ---------------------------------------------------------------------- */

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

static int
get_status(const char *name, char *reply, size_t len)
{
	return ctl_call(name, "status", NULL, 0, reply, len);
}

static void
list_one(const char *name)
{
	char s[CTL_MAX], v[512], h[32];
	uint64_t ms, ps;

	if (get_status(name, s, sizeof(s)) != 0)
		return;
	printf("Geom name: %s.eli\n", name);
	printf("State: %s\n", status_get(s, "state", v, sizeof(v)));
	printf("EncryptionAlgorithm: %s\n", status_get(s, "ealgo", v, sizeof(v)));
	printf("KeyLength: %s\n", status_get(s, "keylen", v, sizeof(v)));
	if (*status_get(s, "aalgo", v, sizeof(v)) != '\0')
		printf("AuthenticationAlgorithm: %s\n", v);
	printf("Crypto: accelerated software\n");
	printf("Version: %s\n", status_get(s, "version", v, sizeof(v)));
	if (*status_get(s, "usedkey", v, sizeof(v)) != '\0')
		printf("UsedKey: %s\n", v);
	printf("Flags: %s\n", status_get(s, "flags", v, sizeof(v)));
	printf("KeysAllocated: %s\n", status_get(s, "keysallocated", v, sizeof(v)));
	printf("KeysTotal: %s\n", status_get(s, "keystotal", v, sizeof(v)));
	ms = strtoull(status_get(s, "mediasize", v, sizeof(v)), NULL, 10);
	ps = strtoull(status_get(s, "provsize", v, sizeof(v)), NULL, 10);
	printf("Providers:\n");
	printf("1. Name: %s.eli\n", name);
	humanize(ms, h, sizeof(h));
	printf("   Mediasize: %ju (%s)\n", (uintmax_t)ms, h);
	printf("   Sectorsize: %s\n", status_get(s, "sectorsize", v, sizeof(v)));
	printf("   Mode: r%sw%se0\n", status_get(s, "opens", v, sizeof(v)),
	    status_get(s, "wopens", h, sizeof(h)));
	if (*status_get(s, "loop", v, sizeof(v)) != '\0')
		printf("   Loop: %s\n", v);
	printf("   File: %s\n", status_get(s, "elipath", v, sizeof(v)));
	printf("Consumers:\n");
	printf("1. Name: %s\n", status_get(s, "prov", v, sizeof(v)));
	humanize(ps, h, sizeof(h));
	printf("   Mediasize: %ju (%s)\n", (uintmax_t)ps, h);
	printf("   Sectorsize: %s\n", status_get(s, "psize", v, sizeof(v)));
	printf("   Mode: %s\n", strstr(status_get(s, "flags", v, sizeof(v)),
	    "READ-ONLY") != NULL ? "r1w0e0" : "r1w1e1");
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

void
cmd_list(struct opts *o, int argc, char **argv)
{
	char **names;
	int n;

	(void)o;
	n = select_names(argc, argv, &names);
	for (int i = 0; i < n; i++)
		list_one(names[i]);
	if (n > 0)
		attached_names_free(names, n);
}

void
cmd_status(struct opts *o, int argc, char **argv)
{
	char **names, s[CTL_MAX], v[256];
	size_t wn = 4, ws = 6;
	int n;

	n = select_names(argc, argv, &names);
	if (n == 0)
		return;
	for (int i = 0; i < n; i++)
		if (strlen(names[i]) + 4 > wn)
			wn = strlen(names[i]) + 4;
	if (n > 0 && get_status(names[0], s, sizeof(s)) == 0 &&
	    strlen(status_get(s, "state", v, sizeof(v))) > ws)
		ws = strlen(v);
	if (!opt_bool(o, 's'))
		printf("%*s  %*s  %s\n", (int)wn, "Name", (int)ws, "Status",
		    "Components");
	for (int i = 0; i < n; i++) {
		char full[300], comp[1024];

		if (get_status(names[i], s, sizeof(s)) != 0)
			continue;
		snprintf(full, sizeof(full), "%s.eli", names[i]);
		status_get(s, "prov", comp, sizeof(comp));
		printf("%*s  %*s  %s\n", (int)wn, full, (int)ws,
		    status_get(s, "state", v, sizeof(v)), comp);
	}
	attached_names_free(names, n);
}

/* ---- Helpers for the other verbs -------------------------------------------------- */

bool
geli_name_suspended(const char *name)
{
	char s[CTL_MAX], v[64];

	return get_status(name, s, sizeof(s)) == 0 &&
	    strcmp(status_get(s, "state", v, sizeof(v)), "SUSPENDED") == 0;
}

/* After a detach: wait until the daemon has removed its files. */
void
wait_gone(const char *name)
{
	char path[4096];

	if (rundir_path(name, ".ctl", path, sizeof(path)) != 0)
		return;
	for (int i = 0; i < 100 && access(path, F_OK) == 0; i++)
		usleep(50000);
}

int
attached_request(const char *name, const char *req, const void *key,
    size_t keylen)
{
	char reply[CTL_MAX];
	int r;

	r = ctl_call(name, req, key, keylen, reply, sizeof(reply));
	if (r == 1)
		req_error("%s", reply);
	else if (r < 0)
		req_error("No such device: %s.", name);
	return r == 0 ? 0 : -1;
}
