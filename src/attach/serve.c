/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The attach daemon at work: the backend of the .eli file (the volume's
 * reads and writes, open accounting for detach on last close), and the loop
 * that answers the control socket and follows the provider's size
 * (AUTORESIZE, §8.4) until the daemon stops.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ctl.h"
#include "dmn.h"
#include "loopdev.h"
#include "msg.h"
#include "proc.h"

/* ---- The front ends' backend (blockio.h) ---------------------------------- */

static uint64_t
be_size(void *arg)
{
	return geli_volume_size(((struct dmn *)arg)->v);
}

/*
 * A request that failed, as FreeBSD's G_ELI_LOGREQ prints it on the
 * console: "g_eli_read_done() failed (error=5) NAME.eli[READ(offset=...,
 * length=...)]".
 */
static void
log_failed(struct dmn *d, const char *fn, const char *cmd, int error,
    uint64_t off, size_t len)
{
	if (len == 0)
		dlog(d, "%s() failed (error=%d) %s.eli[%s]", fn, error,
		    d->name, cmd);
	else
		dlog(d, "%s() failed (error=%d) %s.eli[%s(offset=%ju, "
		    "length=%zu)]", fn, error, d->name, cmd, (uintmax_t)off,
		    len);
}

/*
 * The requests go to the volume, or while a conversion runs to its online
 * object (convert.c), which is published under iolock held exclusively.
 */
static ssize_t
io_read(struct dmn *d, void *buf, size_t len, uint64_t off)
{
	ssize_t n;

	pthread_rwlock_rdlock(&d->iolock);
	n = d->online != NULL ? geli_online_read(d->online, buf, len, off) :
	    geli_volume_read(d->v, buf, len, off);
	pthread_rwlock_unlock(&d->iolock);
	return n;
}

static ssize_t
io_write(struct dmn *d, const void *buf, size_t len, uint64_t off)
{
	ssize_t n;

	pthread_rwlock_rdlock(&d->iolock);
	n = d->online != NULL ? geli_online_write(d->online, buf, len, off) :
	    geli_volume_write(d->v, buf, len, off);
	pthread_rwlock_unlock(&d->iolock);
	return n;
}

static ssize_t
be_read(void *arg, void *buf, size_t len, uint64_t off)
{
	struct dmn *d = arg;
	ssize_t n = io_read(d, buf, len, off);

	if (n == -EBADMSG)
		dlog(d, "%s.eli: Failed to authenticate %zu bytes of data at "
		    "offset %ju.", d->name, len, (uintmax_t)off);
	else if (n < 0)
		log_failed(d, "g_eli_read_done", "READ", (int)-n, off, len);
	return n;
}

static ssize_t
be_write(void *arg, const void *buf, size_t len, uint64_t off)
{
	struct dmn *d = arg;
	ssize_t n = io_write(d, buf, len, off);

	if (!atomic_load_explicit(&d->written, memory_order_relaxed))
		atomic_store(&d->written, true);
	/* Writes past the end and to a read-only device are the caller's;
	 * a provider that is full is the provider's. */
	if (n < 0 && n != -EROFS &&
	    !(n == -ENOSPC && off >= geli_volume_size(d->v)))
		log_failed(d, "g_eli_write_done", "WRITE", (int)-n, off, len);
	return n;
}

static int
be_flush(void *arg)
{
	struct dmn *d = arg;
	int error = geli_volume_flush(d->v);

	if (error != 0)
		log_failed(d, "g_eli_flush", "FLUSH", -error, 0, 0);
	return error;
}

static int
be_zero(void *arg, uint64_t off, uint64_t len, bool deallocate)
{
	struct dmn *d = arg;
	int error;

	pthread_rwlock_rdlock(&d->iolock);
	error = d->online != NULL ? geli_online_zero(d->online, off, len,
	    deallocate) : geli_volume_zero(d->v, off, len, deallocate);
	pthread_rwlock_unlock(&d->iolock);

	/* Zeros written are a write; a deletion the provider refuses
	 * (EOPNOTSUPP) or fails is not logged, as FreeBSD does not. */
	if (error != 0 && !deallocate && error != -EROFS)
		log_failed(d, "g_eli_write_done", "WRITE", -error, off,
		    (size_t)len);
	return error;
}

