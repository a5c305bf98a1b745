/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * geli bench --disk: what FreeBSD's diskinfo -t and -c report, read-only:
 * sequential transfer rates at the start, middle and end of the device, and
 * the per-command overhead (time of one small read beyond its transfer time).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "geli.h"
#include "stats.h"
#include "study.h"

int
bench_disk(const struct bench_opts *o)
{
	const size_t bs = 1 << 20, small = 4096;
	uint64_t size, span, at[3];
	const char *where[3] = { "outside", "middle", "inside" };
	double rate[3], t0, t = 0, overhead, per_cmd;
	struct geli_provider *p;
	bool direct = true;
	uint8_t *buf;
	int fd, error, n;

	error = geli_provider_open(o->disk, false, &p);
	if (error != 0) {
		fprintf(stderr, "geli: Cannot open %s: %s.\n", o->disk, strerror(-error));
		return 1;
	}
	size = geli_provider_mediasize(p);
	geli_provider_close(p);
	span = size / 10 < (100u << 20) ? size / 10 / bs * bs : 100u << 20;
	if (span < 4 * bs) {
		fprintf(stderr, "geli: %s is too small for a benchmark.\n", o->disk);
		return 1;
	}
	/* O_DIRECT where the file system allows it, else the page cache
	 * dropped before each pass. */
	fd = open(o->disk, O_RDONLY | O_DIRECT | O_CLOEXEC);
	if (fd < 0) {
		direct = false;
		fd = open(o->disk, O_RDONLY | O_CLOEXEC);
	}
	if (fd < 0 || (buf = aligned_alloc(4096, bs)) == NULL) {
		fprintf(stderr, "geli: Cannot open %s: %s.\n", o->disk, strerror(errno));
		return 1;
	}
	at[0] = 0;
	at[1] = size / 2 / bs * bs;
	at[2] = (size - span) / bs * bs;
	for (int k = 0; k < 3; k++) {
		/* Advice only (and the device's own cache is not ours to
		 * drop): at worst a rate is too high. */
		if (!direct)
			(void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		t0 = now();
		for (uint64_t off = 0; off < span; off += bs)
			if (pread(fd, buf, bs, (off_t)(at[k] + off)) != (ssize_t)bs) {
				fprintf(stderr, "geli: Read error on %s: %s.\n", o->disk,
				    strerror(errno));
				return 1;
			}
		rate[k] = (double)span / (now() - t0) / 1e6;
	}
	/* Command overhead: small reads at one place, minus their transfer. */
	n = 0;
	t0 = now();
	do {
		if (!direct)	/* advice, as above */
			(void)posix_fadvise(fd, 0, (off_t)small, POSIX_FADV_DONTNEED);
		if (pread(fd, buf, small, 0) != (ssize_t)small)
			break;
		n++;
		t = now();
	} while (t - t0 < o->seconds && n < 100000);
	per_cmd = (t - t0) / (n > 0 ? n : 1) * 1e6;
	overhead = per_cmd - (double)small / (rate[0] * 1e6) * 1e6;
	close(fd);
	free(buf);
	if (o->json) {
		printf("{\n  \"results\": [\n");
		for (int k = 0; k < 3; k++) {
			printf("    {\"study\": \"disk\", \"target\": ");
			json_string(o->disk);
			printf(", \"where\": \"%s\", \"offset\": %ju, \"bytes\": %ju, "
			    "\"read_MBps\": %.1f, \"direct\": %s},\n", where[k],
			    (uintmax_t)at[k], (uintmax_t)span, rate[k], direct ? "true" : "false");
		}
		printf("    {\"study\": \"disk\", \"target\": ");
		json_string(o->disk);
		printf(", \"where\": \"command\", \"reads\": %d, \"usec_per_read\": %.2f, "
		    "\"overhead_usec\": %.2f, \"direct\": %s}\n  ]\n}\n", n, per_cmd,
		    overhead, direct ? "true" : "false");
		return 0;
	}
	printf("%s\n\t%ju\t# mediasize in bytes\n\n", o->disk, (uintmax_t)size);
	printf("Transfer rates (%s):\n", direct ? "O_DIRECT" : "page cache dropped");
	for (int k = 0; k < 3; k++)
		printf("\t%-8s %10ju kbytes in %9.6f sec = %10.0f kbytes/sec\n", where[k],
		    (uintmax_t)(span >> 10), (double)span / (rate[k] * 1e6),
		    rate[k] * 1e6 / 1024);
	printf("\nCommand overhead:\n\t%d reads of %zu bytes: %.3f usec/read, "
	    "%.3f usec/command beyond the transfer\n", n, small, per_cmd, overhead);
	return 0;
}

