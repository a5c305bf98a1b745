/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The sector data path: FreeBSD-made volumes decrypt to their known
 * plaintext; every cipher x key length x sector size x HMAC x version round
 * trips at any offset and length; integrity catches flipped bits, moved
 * sectors and never-written sectors; suspend wipes and resume restores; a
 * write stores the same bytes from a buffer at any address.  (Providers of
 * operations, discard and zeroing: test_volume_ops.c.)
 */
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"

#include "geli.h"
#include "internal.h"	/* volume_map_resident_only */

static const char *fixdir;

/* The test's own reads and writes of provider bytes: a short one fails it. */
static void
xpread(int fd, void *buf, size_t n, off_t off)
{
	if (pread(fd, buf, n, off) != (ssize_t)n)
		tap_ok(0, "pread of %zu bytes at %lld", n, (long long)off);
}

static void
xpwrite(int fd, const void *buf, size_t n, off_t off)
{
	if (pwrite(fd, buf, n, off) != (ssize_t)n)
		tap_ok(0, "pwrite of %zu bytes at %lld", n, (long long)off);
}
static char tmpdir[] = "/tmp/geli-vol.XXXXXX";
static unsigned make_flags;	/* volume flags for make_volume */

static int
open_with_pass(const char *path, const char *pass, unsigned nthreads,
    struct geli_volume **v)
{
	struct geli_provider *p;
	struct geli_metadata md;
	struct geli_ukey_ctx *ctx;
	uint8_t ukey[64], mkey[128];
	int error, used;

	if ((error = geli_provider_open(path, true, &p)) != 0)
		return error;
	if ((error = geli_provider_read_metadata(p, &md)) != 0)
		goto fail;
	geli_ukey_new(&ctx);
	error = geli_ukey_final(ctx, &md, pass, strlen(pass), ukey);
	geli_ukey_free(ctx);
	if (error == 0)
		error = geli_mkey_decrypt(&md, ukey, -1, mkey, &used);
	if (error == 0)
		error = geli_volume_open(p, &md, mkey, 0, nthreads, v);
	geli_wipe(mkey, sizeof(mkey));
	if (error == 0)
		return 0;
fail:
	geli_provider_close(p);
	return error;
}

static void
test_freebsd(void)
{
	struct geli_volume *v;
	char path[4096], pfx[4096];
	uint8_t *want, *got;
	int fd, n;

	/* FreeBSD 9, v6, AES-XTS-128, 4096-byte sectors. */
	snprintf(path, sizeof(path), "%s/fbsd9-v6-aesxts128-4k-bluemoon.img", fixdir);
	snprintf(pfx, sizeof(pfx), "%s/fbsd9-v6-aesxts128-4k-bluemoon.plain-prefix", fixdir);
	char copy[4200];
	snprintf(copy, sizeof(copy), "%s/bluemoon.img", tmpdir);
	char cmd[9000];
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", path, copy);
	if (system(cmd) != 0) { tap_ok(0, "copy fixture"); return; }
	want = malloc(1 << 20);
	got = malloc(1 << 20);
	fd = open(pfx, O_RDONLY);
	n = (int)read(fd, want, 1 << 20);
	close(fd);
	int err = open_with_pass(copy, "bluemoon", 2, &v);
	tap_ok(err == 0, "FreeBSD 9 v6 AES-XTS 4k volume opens (%d)", err);
	if (err != 0)
		return;
	tap_ok(geli_volume_size(v) == 1048576 - 4096 && geli_volume_sectorsize(v) == 4096,
	    "its size is 1 MiB minus one 4096-byte sector");
	tap_ok(geli_volume_read(v, got, (size_t)n, 0) == n && memcmp(got, want, (size_t)n) == 0,
	    "it decrypts to FreeBSD's plaintext (%d bytes)", n);
	/* An unaligned read in the middle. */
	tap_ok(geli_volume_read(v, got, 10000, 12345) == 10000 &&
	    memcmp(got, want + 12345, 10000) == 0, "unaligned read of the same text");
	geli_volume_close(v);

	/* The pg-* images (v7, 512-byte sectors): an MBR at sector 0. */
	const char *pg[] = { "pg-aes-xts-128-0", "pg-aes-xts-256-0" };
	for (int i = 0; i < 2; i++) {
		snprintf(copy, sizeof(copy), "%s/%s.img", tmpdir, pg[i]);
		snprintf(cmd, sizeof(cmd), "cp '%s/%s.img' '%s'", fixdir, pg[i], copy);
		if (system(cmd) != 0)
			continue;
		err = open_with_pass(copy, "password", 1, &v);
		tap_ok(err == 0 && geli_volume_read(v, got, 512, 0) == 512 &&
		    got[510] == 0x55 && got[511] == 0xaa,
		    "%s decrypts to an MBR", pg[i]);
		if (err == 0)
			geli_volume_close(v);
	}
	free(want);
	free(got);
}

