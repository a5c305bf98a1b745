/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * geli(8) for Linux: the command table, option parsing (as geom(8) does it)
 * and the request-error convention shared by every verb.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "cryptosel.h"
#include "cli.h"
#include "frontends.h"

int verbose;

static const struct opt_spec init_opts[] = {
	{ 'a', OPT_STR, "" }, { 'b', OPT_BOOL, NULL }, { 'B', OPT_STR, "" },
	{ 'd', OPT_BOOL, NULL }, { 'e', OPT_STR, "" }, { 'g', OPT_BOOL, NULL },
	{ 'i', OPT_NUM, "-1" }, { 'J', OPT_MULTI, NULL },
	{ 'K', OPT_MULTI, NULL }, { 'l', OPT_NUM, "0" },
	{ 'P', OPT_BOOL, NULL }, { 'R', OPT_BOOL, NULL },
	{ 's', OPT_NUM, "0" }, { 'T', OPT_BOOL, NULL },
	{ 'V', OPT_NUM, "-1" }, { 0, 0, NULL }
};
static const struct opt_spec configure_opts[] = {
	{ 'b', OPT_BOOL, NULL }, { 'B', OPT_BOOL, NULL },
	{ 'd', OPT_BOOL, NULL }, { 'D', OPT_BOOL, NULL },
	{ 'g', OPT_BOOL, NULL }, { 'G', OPT_BOOL, NULL },
	{ 'r', OPT_BOOL, NULL }, { 'R', OPT_BOOL, NULL },
	{ 't', OPT_BOOL, NULL }, { 'T', OPT_BOOL, NULL }, { 0, 0, NULL }
};
static const struct opt_spec setkey_opts[] = {
	{ 'i', OPT_NUM, "-1" }, { 'j', OPT_MULTI, NULL },
	{ 'J', OPT_MULTI, NULL }, { 'k', OPT_MULTI, NULL },
	{ 'K', OPT_MULTI, NULL }, { 'n', OPT_NUM, "-1" },
	{ 'p', OPT_BOOL, NULL }, { 'P', OPT_BOOL, NULL }, { 0, 0, NULL }
};
static const struct opt_spec delkey_opts[] = {
	{ 'a', OPT_BOOL, NULL }, { 'f', OPT_BOOL, NULL },
	{ 'n', OPT_NUM, "-1" }, { 0, 0, NULL }
};
static const struct opt_spec kill_opts[] = {
	{ 'a', OPT_BOOL, NULL }, { 0, 0, NULL }
};
static const struct opt_spec restore_opts[] = {
	{ 'f', OPT_BOOL, NULL }, { 0, 0, NULL }
};
static const struct opt_spec resize_opts[] = {
	{ 's', OPT_NUM, NULL }, { 0, 0, NULL }
};
static const struct opt_spec attach_opts[] = {
	{ 'b', OPT_STR, "" },
	{ 'C', OPT_BOOL, NULL }, { 'd', OPT_BOOL, NULL },
	{ 'j', OPT_MULTI, NULL }, { 'k', OPT_MULTI, NULL },
	{ 'L', OPT_BOOL, NULL }, { 'n', OPT_NUM, "-1" },
	{ 'p', OPT_BOOL, NULL }, { 'r', OPT_BOOL, NULL }, { 0, 0, NULL }
};
static const struct opt_spec detach_opts[] = {
	{ 'f', OPT_BOOL, NULL }, { 'l', OPT_BOOL, NULL }, { 0, 0, NULL }
};
static const struct opt_spec onetime_opts[] = {
	{ 'a', OPT_STR, "" }, { 'b', OPT_STR, "" }, { 'd', OPT_BOOL, NULL },
	{ 'e', OPT_STR, "aes" },
	{ 'l', OPT_NUM, "0" }, { 'L', OPT_BOOL, NULL }, { 'R', OPT_BOOL, NULL },
	{ 's', OPT_NUM, "0" }, { 'T', OPT_BOOL, NULL }, { 0, 0, NULL }
};
static const struct opt_spec resume_opts[] = {
	{ 'j', OPT_MULTI, NULL }, { 'k', OPT_MULTI, NULL },
	{ 'p', OPT_BOOL, NULL }, { 0, 0, NULL }
};
static const struct opt_spec list_opts[] = {
	{ 'a', OPT_BOOL, NULL }, { 0, 0, NULL }
};
static const struct opt_spec status_opts[] = {
	{ 'a', OPT_BOOL, NULL }, { 'g', OPT_BOOL, NULL },
	{ 's', OPT_BOOL, NULL }, { 0, 0, NULL }
};
static const struct opt_spec serve_opts[] = {
	{ 'i', OPT_STR, "" }, { 'j', OPT_MULTI, NULL },
	{ 'k', OPT_MULTI, NULL }, { 'n', OPT_NUM, "-1" },
	{ 'p', OPT_NUM, "10809" }, { 'r', OPT_BOOL, NULL },
	{ 'U', OPT_STR, "" }, { 0, 0, NULL }
};
static const struct opt_spec reencrypt_opts[] = {
	{ 'a', OPT_STR, "" }, { 'b', OPT_BOOL, NULL }, { 'B', OPT_STR, "" },
	{ 'd', OPT_BOOL, NULL }, { 'D', OPT_BOOL, NULL },
	{ 'e', OPT_STR, "" }, { 'E', OPT_BOOL, NULL }, { 'f', OPT_BOOL, NULL },
	{ 'F', OPT_STR, "" }, { 'g', OPT_BOOL, NULL }, { 'H', OPT_STR, "" },
	{ 'i', OPT_NUM, "-1" },
	{ 'j', OPT_MULTI, NULL }, { 'J', OPT_MULTI, NULL },
	{ 'k', OPT_MULTI, NULL }, { 'K', OPT_MULTI, NULL },
	{ 'l', OPT_NUM, "0" }, { 'n', OPT_NUM, "-1" }, { 'p', OPT_BOOL, NULL },
	{ 'P', OPT_BOOL, NULL }, { 'R', OPT_BOOL, NULL },
	{ 's', OPT_NUM, "0" }, { 't', OPT_STR, "" }, { 'T', OPT_BOOL, NULL },
	{ 'V', OPT_NUM, "-1" }, { 'x', OPT_MULTI, NULL },
	{ 'X', OPT_MULTI, NULL }, { 'z', OPT_NUM, "0" }, { 0, 0, NULL }
};
static const struct opt_spec no_opts[] = { { 0, 0, NULL } };

