/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The attach daemon (see attachd.h): starting it (fork, key hand-over, the
 * provider opened, the .eli file mounted, the control socket bound) and
 * tearing it down.  What it does in between is in serve.c and handlers.c.
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

/* Is / a shared mount (systemd makes it so), whose unmounts a slave sees? */
static bool
root_shared(void)
{
	char line[4096], mnt[4096];
	bool shared = false;
	FILE *f = fopen("/proc/self/mountinfo", "re");

	if (f == NULL)
		return false;
	/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - ... */
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) == 1 &&
		    strcmp(mnt, "/") == 0)
			shared = strstr(line, " shared:") != NULL;
	}
	fclose(f);
	return shared;
}

/*
 * Will ublk serve it?  Where the kernel has it and we may (root, or an
 * ordinary user the kernel and the administrator allow: ublk.h).  Root's
 * daemon then goes into a mount namespace of its own, a slave of ours,
 * before any thread starts (*own_ns): it never looks a path up in a file
 * system mounted from its own device (which only it could answer), and
 * what is unmounted out there is unmounted here too.  Not where / is
 * private: there the copy would keep every file system mounted now (a
 * pool could not be exported).  An ordinary user mounts nothing.  false,
 * with why in note, when not.
 */
static bool
choose_ublk(struct dmn *d, char *note, size_t len, bool *own_ns)
{
	*own_ns = false;
	if (d->r.backend == ATTACH_FUSE)
		return false;
	if (ublk_probe(note, len) != 0)
		return false;
	if (geteuid() != 0)
		return true;
	if (!root_shared())
		dlog(d, "%s.eli: no mount namespace of its own: / is not a "
		    "shared mount.", d->name);
	else if (unshare(CLONE_NEWNS) != 0 ||
	    mount("none", "/", "none", MS_REC | MS_SLAVE, NULL) != 0)
		dlog(d, "%s.eli: no mount namespace of its own: %s.", d->name,
		    strerror(errno));
	else
		*own_ns = true;
	return true;
}

/* Served through FUSE after all: the reason, in note, said and logged. */
static void
not_ublk(struct dmn *d, char *note, size_t len)
{
	char why[600];

	snprintf(why, sizeof(why), "%s", note);
	snprintf(note, len, "%.255s.eli: not through ublk (%.300s): through "
	    "FUSE.", d->name, why);
	dlog(d, "%s", note);
}

/*
 * The ublk device made and the .eli in the run directory made a link to
 * it (replacing the file that claimed the name): 0, or -errno with why.
 */
static int
serve_ublk(struct dmn *d, const struct fusefile_backend *be, char *note,
    size_t len)
{
	struct ublk_conf c = {
		.size = geli_volume_size(d->v),
		.sectorsize = geli_volume_sectorsize(d->v),
		.readonly = (d->r.flags & GELI_FLAG_RO) != 0,
		.keeper = d->keeper->st->keeper_pid,
	};
	char tmp[1100];
	int error;

	error = ublk_start(be, &c, &d->ublk, d->ublkdev, sizeof(d->ublkdev),
	    note, len);
	if (error != 0)
		return error;
	snprintf(tmp, sizeof(tmp), "%s.new", d->elipath);
	(void)unlink(tmp);
	if (symlink(d->ublkdev, tmp) != 0 || rename(tmp, d->elipath) != 0) {
		error = -errno;
		snprintf(note, len, "the link in the run directory: %s",
		    strerror(-error));
		(void)unlink(tmp);
		ublk_stop(d->ublk);
		d->ublk = NULL;
		return error;
	}
	return 0;
}

/* What the start's steps below share: does ublk serve it (else FUSE), is
 * the daemon in a mount namespace of its own, and the note that says why
 * FUSE serves it. */
struct start {
	bool use_ublk, own_ns;
	char note[600];
};

/* A start that failed: what it made goes (torn: teardown, gone before the
 * caller hears), and the reason goes to the caller. */
