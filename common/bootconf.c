/* SPDX-License-Identifier: BSD-2-Clause */
/* geli-boot's configuration: a provider taken out of it (bootconf.h). */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bootconf.h"

#define CONF_MAX	(1 << 20)
#define WORDS_MAX	256

const char *
bootconf_path(void)
{
	const char *c = getenv("GELI_BOOT_CONF");

	return c != NULL && c[0] != '\0' ? c : "/etc/default/geli";
}

/* A line of rc.conf's simple form: NAME=VALUE, the value's place in it. */
struct assign {
	const char *name;
	size_t namelen;
	size_t val, vallen;	/* offsets in the line, quotes left out */
};

static bool
parse(const char *l, struct assign *a)
{
	const char *p = l + strspn(l, " \t"), *v, *e;
	char q;

	a->name = p;
	if (!(*p == '_' || (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z')))
		return false;
	while (*p == '_' || (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
	    (*p >= '0' && *p <= '9'))
		p++;
	a->namelen = (size_t)(p - a->name);
	if (*p++ != '=')
		return false;
	q = *p == '"' || *p == '\'' ? *p++ : '\0';
	v = p;
	if (q != '\0') {
		if ((e = strchr(v, q)) == NULL)
			return false;
		p = e + 1;
	} else {
		e = v + strcspn(v, " \t#;\n");
		p = e;
	}
	/* Nothing a shell would expand or join: else it is left alone. */
	for (const char *c = v; c < e; c++)
		if (strchr(q == '\'' ? "'" : "$`\\\"'", *c) != NULL)
			return false;
	p += strspn(p, " \t\n");
	if (*p != '\0' && *p != '#')
		return false;
	a->val = (size_t)(v - l);
	a->vallen = (size_t)(e - v);
	return true;
}

static bool
named(const struct assign *a, const char *name)
{
	return strlen(name) == a->namelen &&
	    strncmp(a->name, name, a->namelen) == 0;
}

/* geli-boot's var_of: "/dev/" dropped, [^A-Za-z0-9_] as "_". */
static void
var_of(const char *word, size_t n, char *out, size_t len)
{
	size_t i = 0;

	if (n >= 5 && strncmp(word, "/dev/", 5) == 0) {
		word += 5;
		n -= 5;
	}
	for (; n > 0 && i + 1 < len; word++, n--) {
		char c = *word;

		out[i++] = c == '_' || (c >= 'A' && c <= 'Z') ||
		    (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ? c : '_';
	}
	out[i] = '\0';
}

/* Does a word of a devices list (a name under /dev or a path) name prov? */
static bool
names(const char *word, size_t n, const char *prov, const char *real)
{
	char path[PATH_MAX], r[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s%.*s", word[0] == '/' ? "" :
	    "/dev/", (int)n, word) >= (int)sizeof(path))
		return false;
	if (strcmp(path, prov) == 0)
		return true;
	return real[0] != '\0' && realpath(path, r) != NULL &&
	    strcmp(r, real) == 0;
}

struct conf {
	char **line;
	size_t n;
	char gone[WORDS_MAX][128];	/* vars whose lines go */
	size_t ngone;
	char groups[WORDS_MAX][128];	/* groups left without providers */
	size_t ngroups;
};

static void
conf_free(struct conf *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->line[i]);
	free(c->line);
}

static int
conf_read(const char *path, struct conf *c)
{
	FILE *f = fopen(path, "re");
	char *l = NULL;
	size_t cap = 0, total = 0;
	ssize_t n;

	if (f == NULL)
		return -errno;
	while ((n = getline(&l, &cap, f)) >= 0) {
		char **nl;

		total += (size_t)n;
		if (total > CONF_MAX ||
		    (nl = realloc(c->line, (c->n + 1) * sizeof(*nl))) == NULL) {
			free(l);
			fclose(f);
			return total > CONF_MAX ? -EFBIG : -ENOMEM;
		}
		c->line = nl;
		c->line[c->n++] = l;
		l = NULL;
		cap = 0;
	}
	free(l);
	n = ferror(f) ? -EIO : 0;
	fclose(f);
	return (int)n;
}

/* Line i with its value replaced by the words of it that keep[] says. */
static int
rewrite(struct conf *c, size_t i, const struct assign *a, const size_t *ws,
    const size_t *we, const bool *keep, size_t nw)
{
	const char *l = c->line[i];
	size_t len = strlen(l) + 1, at = a->val;
	char *out = malloc(len);
	bool first = true;

	if (out == NULL)
		return -ENOMEM;
	memcpy(out, l, a->val);
	for (size_t k = 0; k < nw; k++) {
		if (!keep[k])
			continue;
		if (!first)
			out[at++] = ' ';
		memcpy(out + at, l + ws[k], we[k] - ws[k]);
		at += we[k] - ws[k];
		first = false;
	}
	strcpy(out + at, l + a->val + a->vallen);
	free(c->line[i]);
	c->line[i] = out;
	return 0;
}

/* The words of a's value: their places in line l; how many. */
static size_t
words(const char *l, const struct assign *a, size_t *ws, size_t *we)
{
	size_t nw = 0, p = a->val, end = a->val + a->vallen;

	while (p < end && nw < WORDS_MAX) {
		p += strspn(l + p, " \t");
		if (p >= end)
			break;
		ws[nw] = p;
		p += strcspn(l + p, " \t");
		we[nw++] = p < end ? p : end;
	}
	return nw;
}

/* The devices lists: prov's words out; 1 when one went. */
static int
take_out(struct conf *c, const char *prov, const char *real, char *what,
    size_t len)
{
	size_t ws[WORDS_MAX], we[WORDS_MAX];
	bool keep[WORDS_MAX];
	struct assign a;
	int found = 0, error;

	what[0] = '\0';
	for (size_t i = 0; i < c->n; i++) {
		const char *l = c->line[i];
		size_t nw, kept = 0;
		bool gone = false;

		if (!parse(l, &a) || a.namelen < 12 ||
		    strncmp(a.name, "geli_", 5) != 0 ||
		    strncmp(a.name + a.namelen - 8, "_devices", 8) != 0)
			continue;
		nw = words(l, &a, ws, we);
		for (size_t k = 0; k < nw; k++) {
			keep[k] = !names(l + ws[k], we[k] - ws[k], prov, real);
			if (!keep[k] && c->ngone < WORDS_MAX) {
				var_of(l + ws[k], we[k] - ws[k],
				    c->gone[c->ngone++], sizeof(c->gone[0]));
				gone = true;
			}
			kept += keep[k];
		}
		if (!gone)
			continue;
		snprintf(what + strlen(what), len - strlen(what), "%s%.*s",
		    found ? ", " : "", (int)a.namelen, a.name);
		found = 1;
		/* A group's list left empty: the group goes. */
		if (kept == 0 && a.namelen > 13 && c->ngroups < WORDS_MAX)
			snprintf(c->groups[c->ngroups++], sizeof(c->groups[0]),
			    "%.*s", (int)(a.namelen - 13), a.name + 5);
		if ((error = rewrite(c, i, &a, ws, we, keep, nw)) != 0)
			return error;
	}
	return found;
}

/* geli_NAME_SUFFIX for a NAME that went. */
static bool
line_gone(const struct conf *c, const struct assign *a)
{
	static const char *const own[] = { "flags", "autodetach",
	    "device_timeout" };
	static const char *const group[] = { "devices", "flags" };
	char n[300];

	for (size_t g = 0; g < c->ngone; g++)
		for (size_t k = 0; k < 3; k++) {
			snprintf(n, sizeof(n), "geli_%s_%s", c->gone[g], own[k]);
			if (named(a, n))
				return true;
		}
	for (size_t g = 0; g < c->ngroups; g++)
		for (size_t k = 0; k < 2; k++) {
			snprintf(n, sizeof(n), "geli_%s_%s", c->groups[g],
			    group[k]);
			if (named(a, n))
				return true;
		}
	return false;
}

/* The emptied groups out of geli_groups. */
static int
groups_out(struct conf *c, size_t i, const struct assign *a)
{
	const char *l = c->line[i];
	size_t ws[WORDS_MAX], we[WORDS_MAX], nw = words(l, a, ws, we);
	bool keep[WORDS_MAX];
	char v[128];

	for (size_t k = 0; k < nw; k++) {
		var_of(l + ws[k], we[k] - ws[k], v, sizeof(v));
		keep[k] = true;
		for (size_t g = 0; g < c->ngroups; g++)
			if (strcmp(v, c->groups[g]) == 0)
				keep[k] = false;
	}
	return rewrite(c, i, a, ws, we, keep, nw);
}

static int
conf_write(const char *path, struct conf *c)
{
	char tmp[PATH_MAX], dir[PATH_MAX];
	struct stat st;
	int fd, error = 0;

	if (stat(path, &st) != 0)
		return -errno;
	if (snprintf(tmp, sizeof(tmp), "%s.geli-XXXXXX", path) >=
	    (int)sizeof(tmp))
		return -ENAMETOOLONG;
	if ((fd = mkstemp(tmp)) < 0)
		return -errno;
	if (fchmod(fd, st.st_mode & 07777) != 0)
		error = -errno;
	for (size_t i = 0; i < c->n && error == 0; i++) {
		struct assign a;

		const char *l = c->line[i];
		size_t left = strlen(l);
		ssize_t n;

		if (parse(l, &a) && line_gone(c, &a))
			continue;
		while (left > 0 && error == 0) {
			n = write(fd, l, left);
			if (n < 0 && errno != EINTR)
				error = -errno;
			if (n > 0) {
				l += n;
				left -= (size_t)n;
			}
		}
	}
	if (error == 0 && fsync(fd) != 0)
		error = -errno;
	if (close(fd) != 0 && error == 0)
		error = -errno;
	if (error == 0 && rename(tmp, path) != 0)
		error = -errno;
	if (error != 0) {
		unlink(tmp);
		return error;
	}
	snprintf(dir, sizeof(dir), "%s", path);
	if ((fd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		(void)fsync(fd);
		close(fd);
	}
	return 0;
}

int
bootconf_forget(const char *conf, const char *prov, char *what, size_t len)
{
	struct conf c = { .n = 0 };
	char real[PATH_MAX];
	struct assign a;
	int error;

	if (realpath(prov, real) == NULL)
		real[0] = '\0';
	error = conf_read(conf, &c);
	if (error == -ENOENT) {
		conf_free(&c);
		return 0;
	}
	if (error == 0)
		error = take_out(&c, prov, real, what, len);
	for (size_t i = 0; error == 1 && c.ngroups > 0 && i < c.n; i++)
		if (parse(c.line[i], &a) && named(&a, "geli_groups") &&
		    groups_out(&c, i, &a) != 0)
			error = -ENOMEM;
	if (error == 1 && (error = conf_write(conf, &c)) == 0)
		error = 1;
	if (error < 0)
		snprintf(what, len, "%s", strerror(-error));
	conf_free(&c);
	return error;
}
