/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The attach daemon (see attachd.h): starting it (the keeper forked, the key
 * taken from it, the provider opened, the control socket bound) and
 * tearing it down.  Its front end is front.c's; what it does in between is
 * in serve.c and handlers.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ctl.h"
#include "dmn.h"
#include "leakcheck.h"
#include "loopdev.h"
#include "rundir.h"
#include "ublk_ctl.h"

/* ---- Start and stop ------------------------------------------------------------------ */

static void
teardown(struct dmn *d)
{
	int error;

	keeper_ending(d->keeper);
	/* A conversion pauses at the end of its chunk; the journal stays. */
	dmn_convert_pause(d);
	if (d->ublkdev[0] != '\0' && d->r.loop)
		devlink_remove(d->name, d->ublkdev);
	if (d->loop.path[0] != '\0') {
		devlink_remove(d->name, d->loop.path);
		error = loop_detach(&d->loop);
		/* -ENXIO: removed under us, and maybe someone else's now. */
		if (error != 0 && error != -ENXIO)
			dlog(d, "cannot detach %s: %s", d->loop.path,
			    strerror(-error));
		d->loop.path[0] = '\0';
	}
	/* Requests waiting for a resume that will not come would hold the
	 * FUSE threads, and this teardown, for ever: they fail. */
	if (d->v != NULL && geli_volume_suspended(d->v))
		geli_volume_shutdown(d->v);
	if (d->ff != NULL)
		fusefile_stop(d->ff);
	d->ff = NULL;
	ublk_stop(d->ublk);
	d->ublk = NULL;
	dmn_convert_close(d);
	if (d->ctlfd >= 0) {
		close(d->ctlfd);
		unlink(d->ctlpath);
	}
	geli_mdstore_close(d->store);
	d->store = NULL;
	/* What was written reaches the provider before the keys go. */
	if (d->v != NULL && !(d->r.flags & GELI_FLAG_RO) &&
	    (error = geli_volume_flush(d->v)) != 0)
		dlog(d, "%s.eli: Cannot flush %s: %s.", d->name, d->prov,
		    strerror(-error));
	geli_volume_close(d->v);
	d->v = NULL;
	geli_secure_free(d->mkey);
	d->mkey = NULL;
	unlink(d->elipath);
	unlink(d->pidpath);
	dlog(d, "Device %s.eli destroyed.", d->name);
}

static void __attribute__((format(printf, 3, 4)))
status_msg(int fd, bool ok, const char *fmt, ...)
{
	char buf[1100];
	va_list ap;
	int n;

	n = snprintf(buf, sizeof(buf), "%s ", ok ? "OK" : "ERR");
	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
	va_end(ap);
	if (write(fd, buf, (size_t)n) < 0)
		return;
}

/*
 * A process that a block device waits on (the loop device of -L, a pool
 * over it) must go on under memory pressure, as the kernel's own drivers
 * do (root's daemons; a user's cannot ask: PR_SET_IO_FLUSHER needs
 * CAP_SYS_RESOURCE, so the writeback of their ublk device may wait on
 * their daemon as a FUSE file's may):
 * its allocations do not wait for I/O (PR_SET_IO_FLUSHER: reclaim would
 * wait on writes that only it can finish), and the OOM killer passes it by
 * (killed, it takes a disk from under a pool), as multipathd and iscsid
 * are.  Its memory is locked already (geli_protect_process).
 */
static void
serve_block_device(void)
{
	int fd;

	if (geteuid() != 0)
		return;
	(void)prctl(PR_SET_IO_FLUSHER, 1, 0, 0, 0);
	fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, "-1000", 5) != 5) {
			/* (refused: the daemon is still as killable as any) */
		}
		close(fd);
	}
}

void
dmn_start_failed(struct dmn *d, int stfd, bool torn, const char *fmt, ...)
{
	char buf[1100];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (torn)
		teardown(d);
	status_msg(stfd, false, "%s", buf);
	_exit(1);
}

/* The process: a session of its own, its signals, no terminal, its log
 * and its locks. */
