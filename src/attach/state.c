/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the attach daemon's parts ask of its state (dmn.h): its log, its
 * runtime flags, and whether anyone but itself uses the provider.  Below
 * serve.c, handlers.c and convert.c, which all ask it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dmn.h"
#include "loopdev.h"
#include "proc.h"

void
dlog(struct dmn *d, const char *fmt, ...)
{
	char ts[32];
	time_t t = time(NULL);
	va_list ap;

	if (d->log == NULL)
		return;
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", localtime(&t));
	fprintf(d->log, "%s GEOM_ELI: ", ts);
	va_start(ap, fmt);
	vfprintf(d->log, fmt, ap);
	va_end(ap);
	fputc('\n', d->log);
	fflush(d->log);
}

uint32_t
dmn_flags(struct dmn *d)
{
	uint32_t f;

	pthread_mutex_lock(&d->lock);
	f = d->flags;
	pthread_mutex_unlock(&d->lock);
	if (geli_volume_suspended(d->v))
		f |= GELI_FLAG_SUSPEND;
	return f;
}

/*
 * Busy: held by a mount or an exclusive opener (a pool), or the .eli file
 * open in a process.  Two openers that come and go on their own are waited
 * for, 10 s at most: the kernel sends FUSE's RELEASE of a file after
 * close(2) has returned (cmp disk.eli ...; geli detach), and udev probes a
 * block device after a writer closes it (zpool export; geli detach), for
 * seconds on a loaded machine.  An open count with no process holding the
 * file is such a release on its way.
 */
bool
dmn_busy(struct dmn *d)
{
	unsigned opens, own = d->loop.path[0] != '\0';	/* the loop's open */
	pid_t keeper = d->keeper->st->keeper_pid;
	enum loop_holder lh;
	struct stat eli;

	for (int i = 0;; i++) {
		pthread_mutex_lock(&d->lock);
		opens = d->opens;
		pthread_mutex_unlock(&d->lock);
		lh = own ? loop_holder(&d->loop, keeper) : d->ublk != NULL ?
		    blkdev_holder(d->ublkdev, keeper) : LOOP_FREE;
		if (lh == LOOP_HELD)
			return true;
		if (opens > own && stat(d->elipath, &eli) == 0 &&
		    proc_holds_open(&eli, keeper))
			return true;
		if (opens <= own && lh == LOOP_FREE)
			return false;
		if (i == 100)
			return true;
		usleep(100000);
	}
}
