/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libgeli's administration functions (lib/admin.c, lib/mdstore.c): each
 * operation does what its verb does on disk, and each failure FreeBSD tells
 * apart comes back as its own code, with nothing on disk changed.  Built
 * with -Wl,--wrap=malloc so that one allocation can be made to fail.
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"

#include "geli.h"

static char dir[] = "/tmp/geli-admin.XXXXXX";
static char path[4200];
static const uint8_t ukey0[GELI_USERKEYLEN] = { 1, 2, 3 };
static const uint8_t ukey1[GELI_USERKEYLEN] = { 9, 8, 7 };
static uint8_t mkey[GELI_MKEY_DATALEN];

/* ---- A malloc that fails once, for the size asked ------------------------ */

void *__real_malloc(size_t size);
void *__wrap_malloc(size_t size);
static size_t fail_size;

void *
__wrap_malloc(size_t size)
{
	if (fail_size != 0 && size == fail_size) {
		fail_size = 0;
		return NULL;
	}
	return __real_malloc(size);
}

/* ---- Providers ------------------------------------------------------------ */

static const char *
file(const char *name)
{
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

static void
make_file(const char *p, uint64_t size)
{
	int fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0600);

	if (fd < 0 || ftruncate(fd, (off_t)size) != 0)
		abort();
	close(fd);
}

static void
base_md(struct geli_metadata *md, uint64_t provsize)
{
	memset(md, 0, sizeof(*md));
	memcpy(md->magic, GELI_MAGIC, sizeof(GELI_MAGIC));
	md->version = GELI_VERSION;
	md->ealgo = GELI_ALGO_AES_XTS;
	md->keylen = 128;
	md->provsize = provsize;
	md->sectorsize = 512;
	md->iterations = 1000;
	md->keys = 1;
	if (geli_mkey_encrypt(md->ealgo, md->keylen, ukey0, mkey,
	    md->mkeys) != 0)
		abort();
}

/* A 1 MiB provider with slot 0 set (ukey0), its metadata written. */
static struct geli_provider *
volume(const char *name, struct geli_metadata *md)
{
	struct geli_provider *p;

	make_file(file(name), 1 << 20);
	base_md(md, 1 << 20);
	if (geli_provider_open(path, true, &p) != 0 ||
	    geli_provider_write_metadata(p, md) != 0)
		abort();
	return p;
}

static bool
slot_opens(const struct geli_metadata *md, const uint8_t *ukey, int keyno)
{
	uint8_t got[GELI_MKEY_DATALEN];
	int used;

	return geli_mkey_decrypt(md, ukey, keyno, got, &used) == 0 &&
	    memcmp(got, mkey, sizeof(got)) == 0;
}

static void
last_sector(struct geli_provider *p, uint8_t *sector)
{
	if (geli_provider_read_last(p, sector) != 0)
		abort();
}

static bool
all_zero(const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (b[i] != 0)
			return false;
	return true;
}

/* ---- Stores --------------------------------------------------------------- */