/* A volume on a fresh file with a random key. */
static struct geli_volume *
make_volume(const char *name, unsigned version, unsigned ealgo, unsigned keylen,
    uint32_t S, unsigned aalgo, uint64_t size, unsigned nthreads, uint8_t *mkey)
{
	struct geli_provider *p;
	struct geli_metadata md;
	struct geli_volume *v;
	char path[4200];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)size) != 0)
		return NULL;
	close(fd);
	memset(&md, 0, sizeof(md));
	md.version = version;
	md.ealgo = (uint16_t)ealgo;
	md.keylen = (uint16_t)keylen;
	md.sectorsize = S;
	md.provsize = size;
	if (aalgo != 0) {
		md.flags = GELI_FLAG_AUTH;
		md.aalgo = (uint16_t)aalgo;
	}
	geli_random(mkey, 128);
	if (geli_provider_open(path, true, &p) != 0)
		return NULL;
	if (geli_volume_open(p, &md, mkey, make_flags, nthreads, &v) != 0) {
		geli_provider_close(p);
		return NULL;
	}
	return v;
}

static uint64_t
rnd(uint64_t n)
{
	uint64_t r;

	geli_random(&r, sizeof(r));
	return n == 0 ? 0 : r % n;
}

/* Random writes and reads against a shadow copy. */
static int
shadow_check(struct geli_volume *v, int rounds)
{
	uint64_t size = geli_volume_size(v);
	uint8_t *shadow = calloc(1, size), *buf = malloc(size);
	int bad = 0;

	/* Write everything once (integrity volumes start unreadable). */
	geli_random(shadow, size);
	if (geli_volume_write(v, shadow, size, 0) != (ssize_t)size)
		bad++;
	for (int i = 0; i < rounds && !bad; i++) {
		uint64_t off = rnd(size), len = 1 + rnd(size - off < 70000 ? size - off : 70000);
		geli_random(buf, len);
		if (geli_volume_write(v, buf, len, off) != (ssize_t)len)
			bad++;
		memcpy(shadow + off, buf, len);
		off = rnd(size);
		len = 1 + rnd(size - off < 70000 ? size - off : 70000);
		if (geli_volume_read(v, buf, len, off) != (ssize_t)len ||
		    memcmp(buf, shadow + off, len) != 0)
			bad++;
	}
	if (!bad && (geli_volume_read(v, buf, size, 0) != (ssize_t)size ||
	    memcmp(buf, shadow, size) != 0))
		bad++;
	free(shadow);
	free(buf);
	return bad;
}