static void cmd_help(struct opts *o, int argc, char **argv);

static const struct cmd commands[] = {
	{ "init", CMD_VERBOSE, init_opts,
	  "[-bdgPRTv] [-a aalgo] [-B backupfile] [-e ealgo] [-i iterations] "
	  "[-l keylen] [-J newpassfile] [-K newkeyfile] [-s sectorsize] "
	  "[-V version] prov ...", cmd_init },
	{ "label", CMD_VERBOSE, init_opts, "- an alias for 'init'", cmd_init },
	{ "attach", CMD_VERBOSE, attach_opts,
	  "[-CdLprv] [-b backend] [-n keyno] [-j passfile] [-k keyfile] "
	  "prov ...",
	  cmd_attach },
	{ "detach", 0, detach_opts, "[-fl] prov ...", cmd_detach },
	{ "stop", 0, detach_opts, "- an alias for 'detach'", cmd_detach },
	{ "onetime", CMD_VERBOSE, onetime_opts,
	  "[-dLRT] [-a aalgo] [-b backend] [-e ealgo] [-l keylen] "
	  "[-s sectorsize] prov",
	  cmd_onetime },
	{ "configure", CMD_VERBOSE, configure_opts, "[-bBdDgGrRtT] prov ...",
	  cmd_configure },
	{ "setkey", CMD_VERBOSE, setkey_opts,
	  "[-pPv] [-n keyno] [-i iterations] [-j passfile] [-J newpassfile] "
	  "[-k keyfile] [-K newkeyfile] prov", cmd_setkey },
	{ "delkey", CMD_VERBOSE, delkey_opts, "[-afv] [-n keyno] prov",
	  cmd_delkey },
	{ "suspend", CMD_VERBOSE, kill_opts, "[-v] -a | prov ...",
	  cmd_suspend },
	{ "resume", CMD_VERBOSE, resume_opts, "[-pv] [-j passfile] [-k keyfile] prov",
	  cmd_resume },
	{ "kill", CMD_VERBOSE, kill_opts, "[-av] [prov ...]", cmd_kill },
	{ "backup", CMD_VERBOSE, no_opts, "[-v] prov file", cmd_backup },
	{ "restore", CMD_VERBOSE, restore_opts, "[-fv] file prov",
	  cmd_restore },
	{ "resize", CMD_VERBOSE, resize_opts, "[-v] -s oldsize prov",
	  cmd_resize },
	{ "version", 0, no_opts, "[prov ...]", cmd_version },
	{ "clear", CMD_VERBOSE, no_opts, "[-v] prov ...", cmd_clear },
	{ "dump", CMD_VERBOSE, no_opts, "[-v] prov ...", cmd_dump },
	{ "search", CMD_VERBOSE, no_opts, "[-v] prov ...", cmd_search },
	{ "list", 0, list_opts, "[-a] [name ...]", cmd_list },
	{ "status", 0, status_opts, "[-ags] [name ...]", cmd_status },
	{ "serve", CMD_VERBOSE, serve_opts,
	  "[-rv] [-n keyno] [-j passfile] [-k keyfile] [-U socket | -p port "
	  "[-i address]] prov", cmd_serve },
	{ "reencrypt", CMD_VERBOSE, reencrypt_opts,
	  "[-DEfpPv] [-e ealgo] [-l keylen] [-i iterations] [-j passfile] "
	  "[-J newpassfile] [-k keyfile] [-K newkeyfile] [-n keyno] "
	  "[-s sectorsize] [-B backupfile] [-F journal] [-z hotzone] "
	  "[-t target] [-H headerfile] [-x passfile] [-X keyfile] prov",
	  cmd_reencrypt },
	{ "help", 0, no_opts, NULL, cmd_help },
	{ NULL, 0, NULL, NULL, NULL }
};

