/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * geli reencrypt's run (docs/reencrypt.md): a conversion's steps to its
 * end here, or an attached provider's followed while its daemon converts,
 * with the progress on a terminal; SIGINT, SIGTERM and SIGHUP stop (or
 * pause) it after a step.
 */
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "reenc.h"

static volatile sig_atomic_t stop_signal;

static void
on_signal(int sig)
{
	stop_signal = sig;
}

/* SIGINT, SIGTERM and SIGHUP stop (or pause) the conversion from here on:
 * set before the request that starts one, so that none is lost to the
 * default action between the request and the wait, and restarting the
 * calls they interrupt (the request's reply is still read). */
void
reenc_catch_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal,
	    .sa_flags = SA_RESTART };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* Chunks done of total (bytes in all), start of them done at t0. */
static void
show_progress(const char *prov, uint64_t done, uint64_t total, uint64_t bytes,
    uint64_t start, const struct timespec *t0, bool last)
{
	struct timespec t;
	double secs, rate, left;

	clock_gettime(CLOCK_MONOTONIC, &t);
	secs = (double)(t.tv_sec - t0->tv_sec) + (t.tv_nsec - t0->tv_nsec) / 1e9;
	rate = secs > 0 ? (double)(done - start) * (double)bytes /
	    (double)total / secs : 0;
	left = rate > 0 ? (double)(total - done) * (double)bytes /
	    (double)total / rate : 0;
	fprintf(stderr, "\r%s: %5.1f%% done, %.1f MB/s, %u:%02u left ", prov,
	    total ? 100.0 * (double)done / (double)total : 100.0, rate / 1e6,
	    (unsigned)left / 60, (unsigned)left % 60);
	if (last)
		fputc('\n', stderr);
}

int
reenc_run(const char *prov, struct geli_reenc *r,
    const struct luks2_end *end)
{
	bool tty = isatty(STDERR_FILENO);
	uint64_t done, total, bytes, off, len;
	struct timespec t0, last = { 0 }, t;
	int error = 0;

	reenc_catch_signals();
	geli_reenc_progress(r, &done, &total, &bytes);
	uint64_t start = done;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!stop_signal && (error = geli_reenc_step(r)) == 1) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (tty && (t.tv_sec != last.tv_sec)) {
			geli_reenc_progress(r, &done, &total, &bytes);
			show_progress(prov, done, total, bytes, start, &t0, false);
			last = t;
		}
	}
	geli_reenc_progress(r, &done, &total, &bytes);
	if (tty)
		show_progress(prov, done, total, bytes, start, &t0, true);
	if (error < 0) {
		geli_reenc_chunk(r, done, &off, &len);
		req_error("Cannot convert %s at byte %ju: %s. Run 'geli "
		    "reencrypt %s' again to resume.", prov, (uintmax_t)off,
		    geli_strerror(error), prov);
		return -1;
	}
	if (stop_signal) {
		req_error("Conversion of %s stopped at %.1f%%: run 'geli "
		    "reencrypt %s' again to resume.", prov,
		    100.0 * (double)done / (double)total, prov);
		return -1;
	}
	/* GELI's record goes last: the header must be there to take over. */
	if (end != NULL && luks2_end_ready(prov, end,
	    LUKS2_VK(geli_reenc_newkey(r))) != 0)
		return -1;
	error = geli_reenc_finish(r);
	if (error != 0) {
		req_error("Cannot finish the conversion of %s: %s. Run 'geli "
		    "reencrypt %s' again.", prov, geli_strerror(error), prov);
		return -1;
	}
	return 0;
}

/* An attached provider's conversion, which its daemon runs, followed to the
 * end; SIGINT, SIGTERM, SIGHUP pause it. */
int
reenc_wait(const char *prov, const char *name)
{
	bool tty = isatty(STDERR_FILENO);
	struct ctl_request rq;
	struct ctl_reply rp;
	struct ctl_status st;
	struct timespec t0, t, pause = { 0, 100 * 1000 * 1000 };
	uint64_t start = UINT64_MAX;
	time_t shown = 0;
	pid_t keeper = 0;

	reenc_catch_signals();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		if (ctl_status(name, &st) != 0) {
			/* Its server died, and while its keeper lives the
			 * next one takes the conversion up: followed there. */
			if (keeper > 0 && kill(keeper, 0) == 0 && !stop_signal) {
				nanosleep(&pause, NULL);
				continue;
			}
			req_error("Provider %s was detached during its "
			    "conversion: attach it again, and it goes on.",
			    prov);
			return -1;
		}
		keeper = st.keeper_pid;
		if (start == UINT64_MAX)
			start = st.reenc_done;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (tty && (t.tv_sec != shown ||
		    st.reenc_state != CTL_REENC_RUNNING)) {
			show_progress(prov, st.reenc_done, st.reenc_total,
			    st.reenc_bytes, start, &t0,
			    st.reenc_state != CTL_REENC_RUNNING || stop_signal);
			shown = t.tv_sec;
		}
		if (st.reenc_state != CTL_REENC_RUNNING || stop_signal)
			break;
		nanosleep(&pause, NULL);
	}
	if (st.reenc_state == CTL_REENC_DONE)
		return 0;
	if (st.reenc_state == CTL_REENC_CONVERTED)
		return 1;
	if (st.reenc_state == CTL_REENC_FAILED) {
		req_error("Cannot convert %s: %s. Run 'geli reencrypt %s' "
		    "again to go on.", prov, geli_strerror(st.reenc_error),
		    prov);
		return -1;
	}
	if (stop_signal) {
		ctl_request_init(&rq, CTL_REENCRYPT);
		rq.flags = CTL_F_PAUSE;
		if (ctl_call(name, &rq, &rp) == 0 && rp.code == 0)
			(void)ctl_status(name, &st);
	}
	req_error("Conversion of %s paused at %.1f%%: run 'geli reencrypt %s' "
	    "again to go on.", prov, st.reenc_total ? 100.0 *
	    (double)st.reenc_done / (double)st.reenc_total : 0.0, prov);
	return -1;
}


int
reenc_finish_attached(const char *prov, const char *name)
{
	struct ctl_request rq;
	struct ctl_reply rp;

	ctl_request_init(&rq, CTL_REENCRYPT);
	rq.flags = CTL_F_FINISH;
	if (ctl_call(name, &rq, &rp) != 0) {
		req_error("Cannot reach the daemon of %s.eli: the conversion "
		    "of %s ends when it is attached again, or with 'geli "
		    "reencrypt %s'.", name, prov, prov);
		return -1;
	}
	if (rp.code != 0) {
		req_error("%s", rp.message);
		return -1;
	}
	return 0;
}