static const struct { unsigned ealgo, keylen; } ciphers[] = {
	{ GELI_ALGO_AES_XTS, 128 }, { GELI_ALGO_AES_XTS, 256 },
	{ GELI_ALGO_AES_CBC, 128 }, { GELI_ALGO_AES_CBC, 192 }, { GELI_ALGO_AES_CBC, 256 },
	{ GELI_ALGO_CAMELLIA_CBC, 128 }, { GELI_ALGO_CAMELLIA_CBC, 256 },
	{ GELI_ALGO_BLOWFISH_CBC, 128 }, { GELI_ALGO_BLOWFISH_CBC, 448 },
	{ GELI_ALGO_3DES_CBC, 192 }, { GELI_ALGO_NULL, 512 },
};
static const unsigned aalgos[] = { 0, GELI_ALGO_HMAC_MD5, GELI_ALGO_HMAC_SHA1,
	GELI_ALGO_HMAC_RMD160, GELI_ALGO_HMAC_SHA256, GELI_ALGO_HMAC_SHA384,
	GELI_ALGO_HMAC_SHA512 };

static void
test_matrix(void)
{
	uint8_t mkey[128];
	char name[64];

	for (size_t c = 0; c < sizeof(ciphers) / sizeof(ciphers[0]); c++)
		for (uint32_t S = 512; S <= 4096; S *= 8)
			for (size_t a = 0; a < sizeof(aalgos) / sizeof(aalgos[0]); a++) {
				snprintf(name, sizeof(name), "m%zu-%u-%zu", c, S, a);
				struct geli_volume *v = make_volume(name, 7, ciphers[c].ealgo,
				    ciphers[c].keylen, S, aalgos[a], 256 * 1024, 2, mkey);
				tap_ok(v != NULL && shadow_check(v, 20) == 0,
				    "%s %u S=%u %s: random I/O round trips",
				    geli_algo_name(ciphers[c].ealgo), ciphers[c].keylen, S,
				    aalgos[a] ? geli_algo_name(aalgos[a]) : "no HMAC");
				geli_volume_close(v);
			}
}

/*
 * The caller's buffer at any address: a write of whole sectors encrypts
 * from it into a bounce buffer placed by its address (sector_ctx_buf), so
 * the same plaintext from every offset within a page must store the same
 * bytes and read back; with the accelerator's runs (AES-CBC, 64 sectors)
 * and the backend's (AES-XTS), one thread and two.
 */
static void
test_buffer_addresses(void)
{
	static const size_t shifts[] = { 0, 1, 16, 64, 511, 512, 2047, 2048,
	    3584, 4032, 4095 };
	static const struct { unsigned ealgo, keylen; uint32_t S; } cases[] = {
		{ GELI_ALGO_AES_CBC, 128, 4096 }, { GELI_ALGO_AES_CBC, 256, 512 },
		{ GELI_ALGO_AES_XTS, 128, 4096 },
	};
	const size_t len = 64 * 4096;
	uint8_t *area = aligned_alloc(4096, len + 4096), *plain = malloc(len);
	uint8_t *first = malloc(len), *stored = malloc(len), mkey[128];
	char name[64], path[4200];

	if (area == NULL || plain == NULL || first == NULL || stored == NULL) {
		tap_ok(0, "memory for the buffer addresses");
		goto out;
	}
	geli_random(plain, len);
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		for (unsigned t = 1; t <= 2; t++) {
			int bad = 0, fd;

			snprintf(name, sizeof(name), "addr-%zu-%u", c, t);
			snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
			struct geli_volume *v = make_volume(name, 7, cases[c].ealgo,
			    cases[c].keylen, cases[c].S, 0, len + 4 * 4096, t, mkey);
			fd = open(path, O_RDONLY);
			if (v == NULL || fd < 0) {
				tap_ok(0, "volume %s", name);
				if (fd >= 0)
					close(fd);
				geli_volume_close(v);
				continue;
			}
			for (size_t i = 0; i < sizeof(shifts) / sizeof(shifts[0]); i++) {
				uint8_t *b = area + shifts[i];

				memcpy(b, plain, len);
				if (geli_volume_write(v, b, len, 0) != (ssize_t)len)
					bad++;
				xpread(fd, stored, len, 0);
				if (i == 0)
					memcpy(first, stored, len);
				else if (memcmp(stored, first, len) != 0)
					bad++;
				memset(b, 0, len);
				if (geli_volume_read(v, b, len, 0) != (ssize_t)len ||
				    memcmp(b, plain, len) != 0)
					bad++;
			}
			tap_ok(bad == 0 && memcmp(first, plain, len) != 0,
			    "%s %u S=%u, %u thread(s): the same bytes stored from "
			    "a buffer at each of %zu offsets in a page (%d bad)",
			    geli_algo_name(cases[c].ealgo), cases[c].keylen,
			    cases[c].S, t, sizeof(shifts) / sizeof(shifts[0]), bad);
			close(fd);
			geli_volume_close(v);
		}
	}
