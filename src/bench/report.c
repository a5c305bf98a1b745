/* SPDX-License-Identifier: BSD-2-Clause */
/* geli bench's report: the table, JSON, CSV and the SVG chart (study.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "accel.h"
#include "geli.h"
#include "study.h"

/* CPU model and the flags the studies cared about. */
static void
cpu_info(char *model, size_t mlen, bool *aes, bool *vaes, bool *avx2)
{
	char line[4096];
	FILE *f = fopen("/proc/cpuinfo", "r");

	snprintf(model, mlen, "unknown");
	*aes = *vaes = *avx2 = false;
	if (f == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL) {
		char *v = strchr(line, ':');
		if (v == NULL)
			continue;
		v += 2;
		v[strcspn(v, "\n")] = '\0';
		if (strncmp(line, "model name", 10) == 0)
			snprintf(model, mlen, "%s", v);
		if (strncmp(line, "flags", 5) == 0) {
			*aes = strstr(v, " aes ") != NULL;
			*vaes = strstr(v, " vaes ") != NULL;
			*avx2 = strstr(v, " avx2 ") != NULL;
			break;
		}
	}
	fclose(f);
}

/* The baseline's word in the JSON and the CSV, or NULL. */
static const char *
base_word(const struct config *c)
{
	switch (c->base) {
	case BASE_OPENSSL:	return "openssl-speed";
	case BASE_BACKEND:	return "backend";
	case BASE_FUSE:		return "fuse-passthrough";
	case BASE_NOACCEL:	return "no-accelerator";
	case BASE_NONE:		break;
	}
	return NULL;
}

/* A row's name in the table and the chart: the cipher, raw, or a baseline
 * (indented under the cipher it measures). */
static const char *
row_name(const struct config *c)
{
	switch (c->base) {
	case BASE_OPENSSL:	return " openssl speed";
	case BASE_BACKEND:	return " backend alone";
	case BASE_FUSE:		return "FUSE passthrough";
	case BASE_NOACCEL:	return " no accelerator";
	case BASE_NONE:		break;
	}
	return c->ealgo == 0 ? "raw (no GELI)" : c->label;
}