static void
test_store(void)
{
	struct geli_metadata md, got;
	struct geli_mdstore *s;
	struct geli_provider *p = volume("store", &md);
	uint8_t sector[512];
	int fd;

	tap_ok(geli_mdstore_open(file("store"), 0, &s) == 0 &&
	    !geli_mdstore_is_backup(s) && geli_mdstore_read(s, &got) == 0 &&
	    got.provsize == md.provsize, "store: a provider's metadata reads");
	geli_mdstore_close(s);
	tap_ok(geli_mdstore_open(file("none"), 0, &s) == -ENOENT,
	    "store: a missing file is -ENOENT");

	/* Damage: no magic, a flipped byte, a version too new. */
	last_sector(p, sector);
	sector[0] ^= 1;
	geli_provider_write_last(p, sector);
	tap_ok(geli_provider_read_metadata(p, &got) == -GELI_ENOMAGIC,
	    "store: no magic is -GELI_ENOMAGIC");
	sector[0] ^= 1;
	sector[40] ^= 1;
	geli_provider_write_last(p, sector);
	tap_ok(geli_provider_read_metadata(p, &got) == -EBADMSG,
	    "store: a flipped byte is -EBADMSG");
	geli_provider_close(p);

	make_file(file("tiny"), 100);
	tap_ok(geli_mdstore_open(file("tiny"), 0, &s) == 0 &&
	    geli_mdstore_read(s, &got) == -GELI_ETOOSMALL,
	    "store: a provider under one sector is -GELI_ETOOSMALL");
	tap_ok(geli_mdstore_write(s, &md) == -GELI_ETOOSMALL,
	    "store: and cannot be written");
	geli_mdstore_close(s);

	/* A backup file: the record at 0, the file keeps its length. */
	base_md(&md, 1 << 20);
	tap_ok(geli_backup_metadata(&md, 512, file("bak"), NULL) == 0 &&
	    geli_is_backup_file(path), "store: a written backup is a backup file");
	tap_ok(geli_mdstore_open(path, GELI_MDS_WRITABLE, &s) == 0 &&
	    geli_mdstore_is_backup(s) && geli_mdstore_provider(s) == NULL &&
	    geli_mdstore_read(s, &got) == 0 && got.provsize == md.provsize,
	    "store: a backup file's record reads");
	got.flags = GELI_FLAG_BOOT;
	tap_ok(geli_mdstore_write(s, &got) == 0, "store: a backup file writes");
	geli_mdstore_close(s);
	struct stat st;
	tap_ok(stat(path, &st) == 0 && st.st_size == 512 &&
	    (st.st_mode & 0777) == 0600, "store: the backup keeps 512 bytes, 0600");
	tap_ok(geli_mdstore_open(path, GELI_MDS_PROVIDER, &s) == 0 &&
	    !geli_mdstore_is_backup(s) && geli_mdstore_read(s, &got) == 0 &&
	    got.flags == GELI_FLAG_BOOT,
	    "store: GELI_MDS_PROVIDER takes it as a one-sector provider");
	geli_mdstore_close(s);
	fd = open(path, O_WRONLY);
	tap_ok(fd >= 0 && ftruncate(fd, 300) == 0,
	    "store: the backup file cut to 300 bytes");
	close(fd);
	tap_ok(geli_mdstore_open(path, GELI_MDS_PROVIDER, &s) == 0 &&
	    geli_mdstore_read(s, &got) == -GELI_ETOOSMALL,
	    "store: 300 bytes as a provider is -GELI_ETOOSMALL");
	geli_mdstore_close(s);
	tap_ok(geli_mdstore_open(path, 0, &s) == 0 && geli_mdstore_is_backup(s) &&
	    geli_mdstore_read(s, &got) == -GELI_ESHORT,
	    "store: a 300-byte backup file is -GELI_ESHORT");
	geli_mdstore_close(s);
}

/* ---- setkey ---------------------------------------------------------------- */

static void
test_setkey(void)
{
	struct geli_metadata md, got;
	struct geli_mdstore *s;
	struct geli_provider *p = volume("setkey", &md), *ro;
	int32_t count;

	tap_ok(geli_setkey_check(&md, 2, -1, &count) == -GELI_EKEYNO &&
	    geli_setkey_check(&md, -1, -1, &count) == -GELI_EKEYNO,
	    "setkey: key numbers outside 0..1 are -GELI_EKEYNO");
	tap_ok(geli_setkey_check(&md, 0, -2, &count) == -GELI_EITERATIONS &&
	    geli_setkey_check(&md, 0, (int64_t)INT32_MAX + 1, &count) ==
	    -GELI_EITERATIONS, "setkey: counts outside -1..2^31-1 are "
	    "-GELI_EITERATIONS");
	tap_ok(geli_setkey_check(&md, 1, 5000, &count) == -GELI_EITERSLOT,
	    "setkey: a new count for the other slot is -GELI_EITERSLOT");
	tap_ok(geli_setkey_check(&md, 0, 5000, &count) == 0 && count == 5000,
	    "setkey: the only key's slot may change the count");
	tap_ok(geli_setkey_check(&md, 1, 1000, &count) == 0 && count == 1000 &&
	    geli_setkey_check(&md, 1, -1, &count) == 0 && count == 1000,
	    "setkey: the same count, or none, is kept");

	geli_mdstore_wrap(p, &s);
	tap_ok(geli_setkey(s, &md, 1, -1, mkey, ukey1) == 0 && md.keys == 3,
	    "setkey: slot 1 set");
	tap_ok(geli_provider_read_metadata(p, &got) == 0 && got.keys == 3 &&
	    slot_opens(&got, ukey1, 1) && slot_opens(&got, ukey0, 0),
	    "setkey: on disk, both slots open with their keys");
	tap_ok(geli_setkey(s, &md, 0, 7, mkey, ukey0) == -GELI_EITERMULTI,
	    "setkey: a new count with two keys set is -GELI_EITERMULTI");
	md.iterations = -1;
	tap_ok(geli_setkey_check(&md, 1, 77, &count) == 0 && count == 77,
	    "setkey: a volume without a count takes the new one");
	geli_mdstore_close(s);
	geli_provider_close(p);

	/* A failed write changes nothing. */
	geli_provider_open(file("setkey"), false, &ro);
	geli_mdstore_wrap(ro, &s);
	geli_provider_read_metadata(ro, &md);
	got = md;
	tap_ok(geli_setkey(s, &md, 0, -1, mkey, ukey1) == -EBADF &&
	    memcmp(&got, &md, sizeof(md)) == 0,
	    "setkey: a write error comes back, md unchanged");
	geli_mdstore_close(s);
	geli_provider_close(ro);
}