out:
	free(area);
	free(plain);
	free(first);
	free(stored);
}

/* Every version's quirks round trip, and differ from version 7. */
static void
test_versions(void)
{
	uint8_t mkey[128], a[4096], b[4096], plain[4096];
	struct geli_volume *v;
	char name[64];

	memset(plain, 0x5a, sizeof(plain));
	for (unsigned ver = 0; ver <= 7; ver++)
		for (int auth = 0; auth < 2; auth++) {
			if (ver == 0 && auth)
				continue;
			snprintf(name, sizeof(name), "v%u-%d", ver, auth);
			v = make_volume(name, ver, ver >= 5 ? GELI_ALGO_AES_XTS : GELI_ALGO_AES_CBC,
			    128, 512, auth ? GELI_ALGO_HMAC_SHA256 : 0, 1 << 20, 1, mkey);
			tap_ok(v != NULL && shadow_check(v, 10) == 0,
			    "version %u%s round trips", ver, auth ? " with HMAC/SHA256" : "");
			geli_volume_close(v);
		}
	/* Same Master Key, v6 vs v7: range keys from IVK vs DK differ. */
	v = make_volume("k6", 6, GELI_ALGO_AES_XTS, 128, 512, 0, 1 << 20, 1, mkey);
	geli_volume_write(v, plain, 512, 0);
	geli_volume_close(v);
	struct geli_provider *p;
	struct geli_metadata md;
	char path[4200];
	snprintf(path, sizeof(path), "%s/k6", tmpdir);
	int fd = open(path, O_RDONLY);
	xpread(fd, a, 512, 0);
	close(fd);
	memset(&md, 0, sizeof(md));
	md.version = 7;
	md.ealgo = GELI_ALGO_AES_XTS;
	md.keylen = 128;
	md.sectorsize = 512;
	geli_provider_open(path, true, &p);
	geli_volume_open(p, &md, mkey, 0, 1, &v);
	geli_volume_write(v, plain, 512, 0);
	geli_volume_close(v);
	fd = open(path, O_RDONLY);
	xpread(fd, b, 512, 0);
	close(fd);
	tap_ok(memcmp(a, b, 512) != 0, "v6 (range keys from the IV key) and v7 encrypt differently");
	tap_ok(memcmp(a, plain, 512) != 0 && memcmp(b, plain, 512) != 0,
	    "the ciphertext is not the plaintext");
}

