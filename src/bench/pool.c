/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * geli bench --pool: bonnie++'s block phases on a ZFS pool (zfs-fuse, or an
 * OpenZFS that answers) made of GELI providers attached through the geli
 * program (for OpenZFS's kernel module with -L, as its users attach them:
 * block devices), against the same pool on plain memory files.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "geli.h"
#include "files.h"
#include "spawn.h"
#include "stats.h"
#include "study.h"
#include "volumes.h"

#define MAXPROV BENCH_MAXPROV

/* bonnie++'s block phases on one file: write, rewrite, read (MB/s). */
static int
pool_phases(const char *file, uint64_t size, uint8_t *buf, double *w, double *rw,
    double *r)
{
	const size_t bs = 1 << 20;
	double t0;
	int fd;

	fd = open(file, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return -errno;
	t0 = now();
	for (uint64_t off = 0; off < size; off += bs)
		if (pwrite(fd, buf, bs, (off_t)off) != (ssize_t)bs)
			goto fail;
	if (fsync(fd) != 0)
		goto fail;
	*w = (double)size / (now() - t0) / 1e6;
	t0 = now();
	for (uint64_t off = 0; off < size; off += bs) {
		if (pread(fd, buf, bs, (off_t)off) != (ssize_t)bs)
			goto fail;
		buf[0] ^= 1;
		if (pwrite(fd, buf, bs, (off_t)off) != (ssize_t)bs)
			goto fail;
	}
	if (fsync(fd) != 0)
		goto fail;
	*rw = (double)size / (now() - t0) / 1e6;
	t0 = now();
	for (uint64_t off = 0; off < size; off += bs)
		if (pread(fd, buf, bs, (off_t)off) != (ssize_t)bs)
			goto fail;
	*r = (double)size / (now() - t0) / 1e6;
	close(fd);
	return 0;
fail:
	close(fd);
	return -EIO;
}


/* The pool's providers: n files d0..d(n-1) in dir, as vdevs of kind. */
struct pool {
	const struct bench_opts *o;
	char dir[32], kind[16];
	int nvdev, width, n;
	char names[MAXPROV][16];
	const char *name[MAXPROV];
	char pool[32];		/* the pool's name, unique to this process */
	bool started;		/* zfs-fuse started here, stopped when done */
};

static int
zpool_list(void)
{
	return run_cmd(SPAWN_QUIET, NULL, NULL, "zpool", "list", NULL);
}

/* A ZFS that answers is used; otherwise zfs-fuse is started here. */
static int
zfs_start(struct pool *pl)
{
	char pidfile[64];

	if (zpool_list() == 0)
		return 0;
	snprintf(pidfile, sizeof(pidfile), "%s/zfs.pid", pl->dir);
	if (run_cmd(SPAWN_QUIET, NULL, NULL, "zfs-fuse", "--pidfile", pidfile,
	    "--no-kstat-mount", NULL) != 0)
		return -1;
	pl->started = true;
	for (int i = 0; i < 100; i++) {
		if (zpool_list() == 0)
			return 0;
		usleep(100000);
	}
	return -1;
}

/* Stop the zfs-fuse zfs_start started, and wait (10 s at most) for it. */
static void
zfs_stop(struct pool *pl)
{
	char pidfile[64];
	int pid = 0;
	FILE *f;

	if (!pl->started)
		return;
	snprintf(pidfile, sizeof(pidfile), "%s/zfs.pid", pl->dir);
	f = fopen(pidfile, "r");
	if (f == NULL)
		return;
	if (fscanf(f, "%d", &pid) != 1)
		pid = 0;
	fclose(f);
	if (pid <= 0 || kill(pid, SIGTERM) != 0)
		return;
	for (int i = 0; i < 50 && kill(pid, 0) == 0; i++)
		usleep(200000);
}

/* Fresh provider files of the size the option asks, plus room for ZFS. */
static int
pool_files(const struct pool *pl)
{
	char path[64];
	int fd;

	for (int i = 0; i < pl->n; i++) {
		snprintf(path, sizeof(path), "%s/%s", pl->dir, pl->name[i]);
		(void)unlink(path);
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0)
			return -errno;
		if (ftruncate(fd, (off_t)(pl->o->size + (64u << 20))) != 0) {
			close(fd);
			return -errno;
		}
		close(fd);
	}
	return 0;
}

