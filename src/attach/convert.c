/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * An attached provider converted while it serves (geli reencrypt on an
 * attached provider; docs/reencrypt.md, "Online"): libgeli's online object
 * (geli_online_*) takes the .eli file's I/O, and a thread of the daemon
 * converts a chunk at a time beside it.  Started by a REENCRYPT request or,
 * for a provider attached in the middle of a conversion, by the attach;
 * paused by a request, a detach or the daemon's end (the journal stays and
 * the next attach or geli reencrypt goes on).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "ctl.h"
#include "dmn.h"
#include "msg.h"


static void __attribute__((format(printf, 3, 4)))
refuse(struct ctl_reply *rp, int code, const char *fmt, ...)
{
	va_list ap;

	rp->code = code;
	va_start(ap, fmt);
	vsnprintf(rp->message, sizeof(rp->message), fmt, ap);
	va_end(ap);
}

static void
set_state(struct dmn *d, enum ctl_reenc_state state, int error)
{
	pthread_mutex_lock(&d->lock);
	d->reenc_state = state;
	d->reenc_error = error;
	pthread_mutex_unlock(&d->lock);
	/* Done: the keys on the provider are no longer the ones the keeper
	 * holds, so a server started after our death could not read it. */
	if (state == CTL_REENC_DONE)
		keeper_resumable(d->keeper, false);
}

static enum ctl_reenc_state
get_state(struct dmn *d)
{
	enum ctl_reenc_state s;

	pthread_mutex_lock(&d->lock);
	s = d->reenc_state;
	pthread_mutex_unlock(&d->lock);
	return s;
}

static void
percent_log(struct dmn *d, const char *what)
{
	uint64_t done, total, bytes;

	geli_online_progress(d->online, &done, &total, &bytes);
	dlog(d, "%s.eli: conversion (%s) %s at %.1f%%.", d->name,
	    msg_reenc_kind(d->reenc_kind), what,
	    total ? 100.0 * (double)done / (double)total : 100.0);
}

static void *
converter_main(void *arg)
{
	struct dmn *d = arg;
	int error = 1;

	/* The requests of the .eli file first: the conversion takes what
	 * CPU they leave (nice 10 for this thread). */
	(void)setpriority(PRIO_PROCESS, (id_t)gettid(), 10);
	while (!atomic_load(&d->conv_stop) &&
	    (error = geli_online_step(d->online)) == 1)
		;
	if (error == 0 && !geli_online_finished(d->online)) {
		/* LUKS2: the end is the command's, once the header is in
		 * place (finish below). */
		set_state(d, CTL_REENC_CONVERTED, 0);
		dlog(d, "%s.eli: conversion (%s): every sector converted; "
		    "GELI's record stays until its header is in place.",
		    d->name, msg_reenc_kind(d->reenc_kind));
	} else if (error == 0) {
		set_state(d, CTL_REENC_DONE, 0);
		dlog(d, "%s.eli: conversion (%s) finished.", d->name,
		    msg_reenc_kind(d->reenc_kind));
	} else if (error < 0) {
		set_state(d, CTL_REENC_FAILED, error);
		percent_log(d, "stopped");
		dlog(d, "%s.eli: conversion failed: %s.", d->name,
		    geli_strerror(error));
	}
	return NULL;
}

static int
converter_start(struct dmn *d)
{
	atomic_store(&d->conv_stop, false);
	set_state(d, CTL_REENC_RUNNING, 0);
	if (pthread_create(&d->conv, NULL, converter_main, d) != 0) {
		set_state(d, CTL_REENC_PAUSED, 0);
		return -EAGAIN;
	}
	d->conv_thread = true;
	return 0;
}

/* The thread stopped after its step (state PAUSED if it was running). */
static void
converter_stop(struct dmn *d)
{
	if (!d->conv_thread)
		return;
	atomic_store(&d->conv_stop, true);
	pthread_join(d->conv, NULL);
	d->conv_thread = false;
	pthread_mutex_lock(&d->lock);
	if (d->reenc_state == CTL_REENC_RUNNING)
		d->reenc_state = CTL_REENC_PAUSED;
	pthread_mutex_unlock(&d->lock);
}