/* ---- Errors ------------------------------------------------------------------ */

static char req_err[2048];

void
req_error(const char *fmt, ...)
{
	va_list ap;

	if (req_err[0] != '\0')
		return;
	va_start(ap, fmt);
	vsnprintf(req_err, sizeof(req_err), fmt, ap);
	va_end(ap);
}

bool
req_failed(void)
{
	return req_err[0] != '\0';
}

/* Once per command: secrets (ours or the daemon's) in unlocked memory. */
void
warn_unlocked(void)
{
	static bool warned;
	struct rlimit rl;

	if (warned)
		return;
	warned = true;
	fflush(stdout);
	if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		fprintf(stderr, "geli: warning: Cannot lock memory (RLIMIT_MEMLOCK "
		    "is %llu KiB): keys may be written to swap.\n",
		    (unsigned long long)rl.rlim_cur / 1024);
	else
		fprintf(stderr, "geli: warning: Cannot lock memory: keys may be "
		    "written to swap.\n");
}

void
req_flush_as_warning(void)
{
	if (req_err[0] == '\0')
		return;
	warnmsg("%s", req_err);
	req_err[0] = '\0';
}

static void
vwarnmsg(const char *fmt, va_list ap)
{
	fflush(stdout);
	fputs("geli: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void
warnmsg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarnmsg(fmt, ap);
	va_end(ap);
}

static void __attribute__((noreturn, format(printf, 1, 2)))
die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarnmsg(fmt, ap);
	va_end(ap);
	exit(EXIT_FAILURE);
}