/* zpool create on the files (a NULL) or their .eli files (attached as a). */
static int
pool_create(const struct pool *pl, const struct attached *a)
{
	static char paths[MAXPROV][64];
	const char *argv[16 + 2 * MAXPROV];
	char mnt[64];
	struct spawn s = { .argv = argv, .flags = SPAWN_QUIET };
	int k = 0;

	snprintf(mnt, sizeof(mnt), "%s/mnt", pl->dir);
	argv[k++] = "zpool";
	argv[k++] = "create";
	argv[k++] = "-f";
	argv[k++] = "-o";	/* out of the host's zpool.cache: a bench's pool */
	argv[k++] = "cachefile=none";
	argv[k++] = "-O";
	argv[k++] = "compression=off";
	argv[k++] = "-m";
	argv[k++] = mnt;
	argv[k++] = pl->pool;
	for (int v = 0; v < pl->nvdev; v++) {
		if (strcmp(pl->kind, "stripe") != 0)
			argv[k++] = pl->kind;
		for (int i = 0; i < pl->width; i++) {
			int d = v * pl->width + i;
			if (a != NULL)
				(void)attached_vdev(a, pl->name[d], paths[d],
				    sizeof(paths[d]));
			else
				snprintf(paths[d], sizeof(paths[d]), "%s/%s",
				    pl->dir, pl->name[d]);
			argv[k++] = paths[d];
		}
	}
	argv[k] = NULL;
	return spawn_run(&s);
}

/* One pool (on plain files, or on GELI providers) and its three phases. */
static int
pool_round(struct pool *pl, const struct attached *a, bool geli, uint8_t *buf,
    uint64_t fsize, double res[3])
{
	char file[64];
	int error;

	error = pool_files(pl);
	if (error != 0)
		return error;
	if (geli && attached_start(a, pl->name, pl->n) != 0)
		return -EIO;
	if (pl->o->progress)
		fprintf(stderr, "\rgeli bench: pool %s on %s...   ", pl->o->pool,
		    geli ? "GELI" : "plain files");
	if (pool_create(pl, geli ? a : NULL) != 0) {
		error = -EIO;
	} else {
		snprintf(file, sizeof(file), "%s/mnt/bench", pl->dir);
		error = pool_phases(file, fsize, buf, &res[0], &res[1], &res[2]);
		for (int i = 0; i < 10 && run_cmd(SPAWN_QUIET, NULL, NULL, "zpool",
		    "destroy", "-f", pl->pool, NULL) != 0; i++)
			sleep(1);
	}
	if (geli)
		attached_stop(a, pl->name, pl->n, true);
	return error;
}

static void
pool_report(const struct pool *pl, bool blockdev, unsigned ealgo, unsigned keylen,
    uint64_t fsize, double res[2][3])
{
	const struct bench_opts *o = pl->o;
	char lab[64];

	if (o->json) {
		printf("{\n  \"results\": [\n");
		for (int g = 0; g < 2; g++) {
			printf("    {\"study\": \"pool\", \"layout\": \"%s\", \"providers\": %d, "
			    "\"ealgo\": ", o->pool, pl->n);
			if (g)
				printf("\"%s\", \"keylen\": %u, \"sectorsize\": %u", geli_algo_name(ealgo),
				    keylen, o->sectorsize);
			else
				printf("null, \"keylen\": null, \"sectorsize\": null");
			printf(", \"aalgo\": null, \"threads\": %u, \"target\": \"zfs\", "
			    "\"file_MiB\": %ju, \"write_MBps\": %.1f, \"rewrite_MBps\": %.1f, "
			    "\"read_MBps\": %.1f, \"runs\": 1}%s\n", o->threads,
			    (uintmax_t)(fsize >> 20), res[g][0], res[g][1], res[g][2], g ? "" : ",");
		}
		printf("  ]\n}\n");
		return;
	}
	printf("geli bench: ZFS pool %s (%d providers of %ju MiB in /dev/shm; GELI's "
	    "%s), compression=off, a %ju MiB file in 1 MiB blocks (bonnie++'s block "
	    "phases)\n\n", o->pool, pl->n, (uintmax_t)(o->size >> 20),
	    blockdev ? "as block devices, attach -L, under OpenZFS's module" :
	    "as .eli files", (uintmax_t)(fsize >> 20));
	printf("%-22s %12s %14s %12s\n", "vdevs", "write MB/s", "rewrite MB/s", "read MB/s");
	printf("%-22s %12.0f %14.0f %12.0f\n", "plain files (raw)", res[0][0], res[0][1], res[0][2]);
	snprintf(lab, sizeof(lab), "GELI %s %u", geli_algo_name(ealgo), keylen);
	printf("%-22s %12.0f %14.0f %12.0f\n", lab, res[1][0], res[1][1], res[1][2]);
	printf("%-22s %11.0f%% %13.0f%% %11.0f%%\n", "GELI / raw", 100 * res[1][0] / res[0][0],
	    100 * res[1][1] / res[0][1], 100 * res[1][2] / res[0][2]);
}

