/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * geli reencrypt: a provider converted in place (docs/reencrypt.md) — a new
 * Master Key and maybe cipher (REKEY), plain to GELI (-E), GELI to plain
 * (-D) — and an unfinished conversion resumed.  libgeli does the steps
 * (geli_reenc_*); here are the verb, the journal's place, and the resume
 * with its checks.  What a new conversion goes to, and its keys:
 * reenc_new.c; the run with its progress on a terminal: reenc_run.c; what
 * a stop left beside a provider not marked: reenc_left.c.
 */
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli.h"
#include "reenc.h"

int
reenc_journal_path(const uint8_t uuid[16], bool make, char *buf, size_t len)
{
	const char *env = getenv("GELI_STATE_DIR"), *x, *h;
	char dir[4096];
	int n;

	if (env != NULL && *env == '/')
		n = snprintf(dir, sizeof(dir), "%s/reencrypt", env);
	else if (geteuid() == 0)
		n = snprintf(dir, sizeof(dir), "/var/lib/geli/reencrypt");
	else if ((x = getenv("XDG_STATE_HOME")) != NULL && *x == '/')
		n = snprintf(dir, sizeof(dir), "%s/geli/reencrypt", x);
	else if ((h = getenv("HOME")) != NULL && *h == '/')
		n = snprintf(dir, sizeof(dir), "%s/.local/state/geli/reencrypt",
		    h);
	else
		return -1;
	if (n < 0 || (size_t)n >= sizeof(dir) || (make && make_dirs(dir, 0755)))
		return -1;
	n = snprintf(buf, len, "%s/", dir);
	for (int i = 0; i < 16 && n > 0 && (size_t)n < len; i++)
		n += snprintf(buf + n, len - (size_t)n, "%02x", uuid[i]);
	if (n < 0 || (size_t)n + sizeof(".journal") > len)
		return -1;
	strcat(buf, ".journal");
	return 0;
}

/* The journal of uuid: -F, else the default place. */
int
reenc_journal_of(struct opts *o, const uint8_t uuid[16], char *buf, size_t len)
{
	const char *f = opt_str(o, 'F');
	char cwd[4096];

	/* Absolute: an attached provider's daemon runs in /. */
	if (*f == '/') {
		snprintf(buf, len, "%s", f);
		return 0;
	}
	if (*f != '\0') {
		if (getcwd(cwd, sizeof(cwd)) == NULL) {
			req_error("Cannot find the current directory: %s.",
			    strerror(errno));
			return -1;
		}
		snprintf(buf, len, "%s/%s", cwd, f);
		return 0;
	}
	if (reenc_journal_path(uuid, true, buf, len) != 0) {
		req_error("Cannot make a directory for the journal: use -F.");
		return -1;
	}
	return 0;
}

/* ---- Start and resume ------------------------------------------------------- */

static void
same_parameters_refused(const char *prov, const struct geli_reenc_info *info)
{
	if (info->kind == GELI_REENC_DECRYPT)
		req_error("Provider %s is being decrypted: a resume takes the "
		    "same parameters.", prov);
	else
		req_error("Provider %s is being converted to %s %u (%s): a "
		    "resume takes the same parameters.", prov,
		    geli_algo_name(info->to.ealgo), (unsigned)info->to.keylen,
		    msg_reenc_kind(info->kind));
}

/* The kind of a new conversion of a GELI provider the options ask for. */
static enum geli_reenc_kind
reenc_kind_asked(struct opts *o)
{
	if (strcmp(opt_str(o, 't'), "luks2") == 0)
		return GELI_REENC_LUKS2;
	return opt_bool(o, 'D') ? GELI_REENC_DECRYPT : GELI_REENC_REKEY;
}

/* Options that set up a conversion: a resume takes the ones it started
 * with, or none. */
static int
same_parameters(struct opts *o, const char *prov,
    const struct geli_reenc_info *info)
{
	const struct geli_metadata *to = &info->to;
	bool kind = info->kind == (opt_bool(o, 'E') ? GELI_REENC_ENCRYPT :
	    reenc_kind_asked(o));
	bool given = reenc_kind_asked(o) == GELI_REENC_LUKS2 ||
	    opt_bool(o, 'E') || opt_bool(o, 'D') || o->given['e'] ||
	    o->given['l'] || o->given['s'] || o->given['a'];

	if (!given)
		return 0;
	if (kind && (!o->given['e'] || geli_str2ealgo(opt_str(o, 'e')) ==
	    to->ealgo) && (!o->given['l'] ||
	    geli_keylen(to->ealgo, (unsigned)opt_num(o, 'l')) == to->keylen) &&
	    (!o->given['s'] || opt_num(o, 's') == to->sectorsize) &&
	    !o->given['a'])
		return 0;
	same_parameters_refused(prov, info);
	return -1;
}