static void __attribute__((noreturn, format(printf, 4, 5)))
start_failed(struct dmn *d, int stfd, bool torn, const char *fmt, ...)
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
		start_failed(d, stfd, false, "Cannot allocate memory.");
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
		start_failed(d, stfd, false, "Cannot open %s: %s.", d->prov,
		    strerror(-error));
	d->psize = geli_provider_sectorsize(d->p);
	/* After a death: the front end the dead server had. */
	s->use_ublk = (!d->restart || d->keeper->st->ublk_id >= 0) &&
	    choose_ublk(d, s->note, sizeof(s->note), &s->own_ns);
	if (!s->use_ublk && d->r.backend == ATTACH_UBLK)
		start_failed(d, stfd, false, "Cannot create a ublk device for "
		    "%s: %s.", d->name, s->note);
	if (!s->use_ublk && s->note[0] != '\0')
		not_ublk(d, s->note, sizeof(s->note));
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
		start_failed(d, stfd, false, "Cannot attach %s: %s.", d->prov,
		    strerror(-error));
	d->flags = geli_metadata_runtime_flags(md) | d->r.flags;
	/* Attached (or the server started again) in the middle of a
	 * conversion: it goes on. */
	journal = d->restart ? d->keeper->st->journal : d->r.journal;
	if (journal[0] != '\0') {
		char msg[1100];

		if (dmn_convert_resume(d, journal, msg, sizeof(msg)) != 0)
			start_failed(d, stfd, false, "%s", msg);
	}
}

/*
 * After a server's death: the control socket bound again, and the FUSE
 * session it served (the .eli stays mounted while the keeper holds it)
 * taken over with the loop device on it, as it was.
 */
static void
take_back(struct dmn *d, int stfd)
{
	struct keeper_state *st = d->keeper->st;
	struct fusefile_backend be;
	int error;

	if ((error = ctl_listen(d)) != 0)
		start_failed(d, stfd, false, "Cannot create %s: %s.",
		    d->ctlpath, strerror(-error));
	dmn_backend(d, &be);
	if (st->ublk_id >= 0) {
		struct ublk_conf c = {
			.size = geli_volume_size(d->v),
			.sectorsize = geli_volume_sectorsize(d->v),
			.readonly = (d->r.flags & GELI_FLAG_RO) != 0,
			.keeper = st->keeper_pid,
		};
		char why[600];

		error = ublk_recover(&be, &c, (uint32_t)st->ublk_id, &d->ublk,
		    d->ublkdev, sizeof(d->ublkdev), why, sizeof(why));
		if (error != 0)
			start_failed(d, stfd, false, "Cannot take /dev/ublkb%d "
			    "back: %s.", (int)st->ublk_id, why);
		return;
	}
	d->opens = (unsigned)atomic_load(&st->opens);
	d->wopens = (unsigned)atomic_load(&st->wopens);
	if (d->wopens > 0)
		d->flags |= GELI_FLAG_WOPEN;
	(void)fcntl(st->fuse_fd, F_SETFD, FD_CLOEXEC);
	error = fusefile_adopt(st->fuse_fd, &st->fuse, d->elipath, &be,
	    (d->r.flags & GELI_FLAG_RO) != 0, !d->r.cached, &d->ff);
	if (error != 0)
		start_failed(d, stfd, false, "Cannot serve %s again: %s.",
		    d->elipath, strerror(-error));
	if (st->loop[0] != '\0' && st->loop_fd >= 0) {
		(void)fcntl(st->loop_fd, F_SETFD, FD_CLOEXEC);
		snprintf(d->loop.path, sizeof(d->loop.path), "%s", st->loop);
		d->loop.fdev = st->loop_fdev;
		d->loop.fino = st->loop_fino;
		d->loop.fd = st->loop_fd;
	}
}

/* The .eli claimed in the run directory, the control socket bound, and the
 * front end serving: a ublk device, or the FUSE file (with -L its loop
 * device); the stable name leads to the block device. */