/* ---- delkey --------------------------------------------------------------- */

static void
test_delkey(void)
{
	struct geli_metadata md, got;
	struct geli_mdstore *s;
	struct geli_provider *p = volume("delkey", &md);

	geli_mdstore_wrap(p, &s);
	tap_ok(geli_delkey(s, &md, -1, 0) == -GELI_EKEYNOREQ,
	    "delkey: no key number is -GELI_EKEYNOREQ");
	tap_ok(geli_delkey(s, &md, 2, 0) == -GELI_EKEYNO,
	    "delkey: key number 2 is -GELI_EKEYNO");
	tap_ok(geli_delkey(s, &md, 1, 0) == -GELI_EKEYNOTSET,
	    "delkey: an unset slot is -GELI_EKEYNOTSET");
	tap_ok(geli_delkey(s, &md, 0, 0) == -GELI_ELASTKEY,
	    "delkey: the last key is -GELI_ELASTKEY");
	tap_ok(geli_provider_read_metadata(p, &got) == 0 && got.keys == 1 &&
	    slot_opens(&got, ukey0, 0), "delkey: refusals left the disk alone");
	tap_ok(geli_delkey(s, &md, 1, GELI_ADMIN_FORCE) == 0 && md.keys == 1,
	    "delkey: -f deletes an unset slot");
	geli_setkey(s, &md, 1, -1, mkey, ukey1);
	tap_ok(geli_delkey(s, &md, 1, 0) == 0 && md.keys == 1 &&
	    geli_provider_read_metadata(p, &got) == 0 && got.keys == 1 &&
	    !slot_opens(&got, ukey1, 1), "delkey: slot 1 destroyed, bit cleared");
	tap_ok(!all_zero(got.mkeys + GELI_MKEYLEN, GELI_MKEYLEN),
	    "delkey: the userland's way leaves random bytes");
	geli_setkey(s, &md, 1, -1, mkey, ukey1);
	tap_ok(geli_delkey(s, &md, 1, GELI_ADMIN_KERNEL) == 0 &&
	    geli_provider_read_metadata(p, &got) == 0 &&
	    all_zero(got.mkeys + GELI_MKEYLEN, GELI_MKEYLEN) &&
	    slot_opens(&got, ukey0, 0),
	    "delkey: the kernel's way ends with zeros, slot 0 intact");
	tap_ok(geli_delkey(s, &md, 0, GELI_ADMIN_FORCE) == 0 && md.keys == 0,
	    "delkey: -f deletes the last key");
	geli_setkey(s, &md, 0, -1, mkey, ukey0);
	tap_ok(geli_delkey(s, &md, -1, GELI_ADMIN_ALL) == 0 && md.keys == 1 &&
	    geli_provider_read_metadata(p, &got) == 0 && got.keys == 1 &&
	    !slot_opens(&got, ukey0, 0),
	    "delkey: -a destroys both slots and keeps md_keys");
	geli_mdstore_close(s);
	geli_provider_close(p);
}

/* ---- configure -------------------------------------------------------------- */

static void
test_configure(void)
{
	struct geli_metadata md, got;
	struct geli_mdstore *s;
	struct geli_provider *p = volume("configure", &md);

	geli_mdstore_wrap(p, &s);
	tap_ok(geli_configure(s, &md, GELI_FLAG_AUTH, 0) == -GELI_EFLAGS &&
	    geli_configure(s, &md, 0, GELI_FLAG_ONETIME) == -GELI_EFLAGS,
	    "configure: AUTH and ONETIME are -GELI_EFLAGS");
	tap_ok(geli_configure(s, &md, GELI_FLAG_BOOT | GELI_FLAG_NODELETE, 0) == 1 &&
	    geli_provider_read_metadata(p, &got) == 0 &&
	    got.flags == (GELI_FLAG_BOOT | GELI_FLAG_NODELETE),
	    "configure: flags set and written");
	tap_ok(geli_configure(s, &md, GELI_FLAG_BOOT, GELI_FLAG_AUTORESIZE) == 0,
	    "configure: nothing to change, nothing written");
	tap_ok(geli_configure(s, &md, 0, GELI_FLAG_NODELETE) == 1 &&
	    geli_provider_read_metadata(p, &got) == 0 &&
	    got.flags == GELI_FLAG_BOOT, "configure: a flag cleared");
	geli_mdstore_close(s);
	geli_provider_close(p);
}

