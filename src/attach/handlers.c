/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The attach daemon's control socket: one typed request per connection
 * (ctl.h), answered by the handler of its verb.  The rules of the key and
 * metadata verbs are libgeli's (admin.c); a handler checks what only the
 * daemon knows (read-only, one-time key, suspended), calls the library and
 * words a failure in FreeBSD's kernel messages (msg.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctl.h"
#include "dmn.h"
#include "loopdev.h"
#include "rundir.h"
#include "msg.h"

/* The reply says code in the kernel's words for op (and step). */
static void
fail(struct dmn *d, struct ctl_reply *rp, enum msg_op op, enum geli_step step,
    int code, int keyno)
{
	struct msg_args a = { .prov = d->prov, .name = d->name,
	    .keyno = keyno };

	rp->code = code;
	msg_format(rp->message, sizeof(rp->message), op, step, code, true, &a);
}

/* Read-only, one-time and suspended providers keep their keys as they are. */
static int
keys_frozen(struct dmn *d)
{
	if (d->flags & GELI_FLAG_RO)
		return -MSG_ERDONLY;
	if (d->flags & GELI_FLAG_ONETIME)
		return -MSG_EONETIME;
	if (geli_volume_suspended(d->v))
		return -MSG_ESUSPENDED;
	return dmn_converting(d);
}

static void
do_status(struct dmn *d, struct ctl_reply *rp)
{
	const struct geli_metadata *md = geli_volume_metadata(d->v);
	struct ctl_status *s = &rp->status;

	rp->has_status = true;
	snprintf(s->name, sizeof(s->name), "%s", d->name);
	snprintf(s->prov, sizeof(s->prov), "%s", d->prov);
	snprintf(s->provpath, sizeof(s->provpath), "%s", d->provpath);
	snprintf(s->elipath, sizeof(s->elipath), "%s", d->elipath);
	snprintf(s->loop, sizeof(s->loop), "%s", d->ublk != NULL ? d->ublkdev :
	    d->loop.path);
	snprintf(s->backend, sizeof(s->backend), "%s", d->ublk != NULL ?
	    "ublk" : "fuse");
	if (!d->r.loop || s->loop[0] == '\0' ||
	    devlink_path(d->name, s->dev, sizeof(s->dev)) != 0)
		s->dev[0] = '\0';
	s->pid = (int32_t)getpid();
	s->keeper_pid = d->keeper->st->keeper_pid;
	s->restarts = atomic_load(&d->keeper->st->restarts);
	s->flags = dmn_flags(d);
	s->ealgo = md->ealgo;
	s->aalgo = (s->flags & GELI_FLAG_AUTH) ? md->aalgo : 0;
	s->keylen = md->keylen;
	s->version = md->version;
	s->usedkey = d->r.used_key;
	s->keysallocated = geli_volume_keys_allocated(d->v);
	s->keystotal = geli_volume_keys_total(d->v);
	s->mediasize = geli_volume_size(d->v);
	s->provsize = geli_provider_mediasize(d->p);
	s->sectorsize = geli_volume_sectorsize(d->v);
	s->psize = d->psize;
	pthread_mutex_lock(&d->lock);
	s->opens = d->opens;
	s->wopens = d->wopens;
	pthread_mutex_unlock(&d->lock);
	s->integrity_errors = geli_volume_integrity_errors(d->v);
	dmn_convert_status(d, s);
}

static void
do_detach(struct dmn *d, struct ctl_reply *rp, uint32_t flags)
{
	if (flags & CTL_F_LAST) {
		/* Only marked, as FreeBSD does: the next last close detaches,
		 * even when nobody has it open now. */
		pthread_mutex_lock(&d->lock);
		d->flags |= GELI_FLAG_RW_DETACH;
		pthread_mutex_unlock(&d->lock);
		rp->outcome = CTL_DETACH_LATER;
		return;
	}
	if (!(flags & CTL_F_FORCE) && dmn_busy(d)) {
		fail(d, rp, OP_DETACH, GELI_STEP_NONE, -EBUSY, 0);
		return;
	}
	d->stop = true;
	rp->outcome = CTL_DETACHED;
}