static void
start_front_end(struct dmn *d, int stfd, struct start *s)
{
	struct fusefile_backend be;
	bool ro = (d->r.flags & GELI_FLAG_RO) != 0;
	char path[4096];
	int error, fd;

	d->evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (d->restart) {
		take_back(d, stfd);
		return;
	}
	fd = open(d->elipath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		start_failed(d, stfd, false, "Provider %s.eli already exists.",
		    d->name);
	close(fd);
	error = ctl_listen(d);
	dmn_backend(d, &be);
	if (error == 0 && s->use_ublk &&
	    (error = serve_ublk(d, &be, s->note, sizeof(s->note))) != 0) {
		/* Asked for, or where FUSE's mount would be ours alone: the
		 * reason.  Else FUSE serves it, and says why. */
		if (d->r.backend == ATTACH_UBLK || s->own_ns)
			start_failed(d, stfd, true, "Cannot create a ublk "
			    "device for %s: %s.", d->name, s->note);
		not_ublk(d, s->note, sizeof(s->note));
		s->use_ublk = false;
		error = 0;
	}
	if (error == 0 && !s->use_ublk)
		error = fusefile_start(d->elipath, &be, ro, !d->r.cached, &d->ff);
	if (error != 0)
		start_failed(d, stfd, true, "Cannot create %s: %s.", d->elipath,
		    strerror(-error));
	if (d->ublk != NULL && d->r.loop &&
	    (error = devlink_make(d->name, d->ublkdev)) != 0) {
		(void)devlink_path(d->name, path, sizeof(path));
		d->r.loop = false;	/* (not ours to remove) */
		start_failed(d, stfd, true, "Cannot create %s: %s.", path,
		    strerror(-error));
	}
	if (d->r.loop && d->ublk == NULL) {
		uint32_t bs = geli_volume_sectorsize(d->v);

		error = loop_attach(d->elipath, bs > 4096 ? 4096 : bs, ro,
		    &d->loop);
		if (error != 0)
			start_failed(d, stfd, true, "Cannot create a loop device "
			    "on %s: %s.", d->elipath, strerror(-error));
		if ((error = devlink_make(d->name, d->loop.path)) != 0) {
			(void)devlink_path(d->name, path, sizeof(path));
			start_failed(d, stfd, true, "Cannot create %s: %s.",
			    path, strerror(-error));
		}
	}
}

/*
 * What the next server needs if we die, left with the keeper: whether it
 * can take our front end back (a FUSE session whose kernel resends the
 * requests we held), the session's and the loop device's descriptors, and
 * what it cannot ask the kernel for.
 */
static void
leave_with_keeper(struct dmn *d)
{
	struct keeper_state *st = d->keeper->st;

	if (d->ff != NULL)
		fusefile_conn(d->ff, &st->fuse);
	/* (a ublk device's descriptors are never the keeper's to hold: the
	 * kernel lets the next server take the device back only once the
	 * dead one's are all closed) */
	st->ublk_id = d->ublk != NULL && ublk_recoverable(d->ublk) ?
	    (int32_t)ublk_id(d->ublk) : -1;
	d->resumable = (d->ff != NULL && fusefile_resumable(&st->fuse)) ||
	    st->ublk_id >= 0;
	snprintf(st->loop, sizeof(st->loop), "%s", d->loop.path);
	st->loop_fdev = d->loop.fdev;
	st->loop_fino = d->loop.fino;
	keeper_up(d->keeper, d->resumable,
	    d->ff != NULL ? fusefile_fd(d->ff) : -1,
	    d->loop.path[0] != '\0' ? d->loop.fd : -1);
}

/* Started: the pid file, the log's lines, and the caller told. */
static void
announce(struct dmn *d, int stfd, const struct start *s)
{
	const struct geli_metadata *md = &d->r.md;
	const char *accel;
	FILE *pf = fopen(d->pidpath, "w");

	if (pf != NULL) {
		fprintf(pf, "%d\n", (int)getpid());
		fclose(pf);
	}
	leave_with_keeper(d);
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
	start_front_end(d, stfd, &s);
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