/* ---- kill, clear ------------------------------------------------------------ */

static void
test_kill_clear(void)
{
	struct geli_metadata md;
	struct geli_provider *p = volume("kill", &md), *one;
	uint8_t sector[512];

	tap_ok(geli_kill(p, 0) == 0, "kill: done");
	last_sector(p, sector);
	tap_ok(!geli_metadata_has_magic(sector, sizeof(sector)) &&
	    !all_zero(sector, sizeof(sector)),
	    "kill: the userland's way leaves random data");
	geli_provider_write_metadata(p, &md);
	tap_ok(geli_kill(p, GELI_ADMIN_KERNEL) == 0, "kill: the kernel's way done");
	last_sector(p, sector);
	tap_ok(all_zero(sector, sizeof(sector)),
	    "kill: the kernel's way ends with zeros");
	geli_provider_write_metadata(p, &md);
	fail_size = 512;
	tap_ok(geli_kill(p, GELI_ADMIN_KERNEL) == -ENOMEM,
	    "kill: no memory for the sector is -ENOMEM, not success");
	last_sector(p, sector);
	tap_ok(geli_metadata_has_magic(sector, sizeof(sector)),
	    "kill: and the metadata is still there to kill again");
	make_file(file("one"), 512);
	geli_provider_open(path, true, &one);
	tap_ok(geli_kill(one, 0) == -GELI_ETOOSMALL,
	    "kill: a one-sector provider is -GELI_ETOOSMALL");
	tap_ok(geli_clear(one) == -GELI_ENOMAGIC,
	    "clear: no metadata is -GELI_ENOMAGIC");
	geli_provider_close(one);
	tap_ok(geli_kill(p, 0) == 0 && geli_clear(p) == -GELI_ENOMAGIC,
	    "clear: a killed provider has no metadata to clear");
	geli_provider_write_metadata(p, &md);
	tap_ok(geli_clear(p) == 0, "clear: done");
	last_sector(p, sector);
	tap_ok(all_zero(sector, sizeof(sector)), "clear: the sector is zeros");
	geli_provider_close(p);
}

/* ---- resize --------------------------------------------------------------- */

static void
test_resize(void)
{
	struct geli_metadata md, got;
	struct geli_provider *p = volume("resize", &md);
	enum geli_step step;
	uint8_t sector[512];
	const uint64_t old = 1 << 20, big = 2 << 20;
	int fd;

	tap_ok(geli_resize(p, old, 0, 0, &step) == 0 && step == GELI_STEP_NONE,
	    "resize: the same size is nothing to do");
	tap_ok(geli_resize(p, old + 512, 0, 0, &step) == -GELI_EOLDSIZE,
	    "resize: an old size past the provider is -GELI_EOLDSIZE");
	tap_ok(geli_resize(p, 100, 0, 0, &step) == -EINVAL &&
	    step == GELI_STEP_READ, "resize: an old size under a sector is a "
	    "read error (EINVAL)");
	tap_ok(geli_resize(p, old - 512, 0, 0, &step) == -GELI_ENOMAGIC &&
	    step == GELI_STEP_READ, "resize: no metadata at the old size");
	geli_provider_close(p);

	fd = open(file("resize"), O_RDWR);
	tap_ok(fd >= 0 && ftruncate(fd, (off_t)big) == 0, "resize: grown to 2 MiB");
	close(fd);
	geli_provider_open(path, true, &p);
	tap_ok(geli_resize(p, big, 0, 0, &step) == -GELI_ENOMAGIC,
	    "resize: the metadata is not at the new size yet");
	md.provsize = 12345;
	fd = geli_provider_fd(p);
	{
		/* A record whose provsize is wrong, at the old place. */
		struct geli_mdstore *s;
		struct geli_provider *q;
		make_file(file("odd"), old);
		geli_provider_open(path, true, &q);
		geli_mdstore_wrap(q, &s);
		geli_mdstore_write(s, &md);
		tap_ok(geli_resize(q, old, 0, 0, &step) == -GELI_ESIZE,
		    "resize: md_provsize not the old size is -GELI_ESIZE");
		geli_mdstore_close(s);
		geli_provider_close(q);
	}
	(void)fd;
	tap_ok(geli_resize(p, old, 0, 0, &step) == 0, "resize: 1 MiB -> 2 MiB");
	tap_ok(geli_provider_read_metadata(p, &got) == 0 && got.provsize == big,
	    "resize: the metadata is at the end, provsize 2 MiB");
	geli_provider_pread(p, sector, sizeof(sector), old - 512);
	tap_ok(!geli_metadata_has_magic(sector, sizeof(sector)) &&
	    !all_zero(sector, sizeof(sector)),
	    "resize: the old copy trashed with random data");
	geli_provider_close(p);

	/* The kernel's way (AUTORESIZE): the old copy zeroed. */
	fd = open(file("resize"), O_RDWR);
	tap_ok(fd >= 0 && ftruncate(fd, (off_t)(3 << 20)) == 0, "resize: 3 MiB");
	close(fd);
	geli_provider_open(path, true, &p);
	tap_ok(geli_resize(p, big, 3 << 20, GELI_ADMIN_KERNEL, &step) == 0 &&
	    geli_provider_read_metadata(p, &got) == 0 &&
	    got.provsize == 3 << 20, "resize: the kernel's way moves it too");
	geli_provider_pread(p, sector, sizeof(sector), big - 512);
	tap_ok(all_zero(sector, sizeof(sector)), "resize: old copy zeroed");
	geli_provider_close(p);
}