void
json_string(const char *s)
{
	if (s == NULL) {
		printf("null");
		return;
	}
	putchar('"');
	for (; *s != '\0'; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

static void
xml_text(FILE *f, const char *s)
{
	for (; *s != '\0'; s++) {
		if (*s == '<')
			fputs("&lt;", f);
		else if (*s == '>')
			fputs("&gt;", f);
		else if (*s == '&')
			fputs("&amp;", f);
		else
			fputc(*s, f);
	}
}

/*
 * A horizontal bar chart: for each measurement a write and a read bar in
 * MB/s, its label on the left, the value at the bar's end, and the raw
 * baseline marked by dashed lines and its own (grey) bars.
 */
int
write_svg(const char *path, const struct config *cfg, int ncfg,
    const double *wmed, const double *rmed, const struct bench_opts *o)
{
	const int left = 260, right = 110, barh = 9, rowh = 26, top = 70;
	const int width = 1000, plot = width - left - right;
	int height = top + rowh * ncfg + 50;
	double max = 1;
	FILE *f;

	for (int c = 0; c < ncfg; c++) {
		if (wmed[c] > max)
			max = wmed[c];
		if (rmed[c] > max)
			max = rmed[c];
	}
	f = fopen(path, "w");
	if (f == NULL)
		return -errno;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	    "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
	    "font-family=\"sans-serif\" font-size=\"12\">\n"
	    "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", width, height);
	fprintf(f, "<text x=\"%d\" y=\"24\" font-size=\"16\" font-weight=\"bold\">"
	    "geli bench: sequential write and read, MB/s (in-memory providers, "
	    "%u threads, median of %d run%s)</text>\n", 10, o->threads, o->runs,
	    o->runs > 1 ? "s" : "");
	fprintf(f, "<rect x=\"%d\" y=\"38\" width=\"12\" height=\"10\" fill=\"#1f77b4\"/>"
	    "<text x=\"%d\" y=\"47\">write</text>\n", left, left + 16);
	fprintf(f, "<rect x=\"%d\" y=\"38\" width=\"12\" height=\"10\" fill=\"#ff7f0e\"/>"
	    "<text x=\"%d\" y=\"47\">read</text>\n", left + 70, left + 86);
	fprintf(f, "<text x=\"%d\" y=\"47\" fill=\"#555\">dashed: raw baseline "
	    "(no GELI)</text>\n", left + 140);
	for (int c = 0; c < ncfg; c++) {
		int y = top + rowh * c;
		char label[96];
		uint32_t S = cfg[c].sectorsize != 0 ? cfg[c].sectorsize : o->sectorsize;

		if (cfg[c].ealgo == 0)
			snprintf(label, sizeof(label), "%s", row_name(&cfg[c]));
		else
			snprintf(label, sizeof(label), "%s %u%s, %u B%s%s", row_name(&cfg[c]),
			    cfg[c].keylen, geli_algo_is_legacy(cfg[c].ealgo) ? " (legacy)" : "",
			    S, cfg[c].aalgo ? ", " : "",
			    cfg[c].aalgo ? geli_algo_name(cfg[c].aalgo) : "");
		fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", left - 8,
		    y + barh + 4);
		xml_text(f, label);
		fprintf(f, "</text>\n");
		for (int k = 0; k < 2; k++) {
			double v = k == 0 ? wmed[c] : rmed[c];
			int w = (int)(plot * v / max);
			fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
			    "fill=\"%s\"/><text x=\"%d\" y=\"%d\" font-size=\"10\">%.0f</text>\n",
			    left, y + k * (barh + 1), w > 0 ? w : 1, barh,
			    cfg[c].ealgo == 0 ? "#999" : k == 0 ? "#1f77b4" : "#ff7f0e",
			    left + w + 4, y + k * (barh + 1) + barh - 1, v);
		}
	}
	for (int k = 0; k < 2; k++) {
		int x = left + (int)(plot * (k == 0 ? wmed[0] : rmed[0]) / max);
		fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" "
		    "stroke-dasharray=\"4,3\"/>\n", x, top - 6, x, top + rowh * ncfg,
		    k == 0 ? "#1f77b4" : "#ff7f0e");
	}
	fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n",
	    left, top + rowh * ncfg + 4, left + plot, top + rowh * ncfg + 4);
	for (int t = 0; t <= 4; t++) {
		int x = left + plot * t / 4;
		fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" "
		    "font-size=\"10\">%.0f MB/s</text>\n", x, top + rowh * ncfg + 20,
		    max * t / 4);
	}
	fprintf(f, "</svg>\n");
	return fclose(f) == 0 ? 0 : -EIO;
}

/* Where the bytes went, as the JSON and CSV name it. */
static const char *
target_name(const struct bench_opts *o, const struct config *c)
{
	if (c->base == BASE_OPENSSL)
		return "openssl";
	if (c->base == BASE_FUSE)
		return "fuse";
	if (o->target != NULL)
		return o->target;
	if (o->cipher_only)
		return "cipher";
	return o->attached && c->ealgo != 0 ? "attached" : "memory";
}

/* One reported row: configuration c measured with backend b. */
struct row {
	int c, b;
	uint32_t S;
	bool legacy;
	struct stat3 w, d, u;
};

static struct row
row_of(const struct bench_opts *o, const struct config *cfg, int c, int b,
    struct stat3 W[][MAXCONFIGS], struct stat3 R[][MAXCONFIGS],
    struct stat3 U[][MAXCONFIGS])
{
	return (struct row){ c, b,
	    cfg[c].sectorsize != 0 ? cfg[c].sectorsize : o->sectorsize,
	    geli_algo_is_legacy(cfg[c].ealgo) || geli_algo_is_legacy(cfg[c].aalgo),
	    W[b][c], R[b][c], U[b][c] };
}