static void
test_integrity(void)
{
	uint8_t mkey[128], buf[8192];
	char path[4200];
	struct geli_volume *v;
	int fd;

	v = make_volume("auth", 7, GELI_ALGO_AES_XTS, 128, 4096, GELI_ALGO_HMAC_SHA256,
	    1 << 20, 2, mkey);
	tap_ok(geli_volume_read(v, buf, 4096, 0) == -EBADMSG,
	    "a never-written sector fails verification");
	tap_ok(geli_volume_write(v, buf, 100, 4096 * 3 + 10) == -EBADMSG,
	    "a partial write into a never-written sector fails (nothing to merge)");
	geli_random(buf, sizeof(buf));
	tap_ok(geli_volume_write(v, buf, 8192, 0) == 8192, "two sectors written");
	tap_ok(geli_volume_read(v, buf, 8192, 0) == 8192, "... and read back");
	snprintf(path, sizeof(path), "%s/auth", tmpdir);
	fd = open(path, O_RDWR);
	uint8_t b = 0;
	/* Logical sector 0 = 9 physical sectors of 512 (4608 bytes). */
	xpread(fd, &b, 1, 64);
	b ^= 1;
	xpwrite(fd, &b, 1, 64);
	tap_ok(geli_volume_read(v, buf, 4096, 0) == -EBADMSG, "one flipped bit: read error");
	tap_ok(geli_volume_read(v, buf, 4096, 4096) == 4096, "the other sector still reads");
	b ^= 1;
	xpwrite(fd, &b, 1, 64);
	tap_ok(geli_volume_read(v, buf, 4096, 0) == 4096, "flipped back: reads again");
	/* Copy physical sector 0 over physical sector 9 (logical 1's first). */
	uint8_t ps[512];
	xpread(fd, ps, 512, 0);
	xpwrite(fd, ps, 512, 4608);
	tap_ok(geli_volume_read(v, buf, 4096, 4096) == -EBADMSG,
	    "a physical sector copied over another: read error");
	/* A tag byte. */
	xpread(fd, ps, 512, 0);
	ps[3] ^= 0x80;
	xpwrite(fd, ps, 512, 0);
	tap_ok(geli_volume_read(v, buf, 100, 50) == -EBADMSG, "a damaged tag: read error");
	tap_ok(geli_volume_integrity_errors(v) >= 3, "integrity errors are counted");
	close(fd);
	geli_volume_close(v);
}

struct susp {
	struct geli_volume *v;
	ssize_t r;
};

static void *
reader(void *p)
{
	struct susp *s = p;
	uint8_t buf[512];

	s->r = geli_volume_read(s->v, buf, 512, 0);
	return NULL;
}

static void
test_suspend(void)
{
	uint8_t mkey[128], buf[512];
	struct geli_volume *v;
	pthread_t th;
	struct susp s;

	v = make_volume("susp", 7, GELI_ALGO_AES_XTS, 256, 512, 0, 1 << 20, 2, mkey);
	geli_random(buf, sizeof(buf));
	geli_volume_write(v, buf, 512, 0);
	tap_ok(geli_volume_suspend(v) == 0 && geli_volume_suspended(v), "suspended");
	tap_ok(geli_volume_suspend(v) == -EALREADY, "suspending twice is refused");
	s.v = v;
	s.r = -1;
	pthread_create(&th, NULL, reader, &s);
	usleep(100000);
	tap_ok(s.r == -1, "a reader waits while suspended");
	tap_ok(geli_volume_resume(v, mkey) == 0, "resumed");
	pthread_join(th, NULL);
	tap_ok(s.r == 512, "the waiting reader completes after resume");
	geli_volume_close(v);
}