/* ---- The crypto backend ------------------------------------------------------ */

static int
cli_crypto_start(void)
{
	char msg[256];

	if (crypto_start(msg, sizeof(msg)) == 0)
		return 0;
	warnmsg("%s", msg);
	return -1;
}

/* ---- Usage ------------------------------------------------------------------- */

static void __attribute__((noreturn))
usage(void)
{
	const char *prefix = "usage:";

	fflush(stdout);
	for (const struct cmd *c = commands; c->name != NULL; c++) {
		/* The other front ends' verbs, before help. */
		if (strcmp(c->name, "help") == 0)
			for (const struct frontend_verb *v = geli_frontends.verbs;
			    v != NULL && v->name != NULL; v++) {
				fprintf(stderr, "%s geli %s %s\n", prefix,
				    v->name, v->usage);
				prefix = "      ";
			}
		if (c->usage == NULL)
			fprintf(stderr, "%s geli %s\n", prefix, c->name);
		else
			fprintf(stderr, "%s geli %s %s\n", prefix, c->name,
			    c->usage);
		prefix = "      ";
	}
	exit(EXIT_FAILURE);
}

static void
cmd_help(struct opts *o, int argc, char **argv)
{
	(void)o;
	(void)argc;
	(void)argv;
	usage();
}

/* ---- Options ----------------------------------------------------------------- */

static int
parse_options(const struct cmd *c, struct opts *o, int argc, char **argv)
{
	struct opt_error err;
	bool v = false;
	int n;

	n = opts_parse(c->opts, (c->flags & CMD_VERBOSE) != 0, o, argc, argv,
	    &v, &err);
	if (v)
		verbose = 1;
	if (n < 0) {
		warnmsg("%s", err.msg);
		if (err.usage)
			usage();
		exit(EXIT_FAILURE);
	}
	return n;
}

/* ---- Provider names ------------------------------------------------------------ */

const char *
prov_path(const char *name, char *buf, size_t len)
{
	struct stat st;

	if (strchr(name, '/') != NULL || stat(name, &st) == 0)
		return name;
	snprintf(buf, len, "/dev/%s", name);
	return buf;
}

const char *
prov_shortname(const char *name)
{
	if (strncmp(name, "/dev/", 5) == 0)
		return name + 5;
	return name;
}

/* ---- main ---------------------------------------------------------------------- */

int
main(int argc, char **argv)
{
	const struct cmd *c;
	struct opts *o;
	bool locked;
	int n, error;

	if (argc < 2)
		usage();
	/* Another front end's verb (geli bench: GNU long options of its own,
	 * no secrets, and the crypto backend started by itself, after
	 * --no-aesni). */
	for (const struct frontend_verb *v = geli_frontends.verbs;
	    v != NULL && v->name != NULL; v++)
		if (strcmp(v->name, argv[1]) == 0)
			return v->main(argc - 1, argv + 1);
	for (c = commands; c->name != NULL; c++)
		if (strcmp(c->name, argv[1]) == 0)
			break;
	if (c->name == NULL) {
		warnmsg("Unknown command: %s.", argv[1]);
		usage();
	}
	/* Before any key is read: no core dumps, memory locked (§ eli_protect). */
	error = geli_protect_process(&locked);
	if (error != 0)
		die("Cannot disable core dumps: %s.", strerror(-error));
	if (cli_crypto_start() != 0)
		return EXIT_FAILURE;

	o = calloc(1, sizeof(*o));
	if (o == NULL)
		die("Cannot allocate memory.");
	n = parse_options(c, o, argc - 1, argv + 1);
	c->run(o, argc - 1 - n, argv + 1 + n);
	free(o);
	if (geli_secure_unlocked())
		warn_unlocked();
	fflush(stdout);
	if (req_failed()) {
		fprintf(stderr, "geli: %s\n", req_err);
		return EXIT_FAILURE;
	}
	if (verbose)
		printf("Done.\n");
	return EXIT_SUCCESS;
}