static void
be_opened(void *arg, bool w)
{
	struct dmn *d = arg;

	pthread_mutex_lock(&d->lock);
	d->opens++;
	if (w) {
		d->wopens++;
		d->flags |= GELI_FLAG_WOPEN;
	}
	/* (for the next server, whose kernel will not say them again) */
	atomic_store(&d->keeper->st->opens, (int)d->opens);
	atomic_store(&d->keeper->st->wopens, (int)d->wopens);
	pthread_mutex_unlock(&d->lock);
}

static void
be_closed(void *arg, bool w)
{
	struct dmn *d = arg;
	uint64_t one = 1;
	bool wake;

	pthread_mutex_lock(&d->lock);
	d->opens--;
	if (w)
		d->wopens--;
	atomic_store(&d->keeper->st->opens, (int)d->opens);
	atomic_store(&d->keeper->st->wopens, (int)d->wopens);
	/* Detach on last close: -d after a writer, -l (detach -l) always. */
	wake = d->opens == 0 && ((d->flags & GELI_FLAG_RW_DETACH) ||
	    ((d->flags & GELI_FLAG_WO_DETACH) && (d->flags & GELI_FLAG_WOPEN)));
	pthread_mutex_unlock(&d->lock);
	if (wake && write(d->evfd, &one, sizeof(one)) < 0)
		dlog(d, "cannot wake the daemon: %s", strerror(errno));
}

void
dmn_backend(struct dmn *d, struct blockio *be)
{
	*be = (struct blockio){
		.arg = d, .sectorsize = geli_volume_sectorsize(d->v),
		.size = be_size, .read = be_read, .write = be_write,
		.flush = be_flush, .zero = be_zero, .opened = be_opened,
		.closed = be_closed,
	};
}

/* ---- Growth of the provider (AUTORESIZE, §8.4) ------------------------------ */

static void
check_resize(struct dmn *d)
{
	uint64_t oldn = geli_provider_mediasize(d->p), newn, before;
	struct msg_args a = { .prov = d->prov, .name = d->name };
	enum geli_step step;
	char msg[1200];
	int error;

	if (geli_provider_query_size(d->p, &newn) != 0 || newn <= oldn)
		return;
	/* The journal is for this size: a conversion ends first. */
	if (d->online != NULL) {
		static uint64_t told;
		if (told != newn)
			dlog(d, "%s.eli: The provider grew to %ju bytes; it "
			    "grows once the conversion is over and it is "
			    "attached again.", d->name, (uintmax_t)newn);
		told = newn;
		return;
	}
	if (!(d->flags & GELI_FLAG_ONETIME)) {
		if (!(d->flags & GELI_FLAG_AUTORESIZE)) {
			static uint64_t warned;
			if (warned != newn)
				dlog(d, "%s.eli: Autoresize is turned off, old "
				    "size: %ju.", d->name, (uintmax_t)oldn);
			warned = newn;
			return;
		}
		/* The metadata moves from old_N - P to new_N - P. */
		error = geli_resize(d->p, oldn, newn, GELI_ADMIN_KERNEL, &step);
		if (error != 0 && step != GELI_STEP_TRASH) {
			dlog(d, "%s", msg_format(msg, sizeof(msg), OP_RESIZE,
			    step, error, true, &a));
			return;
		}
		/* A stale old copy is harmless: the new one is in place. */
		if (error != 0)
			dlog(d, "%s", msg_format(msg, sizeof(msg), OP_RESIZE,
			    step, error, true, &a));
	}
	before = geli_volume_size(d->v);
	error = geli_volume_grow(d->v, newn);
	if (error != 0) {
		dlog(d, "%s.eli: Cannot grow to %ju bytes: %s.", d->name,
		    (uintmax_t)newn, strerror(-error));
		return;
	}
	if (d->ff != NULL)
		fusefile_size_changed(d->ff);
	if (d->ublk != NULL && (error = ublk_resize(d->ublk,
	    geli_volume_size(d->v))) != 0)
		dlog(d, "%s.eli: Cannot resize %s: %s.", d->name, d->ublkdev,
		    error == -EOPNOTSUPP ? "this kernel cannot change a ublk "
		    "device's size (no UPDATE_SIZE); it has the new size once "
		    "attached again" : strerror(-error));
	if (d->loop.path[0] != '\0' &&
	    (error = loop_set_capacity(&d->loop)) != 0)
		dlog(d, "%s.eli: Cannot resize %s: %s.", d->name, d->loop.path,
		    strerror(-error));
	dlog(d, "Device %s.eli size changed from %ju to %ju.", d->name,
	    (uintmax_t)before, (uintmax_t)geli_volume_size(d->v));
}