/* The rows of the JSON and the CSV, configuration by configuration, each
 * backend in turn (the raw baseline once): their number. */
static int
report_rows(const struct bench_opts *o, const struct config *cfg, int ncfg,
    struct stat3 W[][MAXCONFIGS], struct stat3 R[][MAXCONFIGS],
    struct stat3 U[][MAXCONFIGS], struct row *rows)
{
	int n = 0;

	for (int c = 0; c < ncfg; c++)
		for (int b = 0; b < (config_needs_backend(&cfg[c]) ? o->nbe : 1); b++)
			rows[n++] = row_of(o, cfg, c, b, W, R, U);
	return n;
}

static void
report_json(const struct bench_opts *o, const struct config *cfg, int ncfg,
    struct stat3 W[][MAXCONFIGS], struct stat3 R[][MAXCONFIGS],
    struct stat3 U[][MAXCONFIGS], const double *nwr, const double *nrd)
{
	char model[256];
	bool aes, vaes, avx2;
	struct utsname u;

	cpu_info(model, sizeof(model), &aes, &vaes, &avx2);
	uname(&u);
	printf("{\n  \"machine\": {\"cpu\": ");
	json_string(model);
	printf(", \"aes\": %s, \"vaes\": %s, \"avx2\": %s, \"kernel\": ",
	    aes ? "true" : "false", vaes ? "true" : "false", avx2 ? "true" : "false");
	json_string(u.release);
	printf(", \"crypto\": ");
	json_string(o->bever[0]);
	printf(", \"crypto_backends\": {");
	for (int b = 0; b < o->nbe; b++) {
		printf("%s\"%s\": ", b ? ", " : "", o->be[b]);
		json_string(o->bever[b]);
	}
	printf("}, \"crypto_hwfeatures\": ");
	json_string(geli_crypto_hwfeatures());
	printf(", \"crypto_accel\": ");
	json_string(geli_crypto_accel());
	printf(", \"openssl\": ");
	json_string(OpenSSL_version(OPENSSL_VERSION));
	printf(", \"cores\": %ld},\n  \"results\": [\n", sysconf(_SC_NPROCESSORS_ONLN));
	static struct row rows[MAXCONFIGS * MAXBE];
	int n = report_rows(o, cfg, ncfg, W, R, U, rows);