/* ---- backup, restore ----------------------------------------------------------- */

static void
test_backup_restore(void)
{
	struct geli_metadata md, got;
	struct geli_provider *p = volume("br", &md), *small;
	enum geli_step step;
	uint8_t sector[512], saved[512];
	char bak[4300];
	struct stat st;
	int fd;

	snprintf(bak, sizeof(bak), "%s/br.bak", dir);
	tap_ok(geli_backup(p, bak, &step) == 0, "backup: done");
	last_sector(p, sector);
	fd = open(bak, O_RDONLY);
	tap_ok(fd >= 0 && fstat(fd, &st) == 0 && st.st_size == 512 &&
	    (st.st_mode & 0777) == 0600 && read(fd, saved, 512) == 512 &&
	    memcmp(saved, sector, 512) == 0,
	    "backup: the last sector, byte for byte, mode 0600");
	close(fd);
	tap_ok(geli_backup(p, "/nonexistent/dir/x", &step) == -ENOENT &&
	    step == GELI_STEP_OPEN, "backup: a file that cannot be made: OPEN");
	geli_clear(p);
	tap_ok(geli_backup(p, bak, &step) == -GELI_ENOMAGIC &&
	    step == GELI_STEP_READ, "backup: no metadata: READ");

	/* restore what was saved */
	tap_ok(geli_restore(p, &md, 0) == 0 &&
	    geli_provider_read_metadata(p, &got) == 0 &&
	    slot_opens(&got, ukey0, 0), "restore: done");
	md.provsize = 4096;
	tap_ok(geli_restore(p, &md, 0) == -GELI_ESIZE,
	    "restore: another provider's size is -GELI_ESIZE");
	tap_ok(geli_restore(p, &md, GELI_ADMIN_FORCE) == 0 &&
	    md.provsize == 1 << 20 && geli_provider_read_metadata(p, &got) == 0 &&
	    got.provsize == 1 << 20, "restore: -f rewrites provsize");
	make_file(file("small"), 100);
	geli_provider_open(path, true, &small);
	md.provsize = 100;
	tap_ok(geli_restore(small, &md, 0) == -GELI_ETOOSMALL,
	    "restore: a provider under one sector is -GELI_ETOOSMALL");
	geli_provider_close(small);
	geli_provider_close(p);
}

static void
test_strerror(void)
{
	bool distinct = true;

	for (int a = GELI_ENOMAGIC; a < GELI_ELAST; a++) {
		if (geli_strerror(-a) == NULL || *geli_strerror(-a) == '\0')
			distinct = false;
		for (int b = GELI_ENOMAGIC; b < a; b++)
			if (strcmp(geli_strerror(a), geli_strerror(b)) == 0)
				distinct = false;
	}
	tap_ok(distinct, "strerror: every code has a text of its own");
	tap_ok(strcmp(geli_strerror(-EIO), strerror(EIO)) == 0,
	    "strerror: errno values read as strerror");
}

int
main(void)
{
	if (mkdtemp(dir) == NULL)
		return 1;
	for (size_t i = 0; i < sizeof(mkey); i++)
		mkey[i] = (uint8_t)(i * 5 + 1);
	test_store();
	test_setkey();
	test_delkey();
	test_configure();
	test_kill_clear();
	test_resize();
	test_backup_restore();
	test_strerror();
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		tap_ok(0, "temporary directory removed");
	return tap_done();
}
