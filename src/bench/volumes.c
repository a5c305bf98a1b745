/* SPDX-License-Identifier: BSD-2-Clause */
/* Providers and volumes for the benchmarks (see volumes.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files.h"
#include "spawn.h"
#include "volumes.h"

void
bench_metadata(struct geli_metadata *md, unsigned ealgo, unsigned keylen,
    unsigned aalgo, uint32_t sectorsize)
{
	memset(md, 0, sizeof(*md));
	memcpy(md->magic, GELI_MAGIC, sizeof(GELI_MAGIC));
	md->version = GELI_VERSION;
	md->flags = GELI_FLAG_AUTORESIZE | (aalgo != 0 ? GELI_FLAG_AUTH : 0);
	md->ealgo = (uint16_t)ealgo;
	md->keylen = (uint16_t)keylen;
	md->aalgo = (uint16_t)aalgo;
	md->sectorsize = sectorsize;
}

/*
 * The bytes fd (a regular file) needs for size decrypted bytes under md:
 * the layout depends on the provider's sector size, which only the
 * provider knows (512 for a regular file today), so it is asked.
 */
static int
provsize_for(int fd, const struct geli_metadata *md, uint64_t size, uint64_t *out)
{
	struct geli_provider *p;
	char path[64];
	int error;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	error = geli_provider_open(path, false, &p);
	if (error != 0)
		return error;
	*out = geli_eli_provsize(md, size, geli_provider_sectorsize(p), false);
	geli_provider_close(p);
	return *out != 0 ? 0 : -EINVAL;
}

int
mem_provider(struct geli_metadata *md, uint64_t size, bool allocate,
    struct geli_provider **p, int *fdout)
{
	uint64_t psize = size;
	char path[64];
	int fd, error;

	fd = memfd_create("geli-bench", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (md != NULL && (error = provsize_for(fd, md, size, &psize)) != 0)
		goto fail;
	if (ftruncate(fd, (off_t)psize) != 0 ||
	    (allocate && posix_fallocate(fd, 0, (off_t)psize) != 0)) {
		error = -ENOMEM;
		goto fail;
	}
	if (md != NULL)
		md->provsize = psize;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	error = geli_provider_open(path, true, p);
	if (error != 0)
		goto fail;
	if (fdout != NULL)
		*fdout = fd;
	else
		close(fd);
	return 0;
fail:
	close(fd);
	return error;
}

int
random_volume(struct geli_provider *p, const struct geli_metadata *md,
    unsigned threads, struct geli_volume **v)
{
	uint8_t mkey[GELI_MKEY_DATALEN];
	int error;

	geli_random(mkey, sizeof(mkey));
	error = geli_volume_open(p, md, mkey, 0, threads, v);
	geli_wipe(mkey, sizeof(mkey));
	return error;
}

/* ---- Files attached through the geli program -------------------------------- */

int
attached_file(const struct attached *a, const char *name, uint64_t size)
{
	struct geli_metadata md;
	char path[4096];
	uint64_t psize;
	int fd, error;

	bench_metadata(&md, a->ealgo, a->keylen, a->aalgo, a->sectorsize);
	snprintf(path, sizeof(path), "%s/%s", a->dir, name);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	error = provsize_for(fd, &md, size, &psize);
	if (error == 0 && ftruncate(fd, (off_t)psize) != 0)
		error = -errno;
	close(fd);
	return error;
}

/* dir/dev: GELI_DEVDIR of the geli commands run for a (attach -L's names). */
#define DEVDIR "dev"

/* dir/run: the run directory of the geli commands run for a. */
static void
run_dir(const struct attached *a, char *buf, size_t len)
{
	snprintf(buf, len, "%s/run", a->dir);
}

int
attached_vdev(const struct attached *a, const char *name, char *buf, size_t len)
{
	int n;

	if (!a->blockdev)
		return attached_path(a, name, RUNDIR_ELI, buf, len);
	n = snprintf(buf, len, "%s/" DEVDIR "/%s.eli", a->dir, name);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int
attached_path(const struct attached *a, const char *name, enum rundir_entry e,
    char *buf, size_t len)
{
	char dir[4096];

	run_dir(a, dir, sizeof(dir));
	return rundir_entry(dir, name, e, buf, len);
}

/* The geli verb with opts (NULL-terminated) and then the n names. */
static int
geli_verb(const struct attached *a, int flags, const char *const *opts,
    const char *const *names, int n)
{
	const char *argv[96], *env[3] = { NULL, NULL, NULL };
	char rundir[4200], devdir[4200], dir[4096];
	struct spawn s = { .argv = argv, .env = env, .cwd = a->dir,
	    .flags = flags };
	int k = 0;

	run_dir(a, dir, sizeof(dir));
	snprintf(rundir, sizeof(rundir), "GELI_RUNDIR=%s", dir);
	env[0] = rundir;
	snprintf(devdir, sizeof(devdir), "GELI_DEVDIR=%s/" DEVDIR, a->dir);
	env[1] = devdir;
	argv[k++] = a->geli;
	for (; *opts != NULL && k < 60; opts++)
		argv[k++] = *opts;
	for (int i = 0; i < n && k < 95; i++)
		argv[k++] = names[i];
	argv[k] = NULL;
	return spawn_run(&s);
}

int
attached_start(const struct attached *a, const char *const *names, int n)
{
	char pass[4096], iters[16], keylen[16], ssize[16];
	const char *init[16],
	    *attach[] = { "attach", "-j", "pass", a->blockdev ? "-L" : NULL, NULL };
	char dev[4096];
	int k = 0, error;

	snprintf(pass, sizeof(pass), "%s/pass", a->dir);
	error = write_file(pass, "bench\n");
	if (error != 0)
		return error;
	snprintf(iters, sizeof(iters), "%d", a->iterations);
	snprintf(keylen, sizeof(keylen), "%u", a->keylen);
	snprintf(ssize, sizeof(ssize), "%u", a->sectorsize);
	init[k++] = "init";
	init[k++] = "-B";
	init[k++] = "none";
	init[k++] = "-i";
	init[k++] = iters;
	init[k++] = "-e";
	init[k++] = geli_algo_name(a->ealgo);
	init[k++] = "-l";
	init[k++] = keylen;
	init[k++] = "-s";
	init[k++] = ssize;
	if (a->aalgo != 0) {
		init[k++] = "-a";
		init[k++] = geli_algo_name(a->aalgo);
	}
	init[k++] = "-J";
	init[k++] = "pass";
	init[k] = NULL;
	snprintf(dev, sizeof(dev), "%s/" DEVDIR, a->dir);
	if (a->blockdev && mkdir(dev, 0700) != 0 && errno != EEXIST)
		return -errno;
	if (geli_verb(a, SPAWN_NO_STDOUT | (a->quiet ? SPAWN_NO_STDERR : 0), init,
	    names, n) != 0 || geli_verb(a, a->blockdev ? SPAWN_NO_STDOUT : 0,
	    attach, names, n) != 0)
		return -EIO;
	return 0;
}

int
attached_stop(const struct attached *a, const char *const *names, int n, bool force)
{
	const char *detach[] = { "detach", force ? "-f" : NULL, NULL };

	return geli_verb(a, a->quiet ? SPAWN_QUIET : 0, detach, names, n);
}

pid_t
attached_daemon(const struct attached *a, const char *name)
{
	char dir[4096];

	run_dir(a, dir, sizeof(dir));
	return daemon_ref(dir, name).pid;
}