	for (int i = 0; i < n; i++) {
		int c = rows[i].c, b = rows[i].b;
		struct stat3 w = rows[i].w, d = rows[i].d;
		printf("    {\"study\": \"%s\", \"ealgo\": ", cfg[c].study);
		if (cfg[c].ealgo == 0)
			printf("null, \"keylen\": null, \"sectorsize\": null");
		else
			printf("\"%s\", \"keylen\": %u, \"sectorsize\": %u",
			    cfg[c].label, cfg[c].keylen, rows[i].S);
		printf(", \"aalgo\": ");
		if (cfg[c].aalgo == 0)
			printf("null");
		else
			json_string(geli_algo_name(cfg[c].aalgo));
		printf(", \"threads\": %u, \"target\": ", o->threads);
		json_string(target_name(o, &cfg[c]));
		printf(", \"crypto\": ");
		if (!config_needs_backend(&cfg[c]))
			printf("null");
		else
			json_string(o->be[b]);
		printf(", \"baseline\": ");
		if (base_word(&cfg[c]) == NULL)
			printf("null");
		else
			json_string(base_word(&cfg[c]));
		printf(", \"legacy\": %s, "
		    "\"write_MBps\": %.1f, \"read_MBps\": %.1f, "
		    "\"write_percent_of_raw\": %.1f, \"read_percent_of_raw\": %.1f, "
		    "\"cpu_percent\": %.1f, \"runs\": %d, "
		    "\"min\": {\"write_MBps\": %.1f, \"read_MBps\": %.1f}, "
		    "\"median\": {\"write_MBps\": %.1f, \"read_MBps\": %.1f}, "
		    "\"max\": {\"write_MBps\": %.1f, \"read_MBps\": %.1f}",
		    rows[i].legacy ? "true" : "false", w.median, d.median,
		    100 * w.median / W[0][0].median, 100 * d.median / R[0][0].median,
		    rows[i].u.median, o->runs, w.min, d.min, w.median, d.median, w.max,
		    d.max);
		if (o->noaesni)
			printf(", \"no_aesni\": {\"write_MBps\": %.1f, \"read_MBps\": %.1f, "
			    "\"write_ratio\": %.3f, \"read_ratio\": %.3f}", nwr[c], nrd[c],
			    nwr[c] > 0 ? w.median / nwr[c] : 0, nrd[c] > 0 ? d.median / nrd[c] : 0);
		if (b == 0 && o->nbe > 1 && config_needs_backend(&cfg[c])) {
			printf(", \"ratio\": {");
			for (int k = 1; k < o->nbe; k++)
				printf("%s\"%s\": {\"write\": %.3f, \"read\": %.3f}",
				    k > 1 ? ", " : "", o->be[k],
				    W[0][c].median / W[k][c].median,
				    R[0][c].median / R[k][c].median);
			printf("}");
		}
		printf("}%s\n", i + 1 < n ? "," : "");
	}
	printf("  ]\n}\n");
}

static void
report_csv(const struct bench_opts *o, const struct config *cfg, int ncfg,
    struct stat3 W[][MAXCONFIGS], struct stat3 R[][MAXCONFIGS],
    struct stat3 U[][MAXCONFIGS])
{
	printf("study,ealgo,keylen,sectorsize,aalgo,threads,target,legacy,"
	    "write_MBps,read_MBps,write_percent_of_raw,read_percent_of_raw,"
	    "cpu_percent,runs,min_write_MBps,min_read_MBps,median_write_MBps,"
	    "median_read_MBps,max_write_MBps,max_read_MBps,crypto,baseline\n");
	static struct row rows[MAXCONFIGS * MAXBE];
	int n = report_rows(o, cfg, ncfg, W, R, U, rows);

	for (int i = 0; i < n; i++) {
		int c = rows[i].c, b = rows[i].b;
		struct stat3 w = rows[i].w, d = rows[i].d;
		printf("%s,%s,", cfg[c].study, cfg[c].ealgo == 0 ? "" : cfg[c].label);
		if (cfg[c].ealgo == 0)
			printf(",,");
		else
			printf("%u,%u,", cfg[c].keylen, rows[i].S);
		printf("%s,%u,%s,%s,%.1f,%.1f,%.1f,%.1f,%.1f,%d,%.1f,%.1f,"
		    "%.1f,%.1f,%.1f,%.1f,%s,%s\n",
		    cfg[c].aalgo == 0 ? "" : geli_algo_name(cfg[c].aalgo), o->threads,
		    target_name(o, &cfg[c]), rows[i].legacy ? "true" : "false",
		    w.median, d.median, 100 * w.median / W[0][0].median,
		    100 * d.median / R[0][0].median, rows[i].u.median, o->runs,
		    w.min, d.min, w.median, d.median, w.max, d.max,
		    config_needs_backend(&cfg[c]) ? o->be[b] : "",
		    base_word(&cfg[c]) != NULL ? base_word(&cfg[c]) : "");
	}
}

/* The table: one row per configuration; with several backends their
 * figures side by side and the first one's ratio to each other. */