/* Options that ask for a conversion, beside the old key's. */
static bool
new_parameters(struct opts *o)
{
	static const char set[] = "DEaelsiJKPt";

	for (const char *c = set; *c != '\0'; c++)
		if (o->given[(unsigned char)*c])
			return true;
	return false;
}

/* Do the new key options open nmd's slot 0?  (Errors other than a wrong
 * key are the request error.) */
static bool
new_key_opens(struct opts *o, const struct geli_metadata *nmd)
{
	struct geli_keymat km;
	struct keysrc *ks;
	bool opens = false;

	if (keysrc_new(o, true, &ks) != 0)
		return false;
	if (keysrc_keymat(ks, nmd, &km) == 0)
		opens = geli_unlock(NULL, nmd, &km, 0, 0, NULL, NULL) == 0;
	keysrc_free(ks);
	return opens;
}

/* A resumed conversion to LUKS2 whose header goes on the disk (its data
 * offset says so) finds its place again, as the start did; 0, or -1 with
 * the request error. */
static int
resume_place(const char *prov, const char *path, struct luks2_end *end)
{
	uint64_t offset;
	uint8_t uuid[16];
	char why[4400];
	int rc;

	if (luks2_header_info(end->hdr, uuid, &offset) != 0 || offset == 0)
		return 0;	/* checked already: detached */
	end->ondisk = true;
	rc = luks2_place_find(prov, path, &end->pl, why, sizeof(why));
	if (rc == 0)
		req_error("The LUKS2 header of %s goes on the disk, but %s: "
		    "GELI's record stays.", prov, why);
	return rc == 1 ? 0 : -1;
}

/*
 * The conversion md marks, its journal jpath opened with the key that
 * opens the record, asked for as every resume asks (-E's new key where
 * new_key), and checked before anything is written: *r set, 0; or -1 with
 * the request error ("Cannot VERB the conversion of ...").
 */
static int
reenc_reopen(struct opts *o, const char *prov, struct geli_provider *p,
    const struct geli_metadata *md, bool new_key, const char *jpath,
    const char *verb, struct geli_reenc **r)
{
	uint8_t *mk = geli_secure_alloc(GELI_MKEY_DATALEN);
	struct geli_metadata umd = *md;
	int error, rc = -1;

	umd.version &= 0xffffu;
	if (mk == NULL)
		req_error("Cannot allocate memory.");
	else if (reenc_unlock(o, new_key, p, &umd, prov, mk, NULL, NULL,
	    NULL) == 0) {
		error = geli_reenc_open(p, md, mk, jpath, r);
		if (error != 0)
			req_error("Cannot %s the conversion of %s with %s: %s.",
			    verb, prov, jpath, geli_strerror(error));
		else
			rc = 0;
	}
	geli_wipe(&umd, sizeof(umd));
	geli_secure_free(mk);
	return rc;
}

/* A LUKS2 conversion's header found again (uuid: the journal's), and its
 * place where it goes on the disk; 0, or -1 with the request error. */
static int
luks2_reopen_header(struct opts *o, const char *prov, const uint8_t uuid[16],
    struct luks2_end *end)
{
	char path[4096];

	if (luks2_header_path(o, uuid, end->hdr, sizeof(end->hdr)) != 0)
		return -1;
	return resume_place(prov, prov_path(prov, path, sizeof(path)), end);
}

static void
resume(struct opts *o, const char *prov, struct geli_provider *p,
    struct geli_metadata *md, struct luks2_end *end)
{
	struct geli_reenc_info info;
	struct geli_reenc *r = NULL;
	uint8_t uuid[16];
	char jpath[4200];
	int error;

