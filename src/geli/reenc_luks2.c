/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * geli reencrypt -t luks2 (docs/reencrypt.md, "To LUKS2"): the LUKS2
 * header of a conversion to the kernel's own encryption, written through
 * libcryptsetup before the first sector is converted, its keyslots made of
 * the key material that opened the GELI provider (or new, -J/-K); checked
 * against the journal's volume key before GELI's record goes; and the
 * crypttab line at the end.  The conversion itself is libgeli's
 * (GELI_REENC_LUKS2).
 */
#include <fcntl.h>
#include <libcryptsetup.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bootconf.h"
#include "files.h"
#include "keyfiles.h"
#include "reenc.h"

/* What cryptsetup reads of a --key-file by default (8 MiB). */
#define LUKS2_KEYFILE_MAX (8u << 20)

int
reenc_target(struct opts *o)
{
	const char *t = opt_str(o, 't');

	if (*t == '\0' || strcmp(t, "geli") == 0)
		return 0;
	if (strcmp(t, "luks2") != 0) {
		req_error("Invalid target: %s (geli or luks2).", t);
		return -1;
	}
	if (opt_bool(o, 'E') || opt_bool(o, 'D') || o->given['e'] ||
	    o->given['l'] || o->given['a'] || o->given['s']) {
		req_error("Option -t luks2 takes none of -D, -E, -a, -e, -l "
		    "and -s: LUKS2's cipher is aes-xts-plain64 with a "
		    "512-bit key, its sectors GELI's.");
		return -1;
	}
	return 1;
}

/* -H names the header of a conversion to LUKS2, new or resumed. */
int
luks2_header_opt(struct opts *o, enum geli_reenc_kind kind)
{
	if (kind == GELI_REENC_LUKS2 || *opt_str(o, 'H') == '\0')
		return 0;
	req_error("Option -H needs -t luks2.");
	return -1;
}

