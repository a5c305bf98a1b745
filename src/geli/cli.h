/* SPDX-License-Identifier: BSD-2-Clause */
/* The geli(8) command: shared declarations of the command-line front end. */
#ifndef GELI_CLI_H
#define GELI_CLI_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include "geli.h"
#include "ctl.h"
#include "files.h"
#include "msg.h"
#include "rundir.h"

/* ---- Options, parsed the way geom(8) parses them --------------------------- */

enum opt_type { OPT_BOOL, OPT_NUM, OPT_STR, OPT_MULTI };

struct opt_spec {
	char ch;
	enum opt_type type;
	const char *def;	/* default; NULL for NUM/STR = required */
};

#define OPT_MAX 16
#define OPT_MULTI_MAX 64

struct opts {
	const struct opt_spec *spec;
	bool given[128];
	bool flag[128];
	intmax_t num[128];
	const char *str[128];
	const char *multi[128][OPT_MULTI_MAX];
	int nmulti[128];
};

/* What went wrong: the text geli prints as "geli: <msg>", and whether the
 * usage follows. */
struct opt_error {
	char msg[128];
	bool usage;
};

/*
 * Parse argv (argv[0] the verb) by spec, with -v when takes_v (*verbose set
 * true), defaults filled in and required options checked: the index of the
 * first operand, or -1 with err.  Neither prints nor exits (opts.c).
 */
int opts_parse(const struct opt_spec *spec, bool takes_v, struct opts *o,
    int argc, char **argv, bool *verbose, struct opt_error *err);
/* expand_number(3): an integer with an optional k/m/g/t/p/e suffix (and
 * b); 0, or -1 with errno EINVAL or ERANGE. */
int expand_number(const char *s, intmax_t *out);

bool opt_bool(const struct opts *o, char ch);
intmax_t opt_num(const struct opts *o, char ch);
const char *opt_str(const struct opts *o, char ch);
int opt_multi(const struct opts *o, char ch, const char *const **list);

/* ---- Commands -------------------------------------------------------------- */

#define CMD_VERBOSE 0x1		/* accepts -v */

struct cmd {
	const char *name;
	unsigned flags;
	const struct opt_spec *opts;
	const char *usage;
	void (*run)(struct opts *o, int argc, char **argv);
};

extern int verbose;

/*
 * The request error, as libgeom's gctl_error(): the first error sticks and
 * is printed as "geli: <error>" when the command ends, with exit status 1.
 */
void req_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
bool req_failed(void);
/* Print the pending request error as "geli: <error>" now and clear it. */
void req_flush_as_warning(void);
/* The warning that secrets are in memory RLIMIT_MEMLOCK left unlocked. */
void warn_unlocked(void);
/* "geli: <msg>" on stderr now (warnx). */
void warnmsg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Path of a provider name: as given when it names a file, else /dev/NAME. */
const char *prov_path(const char *name, char *buf, size_t len);
/* The name without a leading /dev/, as geli prints and backs it up. */
const char *prov_shortname(const char *name);

/* ---- Metadata from a provider or a backup file (§9.7) ---------------------- */

struct mdsrc {
	const char *name;		/* as given on the command line */
	struct geli_mdstore *store;
	struct geli_provider *prov;	/* NULL for a backup file */
};

/*
 * Read the metadata of name, reporting errors with FreeBSD's texts (as the
 * request error, or a plain line on stderr when to_stderr).  A backup file
 * (geli_is_backup_file) or a provider with metadata in its last sector.
 */
int mdsrc_open(struct mdsrc *src, const char *name, bool writable,
    bool to_stderr, struct geli_metadata *md);
/* The same, and a record marked by an unfinished conversion is read too:
 * 1 then (geli dump). */
int mdsrc_open_marked(struct mdsrc *src, const char *name,
    struct geli_metadata *md);
/* The same for a provider only (attach, resume): never a backup file;
 * marked: a marked record is read too (1). */
int mdsrc_open_provider(struct mdsrc *src, const char *name, bool writable,
    struct geli_metadata *md);
int mdsrc_open_provider_marked(struct mdsrc *src, const char *name,
    struct geli_metadata *md);
void mdsrc_close(struct mdsrc *src);

/* The raw little-endian 32-bit md_version at offset 16 of a record (geli
 * version and "version %u is too new" name it without decoding). */
unsigned raw_md_version(const uint8_t *rec);

/* Open a provider (not a backup file); errors are left to the caller. */
int prov_open(const char *name, bool writable, struct geli_provider **p);

/* The request error in FreeBSD's userland words for a libgeli code (msg.h). */
void req_msg(enum msg_op op, enum geli_step step, int code,
    const struct msg_args *a);

/* ---- A new provider's parameters (params.c) --------------------------------- */

/* Whose words a refusal takes: geli(8)'s (init) or the kernel's (onetime). */
enum params_verb { PARAMS_INIT, PARAMS_ONETIME };
/*
 * -a, -e and -l into md (its version set): aalgo and GELI_FLAG_AUTH,
 * ealgo (default by version), keylen, each checked against the version and
 * the crypto backend; init warns of legacy algorithms.  0, or -1 with the
 * request error.
 */
int parse_algorithms(struct opts *o, enum params_verb v,
    struct geli_metadata *md);