/* Reads decrypted from a mapping of the provider (GELI_VOLUME_MMAP). */
static void
test_mmap(void)
{
	uint8_t mkey[128], *buf = malloc(1 << 20), *got = malloc(1 << 20);
	struct geli_volume *v;
	char name[64], path[4200];
	int bad = 0;

	make_flags = GELI_VOLUME_MMAP;
	for (size_t c = 0; c < sizeof(ciphers) / sizeof(ciphers[0]); c++)
		for (uint32_t S = 512; S <= 4096; S *= 8) {
			snprintf(name, sizeof(name), "map%zu-%u", c, S);
			v = make_volume(name, 7, ciphers[c].ealgo, ciphers[c].keylen,
			    S, 0, 256 * 1024, 2, mkey);
			if (v == NULL || shadow_check(v, 20) != 0)
				bad++;
			geli_volume_close(v);
		}
	tap_ok(bad == 0, "mapped reads: random I/O round trips for every cipher, S=512 and 4096");
	v = make_volume("maph", 7, GELI_ALGO_AES_XTS, 128, 4096,
	    GELI_ALGO_HMAC_SHA256, 256 * 1024, 2, mkey);
	tap_ok(v != NULL && shadow_check(v, 20) == 0,
	    "with integrity the flag is ignored (tags need the physical layout)");
	geli_volume_close(v);

	/* The same ciphertext read through the mapping and through pread. */
	v = make_volume("mapx", 7, GELI_ALGO_AES_XTS, 256, 4096, 0, (1 << 20) + 4096, 2, mkey);
	geli_random(buf, 1 << 20);
	tap_ok(v != NULL && geli_volume_write(v, buf, 1 << 20, 0) == 1 << 20 &&
	    geli_volume_read(v, got, 1 << 20, 0) == 1 << 20 &&
	    memcmp(buf, got, 1 << 20) == 0, "mapped: 1 MiB written, read back equal");
	geli_volume_close(v);
	struct geli_provider *p;
	struct geli_metadata md;
	snprintf(path, sizeof(path), "%s/mapx", tmpdir);
	memset(&md, 0, sizeof(md));
	md.version = 7;
	md.ealgo = GELI_ALGO_AES_XTS;
	md.keylen = 256;
	md.sectorsize = 4096;
	md.provsize = (1 << 20) + 4096;
	geli_provider_open(path, true, &p);
	geli_volume_open(p, &md, mkey, 0, 2, &v);
	memset(got, 0, 1 << 20);
	tap_ok(geli_volume_read(v, got, 1 << 20, 0) == 1 << 20 &&
	    memcmp(buf, got, 1 << 20) == 0, "and the same bytes without the mapping");

	/* The file shrinks underneath: SIGBUS on the mapping becomes an error
	 * (with the residency check off, so that the mapping is touched). */
	geli_volume_close(v);
	volume_map_resident_only = false;
	geli_provider_open(path, true, &p);
	geli_volume_open(p, &md, mkey, GELI_VOLUME_MMAP, 2, &v);
	int fd = open(path, O_RDWR);
	tap_ok(fd >= 0 && ftruncate(fd, 256 * 1024) == 0, "the provider file cut to 256 KiB under the volume");
	ssize_t r = geli_volume_read(v, got, 64 * 1024, 512 * 1024);
	tap_ok(r < 0, "a read past the cut: an error (%zd), the process lives", r);
	r = geli_volume_read(v, got, 64 * 1024, 0);
	tap_ok(r == 64 * 1024 && memcmp(buf, got, 64 * 1024) == 0,
	    "a read before the cut still works");
	r = geli_volume_read(v, got, 1 << 20, 0);
	tap_ok(r < 0, "a read across the cut: an error (%zd)", r);
	if (fd >= 0)
		close(fd);
	geli_volume_close(v);
	volume_map_resident_only = true;
	make_flags = 0;
	free(buf);
	free(got);
}

static void
test_edges(void)
{
	uint8_t mkey[128], buf[1024];
	struct geli_volume *v;

	v = make_volume("edge", 7, GELI_ALGO_AES_XTS, 128, 512, 0, 64 * 1024 + 100, 1, mkey);
	tap_ok(geli_volume_size(v) == 64 * 1024 - 512, "odd provider size: whole sectors minus metadata");
	tap_ok(geli_volume_read(v, buf, 1024, geli_volume_size(v) - 100) == 100, "short read at the end");
	tap_ok(geli_volume_read(v, buf, 10, geli_volume_size(v)) == 0, "read past the end: 0");
	tap_ok(geli_volume_write(v, buf, 10, geli_volume_size(v)) == -ENOSPC, "write past the end: -ENOSPC");
	geli_volume_close(v);
}

int
main(int argc, char **argv)
{
	if (mkdtemp(tmpdir) == NULL)
		return 1;
	fixdir = argc > 1 ? argv[1] : NULL;
	if (fixdir != NULL)
		test_freebsd();
	else
		printf("ok %d # SKIP no fixtures\n", ++tap_n);
	test_matrix();
	test_buffer_addresses();
	test_versions();
	test_integrity();
	test_suspend();
	test_mmap();
	test_edges();
	char cmd[200];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		return 1;
	return tap_done();
}