static void
do_suspend(struct dmn *d, struct ctl_reply *rp)
{
	if (d->flags & GELI_FLAG_ONETIME) {
		fail(d, rp, OP_SUSPEND, GELI_STEP_NONE, -MSG_EONETIME, 0);
		return;
	}
	/* Its keys are the conversion's too. */
	if (dmn_converting(d) != 0) {
		fail(d, rp, OP_SUSPEND, GELI_STEP_NONE, dmn_converting(d), 0);
		return;
	}
	if (geli_volume_suspend(d->v) != 0) {
		fail(d, rp, OP_SUSPEND, GELI_STEP_NONE, -MSG_EALREADY, 0);
		return;
	}
	geli_wipe(d->mkey, GELI_MKEY_DATALEN);
	/* Nor does the keeper keep it: a death while suspended ends the
	 * provider. */
	keeper_resumable(d->keeper, false);
	keeper_set_key(d->keeper, NULL);
	dlog(d, "Device %s.eli has been suspended.", d->name);
}

/* resume, with the user key: the slot is decrypted from the disk's metadata. */
static void
do_resume(struct dmn *d, struct ctl_reply *rp, const uint8_t *ukey)
{
	struct geli_metadata md;
	int error, used;

	if (!geli_volume_suspended(d->v)) {
		fail(d, rp, OP_RESUME, GELI_STEP_NONE, -MSG_ENOTSUSPENDED, 0);
		return;
	}
	error = geli_mdstore_read(d->store, &md);
	if (error != 0) {
		fail(d, rp, OP_RESUME, GELI_STEP_READ, error, 0);
		return;
	}
	/* The user key was made where the passphrase was typed. */
	error = geli_unlock(NULL, &md, &(struct geli_keymat){ .ukey = ukey },
	    -1, GELI_UNLOCK_SLOTS, d->mkey, &used);
	if (error == 0)
		error = geli_volume_resume(d->v, d->mkey);
	geli_wipe(&md, sizeof(md));
	if (error != 0) {
		fail(d, rp, OP_RESUME, GELI_STEP_NONE, error, 0);
		return;
	}
	keeper_set_key(d->keeper, d->mkey);
	keeper_resumable(d->keeper, d->resumable);
	dlog(d, "Device %s.eli has been resumed.", d->name);
}

/* A key verb starts from the metadata on disk, if the keys may change. */
static bool
key_verb_md(struct dmn *d, struct ctl_reply *rp, enum msg_op op, int keyno,
    struct geli_metadata *md)
{
	int error = keys_frozen(d);

	if (error != 0) {
		fail(d, rp, op, GELI_STEP_NONE, error, keyno);
		return false;
	}
	error = geli_mdstore_read(d->store, md);
	if (error != 0) {
		fail(d, rp, op, GELI_STEP_READ, error, keyno);
		return false;
	}
	return true;
}

static void
do_setkey(struct dmn *d, struct ctl_reply *rp, const struct ctl_request *rq)
{
	struct geli_metadata md;
	int keyno = rq->keyno == -1 ? d->r.used_key : rq->keyno, error;

	if (!key_verb_md(d, rp, OP_SETKEY, keyno, &md))
		return;
	/* No old key: the Master Key in memory goes into the slot. */
	error = geli_setkey(d->store, &md, keyno, rq->iterations, d->mkey,
	    rq->key);
	geli_wipe(&md, sizeof(md));
	if (error != 0) {
		fail(d, rp, OP_SETKEY, GELI_STEP_WRITE, error, keyno);
		return;
	}
	dlog(d, "Key %d changed on %s.", keyno, d->name);
}

static void
do_delkey(struct dmn *d, struct ctl_reply *rp, const struct ctl_request *rq)
{
	struct geli_metadata md;
	int keyno = rq->keyno == -1 ? d->r.used_key : rq->keyno, error;
	unsigned flags = GELI_ADMIN_KERNEL;

	if (!key_verb_md(d, rp, OP_DELKEY, keyno, &md))
		return;
	flags |= (rq->flags & CTL_F_ALL) ? GELI_ADMIN_ALL : 0;
	flags |= (rq->flags & CTL_F_FORCE) ? GELI_ADMIN_FORCE : 0;
	error = geli_delkey(d->store, &md, keyno, flags);
	geli_wipe(&md, sizeof(md));
	if (error != 0)
		fail(d, rp, OP_DELKEY, GELI_STEP_WRITE, error, keyno);
}

static void
do_kill(struct dmn *d, struct ctl_reply *rp)
{
	int error = 0;

	/* The conversion's journal goes too: nothing could resume it. */
	dmn_convert_pause(d);
	if (d->online != NULL && !(d->flags & GELI_FLAG_RO))
		(void)geli_online_abandon(d->online);

	/* The keys of a read-only provider survive (§9.9). */
	if (d->flags & GELI_FLAG_RO)
		dlog(d, "WARNING: Metadata won't be erased on read-only "
		    "provider: %s.", d->prov);
	else if (!(d->flags & GELI_FLAG_ONETIME))
		error = geli_kill(d->p, GELI_ADMIN_KERNEL);
	dlog(d, "%s has been killed.", d->name);
	d->stop = true;
	rp->outcome = CTL_DETACHED;
	if (error != 0)
		fail(d, rp, OP_KILL, GELI_STEP_TRASH, error, 0);
}

