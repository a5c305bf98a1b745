/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The attach daemon's front end (dmn.h): which one serves the provider
 * (ublk, or the FUSE file with a loop device for -L), started, taken back
 * after a server's death (keeper.h), and what the keeper holds of it.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mount.h>
#include <unistd.h>

#include "dmn.h"
#include "loopdev.h"
#include "rundir.h"

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
serve_ublk(struct dmn *d, const struct blockio *be, char *note,
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

	/* A device of ours that waits for a server (the last one and its
	 * keeper died): taken back, and what waited on it goes on. */
	error = -ENOENT;
	if (d->r.ublk_waiting >= 0 && (error = ublk_recover(be, &c,
	    (uint32_t)d->r.ublk_waiting, &d->ublk, d->ublkdev,
	    sizeof(d->ublkdev), note, len)) == 0)
		dlog(d, "%s.eli: %s, which waited since its server died, taken "
		    "back.", d->name, d->ublkdev);
	if (error != 0)
		error = ublk_start(be, &c, &d->ublk, d->ublkdev,
		    sizeof(d->ublkdev), note, len);
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

/* Which front end serves it: ublk (s->use_ublk), or FUSE with why in
 * s->note; after a death the one the dead server had. */
void
dmn_front_choose(struct dmn *d, int stfd, struct start *s)
{
	s->use_ublk = (!d->restart || d->keeper->st->ublk_id >= 0) &&
	    choose_ublk(d, s->note, sizeof(s->note), &s->own_ns);
	if (!s->use_ublk && d->r.backend == ATTACH_UBLK)
		dmn_start_failed(d, stfd, false, "Cannot create a ublk device "
		    "for %s: %s.", d->name, s->note);
	if (!s->use_ublk && s->note[0] != '\0')
		not_ublk(d, s->note, sizeof(s->note));
}

/*
 * After a server's death: the control socket the keeper held (the requests
 * made meanwhile wait in it) listened to again, else bound again, and the
 * FUSE session it served (the .eli stays mounted while the keeper holds
 * it) taken over with the loop device on it, as it was.
 */
static void
take_back(struct dmn *d, int stfd)
{
	struct keeper_state *st = d->keeper->st;
	struct blockio be;
	int error;

	if (st->ctl_fd >= 0) {
		(void)fcntl(st->ctl_fd, F_SETFD, FD_CLOEXEC);
		d->ctlfd = st->ctl_fd;
	} else if ((error = ctl_listen(d)) != 0)
		dmn_start_failed(d, stfd, false, "Cannot create %s: %s.",
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
		if (error == -EAGAIN)
			dmn_front_lost(d);
		if (error != 0)
			dmn_start_failed(d, stfd, false, "Cannot take /dev/ublkb%d "
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
		dmn_start_failed(d, stfd, false, "Cannot serve %s again: %s.",
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
void
dmn_front_start(struct dmn *d, int stfd, struct start *s)
{
	struct blockio be;
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
		dmn_start_failed(d, stfd, false, "Provider %s.eli already exists.",
		    d->name);
	close(fd);
	error = ctl_listen(d);
	dmn_backend(d, &be);
	if (error == 0 && s->use_ublk &&
	    (error = serve_ublk(d, &be, s->note, sizeof(s->note))) != 0) {
		/* Asked for, or where FUSE's mount would be ours alone: the
		 * reason.  Else FUSE serves it, and says why. */
		if (d->r.backend == ATTACH_UBLK || s->own_ns)
			dmn_start_failed(d, stfd, true, "Cannot create a ublk "
			    "device for %s: %s.", d->name, s->note);
		not_ublk(d, s->note, sizeof(s->note));
		s->use_ublk = false;
		error = 0;
	}
	if (error == 0 && !s->use_ublk)
		error = fusefile_start(d->elipath, &be, ro, !d->r.cached, &d->ff);
	if (error != 0)
		dmn_start_failed(d, stfd, true, "Cannot create %s: %s.", d->elipath,
		    strerror(-error));
	if (d->ublk != NULL && d->r.loop &&
	    (error = devlink_make(d->name, d->ublkdev)) != 0) {
		(void)devlink_path(d->name, path, sizeof(path));
		d->r.loop = false;	/* (not ours to remove) */
		dmn_start_failed(d, stfd, true, "Cannot create %s: %s.", path,
		    strerror(-error));
	}
	if (d->r.loop && d->ublk == NULL) {
		uint32_t bs = geli_volume_sectorsize(d->v);

		error = loop_attach(d->elipath, bs > 4096 ? 4096 : bs, ro,
		    &d->loop);
		if (error != 0)
			dmn_start_failed(d, stfd, true, "Cannot create a loop device "
			    "on %s: %s.", d->elipath, strerror(-error));
		if ((error = devlink_make(d->name, d->loop.path)) != 0) {
			(void)devlink_path(d->name, path, sizeof(path));
			dmn_start_failed(d, stfd, true, "Cannot create %s: %s.",
			    path, strerror(-error));
		}
	}
}

/*
 * What the next server needs if we die, left with the keeper: whether it
 * can take our front end back (a FUSE session whose kernel resends the
 * requests we held), the control socket's, the session's and the loop
 * device's descriptors, and
 * what it cannot ask the kernel for.
 */
void
dmn_front_leave(struct dmn *d)
{
	struct keeper_state *st = d->keeper->st;

	if (d->ff != NULL)
		fusefile_conn(d->ff, &st->fuse);
	/* (a ublk device's descriptors are never the keeper's to hold: the
	 * kernel lets the next server take the device back only once the
	 * dead one's are all closed) */
	st->ublk_id = d->ublk != NULL ? ublk_waiting_id(d->ublk) : -1;
	d->resumable = (d->ff != NULL && fusefile_resumable(&st->fuse)) ||
	    st->ublk_id >= 0;
	snprintf(st->loop, sizeof(st->loop), "%s", d->loop.path);
	st->loop_fdev = d->loop.fdev;
	st->loop_fino = d->loop.fino;
	keeper_up(d->keeper, d->resumable, d->ctlfd,
	    d->ff != NULL ? fusefile_fd(d->ff) : -1,
	    d->loop.path[0] != '\0' ? d->loop.fd : -1);
}

void
dmn_front_lost(struct dmn *d)
{
	dlog(d, "/dev/ublkb%d: the kernel cancelled request slots of ours "
	    "(a race of Linux before 6.15): another server takes it back.",
	    (int)d->keeper->st->ublk_id);
	keeper_resumable(d->keeper, true);
	raise(SIGKILL);
	_exit(1);
}