static void
process_init(struct dmn *d)
{
	sigset_t stop_signals;
	pthread_rwlockattr_t rwa;
	int fd;

	setsid();
	/* Request buffers (1 MiB each) stay in the heap and stay mapped: with
	 * locked memory a page fault per request would cost more. */
	mallopt(M_MMAP_THRESHOLD, 64 << 20);
	mallopt(M_TRIM_THRESHOLD, 256 << 20);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	/* SIGTERM and SIGINT are an orderly detach (serve.c reads them from
	 * a signalfd); blocked before any thread starts, so that every thread
	 * inherits the mask and none dies of them. */
	sigemptyset(&stop_signals);
	sigaddset(&stop_signals, SIGTERM);
	sigaddset(&stop_signals, SIGINT);
	if (pthread_sigmask(SIG_BLOCK, &stop_signals, NULL) != 0)
		_exit(1);
	d->sigfd = signalfd(-1, &stop_signals, SFD_CLOEXEC | SFD_NONBLOCK);
	(void)geli_protect_process(NULL);
	serve_block_device();
	fd = open("/dev/null", O_RDWR);
	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		if (fd > 2)
			close(fd);
	}
	if (chdir("/") != 0)
		_exit(1);
	d->log = fopen(d->logpath, "a");
	d->ctlfd = -1;
	pthread_mutex_init(&d->lock, NULL);
	/* A conversion's start waits for the requests in flight, and new
	 * ones wait for it. */
	pthread_rwlockattr_init(&rwa);
	pthread_rwlockattr_setkind_np(&rwa,
	    PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&d->iolock, &rwa);
	pthread_rwlockattr_destroy(&rwa);
}

/* The Master Key, from the keeper's memory into our own. */
static void
receive_key(struct dmn *d, int stfd)
{
	d->mkey = geli_secure_alloc(GELI_MKEY_DATALEN);
	if (d->mkey == NULL)
		dmn_start_failed(d, stfd, false, "Cannot allocate memory.");
	memcpy(d->mkey, d->keeper->mkey, GELI_MKEY_DATALEN);
}

/* The provider opened, the front end chosen, the volume keyed, and a
 * conversion under way taken up. */
static void
open_volume(struct dmn *d, int stfd, struct start *s)
{
	const struct geli_metadata *md = &d->r.md;
	bool ro = (d->r.flags & GELI_FLAG_RO) != 0;
	unsigned vflags = 0, threads;
	const char *journal;
	int error;

	/* Attached read-write, it is ours alone (as FreeBSD's e1). */
	error = ro ? geli_provider_open(d->provpath, false, &d->p) :
	    geli_provider_open_exclusive(d->provpath, &d->p);
	if (error != 0)
		dmn_start_failed(d, stfd, false, "Cannot open %s: %s.", d->prov,
		    strerror(-error));
	d->psize = geli_provider_sectorsize(d->p);
	dmn_front_choose(d, stfd, s);
	if (ro)
		vflags |= GELI_VOLUME_READONLY;
	if (d->r.flags & GELI_FLAG_ONETIME)
		vflags |= GELI_VOLUME_ONETIME;
	/* Reads decrypt from a mapping of the provider: one copy less. */
	if (!d->r.nomap)
		vflags |= GELI_VOLUME_MMAP;
	threads = d->r.threads;
	if (threads == 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		threads = n > 0 ? (unsigned)n : 1;
	}
	d->threads = threads;
	error = geli_volume_open(d->p, md, d->mkey, vflags, threads, &d->v);
	if (error == 0)
		error = geli_mdstore_wrap(d->p, &d->store);
	if (error != 0)
		dmn_start_failed(d, stfd, false, "Cannot attach %s: %s.", d->prov,
		    strerror(-error));
	d->flags = geli_metadata_runtime_flags(md) | d->r.flags;
	/* Attached (or the server started again) in the middle of a
	 * conversion: it goes on. */
	journal = d->restart ? d->keeper->st->journal : d->r.journal;
	if (journal[0] != '\0') {
		char msg[1100];

		if (dmn_convert_resume(d, journal, msg, sizeof(msg)) != 0)
			dmn_start_failed(d, stfd, false, "%s", msg);
	}
}

