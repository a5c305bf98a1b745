/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * geli list and geli status (§9.16): what each attached provider's daemon
 * says of itself, in geom(8)'s layout.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

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

/* ACTIVE or SUSPENDED, and during a conversion (not FreeBSD's) how far it
 * is: "ACTIVE, converting 45.0%". */
static const char *
state_name(const struct ctl_status *st, char *buf, size_t len)
{
	static const char *const what[] = {
		[CTL_REENC_RUNNING] = "converting",
		[CTL_REENC_PAUSED] = "conversion paused at",
		[CTL_REENC_FAILED] = "conversion failed at",
		[CTL_REENC_DONE] = "converted",
		[CTL_REENC_CONVERTED] = "every sector converted, the end to "
		    "come",
	};
	const char *s = (st->flags & GELI_FLAG_SUSPEND) ? "SUSPENDED" : "ACTIVE";

	if (st->reenc_state == CTL_REENC_NONE)
		snprintf(buf, len, "%s", s);
	else if (st->reenc_state == CTL_REENC_DONE ||
	    st->reenc_state == CTL_REENC_CONVERTED)
		snprintf(buf, len, "%s, %s", s, what[st->reenc_state]);
	else
		snprintf(buf, len, "%s, %s %.1f%%", s, what[st->reenc_state],
		    st->reenc_total ? 100.0 * (double)st->reenc_done /
		    (double)st->reenc_total : 0.0);
	return buf;
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
	char sb[80];

	printf("Geom name: %s.eli\n", st->name);
	printf("State: %s\n", state_name(st, sb, sizeof(sb)));
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
	if (st->reenc_state != CTL_REENC_NONE) {
		printf("Conversion: %s, %ju of %ju hotzones done\n",
		    msg_reenc_kind(st->reenc_kind), (uintmax_t)st->reenc_done,
		    (uintmax_t)st->reenc_total);
		if (st->reenc_state == CTL_REENC_FAILED)
			printf("ConversionError: %s\n",
			    geli_strerror(st->reenc_error));
		if (st->reenc_state != CTL_REENC_DONE)
			printf("Journal: %s\n", st->journal);
	}
	printf("Providers:\n");
	printf("1. Name: %s.eli\n", st->name);
	humanize(st->mediasize, h, sizeof(h));
	printf("   Mediasize: %ju (%s)\n", (uintmax_t)st->mediasize, h);
	printf("   Sectorsize: %u\n", (unsigned)st->sectorsize);
	printf("   Mode: r%uw%ue0\n", (unsigned)st->opens, (unsigned)st->wopens);
	if (st->dev[0] != '\0')
		printf("   Device: %s\n", st->dev);
	if (st->loop[0] != '\0')
		printf("   %s: %s\n", strcmp(st->backend, "ublk") == 0 ?
		    "Ublk" : "Loop", st->loop);
	printf("   Backend: %s\n", st->backend);
	printf("   File: %s\n", st->elipath);
	printf("   Server PID: %d\n", (int)st->pid);
	if (st->keeper_pid > 0)
		printf("   Keeper PID: %d\n", (int)st->keeper_pid);
	printf("   Restarts: %u\n", (unsigned)st->restarts);
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
			rundir_names_free(names, i);
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
		rundir_names_free(names, n);
}

void
cmd_status(struct opts *o, int argc, char **argv)
{
	struct ctl_status *st;
	size_t wn = 4, ws = 6;
	char **names, full[300], sb[80];
	int n, k;

	n = select_names(argc, argv, &names);
	if (n == 0)
		return;
	k = statuses(names, n, &st);
	for (int i = 0; i < k; i++) {
		if (strlen(st[i].name) + 4 > wn)
			wn = strlen(st[i].name) + 4;
		if (strlen(state_name(&st[i], sb, sizeof(sb))) > ws)
			ws = strlen(sb);
	}
	if (!opt_bool(o, 's'))
		printf("%*s  %*s  %s\n", (int)wn, "Name", (int)ws, "Status",
		    "Components");
	for (int i = 0; i < k; i++) {
		snprintf(full, sizeof(full), "%s.eli", st[i].name);
		printf("%*s  %*s  %s\n", (int)wn, full, (int)ws,
		    state_name(&st[i], sb, sizeof(sb)), st[i].prov);
	}
	free(st);
	rundir_names_free(names, n);
}