/* -s for a provider of psize-byte sectors (0: psize): 0, or -1 with "Invalid
 * sector size." */
int parse_sectorsize(struct opts *o, enum params_verb v, uint32_t psize,
    uint32_t *out);
/* The warning of -s above the page size. */
void warn_sectorsize(struct opts *o);

/* ---- init's pieces, which reencrypt shares (cmd_init.c) --------------------- */

/* The new record of -b -d -g -T -R -V -a -e -l -i -P (no provider yet):
 * 0, or -1 with the request error. */
int init_template(struct opts *o, struct geli_metadata *md);
/* The metadata backup file for prov by -B's value opt (§8.6): "none", a
 * name, or the default; NULL when out of memory. */
char *backup_name(const char *opt, const char *prov, int nargs);
/* init's words after a backup was written. */
void backup_notice(const char *prov, const char *file);

/* ---- Keys (§4.2) ----------------------------------------------------------- */

struct keysrc;
/* Collect the key components of -k/-K files ("new" selects -K/-J/-P). */
int keysrc_new(struct opts *o, bool isnew, struct keysrc **out);
/*
 * The key material for md (geli_unlock): the keyfiles, and the passphrase
 * unless -p/-P, asked once and cached for further providers ("Missing -p
 * flag." for an existing key of md without one).  0, or -1 with the
 * request error.
 */
int keysrc_keymat(struct keysrc *ks, const struct geli_metadata *md,
    struct geli_keymat *km);
/* The provider the passphrase is for, named in the agents' question. */
void keysrc_for(struct keysrc *ks, const char *prov);
/* The key material did not open it: true when there is another passphrase
 * to try (the agents' next cached one, or a new question, up to
 * GELI_ASKPASS_TRIES in all), which keysrc_keymat gives next. */
bool keysrc_again(struct keysrc *ks);
/* The user key for md; calibrates md->iterations if -1 and a new passphrase
 * is set. */
int keysrc_ukey(struct keysrc *ks, struct geli_metadata *md, uint8_t *ukey);
void keysrc_free(struct keysrc *ks);
/* A passphrase alone, for a program it is handed to (geli serve): the first
 * lines of the passfiles joined, else typed at the terminal.  In secure
 * memory (geli_secure_free), or NULL with the request error set. */
char *read_passphrase(const char *const *passfiles, int npassfiles);

/* ---- Attached providers (attached.c) -------------------------------------- */

/* The name a provider is attached as (its file name). */
void attach_name_of(const char *prov, char *name, size_t len);
/* If arg (a provider, NAME.eli or its path) is attached: its name. */
bool attached_name(const char *arg, char *name, size_t len);
/*
 * The ublk device a daemon of name that died whole (server and keeper)
 * named in its .eli, which may wait to be taken back: its id, or -1.
 */
int32_t waiting_ublk(const char *name);
bool geli_name_suspended(const char *name);
/*
 * One request to the daemon of name; its error (or "No such device")
 * becomes the request error.  0 or -1; *outcome (may be NULL) says whether
 * the daemon stops.
 */
int attached_request(const char *name, const struct ctl_request *req,
    enum ctl_outcome *outcome);
/* Every attached name, sorted (rundir_names), or none with the request
 * error when the run directory is not ours alone. */
int attached_names(char ***names);
/* The run directory made and ours alone: 0, or -1 with the request error. */
int attached_rundir(void);

/* ---- Verbs ----------------------------------------------------------------- */

void cmd_init(struct opts *o, int argc, char **argv);
void cmd_dump(struct opts *o, int argc, char **argv);
void cmd_search(struct opts *o, int argc, char **argv);
void cmd_backup(struct opts *o, int argc, char **argv);
void cmd_restore(struct opts *o, int argc, char **argv);
void cmd_clear(struct opts *o, int argc, char **argv);
void cmd_setkey(struct opts *o, int argc, char **argv);
void cmd_delkey(struct opts *o, int argc, char **argv);
void cmd_kill(struct opts *o, int argc, char **argv);
void cmd_configure(struct opts *o, int argc, char **argv);
void cmd_resize(struct opts *o, int argc, char **argv);
void cmd_version(struct opts *o, int argc, char **argv);
void cmd_attach(struct opts *o, int argc, char **argv);
void cmd_detach(struct opts *o, int argc, char **argv);
void cmd_onetime(struct opts *o, int argc, char **argv);
void cmd_suspend(struct opts *o, int argc, char **argv);
void cmd_resume(struct opts *o, int argc, char **argv);
void cmd_list(struct opts *o, int argc, char **argv);
void cmd_status(struct opts *o, int argc, char **argv);
void cmd_serve(struct opts *o, int argc, char **argv);
void cmd_reencrypt(struct opts *o, int argc, char **argv);
/*
 * Where a conversion's journal lives unless -F names it: $GELI_STATE_DIR,
 * else /var/lib/geli for root, else the user's state directory; then
 * reencrypt/<uuid>.journal.  make: the directory made (0700).  0 or -1.
 */
int reenc_journal_path(const uint8_t uuid[16], bool make, char *buf,
    size_t len);

/* What libblkid finds on a plain provider that -E would overwrite
 * (plaincheck.c): 0 when its last bytes from keep on are unused (or
 * force), else -1 with the request error. */
int plain_check(const char *prov, const char *path, uint64_t keep,
    bool force);

#endif