int
bench_pool(const struct bench_opts *o)
{
	struct pool pl = { .o = o, .dir = "/dev/shm/geli-pool.XXXXXX" };
	unsigned ealgo = o->ealgo ? o->ealgo : GELI_ALGO_AES_XTS;
	unsigned keylen = geli_keylen(ealgo, o->keylen);
	struct attached a = { .geli = self_exe(), .dir = pl.dir, .ealgo = ealgo,
	    .keylen = keylen, .sectorsize = o->sectorsize, .iterations = 1,
	    .quiet = true };
	double res[2][3];
	uint64_t fsize;
	uint8_t *buf;
	int error = 0;

	if (bench_parse_layout(o->pool, &pl.nvdev, pl.kind, sizeof(pl.kind), &pl.width) != 0) {
		fprintf(stderr, "geli: Invalid pool layout: %s (NxKIND[:WIDTH], KIND one of "
		    "stripe, mirror, raidz, raidz2, raidz3).\n", o->pool);
		return 1;
	}
	if (keylen == 0) {
		fprintf(stderr, "geli: Invalid key length.\n");
		return 1;
	}
	/* OpenZFS's kernel module, where it is loaded; else zfs-fuse. */
	a.blockdev = access("/sys/module/zfs", F_OK) == 0 &&
	    access("/dev/zfs", R_OK | W_OK) == 0;
	if (geteuid() != 0 || access("/dev/fuse", R_OK | W_OK) != 0 ||
	    !have_program("zpool") || (!a.blockdev && !have_program("zfs-fuse"))) {
		fprintf(stderr, "geli: --pool needs root, /dev/fuse and zfs-fuse (or OpenZFS).\n");
		return 1;
	}
	pl.n = pl.nvdev * pl.width;
	for (int i = 0; i < pl.n; i++) {
		snprintf(pl.names[i], sizeof(pl.names[i]), "d%d", i);
		pl.name[i] = pl.names[i];
	}
	snprintf(pl.pool, sizeof(pl.pool), "gelibench%d", (int)getpid());
	if (mkdtemp(pl.dir) == NULL)
		return 1;
	if (zfs_start(&pl) != 0) {
		fprintf(stderr, "geli: Cannot start zfs-fuse.\n");
		zfs_stop(&pl);
		remove_tree(pl.dir);
		return 1;
	}
	/* A third of the pool's usable space: data providers per vdev. */
	int data = strcmp(pl.kind, "stripe") == 0 ? pl.width :
	    strcmp(pl.kind, "mirror") == 0 ? 1 :
	    pl.width - (strcmp(pl.kind, "raidz2") == 0 ? 2 : strcmp(pl.kind, "raidz3") == 0 ? 3 : 1);
	fsize = o->size * (uint64_t)(pl.nvdev * (data > 0 ? data : 1)) / 3;
	fsize = fsize / (1 << 20) * (1 << 20);
	if (fsize > (512u << 20))
		fsize = 512u << 20;
	buf = aligned_alloc(4096, 1 << 20);
	geli_random(buf, 1 << 20);
	/* g 0: the pool on plain memory files; g 1: on GELI providers. */
	for (int g = 0; g < 2 && error == 0; g++)
		error = pool_round(&pl, &a, g == 1, buf, fsize, res[g]);
	if (o->progress)
		fprintf(stderr, "\r%70s\r", "");
	zfs_stop(&pl);
	remove_tree(pl.dir);
	free(buf);
	if (error != 0) {
		fprintf(stderr, "geli: The pool benchmark failed: %s.\n", strerror(-error));
		return 1;
	}
	pool_report(&pl, a.blockdev, ealgo, keylen, fsize, res);
	return 0;
}