static void
do_configure(struct dmn *d, struct ctl_reply *rp, uint32_t set, uint32_t clear)
{
	struct geli_metadata md;
	int error;

	if (d->flags & GELI_FLAG_RO) {
		fail(d, rp, OP_CONFIGURE, GELI_STEP_NONE, -MSG_ERDONLY, 0);
		return;
	}
	pthread_mutex_lock(&d->lock);
	d->flags = (d->flags | set) & ~clear;
	pthread_mutex_unlock(&d->lock);
	/* TRIM on or off at once, as FreeBSD's configure -t/-T; the loop
	 * device offers discards again if a refusal had turned them off. */
	geli_volume_set_nodelete(d->v, d->flags & GELI_FLAG_NODELETE);
	if ((clear & GELI_FLAG_NODELETE) && d->loop.path[0] != '\0' &&
	    (error = loop_refresh_discard(&d->loop)) != 0)
		dlog(d, "%s: discards stay off: %s", d->loop.path,
		    strerror(-error));
	if (d->flags & GELI_FLAG_ONETIME)
		return;		/* memory only */
	/* The marked record stays as it is until the conversion ends. */
	if ((error = dmn_converting(d)) != 0) {
		fail(d, rp, OP_CONFIGURE, GELI_STEP_NONE, error, 0);
		return;
	}
	/* The on-disk flags, from the metadata re-read from disk. */
	error = geli_mdstore_read(d->store, &md);
	if (error != 0) {
		fail(d, rp, OP_CONFIGURE, GELI_STEP_READ, error, 0);
		return;
	}
	error = geli_configure(d->store, &md, set, clear);
	if (error < 0)
		fail(d, rp, OP_CONFIGURE, GELI_STEP_WRITE, error, 0);
}

/* Receive, decode, dispatch, reply.  A request that does not decode gets
 * an error reply; nothing of it is acted on. */
void
ctl_serve_one(struct dmn *d, int fd)
{
	struct ctl_request *rq;
	struct ctl_reply *rp;
	uint8_t *msg;
	ssize_t n;

	/* Locked: requests carry user keys. */
	msg = geli_secure_alloc(CTL_MAX);
	rq = geli_secure_alloc(sizeof(*rq));
	rp = calloc(1, sizeof(*rp));
	if (msg == NULL || rq == NULL || rp == NULL)
		goto out;
	n = recv(fd, msg, CTL_MAX, MSG_TRUNC);
	if (n <= 0)
		goto out;
	if (n > CTL_MAX || ctl_request_decode(msg, (size_t)n, rq) != 0) {
		rp->code = -EBADMSG;
		snprintf(rp->message, sizeof(rp->message), "Invalid request.");
		rq->verb = 0;
	}
	switch (rq->verb) {
	case CTL_STATUS:
		do_status(d, rp);
		break;
	case CTL_DETACH:
		do_detach(d, rp, rq->flags);
		break;
	case CTL_SUSPEND:
		do_suspend(d, rp);
		break;
	case CTL_RESUME:
		do_resume(d, rp, rq->key);
		break;
	case CTL_SETKEY:
		do_setkey(d, rp, rq);
		break;
	case CTL_DELKEY:
		do_delkey(d, rp, rq);
		break;
	case CTL_KILL:
		do_kill(d, rp);
		break;
	case CTL_CONFIGURE:
		do_configure(d, rp, rq->set, rq->clear);
		break;
	case CTL_REENCRYPT:
		dmn_do_reencrypt(d, rp, rq);
		break;
	default:
		break;
	}
	n = ctl_reply_encode(rp, msg, CTL_MAX);
	if (n > 0 && send(fd, msg, (size_t)n, MSG_NOSIGNAL) != n)
		dlog(d, "cannot answer a request: %s", strerror(errno));
out:
	free(rp);
	geli_secure_free(rq);
	geli_secure_free(msg);
}

int
ctl_listen(struct dmn *d)
{
	struct sockaddr_un sa;
	mode_t old;
	int fd, e;

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (strlen(d->ctlpath) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, d->ctlpath);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	(void)unlink(d->ctlpath);	/* a stale socket of a dead daemon */
	old = umask(077);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    listen(fd, 16) != 0) {
		e = -errno;
		umask(old);
		close(fd);
		return e;
	}
	umask(old);
	d->ctlfd = fd;
	return 0;
}