/* Started: the pid file, the log's lines, and the caller told. */
static void
announce(struct dmn *d, int stfd, const struct start *s)
{
	const struct geli_metadata *md = &d->r.md;
	const char *accel;
	FILE *pf;

	/* (the keeper told first: from the pid file on, a death of ours is
	 * one another server follows) */
	dmn_front_leave(d);
	if ((pf = fopen(d->pidpath, "w")) != NULL) {
		fprintf(pf, "%d\n", (int)getpid());
		fclose(pf);
	}
	if (d->restart) {
		dlog(d, "%s.eli: its server died (signal %d); served again "
		    "(restart %u).", d->name, (int)d->keeper->st->death,
		    atomic_load(&d->keeper->st->restarts));
		return;
	}
	dlog(d, "Device %s.eli created.", d->name);
	dlog(d, "Encryption: %s %u", geli_algo_name(md->ealgo),
	    (unsigned)md->keylen);
	if (md->flags & GELI_FLAG_AUTH)
		dlog(d, " Integrity: %s", geli_algo_name(md->aalgo));
	accel = md->ealgo == GELI_ALGO_AES_CBC ? geli_crypto_accel() : NULL;
	dlog(d, "    Crypto: software (%s%s%s), %u threads", geli_crypto_version(),
	    accel != NULL ? "; runs of sectors: " : "",
	    accel != NULL ? accel : "", d->threads);
	/* "OK L<loop device>", or "OK U..." when secrets are in memory that
	 * RLIMIT_MEMLOCK left unlocked: attach warns. */
	if (geli_secure_unlocked())
		dlog(d, "%s.eli: Cannot lock memory: keys may be written to "
		    "swap.", d->name);
	if (d->ublk != NULL)
		dlog(d, "%s.eli: served as %s (ublk).", d->name, d->ublkdev);
	if (d->resumable)
		dlog(d, "%s.eli: its server is started again if it dies; the key "
		    "waits in %s.", d->name, d->keeper->st->secret ?
		    "secret memory (memfd_secret)" : "locked memory (no "
		    "memfd_secret here: secretmem.enable=1 on the kernel's "
		    "command line)");
	/* "OK L<device>\n<note>": the note says why FUSE serves it */
	status_msg(stfd, true, "%c%s\n%s", geli_secure_unlocked() ? 'U' : 'L',
	    d->ublk != NULL ? d->ublkdev : d->loop.path, s->note);
	close(stfd);
}

/* The daemon process: its start's steps, then it serves until it stops;
 * never returns. */
static void __attribute__((noreturn))
daemon_main(struct dmn *d, int stfd)
{
	struct start s = { .use_ublk = false };

	process_init(d);
	receive_key(d, stfd);
	open_volume(d, stfd, &s);
	dmn_front_start(d, stfd, &s);
	announce(d, stfd, &s);
	dmn_serve(d);
	teardown(d);
	if (d->log != NULL)
		fclose(d->log);
	leak_check();
	_exit(0);
}

/* The keeper's server: the daemon, first or after a death (no status
 * pipe: no caller waits). */
static int
serve_provider(struct keeper *k, int stfd, void *arg)
{
	struct dmn *d = arg;
	long page = sysconf(_SC_PAGESIZE);

	/* (the programs we start get no copy of the key) */
	(void)madvise((void *)((uintptr_t)k->mkey & ~(uintptr_t)(page - 1)),
	    (size_t)page, MADV_DONTFORK);
	d->keeper = k;
	d->restart = stfd < 0;
	daemon_main(d, stfd);
}

/*
 * The keeper gives up (a server died that no other can follow: suspended,
 * or dying as fast as it starts): a ublk device that waits for a server
 * is deleted, and its requests fail, as when a server died before keepers
 * were.
 */
