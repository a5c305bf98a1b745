/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Attached providers as the verbs name them: a provider, NAME.eli or its
 * path to the name its daemon serves (as FreeBSD's g_eli_find_device), and
 * one request to that daemon with its error as the request error.  The run
 * directory itself is rundir.h's.
 */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define RUNDIR_NOT_PRIVATE \
	"the run directory is not a directory of yours that only you can write"

static void
rundir_refused(void)
{
	req_error("Cannot use %s: %s.", rundir(), RUNDIR_NOT_PRIVATE);
}

int
attached_rundir(void)
{
	int error = rundir_make();

	if (error == -EPERM) {
		rundir_refused();
		return -1;
	}
	if (error != 0) {
		req_error("Cannot create %s: %s.", rundir(), strerror(-error));
		return -1;
	}
	return 0;
}

int
attached_names(char ***out)
{
	*out = NULL;
	/* Not ours alone: nothing in it is asked (ctl_call refuses), say why. */
	if (rundir_private() == -EPERM) {
		rundir_refused();
		return 0;
	}
	return rundir_names(out);
}

/* The name a provider is attached as: its file name. */
void
attach_name_of(const char *prov, char *name, size_t len)
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
	attach_name_of(arg, cand, sizeof(cand));
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

int32_t
waiting_ublk(const char *name)
{
	char path[4096], buf[256];
	int error = ctl_status(name, NULL);
	unsigned n;
	ssize_t len;

	if (error != -ENOENT && error != -ECONNREFUSED)
		return -1;
	if (rundir_entry(NULL, name, RUNDIR_ELI, path, sizeof(path)) != 0 ||
	    (len = readlink(path, buf, sizeof(buf) - 1)) <= 0)
		return -1;
	buf[len] = '\0';
	return sscanf(buf, "/dev/ublkb%u", &n) == 1 ? (int32_t)n : -1;
}

bool
geli_name_suspended(const char *name)
{
	struct ctl_status st;

	return ctl_status(name, &st) == 0 && (st.flags & GELI_FLAG_SUSPEND);
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