	if (geli_reenc_uuid(md, uuid) != 0) {
		req_error("Provider %s is marked as being converted, but names "
		    "no journal.", prov);
		return;
	}
	if (reenc_journal_of(o, uuid, jpath, sizeof(jpath)) != 0)
		return;
	error = geli_reenc_peek(jpath, &info);
	if (error == 0 && memcmp(info.uuid, uuid, 16) != 0)
		error = -GELI_EJOURNAL;
	if (error == -ENOENT) {
		req_error("The journal of the conversion of %s is missing (%s): "
		    "only it says how far the conversion went (and holds a new "
		    "Master Key), and without it the conversion can neither go "
		    "on nor be undone. Name it with -F if it is elsewhere.",
		    prov, jpath);
		return;
	}
	if (error != 0) {
		req_error("Cannot use the journal %s of %s: %s.", jpath, prov,
		    geli_strerror(error));
		return;
	}
	if (same_parameters(o, prov, &info) != 0 ||
	    luks2_header_opt(o, info.kind) != 0)
		goto out;
	/* The key that opens the marked record: for -E the new one.  Every
	 * check before the resume's first write. */
	if (reenc_reopen(o, prov, p, md, info.kind == GELI_REENC_ENCRYPT &&
	    reenc_new_keys_given(o), jpath, "resume", &r) != 0)
		goto out;
	/* New key options given again must be the ones the new record has. */
	if (info.kind == GELI_REENC_REKEY && reenc_new_keys_given(o) &&
	    !new_key_opens(o, geli_reenc_new(r))) {
		if (!req_failed())
			same_parameters_refused(prov, &info);
		goto out;
	}
	/* LUKS2: the header it started with, there from the start. */
	if (info.kind == GELI_REENC_LUKS2 && (luks2_reopen_header(o, prov,
	    uuid, end) != 0 || luks2_header_check(prov, end->hdr,
	    LUKS2_VK(geli_reenc_newkey(r))) != 0))
		goto out;
	if ((error = geli_reenc_recover(r)) != 0) {
		req_error("Cannot resume the conversion of %s with %s: %s.",
		    prov, jpath, geli_strerror(error));
		goto out;
	}
	if (verbose)
		printf("Resuming %s (%s) at %.1f%%; journal %s.\n", prov,
		    msg_reenc_kind(info.kind), info.total ? 100.0 *
		    (double)info.done / (double)info.total : 0.0, jpath);
	if (reenc_run(prov, r, info.kind == GELI_REENC_LUKS2 ? end : NULL) ==
	    0 && info.kind == GELI_REENC_LUKS2)
		end->done = true;
out:
	geli_reenc_free(r);
	geli_wipe(&info, sizeof(info));
}

/* A LUKS2 target that its daemon converted to the last sector, ended: the
 * old key asked for (as a resume asks), the volume key from the journal
 * (jpath), its header checked and put in place, then the daemon's end.  0,
 * or -1 with the request error. */
static int
online_end(struct opts *o, const char *prov, const char *name,
    struct geli_provider *p, const struct geli_metadata *md,
    const char *jpath, struct luks2_end *end)
{
	struct geli_reenc *r = NULL;
	uint8_t uuid[16];
	int rc = -1;

	/* The journal read, never written: the daemon holds it. */
	if (geli_reenc_uuid(md, uuid) == 0 && reenc_reopen(o, prov, p, md,
	    false, jpath, "end", &r) == 0 && luks2_reopen_header(o, prov,
	    uuid, end) == 0 && luks2_end_ready(prov, end,
	    LUKS2_VK(geli_reenc_newkey(r))) == 0 &&
	    reenc_finish_attached(prov, name) == 0) {
		end->done = end->attached = true;
		rc = 0;
	}
	geli_reenc_free(r);
	return rc;
}

/* An attached provider: its daemon converts it (docs/reencrypt.md,
 * "Online"); the command starts or resumes, then follows (to LUKS2: and
 * ends it, end set for luks2_finish). */
static void
online(struct opts *o, const char *prov, const char *name,
    struct luks2_end *end)
{
	struct geli_provider *p = NULL;
	struct geli_reenc_info info;
	struct geli_metadata md;
	struct ctl_request rq;
	struct ctl_reply rp;
	struct ctl_status st;
	char path[4096];
	int error;

	if (opt_bool(o, 'E')) {
		req_error("Provider %s is already a GELI provider.", prov);
		return;
	}
	/* Read only: the daemon holds it exclusively. */
	error = geli_provider_open(prov_path(prov, path, sizeof(path)), false,
	    &p);
	if (error == 0)
		error = geli_provider_read_metadata(p, &md);
	/* The daemon writes the converted record, then says it ended: a
	 * conversion still running for it while the record says it ended has
	 * just ended (followed the few steps to its state). */
	bool unmarked = p != NULL && error != -GELI_EINPROGRESS;