static void
abandon_provider(struct keeper *k, void *arg)
{
	struct uctl c;
	char why[256];

	(void)arg;
	if (k->st->ublk_id < 0 || uctl_open(&c, why, sizeof(why)) != 0)
		return;
	uctl_delete_dev(&c, (uint32_t)k->st->ublk_id, false, -1);
	uctl_close(&c);
}

int
attachd_start(const struct attach_req *r, const uint8_t *mkey,
    struct attach_result *res)
{
	int keyp[2], stp[2], status;
	struct dmn *d;
	char buf[1100];
	ssize_t n;
	pid_t pid;

	d = calloc(1, sizeof(*d));
	if (d == NULL) {
		snprintf(res->msg, sizeof(res->msg), "Cannot allocate memory.");
		return -1;
	}
	d->r = *r;
	snprintf(d->name, sizeof(d->name), "%s", r->name);
	snprintf(d->prov, sizeof(d->prov), "%s", r->prov);
	snprintf(d->provpath, sizeof(d->provpath), "%s", r->provpath);
	d->r.name = d->name;
	d->r.prov = d->prov;
	d->r.provpath = d->provpath;
	if (rundir_entry(NULL, d->name, RUNDIR_ELI, d->elipath,
	    sizeof(d->elipath)) != 0 ||
	    rundir_entry(NULL, d->name, RUNDIR_CTL, d->ctlpath,
	    sizeof(d->ctlpath)) != 0 ||
	    rundir_entry(NULL, d->name, RUNDIR_LOG, d->logpath,
	    sizeof(d->logpath)) != 0 ||
	    rundir_entry(NULL, d->name, RUNDIR_PID, d->pidpath,
	    sizeof(d->pidpath)) != 0) {
		snprintf(res->msg, sizeof(res->msg), "Run directory path too long.");
		free(d);
		return -1;
	}
	if (pipe2(keyp, O_CLOEXEC) != 0 || pipe2(stp, O_CLOEXEC) != 0) {
		snprintf(res->msg, sizeof(res->msg), "Cannot create a pipe: %s.", strerror(errno));
		free(d);
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		snprintf(res->msg, sizeof(res->msg), "Cannot fork: %s.", strerror(errno));
		free(d);
		return -1;
	}
	if (pid == 0) {
		/* The keeper is the grandchild, so that no zombie is left;
		 * the daemon its child. */
		close(keyp[1]);
		close(stp[0]);
		pid = fork();
		if (pid != 0)
			_exit(pid < 0 ? 1 : 0);
		/* (the keeper, which starts the next server, goes on under
		 * memory pressure as the server does) */
		serve_block_device();
		keeper_main(keyp[0], stp[1], serve_provider, abandon_provider,
		    d);
	}
	close(keyp[0]);
	close(stp[1]);
	/* The key goes through a pipe: our locked pages are wiped on fork
	 * (MADV_WIPEONFORK); the keeper keeps it in memory it shares with the
	 * daemon (keeper.h). */
	n = write(keyp[1], mkey, GELI_MKEY_DATALEN);
	close(keyp[1]);
	waitpid(pid, &status, 0);
	free(d);
	n = n == GELI_MKEY_DATALEN ? read(stp[0], buf, sizeof(buf) - 1) : -1;
	close(stp[0]);
	if (n <= 0) {
		snprintf(res->msg, sizeof(res->msg),
		    "The daemon for %s did not start.", r->prov);
		return -1;
	}
	buf[n] = '\0';
	if (strncmp(buf, "OK ", 3) == 0 && buf[3] != '\0') {
		const char *nl = strchr(buf + 4, '\n');

		res->unlocked = buf[3] == 'U';
		snprintf(res->loopdev, sizeof(res->loopdev), "%.*s",
		    (int)(nl != NULL ? nl - (buf + 4) : 0), buf + 4);
		snprintf(res->note, sizeof(res->note), "%s",
		    nl != NULL ? nl + 1 : "");
		return 0;
	}
	snprintf(res->msg, sizeof(res->msg), "%s",
	    strncmp(buf, "ERR ", 4) == 0 ? buf + 4 : buf);
	return -1;
}