int
dmn_converting(struct dmn *d)
{
	if (d->online == NULL)
		return 0;
	return geli_online_finished(d->online) ? -MSG_ECONVERTED :
	    -MSG_ECONVERTING;
}

/* o serves the I/O from now on; the conversion starts. */
static int
publish(struct dmn *d, struct geli_online *o, enum geli_reenc_kind kind,
    const char *journal)
{
	/* No request is inside the old volume alone once o is seen. */
	pthread_rwlock_wrlock(&d->iolock);
	d->online = o;
	pthread_rwlock_unlock(&d->iolock);
	d->reenc_kind = kind;
	snprintf(d->journal, sizeof(d->journal), "%s", journal);
	/* A server started after our death goes on with it. */
	snprintf(d->keeper->st->journal, sizeof(d->keeper->st->journal), "%s",
	    journal);
	return converter_start(d);
}

int
dmn_convert_resume(struct dmn *d, const char *journal, char *msg, size_t len)
{
	struct geli_metadata md;
	struct geli_reenc *r;
	struct geli_online *o;
	int error;

	error = geli_provider_read_metadata(d->p, &md);
	if (error != -GELI_EINPROGRESS) {
		snprintf(msg, len, "Provider %s is no longer being converted.",
		    d->prov);
		return error < 0 ? error : -EINVAL;
	}
	error = geli_reenc_resume(d->p, &md, d->mkey, journal, &r);
	geli_wipe(&md, sizeof(md));
	if (error == 0 && (error = geli_online_open(r, d->v, d->threads,
	    &o)) != 0)
		geli_reenc_free(r);
	if (error != 0) {
		snprintf(msg, len, "Cannot resume the conversion of %s with %s: "
		    "%s.", d->prov, journal, geli_strerror(error));
		return error;
	}
	error = publish(d, o, geli_reenc_kind(r), journal);
	percent_log(d, "resumed");
	return error;
}

/* A new conversion: the record on the provider now, and the new one. */
static void
start(struct dmn *d, struct ctl_reply *rp, const struct ctl_request *rq)
{
	const struct ctl_reenc *e = &rq->reenc;
	struct geli_metadata oldmd, newmd;
	struct geli_reenc *r = NULL;
	struct geli_online *o;
	int error;

	memset(&newmd, 0, sizeof(newmd));
	if (d->flags & (GELI_FLAG_RO | GELI_FLAG_ONETIME) ||
	    geli_volume_suspended(d->v)) {
		refuse(rp, -EPERM, "Provider %s is "
		    "attached %s: it cannot be converted.", d->prov,
		    d->flags & GELI_FLAG_RO ? "read-only" :
		    d->flags & GELI_FLAG_ONETIME ? "with a one-time key" :
		    "and suspended");
		return;
	}
	error = geli_provider_read_metadata(d->p, &oldmd);
	if (error == 0 && e->mdlen != 0)
		error = geli_metadata_decode(e->md, e->mdlen, &newmd);
	if (error == 0)
		error = geli_reenc_start(d->p, e->kind, &oldmd, d->mkey,
		    rq->keyno < 0 ? d->r.used_key : rq->keyno,
		    e->mdlen != 0 ? &newmd : NULL, e->mklen != 0 ? e->mk : NULL,
		    e->uuid, e->journal, e->hotzone, &r);
	geli_wipe(&oldmd, sizeof(oldmd));
	geli_wipe(&newmd, sizeof(newmd));
	if (error == 0 && (error = geli_online_open(r, d->v, d->threads,
	    &o)) != 0) {
		/* Marked, and nothing converted: a resume goes on. */
		geli_reenc_free(r);
	}
	if (error != 0) {
		refuse(rp, error, "Cannot start the "
		    "conversion of %s: %s%s.", d->prov,
		    error == -GELI_EJOURNALEXISTS ? e->journal : "",
		    error == -GELI_EJOURNALEXISTS ? " exists" :
		    geli_strerror(error));
		return;
	}
	dlog(d, "%s.eli: conversion (%s) started; journal %s.", d->name,
	    msg_reenc_kind(e->kind), e->journal);
	if (publish(d, o, e->kind, e->journal) != 0) {
		refuse(rp, -EAGAIN, "Cannot start a "
		    "thread for the conversion of %s.", d->prov);
	}
}