/* ---- The loop ------------------------------------------------------------- */

/*
 * The kernel tells a ublk server of no opens and closes.  Marked with
 * detach -l, the last close is the block device found free (it is looked
 * at once a second) after it was found held or served a request since the
 * mark: as FreeBSD, not at once when nobody has it open; an open and close
 * within the second and without I/O goes unseen.  With -d, found free after
 * a write.
 */
static bool
last_closed(struct dmn *d)
{
	uint32_t f = dmn_flags(d);
	uint64_t n = ublk_requests(d->ublk);
	bool free_now;

	if (!(f & GELI_FLAG_RW_DETACH) && !((f & GELI_FLAG_WO_DETACH) &&
	    atomic_load(&d->written)))
		return false;
	free_now = blkdev_holder(d->ublkdev, d->keeper->st->keeper_pid) ==
	    LOOP_FREE;
	if (!(f & GELI_FLAG_RW_DETACH))
		return free_now;
	if (d->marked_at == 0)
		d->marked_at = n + 1;
	if (!free_now)
		d->used_since_mark = true;
	return free_now && (d->used_since_mark || n + 1 != d->marked_at);
}

void
dmn_serve(struct dmn *d)
{
	struct signalfd_siginfo si;
	struct pollfd pf[3];
	uint64_t ev;
	int fd;

	pf[0].fd = d->ctlfd;
	pf[0].events = POLLIN;
	pf[1].fd = d->evfd;
	pf[1].events = POLLIN;
	pf[2].fd = d->sigfd;
	pf[2].events = POLLIN;
	while (!d->stop) {
		int n = poll(pf, 3, 1000);
		/* SIGTERM, SIGINT: what a shutdown sends; FreeBSD detaches
		 * every device at shutdown. */
		if (n > 0 && (pf[2].revents & POLLIN) &&
		    read(d->sigfd, &si, sizeof(si)) == sizeof(si)) {
			dlog(d, "Detaching %s.eli on signal %u (%s).", d->name,
			    si.ssi_signo, strsignal((int)si.ssi_signo));
			d->stop = true;
			break;
		}
		if (n > 0 && (pf[0].revents & POLLIN)) {
			fd = accept4(d->ctlfd, NULL, NULL, SOCK_CLOEXEC);
			/* Only our user (or root) controls us. */
			if (fd >= 0 && ctl_peer_trusted(fd))
				ctl_serve_one(d, fd);
			if (fd >= 0)
				close(fd);
		}
		if (n > 0 && (pf[1].revents & POLLIN) &&
		    read(d->evfd, &ev, sizeof(ev)) == sizeof(ev)) {
			pthread_mutex_lock(&d->lock);
			if (d->opens == 0)
				d->stop = true;
			pthread_mutex_unlock(&d->lock);
			if (d->stop)
				dlog(d, "Detaching %s.eli on last close.", d->name);
		}
		if (d->ff != NULL && fusefile_ended(d->ff)) {
			dlog(d, "%s.eli was unmounted.", d->name);
			d->stop = true;
		}
		if (d->ublk != NULL && d->resumable && !d->stop &&
		    ublk_lost(d->ublk) > 0)
			dmn_front_lost(d);
		if (d->ublk != NULL && ublk_ended(d->ublk)) {
			dlog(d, "%s was removed.", d->ublkdev);
			d->stop = true;
		}
		if (d->ublk != NULL && !d->stop && last_closed(d)) {
			dlog(d, "Detaching %s.eli on last close.", d->name);
			d->stop = true;
		}
		if (!d->stop)
			check_resize(d);
	}
}