static void
report_table(const struct bench_opts *o, const struct config *cfg, int ncfg,
    struct stat3 W[][MAXCONFIGS], struct stat3 R[][MAXCONFIGS],
    struct stat3 U[][MAXCONFIGS], const double *nwr, const double *nrd,
    size_t bufsz)
{
	const char *wl = o->cipher_only ? "encrypt" : "write";
	const char *rl = o->cipher_only ? "decrypt" : "read";
	char req[32], libs[200] = "", h[64];
	size_t n = 0;

	if (bufsz % (1 << 20) == 0)
		snprintf(req, sizeof(req), "%zu MiB", bufsz >> 20);
	else
		snprintf(req, sizeof(req), "%zu KiB", bufsz >> 10);
	for (int b = 0; b < o->nbe && n < sizeof(libs); b++)
		n += (size_t)snprintf(libs + n, sizeof(libs) - n, "%s%s",
		    b ? " vs " : "", o->bever[b]);
	if (geli_crypto_accel() != NULL && n < sizeof(libs))
		snprintf(libs + n, sizeof(libs) - n, ", AES-CBC runs through %s",
		    geli_crypto_accel());
	if (o->target != NULL)
		printf("geli bench: %s (%ju MiB used; O_DIRECT where it works, writes "
		    "end with fdatasync, reads start uncached), %s sequential requests, %u threads, "
		    "%s, median of %d run%s\n\n", o->target, (uintmax_t)(o->size >> 20),
		    req, o->threads, libs, o->runs, o->runs > 1 ? "s" : "");
	else if (o->attached)
		printf("geli bench: through geli attach's file (FUSE) on providers in "
		    "/dev/shm, raw = a memory file, %ju MiB, %s sequential requests, "
		    "%u threads, %s, median of %d run%s\n\n", (uintmax_t)(o->size >> 20),
		    req, o->threads, libs, o->runs, o->runs > 1 ? "s" : "");
	else if (o->cipher_only)
		printf("geli bench: the sector transform alone (no provider I/O), %s of "
		    "sectors at a time, raw = a memory copy, %u threads, %s, median of %d "
		    "run%s\n\n", req, o->threads, libs, o->runs, o->runs > 1 ? "s" : "");
	else
		printf("geli bench: in-memory providers of %ju MiB, %s sequential "
		    "requests, %u threads, %s, median of %d run%s\n\n",
		    (uintmax_t)(o->size >> 20), req, o->threads, libs, o->runs,
		    o->runs > 1 ? "s" : "");
	printf("%-16s %6s %6s %-15s", "cipher", "keylen", "sector", "integrity");
	if (o->nbe == 1) {
		snprintf(h, sizeof(h), "%s MB/s", wl);
		printf(" %12s", h);
		snprintf(h, sizeof(h), "%s MB/s", rl);
		printf(" %12s", h);
		snprintf(h, sizeof(h), "%s %%", wl);
		printf(" %9s", h);
		snprintf(h, sizeof(h), "%s %%", rl);
		printf(" %9s %5s", h, "CPU%");
	} else {
		for (int b = 0; b < o->nbe; b++) {
			snprintf(h, sizeof(h), "%s %s", o->be[b], wl);
			printf(" %15s", h);
			snprintf(h, sizeof(h), "%s %s", o->be[b], rl);
			printf(" %15s", h);
		}
		for (int b = 1; b < o->nbe; b++) {
			snprintf(h, sizeof(h), "/%s %s", o->be[b], wl);
			printf(" %16s", h);
			snprintf(h, sizeof(h), "/%s %s", o->be[b], rl);
			printf(" %16s", h);
		}
	}
	if (o->noaesni)
		printf("  %13s %13s %8s", "noAESNI w MB/s", "noAESNI r MB/s", "AES-NI x");
	printf("\n");
	for (int c = 0; c < ncfg; c++) {
		struct row rw = row_of(o, cfg, c, 0, W, R, U);
		char name[40], kl[16], ss[16];
		uint32_t S = rw.S;
		bool legacy = rw.legacy;
		struct stat3 w = rw.w, d = rw.d;

		snprintf(name, sizeof(name), "%s%s", row_name(&cfg[c]),
		    legacy && cfg[c].base == BASE_NONE ? " *" : "");
		snprintf(kl, sizeof(kl), "%u", cfg[c].keylen);
		snprintf(ss, sizeof(ss), "%u", S);
		printf("%-16s %6s %6s %-15s", name, cfg[c].ealgo == 0 ? "-" : kl,
		    cfg[c].ealgo == 0 ? "-" : ss,
		    cfg[c].aalgo == 0 ? "-" : geli_algo_name(cfg[c].aalgo));
		if (o->nbe == 1) {
			printf(" %12.0f %12.0f %8.0f%% %8.0f%% %4.0f%%", w.median, d.median,
			    100 * w.median / W[0][0].median, 100 * d.median / R[0][0].median,
			    rw.u.median);
		} else {
			for (int b = 0; b < o->nbe; b++)
				printf(" %15.0f %15.0f", W[b][c].median, R[b][c].median);
			for (int b = 1; b < o->nbe; b++) {
				if (!config_needs_backend(&cfg[c]))
					printf(" %16s %16s", "-", "-");
				else
					printf(" %15.2fx %15.2fx", w.median / W[b][c].median,
					    d.median / R[b][c].median);
			}
		}
		if (o->noaesni)
			printf("  %14.0f %14.0f %7.1fx", nwr[c], nrd[c],
			    nwr[c] > 0 ? (w.median / nwr[c] + d.median / nrd[c]) / 2 : 0);
		printf("\n");
	}
	printf("\n* legacy: current FreeBSD refuses it; geli for Linux reads and writes it.\n");
	if (o->nbe == 1)
		printf("%% = of the raw baseline, measured in the same process, interleaved.\n"
		    "CPU%% = CPU time of this process (and with --attached the daemon's) over\n"
		    "wall time, of all %ld cores.\n", sysconf(_SC_NPROCESSORS_ONLN));
	else
		printf("Each backend in turn on the same data, interleaved; /%s = %s's figure\n"
		    "over %s's.\n", o->be[1], o->be[0], o->be[1]);
	if (o->cipher_only)
		printf("encrypt/decrypt: the data path's sector transform on the pool, with\n"
		    "no provider I/O (the JSON's write_MBps/read_MBps).\n");
	if (o->baselines && o->cipher_only)
		printf("backend alone: the crypto backend through libgeli's seam, keyed once,\n"
		    "one IV per sector given (no range keys, no IV hashing, no pool).\n"
		    "openssl speed: `openssl speed -evp` of the cipher on a buffer of a\n"
		    "sector's size under one IV, one thread, as openssl times it.\n"
		    "%s", gc_accel_name() != NULL ? "no accelerator: the data path with "
		    "the AES-CBC accelerator switched off\n(each sector on the backend, its "
		    "IV hashed by the backend).\n" : "");
	if (o->baselines && o->attached)
		printf("FUSE passthrough: a memory file served through geli attach's FUSE\n"
		    "front end, without GELI.\n");
	if (o->noaesni)
		printf("noAESNI: the same study in a child process with AES-NI and PCLMULQDQ\n"
		    "masked off (OPENSSL_ia32cap, libgcrypt's disabled hardware features);\n"
		    "AES-NI x = mean of the write and read speedups.\n");
}

void
report(const struct bench_opts *o, const struct config *cfg, int ncfg,
    struct stat3 W[][MAXCONFIGS], struct stat3 R[][MAXCONFIGS],
    struct stat3 U[][MAXCONFIGS], const double *nwr, const double *nrd,
    size_t bufsz)
{
	if (o->json)
		report_json(o, cfg, ncfg, W, R, U, nwr, nrd);
	else if (o->csv)
		report_csv(o, cfg, ncfg, W, R, U);
	else
		report_table(o, cfg, ncfg, W, R, U, nwr, nrd, bufsz);
}