/* A LUKS2 target's end, asked for once its header is in place: GELI's
 * record and the journal go (geli_online_finish). */
static void
finish(struct dmn *d, struct ctl_reply *rp)
{
	int error;

	if (d->online == NULL || get_state(d) != CTL_REENC_CONVERTED) {
		refuse(rp, -EBUSY, "Provider %s is not converted to its last "
		    "sector yet.", d->prov);
		return;
	}
	converter_stop(d);	/* (it ended: joined) */
	error = geli_online_finish(d->online);
	if (error != 0) {
		set_state(d, CTL_REENC_CONVERTED, 0);
		refuse(rp, error, "Cannot finish the conversion of %s: %s.",
		    d->prov, geli_strerror(error));
		return;
	}
	set_state(d, CTL_REENC_DONE, 0);
	dlog(d, "%s.eli: conversion (%s) finished.", d->name,
	    msg_reenc_kind(d->reenc_kind));
}

void
dmn_do_reencrypt(struct dmn *d, struct ctl_reply *rp,
    const struct ctl_request *rq)
{
	if (rq->flags & CTL_F_PAUSE) {
		dmn_convert_pause(d);
		return;
	}
	if (rq->flags & CTL_F_FINISH) {
		finish(d, rp);
		return;
	}
	if (rq->reenc.kind != 0) {
		struct msg_args a = { .prov = d->prov, .name = d->name };

		if (dmn_converting(d) == -MSG_ECONVERTED) {
			rp->code = -MSG_ECONVERTED;
			msg_format(rp->message, sizeof(rp->message), OP_READ,
			    GELI_STEP_NONE, rp->code, true, &a);
			return;
		}
		if (d->online != NULL) {
			refuse(rp, -EBUSY, "Provider %s "
			    "is already being converted.", d->prov);
			return;
		}
		start(d, rp, rq);
		return;
	}
	if (d->online == NULL) {
		refuse(rp, -EINVAL, "Provider %s is not "
		    "being converted.", d->prov);
		return;
	}
	/* Go on: after a pause or a failure (the step recovers first). */
	enum ctl_reenc_state now = get_state(d);

	if (now == CTL_REENC_PAUSED || now == CTL_REENC_FAILED) {
		converter_stop(d);	/* a thread that ended: joined */
		if (converter_start(d) != 0) {
			refuse(rp, -EAGAIN, "Cannot "
			    "start a thread for the conversion of %s.", d->prov);
		}
	}
}

void
dmn_convert_status(struct dmn *d, struct ctl_status *s)
{
	if (d->online == NULL)
		return;
	pthread_mutex_lock(&d->lock);
	s->reenc_state = d->reenc_state;
	s->reenc_error = d->reenc_error;
	pthread_mutex_unlock(&d->lock);
	s->reenc_kind = d->reenc_kind;
	geli_online_progress(d->online, &s->reenc_done, &s->reenc_total,
	    &s->reenc_bytes);
	snprintf(s->journal, sizeof(s->journal), "%s", d->journal);
}

void
dmn_convert_pause(struct dmn *d)
{
	if (d->online == NULL)
		return;
	converter_stop(d);
	if (get_state(d) == CTL_REENC_PAUSED)
		percent_log(d, "paused");
}

void
dmn_convert_close(struct dmn *d)
{
	converter_stop(d);
	geli_online_close(d->online);
	d->online = NULL;
}
