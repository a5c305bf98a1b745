/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * geli bench's one timing core (study.h): a write phase then a read phase
 * of sequential requests for --seconds each, bytes and CPU counted the same
 * way for every row, GELI's and the baselines'.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "proc.h"
#include "stats.h"
#include "study.h"

/* CPU seconds of this process, and of the daemon when there is one. */
static double
cpu_seconds(pid_t daemon)
{
	struct rusage ru;
	double t;

	getrusage(RUSAGE_SELF, &ru);
	t = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	    (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	if (daemon > 0) {
		struct proc_stat st;

		if (proc_stat_read(daemon, &st))
			t += proc_cpu_seconds(&st);
	}
	return t;
}

enum phase { PHASE_WRITE, PHASE_READ };

/*
 * One phase over [0, size); for the write phase *reached is how far it got
 * (the read phase stays within it: integrity volumes are unreadable beyond).
 */
static double
timed_io(const struct meter *m, io_fn fn, void *arg, enum phase ph, uint8_t *buf,
    uint64_t size, double *cpu, uint64_t *reached)
{
	const size_t bs = m->o->bs != 0 ? m->o->bs : 1 << 20;
	uint64_t bytes = 0, off = 0, top = 0;
	double t0 = now(), c0 = cpu_seconds(m->daemon), t;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	do {
		if (fn(arg, buf, bs, off) != (ssize_t)bs)
			return -1;
		bytes += bs;
		off += bs;
		if (off > top)
			top = off;
		t = now();
		/* Memory wraps around; a real target is passed over once, so
		 * that no block is served from the page cache. */
		if (off + bs > size) {
			if (m->o->target != NULL)
				break;
			off = 0;
		}
	} while (t - t0 < m->o->seconds);
	if (m->sync_fd >= 0 && ph == PHASE_WRITE) {
		/* The time to get the writes onto the device counts; writes
		 * that did not get there are a failed phase. */
		if (fdatasync(m->sync_fd) != 0)
			return -1;
		t = now();
		/* Advice only: at worst the read phase finds pages cached. */
		(void)posix_fadvise(m->sync_fd, 0, 0, POSIX_FADV_DONTNEED);
	}
	if (reached != NULL)
		*reached = top;
	*cpu = 100.0 * (cpu_seconds(m->daemon) - c0) /
	    ((t - t0) * (double)(ncpu > 0 ? ncpu : 1));
	return (double)bytes / (t - t0) / 1e6;
}

int
write_read(const struct meter *m, io_fn wr, io_fn rd, void *arg, uint8_t *buf,
    uint64_t size, struct sample *s)
{
	uint64_t reached;
	double cw, cr;

	s->wr = timed_io(m, wr, arg, PHASE_WRITE, buf, size, &cw, &reached);
	s->rd = timed_io(m, rd, arg, PHASE_READ, buf, reached, &cr, NULL);
	s->cpu = (cw + cr) / 2;
	return s->wr < 0 || s->rd < 0 ? -EIO : 0;
}

ssize_t
raw_write(void *a, uint8_t *buf, size_t len, uint64_t off)
{
	return pwrite(((struct raw *)a)->fd, buf, len, (off_t)off);
}

ssize_t
raw_read(void *a, uint8_t *buf, size_t len, uint64_t off)
{
	return pread(((struct raw *)a)->fd, buf, len, (off_t)off);
}
