/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Providers and volumes for geli bench: in memory for the data path, and
 * files attached with the geli program for the end-to-end measurements.  Every size comes from the library's layout
 * (geli_eli_provsize), for the provider's own sector size.
 */
#ifndef GELI_BENCH_VOLUMES_H
#define GELI_BENCH_VOLUMES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "geli.h"
#include "rundir.h"

/* The metadata of a benchmark volume: version GELI_VERSION, with
 * integrity when aalgo != 0. */
void bench_metadata(struct geli_metadata *md, unsigned ealgo, unsigned keylen,
    unsigned aalgo, uint32_t sectorsize);

/*
 * A provider in memory (a memfd) with room for size decrypted bytes under
 * md (md->provsize is set to its size), or of size bytes when md is NULL.
 * allocate: its pages are allocated now, so that I/O measurements do not
 * time the page faults.  *fdout (when not NULL) is the memfd, the caller's.
 */
int mem_provider(struct geli_metadata *md, uint64_t size, bool allocate,
    struct geli_provider **p, int *fdout);
/* A volume on p with a random Master Key and threads workers; p is the
 * volume's on success and stays the caller's on failure. */
int random_volume(struct geli_provider *p, const struct geli_metadata *md,
    unsigned threads, struct geli_volume **v);

/*
 * Files in a directory made GELI providers and attached through the geli
 * program, as a user does: dir/pass holds the passphrase, GELI_RUNDIR is
 * dir/run (the .eli files and the daemons' pid files), and the commands
 * run in dir on names relative to it.
 */
struct attached {
	const char *geli;	/* the program */
	const char *dir;
	unsigned ealgo, keylen, aalgo;	/* aalgo 0: no integrity */
	uint32_t sectorsize;
	int iterations;		/* geli init -i */
	bool quiet;		/* init, detach: no stderr either */
	bool blockdev;		/* attach -L: block devices, named dir/dev/NAME.eli */
};

/* dir/name, a file sized for size decrypted bytes under a's metadata. */
int attached_file(const struct attached *a, const char *name, uint64_t size);
/* geli init and geli attach of the n files names (in a->dir). */
int attached_start(const struct attached *a, const char *const *names, int n);
/* geli detach [-f] of them; its exit status. */
int attached_stop(const struct attached *a, const char *const *names, int n,
    bool force);
/* The vdev a pool is made of for name: its block device with blockdev,
 * else its .eli file. */
int attached_vdev(const struct attached *a, const char *name, char *buf,
    size_t len);
/* The file e of name in a's run directory (rundir.h). */
int attached_path(const struct attached *a, const char *name, enum rundir_entry e,
    char *buf, size_t len);
/* The PID of the daemon that serves name (its pid file), or 0. */
pid_t attached_daemon(const struct attached *a, const char *name);

#endif