	if (unmarked && ctl_status(name, &st) == 0 &&
	    st.reenc_state == CTL_REENC_RUNNING)
		(void)reenc_wait(prov, name);
	if (unmarked && ctl_status(name, &st) == 0 &&
	    st.reenc_state == CTL_REENC_DONE) {
		/* The conversion there has ended (to plain: no record left):
		 * nothing to go on with.  A new one waits for a new daemon
		 * (its keys are the old record's): it would refuse, after the
		 * passphrase. */
		struct msg_args a = { .prov = prov };

		if (new_parameters(o))
			req_msg(OP_READ, GELI_STEP_NONE, -MSG_ECONVERTED, &a);
		else if (verbose)
			printf("The conversion of %s has ended.\n", prov);
	} else if (error == 0) {
		reenc_start(o, prov, p, reenc_kind_asked(o), &md, name, end);
	} else if (error == -GELI_EINPROGRESS) {
		/* Under way, paused or failed: it goes on, as it started. */
		if (ctl_status(name, &st) != 0 ||
		    st.reenc_state == CTL_REENC_NONE) {
			req_error("Provider %s is being converted, but not by "
			    "the daemon of %s.eli: detach it, then run 'geli "
			    "reencrypt %s'.", prov, name, prov);
		} else if (geli_reenc_peek(st.journal, &info) != 0 ||
		    same_parameters(o, prov, &info) == 0) {
			int rc = 1;	/* converted: its end is what is left */

			if (st.reenc_state != CTL_REENC_CONVERTED) {
				rc = -1;
				ctl_request_init(&rq, CTL_REENCRYPT);
				reenc_catch_signals();
				if (ctl_call(name, &rq, &rp) != 0)
					req_error("Cannot reach the daemon of "
					    "%s.eli.", name);
				else if (rp.code != 0)
					req_error("%s", rp.message);
				else
					rc = reenc_wait(prov, name);
			}
			if (rc == 1)
				(void)online_end(o, prov, name, p, &md,
				    st.journal, end);
		}
		geli_wipe(&info, sizeof(info));
	} else {
		struct msg_args a = { .prov = prov, .version = md.version };

		req_msg(OP_READ, GELI_STEP_READ, error, &a);
	}
	geli_wipe(&md, sizeof(md));
	geli_provider_close(p);
}

void
cmd_reencrypt(struct opts *o, int argc, char **argv)
{
	struct msg_args a = { .prov = argv[0] };
	struct geli_provider *p = NULL;
	struct geli_metadata md;
	struct luks2_end *end = NULL;
	char name[256], path[4096];
	int error;

	if (argc != 1) {
		req_error("Invalid number of arguments.");
		return;
	}
	if (opt_bool(o, 'D') && opt_bool(o, 'E')) {
		req_error("Options -D and -E are mutually exclusive.");
		return;
	}
	if (opt_num(o, 'z') < 0 || opt_num(o, 'z') > (64 << 20)) {
		req_error("Invalid hotzone size.");
		return;
	}
	if (reenc_target(o) < 0)
		return;
	if ((end = calloc(1, sizeof(*end))) == NULL) {
		req_error("Cannot allocate memory.");
		return;
	}
	if (attached_name(argv[0], name, sizeof(name))) {
		online(o, argv[0], name, end);
		if (end->done)
			luks2_finish(o, argv[0], end);
		free(end);
		return;
	}
	error = geli_provider_open_exclusive(prov_path(argv[0], path,
	    sizeof(path)), &p);
	/* A read-only block device opens for writing and refuses writes. */
	int ro = 0;
	if (error == 0 && ioctl(geli_provider_fd(p), BLKROGET, &ro) == 0 && ro) {
		geli_provider_close(p);
		error = -EROFS;
	}
	if (error != 0) {
		req_error("Cannot open %s: %s.", argv[0], error == -EPERM ?
		    "in use" : strerror(-error));
		free(end);
		return;
	}
	error = geli_provider_read_metadata(p, &md);
	if (error != -GELI_EINPROGRESS && reenc_kind_asked(o) ==
	    GELI_REENC_LUKS2 && luks2_left(o, argv[0], p, error == 0 ? &md :
	    NULL) == 1) {
		/* Nothing left to do. */
	} else if (error != -GELI_EINPROGRESS && *opt_str(o, 'F') != '\0' &&
	    access(opt_str(o, 'F'), F_OK) == 0 && journal_left(argv[0], p,
	    error == 0 ? &md : NULL, opt_str(o, 'F')) == 1) {
		/* Nothing left to do. */
	} else if (error == -GELI_EINPROGRESS) {
		resume(o, argv[0], p, &md, end);
	} else if (error == 0 && opt_bool(o, 'E')) {
		req_error("Provider %s is already a GELI provider.", argv[0]);
	} else if (error == 0) {
		reenc_start(o, argv[0], p, reenc_kind_asked(o), &md, NULL,
		    end);
	} else if ((error == -GELI_ENOMAGIC || error == -EINVAL) &&
	    opt_bool(o, 'E')) {
		reenc_start(o, argv[0], p, GELI_REENC_ENCRYPT, NULL, NULL,
		    NULL);
	} else if ((error == -GELI_ENOMAGIC || error == -EINVAL) &&
	    reenc_kind_asked(o) == GELI_REENC_LUKS2) {
		/* Its partition table's edit may be what is left. */
		geli_provider_close(p);
		p = NULL;
		if (luks2_complete(o, argv[0], prov_path(argv[0], path,
		    sizeof(path))) == 1)
			req_msg(OP_READ, GELI_STEP_READ, error, &a);
	} else {
		a.version = md.version;
		req_msg(OP_READ, GELI_STEP_READ, error, &a);
	}
	geli_wipe(&md, sizeof(md));
	geli_provider_close(p);
	/* The partition grown over the header once it is closed. */
	if (end->done)
		luks2_finish(o, argv[0], end);
	free(end);
}