static void
uuid_string(const uint8_t u[16], char s[37])
{
	snprintf(s, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
	    "%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3], u[4], u[5],
	    u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

int
luks2_header_path(struct opts *o, const uint8_t uuid[16], char *buf,
    size_t len)
{
	const char *h = opt_str(o, 'H');
	char dir[4200], u[37], *slash;
	int n;

	if (*h != '\0') {
		n = *h == '/' || getcwd(dir, sizeof(dir)) == NULL ?
		    snprintf(buf, len, "%s", h) :
		    snprintf(buf, len, "%s/%s", dir, h);
		return n < 0 || (size_t)n >= len ? -1 : 0;
	}
	/* Beside the journals: STATE/reencrypt/X.journal, STATE/luks2/. */
	if (reenc_journal_path(uuid, false, dir, sizeof(dir)) != 0 ||
	    (slash = strrchr(dir, '/')) == NULL)
		goto fail;
	*slash = '\0';
	if ((slash = strrchr(dir, '/')) == NULL)
		goto fail;
	uuid_string(uuid, u);
	n = snprintf(slash, sizeof(dir) - (size_t)(slash - dir), "/luks2");
	if (n < 0 || make_dirs(dir, 0755) != 0)
		goto fail;
	n = snprintf(buf, len, "%s/%s.header", dir, u);
	if (n >= 0 && (size_t)n < len)
		return 0;
fail:
	req_error("Cannot make a directory for the LUKS2 header: use -H.");
	return -1;
}

/* ---- Key material ---------------------------------------------------------- */

void
luks2_keys_free(struct luks2_keys *k)
{
	if (k->other != NULL) {
		luks2_keys_free(k->other);
		free(k->other);
	}
	geli_secure_free(k->pass);
	geli_secure_free(k->keyfile);
	memset(k, 0, sizeof(*k));
}

/* -k's (or -K's) files joined, as GELI hashes them. */
static int
join_keyfiles(struct opts *o, char opt, struct luks2_keys *k)
{
	const char *const *files;
	int n = opt_multi(o, opt, &files);
	char msg[4200];

	if (n == 0)
		return 0;
	if (keyfiles_join(files, (size_t)n, LUKS2_KEYFILE_MAX, &k->keyfile,
	    &k->keylen, msg, sizeof(msg)) != 0) {
		req_error("%s", msg);
		return -1;
	}
	k->nkeyfiles = (unsigned)n;
	return 0;
}

int
luks2_keys_new(struct opts *o, struct luks2_keys *k)
{
	const char *const *files;
	int n = opt_multi(o, 'J', &files);
	char msg[4200];

	memset(k, 0, sizeof(*k));
	if (n > 0) {
		if ((k->pass = geli_secure_alloc(GELI_MAX_PASSLEN + 1)) == NULL) {
			req_error("Cannot allocate memory.");
			return -1;
		}
		if (passfiles_read((char *)k->pass, files, (size_t)n, msg,
		    sizeof(msg)) != 0) {
			req_error("%s", msg);
			luks2_keys_free(k);
			return -1;
		}
		k->passlen = strlen((char *)k->pass);
	}
	if (join_keyfiles(o, 'K', k) != 0) {
		luks2_keys_free(k);
		return -1;
	}
	if (k->pass == NULL && k->keyfile == NULL) {
		req_error("Option -t luks2 takes new key material from -J or "
		    "-K (a typed passphrase: use a passfile, -J -).");
		return -1;
	}
	return 0;
}

/*
 * The other GELI key slot than the one that opened it (slot): where -x
 * (passfiles) or -X (keyfiles) give its key material, checked against that
 * slot (as attach -n would) and kept in k->other for a keyslot of its own;
 * where that slot is set and neither is given, said.  0, or -1 with the
 * request error.
 */
static int
other_slot(struct opts *o, struct geli_provider *p,
    const struct geli_metadata *md, const char *prov, int slot,
    struct luks2_keys *k)
{
	int other = slot == 0 ? 1 : 0, rc = -1;
	bool given = o->given['x'] || o->given['X'];
	struct opts *o2 = NULL;
	uint8_t *mk = NULL;

	if ((md->keys & (1u << other)) == 0) {
		if (!given)
			return 0;
		req_error("Key slot %d of %s is not set: -x and -X give the "
		    "key of its other slot.", other, prov);
		return -1;
	}
	if (!given) {
		warnmsg("Key slot %d of %s is not carried to LUKS2: give its "
		    "key with -x or -X, or add it later with cryptsetup "
		    "luksAddKey.", other, prov);
		return 0;
	}
	if (o->given['x'] && o->given['X']) {
		req_error("Key slot %d of %s would open with a keyfile and a "
		    "passphrase together, which a LUKS2 keyslot cannot take.",
		    other, prov);
		return -1;
	}
	o2 = malloc(sizeof(*o2));
	mk = geli_secure_alloc(GELI_MKEY_DATALEN);
	k->other = calloc(1, sizeof(*k->other));
	if (o2 == NULL || mk == NULL || k->other == NULL) {
		req_error("Cannot allocate memory.");
		goto out;
	}
	/* -x and -X in -j's and -k's places, -n the other slot. */
	*o2 = *o;
	o2->given['j'] = o->given['x'];
	o2->nmulti['j'] = o->nmulti['x'];
	memcpy(o2->multi['j'], o->multi['x'], sizeof(o->multi['x']));
	o2->given['k'] = o->given['X'];
	o2->nmulti['k'] = o->nmulti['X'];
	memcpy(o2->multi['k'], o->multi['X'], sizeof(o->multi['X']));
	o2->given['p'] = o2->flag['p'] = !o->given['x'];
	o2->given['n'] = true;
	o2->num['n'] = other;
	k->other_slot = other;
	if (reenc_unlock(o2, false, p, md, prov, mk, NULL, NULL, k->other) ==
	    0 && join_keyfiles(o2, 'k', k->other) == 0)
		rc = 0;
out:
	geli_secure_free(mk);
	free(o2);
	return rc;
}

int
luks2_unlock(struct opts *o, struct geli_provider *p,
    const struct geli_metadata *md, const char *prov, uint8_t *mk, int *slot,
    struct luks2_keys *k)
{
	memset(k, 0, sizeof(*k));
	if (reenc_new_keys_given(o)) {
		if (o->given['x'] || o->given['X']) {
			req_error("Options -x and -X carry a key slot's key; "
			    "with -J or -K nothing is carried.");
			return -1;
		}
		return reenc_unlock(o, false, p, md, prov, mk, slot, NULL,
		    NULL) != 0 || luks2_keys_new(o, k) != 0 ? -1 : 0;
	}
	if (o->given['k'] && !opt_bool(o, 'p')) {
		req_error("Provider %s opens with a keyfile and a passphrase "
		    "together, which a LUKS2 keyslot cannot take: give new key "
		    "material with -J or -K.", prov);
		return -1;
	}
	/* What opened it, kept for the keyslot. */
	if (reenc_unlock(o, false, p, md, prov, mk, slot, NULL, k) != 0 ||
	    join_keyfiles(o, 'k', k) != 0 ||
	    other_slot(o, p, md, prov, *slot, k) != 0) {
		luks2_keys_free(k);
		return -1;
	}
	return 0;
}

/* ---- The header --------------------------------------------------------------- */

/* libcryptsetup's own messages, for the request error. */
static char cs_msg[512];

static void
cs_log(int level, const char *msg, void *usrptr)
{
	size_t n;

	(void)usrptr;
	if (level != CRYPT_LOG_ERROR || cs_msg[0] != '\0')
		return;
	snprintf(cs_msg, sizeof(cs_msg), "%s", msg);
	n = strlen(cs_msg);
	while (n > 0 && (cs_msg[n - 1] == '\n' || cs_msg[n - 1] == '.'))
		cs_msg[--n] = '\0';
}

static int
cs_failed(const char *what, const char *file, int error)
{
	req_error("Cannot %s %s: %s.", what, file, cs_msg[0] != '\0' ? cs_msg :
	    strerror(-error));
	return -1;
}

/* The LUKS2 header in file hdr, loaded into *cd (NULL on an error); 0 or
 * libcryptsetup's -errno, its message in cs_msg. */
static int
cs_load(const char *hdr, struct crypt_device **cd)
{
	int error;

	cs_msg[0] = '\0';
	crypt_set_log_callback(NULL, cs_log, NULL);
	*cd = NULL;
	error = crypt_init(cd, hdr);
	if (error == 0)
		error = crypt_load(*cd, CRYPT_LUKS2, NULL);
	if (error != 0) {
		crypt_free(*cd);
		*cd = NULL;
	}
	return error;
}

/* The keyslots' KDF: argon2id as cryptsetup's defaults, or PBKDF2 of -i
 * iterations. */
static int
set_pbkdf(struct crypt_device *cd, struct opts *o)
{
	struct crypt_pbkdf_type pbkdf = { .type = CRYPT_KDF_PBKDF2,
	    .hash = "sha256", .flags = CRYPT_PBKDF_NO_BENCHMARK };
	const struct crypt_pbkdf_type *def;

	if (opt_num(o, 'i') < 0) {
		def = crypt_get_pbkdf_default(CRYPT_LUKS2);
		return def == NULL ? -EINVAL : crypt_set_pbkdf_type(cd, def);
	}
	if (opt_num(o, 'i') < 1000) {
		req_error("LUKS2 takes PBKDF2 of 1000 iterations or more (-i).");
		return 1;
	}
	pbkdf.iterations = (uint32_t)opt_num(o, 'i');
	return crypt_set_pbkdf_type(cd, &pbkdf);
}

int
luks2_header_write(struct opts *o, const char *hdr, const char *data,
    uint64_t offset, uint32_t S, const uint8_t uuid[16], const uint8_t *vk,
    const struct luks2_keys *k)
{
	struct crypt_params_luks2 params = { .sector_size = S,
	    .data_device = data };
	struct crypt_device *cd = NULL;
	char u[37];
	int fd, error;

	cs_msg[0] = '\0';
	crypt_set_log_callback(NULL, cs_log, NULL);
	fd = open(hdr, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
	if (fd < 0) {
		req_error(errno == EEXIST ? "LUKS2 header %s exists: remove "
		    "it, or name another with -H." : "Cannot create the LUKS2 "
		    "header %s: %s.", hdr, strerror(errno));
		return -1;
	}
	/* libcryptsetup opens only what exists, of a sector at least. */
	error = posix_fallocate(fd, 0, 4096);
	close(fd);
	if (error != 0) {
		req_error("Cannot create the LUKS2 header %s: %s.", hdr,
		    strerror(error));
		goto fail;
	}
	uuid_string(uuid, u);
	if ((error = crypt_init(&cd, hdr)) < 0) {
		cs_failed("open", hdr, error);
		goto fail;
	}
	crypt_set_log_callback(cd, cs_log, NULL);
	if ((error = set_pbkdf(cd, o)) != 0) {
		if (error < 0)
			cs_failed("set the key derivation of", hdr, error);
		goto fail;
	}
	/* Without an offset, a detached header's data is at byte 0. */
	if (offset != 0 && (error = crypt_set_data_offset(cd, offset / 512)) <
	    0) {
		cs_failed("set the data offset of", hdr, error);
		goto fail;
	}
	if ((error = crypt_format(cd, CRYPT_LUKS2, "aes", "xts-plain64", u,
	    (const char *)vk, LUKS2_VKLEN, &params)) < 0) {
		cs_failed("write the LUKS2 header", hdr, error);
		goto fail;
	}
	/* A keyslot for each material there is, the other slot's too. */
	for (int i = 0; i < 4; i++) {
		const struct luks2_keys *kk = i < 2 ? k : k->other;
		const uint8_t *m;
		size_t n;

		if (kk == NULL)
			break;
		m = i % 2 == 0 ? kk->pass : kk->keyfile;
		n = i % 2 == 0 ? kk->passlen : kk->keylen;
		if (m != NULL && (error = crypt_keyslot_add_by_volume_key(cd,
		    CRYPT_ANY_SLOT, (const char *)vk, LUKS2_VKLEN,
		    (const char *)m, n)) < 0) {
			cs_failed("add a keyslot to", hdr, error);
			goto fail;
		}
	}
	crypt_free(cd);
	cd = NULL;
	if ((error = sync_file_and_dir(hdr)) != 0) {
		req_error("Cannot sync the LUKS2 header %s: %s.", hdr,
		    strerror(-error));
		goto fail;
	}
	return 0;
fail:
	crypt_free(cd);
	unlink(hdr);
	return -1;
}

int
luks2_header_backup(struct opts *o, const char *prov, const char *hdr)
{
	struct crypt_device *cd = NULL;
	char *file = backup_name(opt_str(o, 'B'), prov, 1), *def = NULL;
	size_t n = file != NULL ? strlen(file) : 0;
	int error;

	/* The default name is init's with .luks2 for .eli. */
	if (file != NULL && *opt_str(o, 'B') == '\0' && n > 4 &&
	    strcmp(file + n - 4, ".eli") == 0) {
		if (asprintf(&def, "%.*s.luks2", (int)(n - 4), file) < 0)
			def = NULL;
		free(file);
		file = def;
	}
	if (file == NULL) {
		req_error("Cannot allocate memory.");
		return -1;
	}
	if (strcmp(file, "none") == 0) {
		free(file);
		return 0;
	}
	/* A backup of the same name is replaced, as init's is. */
	(void)unlink(file);
	error = cs_load(hdr, &cd);
	if (error == 0)
		error = crypt_header_backup(cd, CRYPT_LUKS2, file);
	crypt_free(cd);
	if (error != 0)
		cs_failed("back up the LUKS2 header to", file, error);
	else
		printf("\nLUKS2 header backup for provider %s can be found in "
		    "%s\n", prov, file);
	free(file);
	return error != 0 ? -1 : 0;
}

int
luks2_header_check(const char *prov, const char *hdr, const uint8_t *vk)
{
	struct crypt_device *cd = NULL;
	int error;

	error = cs_load(hdr, &cd);
	if (error == 0)
		error = crypt_volume_key_verify(cd, (const char *)vk, LUKS2_VKLEN);
	crypt_free(cd);
	if (error == 0)
		return 0;
	req_error("The LUKS2 header %s is not the one of the conversion of "
	    "%s%s%s: GELI's record stays. Name the header with -H.", hdr, prov,
	    error == -EPERM ? "" : ": ", error == -EPERM ? "" :
	    cs_msg[0] != '\0' ? cs_msg : strerror(-error));
	return -1;
}

int
luks2_header_info(const char *hdr, uint8_t uuid[16], uint64_t *offset)
{
	struct crypt_device *cd = NULL;
	const char *u;
	int error;

	error = cs_load(hdr, &cd);
	if (error == 0) {
		*offset = crypt_get_data_offset(cd) * 512;
		u = crypt_get_uuid(cd);
		if (u == NULL || sscanf(u, "%2hhx%2hhx%2hhx%2hhx-%2hhx%2hhx-"
		    "%2hhx%2hhx-%2hhx%2hhx-%2hhx%2hhx%2hhx%2hhx%2hhx%2hhx",
		    &uuid[0], &uuid[1], &uuid[2], &uuid[3], &uuid[4], &uuid[5],
		    &uuid[6], &uuid[7], &uuid[8], &uuid[9], &uuid[10], &uuid[11],
		    &uuid[12], &uuid[13], &uuid[14], &uuid[15]) != 16)
			error = -EINVAL;
	}
	crypt_free(cd);
	return error;
}

void
luks2_end_keys(struct luks2_end *end, const struct luks2_keys *k)
{
	end->known = true;
	end->pass = k->pass != NULL;
	end->keyfile = k->keyfile != NULL;
	end->nkeyfiles = k->nkeyfiles;
	end->other = k->other != NULL;
	end->other_slot = k->other_slot;
}

int
luks2_end_ready(const char *prov, const struct luks2_end *end,
    const uint8_t *vk)
{
	if (luks2_header_check(prov, end->hdr, vk) != 0)
		return -1;
	return end->ondisk ? luks2_place_copy(&end->pl, end->hdr) : 0;
}

/* GELI's record gone, geli-boot must no longer attach it at boot. */
static void
boot_forget(const char *prov, const char *path)
{
	const char *conf = bootconf_path();
	char what[256];
	int rc = bootconf_forget(conf, path, what, sizeof(what));

	if (rc == 1)
		printf("%s is out of %s (%s): the next boot opens it through "
		    "/etc/crypttab.\n", prov, conf, what);
	else if (rc < 0)
		fprintf(stderr, "geli: Cannot take %s out of %s: %s. Take it "
		    "out by hand, or the next boot fails to attach it.\n", prov,
		    conf, what);
}

void
luks2_finish(struct opts *o, const char *prov, struct luks2_end *end)
{
	const struct luks2_place *pl = &end->pl;
	const char *const *files;
	char name[256], path[4096], real[4096];
	const char *key = "none", *pp = prov_path(prov, path, sizeof(path));

	attach_name_of(prov, name, sizeof(name));
	/* Its daemon holds the partition, whose start the kernel cannot
	 * move meanwhile: the table's edit after the detach. */
	if (end->attached && end->ondisk) {
		printf("%s is a LUKS2 volume now, its header on the disk before "
		    "partition %u of %s, which begins there once %s.eli is "
		    "detached: detach it, then run 'geli reencrypt -t luks2 "
		    "%s'.\n", prov, pl->num, pl->disk, name, prov);
		boot_forget(prov, pp);
		return;
	}
	/* The header file was the conversion's; its backup stays. */
	if (end->ondisk) {
		if (luks2_place_move(&end->pl) != 0)
			return;
		(void)unlink(end->hdr);
	}
	if (realpath(pp, real) == NULL)
		snprintf(real, sizeof(real), "%s", pp);
	/* One keyfile is what crypttab can name; a joined one is not a file. */
	if (end->known && end->keyfile && !end->pass &&
	    opt_multi(o, reenc_new_keys_given(o) ? 'K' : 'k', &files) == 1)
		key = files[0];
	if (end->ondisk && pl->swapnum != 0)
		printf("%s is a LUKS2 volume now, its header on the disk: "
		    "partition %u of %s begins %u MiB earlier, over the end of "
		    "the swap partition %s.\n", prov, pl->num, pl->disk,
		    LUKS2_DISK_HDR >> 20, pl->swap);
	else if (end->ondisk)
		printf("%s is a LUKS2 volume now, its header on the disk: "
		    "partition %u of %s begins %u MiB earlier.\n", prov,
		    pl->num, pl->disk, LUKS2_DISK_HDR >> 20);
	else
		printf("%s is a LUKS2 volume now, its header %s.\n", prov,
		    end->hdr);
	if (end->nkeyfiles > 1)
		printf("Its keyfile keyslot takes the %u keyfiles joined, in the "
		    "order given (cat them into one file).\n", end->nkeyfiles);
	if (end->pass && end->keyfile)
		printf("A passphrase keyslot and a keyfile keyslot: either "
		    "opens it alone.\n");
	if (end->known && end->other)
		printf("The key of GELI's key slot %d opens it too, in a "
		    "keyslot of its own.\n", end->other_slot);
	if (end->attached)
		printf("%s.eli serves it until it is detached.\n", name);
	/* Mapped as NAME.eli: /dev/NAME.eli leads to it (61-geli-dm.rules)
	 * as it led to the attached provider. */
	if (end->ondisk) {
		printf("Open it with: cryptsetup open %s %s.eli\n", real, name);
		printf("/etc/crypttab: %s.eli %s %s luks\n", name, real, key);
	} else {
		printf("Open it with: cryptsetup open --header %s %s %s.eli\n",
		    end->hdr, real, name);
		printf("/etc/crypttab: %s.eli %s %s luks,header=%s\n", name,
		    real, key, end->hdr);
	}
	boot_forget(prov, pp);
}
