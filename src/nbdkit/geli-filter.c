/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * nbdkit-geli-filter: a GELI provider served decrypted.  The plugin below
 * holds the provider (metadata in its last sector); clients see the .eli.
 *
 * One volume for the whole server, opened in .after_fork through a shared
 * context into the plugin (nbdkit_next_context_open): the keys are derived
 * once, not per connection, every connection shares the volume's range
 * locks (two clients writing parts of one GELI sector cannot lose either
 * part) and its worker pool, and a flush on one connection flushes what all
 * of them wrote (multi-conn).  The .open of a connection opens nothing
 * below: every call goes to the shared context.
 */
#define NBDKIT_API_VERSION 2
#include <nbdkit-filter.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "geli.h"
#include "msg.h"

/* ---- Parameters (.config): nothing but names and counts before the fork - */

static char *password;		/* secure memory; NULL: none given */
static char **keyfiles;
static size_t nkeyfiles;
static int keyno = -1;		/* -1: every slot in turn */
static bool readonly;
static unsigned workers = 1;	/* the volume's threads, the caller included */
static uint32_t psize;		/* the provider's sector size; 0: ask */
static char *provname;		/* the plugin's file=, for messages */
static int thread_model = NBDKIT_THREAD_MODEL_PARALLEL;

/* ---- The served volume (.after_fork to .cleanup) ----------------------- */

static nbdkit_next *below;	/* the shared context into the plugin */
static struct geli_volume *vol;
static uint8_t *zeros;		/* ZERO_CHUNK bytes of zeros for .zero */
/* A plugin that is not fully parallel gets one call at a time from us:
 * the shared context is one handle, whatever the connections. */
static bool serial;
static pthread_mutex_t serial_lock = PTHREAD_MUTEX_INITIALIZER;

#define ZERO_CHUNK	(1u << 20)

static const char *
prov(void)
{
	return provname != NULL ? provname : "the export";
}

/* The message of the geli command for code (negative) at op. */
static void
geli_msg(enum msg_op op, int code)
{
	struct msg_args a = { .prov = prov(), .keyno = keyno };
	char buf[512];

	nbdkit_error("%s", msg_format(buf, sizeof(buf), op, GELI_STEP_NONE,
	    code, false, &a));
}

static int
set_password(const char *value)
{
	char *pw = NULL;
	size_t len;

	if (password != NULL) {
		nbdkit_error("password given twice");
		return -1;
	}
	if (nbdkit_read_password(value, &pw) == -1)
		return -1;
	len = strlen(pw);
	/* nbdkit may fork its server after .config: the copy must survive. */
	password = geli_secure_alloc_inherited(len + 1);
	if (password != NULL)
		memcpy(password, pw, len + 1);
	geli_wipe(pw, len);
	free(pw);
	if (password == NULL) {
		nbdkit_error("Cannot allocate memory.");
		return -1;
	}
	return 0;
}

static int
geli_config(nbdkit_next_config *next, nbdkit_backend *nxdata,
    const char *key, const char *value)
{
	int64_t n;
	int r;

	if (strcmp(key, "password") == 0)
		return set_password(value);
	if (strcmp(key, "keyfile") == 0) {
		char **k = realloc(keyfiles, (nkeyfiles + 1) * sizeof(*k));

		if (k == NULL || (k[nkeyfiles] = strdup(value)) == NULL) {
			if (k != NULL)
				keyfiles = k;
			nbdkit_error("Cannot allocate memory.");
			return -1;
		}
		keyfiles = k;
		nkeyfiles++;
		return 0;
	}
	if (strcmp(key, "keyno") == 0) {
		if (nbdkit_parse_int("keyno", value, &r) == -1)
			return -1;
		if (r < 0 || r >= GELI_MAXMKEYS) {
			nbdkit_error("Invalid 'keyno' argument.");
			return -1;
		}
		keyno = r;
		return 0;
	}
	if (strcmp(key, "readonly") == 0) {
		if ((r = nbdkit_parse_bool(value)) == -1)
			return -1;
		readonly = r;
		return 0;
	}
	if (strcmp(key, "workers") == 0) {
		unsigned u;

		if (nbdkit_parse_unsigned("workers", value, &u) == -1)
			return -1;
		if (u < 1 || u > 64) {
			nbdkit_error("workers must be 1 to 64");
			return -1;
		}
		workers = u;
		return 0;
	}
	if (strcmp(key, "psize") == 0) {
		n = nbdkit_parse_size(value);
		if (n == -1)
			return -1;
		if (n < 512 || n > 65536 || (n & (n - 1)) != 0) {
			nbdkit_error("psize must be a power of two from 512 "
			    "to 65536");
			return -1;
		}
		psize = (uint32_t)n;
		return 0;
	}
	/* The plugin's file (the file plugin), named as given in messages,
	 * as geli names a provider. */
	if (strcmp(key, "file") == 0) {
		free(provname);
		provname = strdup(value);
	}
	return next(nxdata, key, value);
}

static int
geli_get_ready(int model)
{
	thread_model = model;
	return 0;
}

/* ---- The provider below, as libgeli sees it ---------------------------- */

static void
below_enter(void)
{
	if (serial)
		pthread_mutex_lock(&serial_lock);
}

static void
below_leave(void)
{
	if (serial)
		pthread_mutex_unlock(&serial_lock);
}

/* One NBD request carries at most 4 GiB; the volume asks for less. */
static int
below_io(void *opaque, void *buf, size_t len, uint64_t off, bool write)
{
	nbdkit_next *n = opaque;
	int err = 0, r;

	if (len > UINT32_MAX)
		return -EINVAL;
	below_enter();
	r = write ? n->pwrite(n, buf, (uint32_t)len, off, 0, &err) :
	    n->pread(n, buf, (uint32_t)len, off, 0, &err);
	below_leave();
	return r == -1 ? -(err != 0 ? err : EIO) : 0;
}

static int
below_pread(void *opaque, void *buf, size_t len, uint64_t off)
{
	return below_io(opaque, buf, len, off, false);
}

static int
below_pwrite(void *opaque, const void *buf, size_t len, uint64_t off)
{
	return below_io(opaque, (void *)(uintptr_t)buf, len, off, true);
}

static int
below_flush(void *opaque)
{
	nbdkit_next *n = opaque;
	int err = 0, r;

	if (n->can_flush(n) != 1)
		return 0;
	below_enter();
	r = n->flush(n, 0, &err);
	below_leave();
	return r == -1 ? -(err != 0 ? err : EIO) : 0;
}

static int
below_discard(void *opaque, uint64_t off, uint64_t len)
{
	nbdkit_next *n = opaque;
	int err = 0, r;

	if (n->can_trim(n) != 1)
		return -EOPNOTSUPP;
	if (len > UINT32_MAX)
		return -EINVAL;
	below_enter();
	r = n->trim(n, (uint32_t)len, off, 0, &err);
	below_leave();
	return r == -1 ? -(err != 0 ? err : EIO) : 0;
}

static const struct geli_provider_ops below_rw = {
	.pread = below_pread, .pwrite = below_pwrite, .flush = below_flush,
	.discard = below_discard,
};
static const struct geli_provider_ops below_ro = {
	.pread = below_pread, .flush = below_flush,
};

/* ---- Keys --------------------------------------------------------------- */

/* The keyfiles' bytes into ctx, read in locked memory. */
static int
read_keyfiles(struct geli_ukey_ctx *ctx)
{
	int error = 0;

	for (size_t i = 0; i < nkeyfiles && error == 0; i++) {
		int fd = open(keyfiles[i], O_RDONLY | O_CLOEXEC);

		error = fd < 0 ? -errno : geli_ukey_update_fd(ctx, fd);
		if (fd >= 0)
			close(fd);
		if (error != 0)
			nbdkit_error("Cannot read keyfile %s: %s.",
			    keyfiles[i], strerror(-error));
	}
	return error == 0 ? 0 : -1;
}

/*
 * The Master Key of md into mkey, from the keyfiles and the passphrase:
 * a volume made without a passphrase (iterations -1) takes none.
 */
static int
master_key(const struct geli_metadata *md, uint8_t *mkey)
{
	struct geli_ukey_ctx *ctx = NULL;
	uint8_t *ukey = geli_secure_alloc(GELI_USERKEYLEN);
	bool pass = md->iterations != -1;
	int error, used;

	if (ukey == NULL || geli_ukey_new(&ctx) != 0) {
		nbdkit_error("Cannot allocate memory.");
		error = -1;
		goto out;
	}
	if (pass && password == NULL) {
		nbdkit_error("%s needs a passphrase: give password=...",
		    prov());
		error = -1;
		goto out;
	}
	if (!pass && nkeyfiles == 0) {
		nbdkit_error("%s has no passphrase: give keyfile=...", prov());
		error = -1;
		goto out;
	}
	if ((error = read_keyfiles(ctx)) != 0)
		goto out;
	error = geli_ukey_final(ctx, md, pass ? password : NULL,
	    pass ? strlen(password) : 0, ukey);
	if (error != 0) {
		nbdkit_error("Cannot generate key: %s.", strerror(-error));
		error = -1;
		goto out;
	}
	error = geli_mkey_decrypt(md, ukey, keyno, mkey, &used);
	if (error == -GELI_EWRONGKEY) {
		geli_msg(OP_ATTACH, error);
		error = -1;
	} else if (error != 0) {
		nbdkit_error("Cannot decrypt Master Key for %s (error=%d).",
		    prov(), -error);
		error = -1;
	} else {
		nbdkit_debug("geli: %s opened with key %d", prov(), used);
	}
out:
	geli_ukey_free(ctx);
	geli_secure_free(ukey);
	return error;
}

/* ---- The volume --------------------------------------------------------- */

static uint32_t
provider_sectorsize(void)
{
	uint32_t min = 0, pref = 0, max = 0;

	if (psize != 0)
		return psize;
	/* A plugin that names a minimum block size has sectors of it. */
	if (below->block_size(below, &min, &pref, &max) == 0 &&
	    min >= 512 && min <= 65536 && (min & (min - 1)) == 0)
		return min;
	return 512;
}

static int
open_volume(void)
{
	struct geli_provider *p = NULL;
	struct geli_metadata md;
	uint8_t *mkey = NULL;
	int64_t size;
	bool rw;
	int error = -1, r;

	size = below->get_size(below);
	if (size == -1)
		return -1;
	rw = !readonly && below->can_write(below) == 1;
	r = geli_provider_open_ops(rw ? &below_rw : &below_ro, below,
	    (uint64_t)size, provider_sectorsize(), &p);
	if (r != 0) {
		nbdkit_error("Cannot open %s: %s.", prov(), strerror(-r));
		return -1;
	}
	r = geli_provider_read_metadata(p, &md);
	if (r != 0) {
		struct msg_args a = { .prov = prov(), .version = md.version };
		char buf[512];

		nbdkit_error("%s", msg_format(buf, sizeof(buf), OP_READ,
		    GELI_STEP_NONE, r, false, &a));
		goto out;
	}
	/* attach's checks, before any work with keys (§9.2, §8.2). */
	r = md.provsize != (uint64_t)size ? -GELI_ESIZE :
	    md.keys == 0 ? -GELI_ENOKEYS :
	    geli_metadata_check(&md, (uint64_t)size,
	    geli_provider_sectorsize(p));
	if (r != 0) {
		geli_msg(OP_ATTACH, r);
		goto out;
	}
	mkey = geli_secure_alloc(GELI_MKEY_DATALEN);
	if (mkey == NULL) {
		nbdkit_error("Cannot allocate memory.");
		goto out;
	}
	if (master_key(&md, mkey) != 0)
		goto out;
	r = geli_volume_open(p, &md, mkey, rw ? 0 : GELI_VOLUME_READONLY,
	    serial ? 1 : workers, &vol);
	p = NULL;	/* the volume's now, or closed */
	if (r != 0) {
		nbdkit_error("Cannot attach %s: %s.", prov(), strerror(-r));
		goto out;
	}
	nbdkit_debug("geli: %s: %s %u bits, sector size %u, %" PRIu64
	    " bytes%s, %s", prov(), geli_algo_name(md.ealgo), md.keylen,
	    md.sectorsize, geli_volume_size(vol), rw ? "" : ", read-only",
	    geli_crypto_version());
	error = 0;
out:
	geli_secure_free(mkey);
	geli_wipe(&md, sizeof(md));
	geli_provider_close(p);
	return error;
}

/*
 * After nbdkit has forked: the threads of the volume's pool must be made
 * here, and so must the locked pages (locks do not survive a fork).
 */
static int
geli_after_fork(nbdkit_backend *backend)
{
	int error;

	if (geli_protect_dumps() != 0)
		nbdkit_debug("geli: core dumps could not be disabled: %m");
	if (password != NULL) {
		size_t len = strlen(password);
		char *p = geli_secure_alloc(len + 1);

		if (p == NULL) {
			nbdkit_error("Cannot allocate memory.");
			return -1;
		}
		memcpy(p, password, len + 1);
		geli_secure_free(password);
		password = p;
	}
	serial = thread_model != NBDKIT_THREAD_MODEL_PARALLEL;
	zeros = calloc(1, ZERO_CHUNK);
	below = nbdkit_next_context_open(backend, readonly, "", 1);
	if (zeros == NULL || below == NULL) {
		if (zeros == NULL)
			nbdkit_error("Cannot allocate memory.");
		return -1;
	}
	if (below->prepare(below) == -1)
		return -1;
	error = open_volume();
	/* The keys are in the volume: the passphrase is needed no more. */
	geli_secure_free(password);
	password = NULL;
	return error;
}

static void
geli_cleanup(nbdkit_backend *backend)
{
	(void)backend;
	geli_volume_close(vol);
	vol = NULL;
	if (below != NULL) {
		(void)below->finalize(below);
		nbdkit_next_context_close(below);
		below = NULL;
	}
	free(zeros);
	zeros = NULL;
}

static void
geli_unload(void)
{
	geli_secure_free(password);
	password = NULL;
	for (size_t i = 0; i < nkeyfiles; i++)
		free(keyfiles[i]);
	free(keyfiles);
	free(provname);
}

static int
geli_thread_model(void)
{
	return NBDKIT_THREAD_MODEL_PARALLEL;
}

/* ---- Connections: everything goes to the shared volume ----------------- */

static int handle_marker;

static void *
geli_open(nbdkit_next_open *next, nbdkit_context *context, int ro,
    const char *exportname, int is_tls)
{
	(void)next;
	(void)context;
	(void)ro;
	(void)exportname;
	(void)is_tls;
	if (vol == NULL) {
		nbdkit_error("%s is not open", prov());
		return NULL;
	}
	return &handle_marker;
}

static int64_t
geli_get_size(nbdkit_next *next, void *handle)
{
	(void)next;
	(void)handle;
	return (int64_t)geli_volume_size(vol);
}

static const char *
geli_export_description(nbdkit_next *next, void *handle)
{
	(void)next;
	(void)handle;
	return NULL;
}

static int
geli_block_size(nbdkit_next *next, void *handle, uint32_t *minimum,
    uint32_t *preferred, uint32_t *maximum)
{
	(void)next;
	(void)handle;
	/* Any offset works (partial sectors are read, merged and written
	 * back); whole GELI sectors save that. */
	*minimum = 1;
	*preferred = geli_volume_sectorsize(vol);
	*maximum = 0xffffffff;
	return 0;
}

static int
geli_can_write(nbdkit_next *next, void *handle)
{
	(void)next;
	(void)handle;
	return !readonly && below->can_write(below) == 1;
}

static int
geli_can_flush(nbdkit_next *next, void *handle)
{
	(void)next;
	(void)handle;
	return below->can_flush(below);
}

static int
geli_is_rotational(nbdkit_next *next, void *handle)
{
	(void)next;
	(void)handle;
	return below->is_rotational(below);
}

static int
geli_can_trim(nbdkit_next *next, void *handle)
{
	(void)next;
	(void)handle;
	return geli_can_write(NULL, NULL) == 1 &&
	    geli_volume_can_discard(vol) && below->can_trim(below) == 1;
}

static int
geli_can_zero(nbdkit_next *next, void *handle)
{
	(void)next;
	(void)handle;
	return NBDKIT_ZERO_EMULATE;	/* zeros encrypted and written */
}

static int
geli_can_fast_zero(nbdkit_next *next, void *handle)
{
	(void)next;
	(void)handle;
	return 0;
}

static int
geli_can_extents(nbdkit_next *next, void *handle)
{
	(void)next;
	(void)handle;
	return 0;
}

static int
geli_can_fua(nbdkit_next *next, void *handle)
{
	(void)next;
	(void)handle;
	/* FUA is the write, then a flush of the plugin below. */
	return below->can_flush(below) == 1 ? NBDKIT_FUA_NATIVE :
	    NBDKIT_FUA_NONE;
}

static int
geli_can_multi_conn(nbdkit_next *next, void *handle)
{
	(void)next;
	(void)handle;
	/* One volume for all connections: a flush covers every write. */
	return below->can_multi_conn(below);
}

static int
geli_can_cache(nbdkit_next *next, void *handle)
{
	(void)next;
	(void)handle;
	return NBDKIT_CACHE_NONE;
}

/* A library code as an NBD error: an integrity failure is an I/O error. */
static int
io_error(int code, const char *what, uint32_t count, uint64_t offset,
    int *err)
{
	if (code == -EBADMSG)
		nbdkit_error("%s: %s failed authentication (offset=%" PRIu64
		    ", length=%" PRIu32 ")", prov(), what, offset, count);
	*err = code == -EBADMSG ? EIO : -code;
	return -1;
}

static int
flush_if_fua(uint32_t flags, int *err)
{
	int r;

	if (!(flags & NBDKIT_FLAG_FUA))
		return 0;
	r = geli_volume_flush(vol);
	return r == 0 ? 0 : io_error(r, "flush", 0, 0, err);
}

static int
geli_pread(nbdkit_next *next, void *handle, void *buf, uint32_t count,
    uint64_t offset, uint32_t flags, int *err)
{
	ssize_t r;

	(void)next;
	(void)handle;
	(void)flags;
	r = geli_volume_read(vol, buf, count, offset);
	if (r < 0)
		return io_error((int)r, "read", count, offset, err);
	if ((size_t)r != count) {
		*err = EIO;
		return -1;
	}
	return 0;
}

static int
geli_pwrite(nbdkit_next *next, void *handle, const void *buf, uint32_t count,
    uint64_t offset, uint32_t flags, int *err)
{
	ssize_t r;

	(void)next;
	(void)handle;
	r = geli_volume_write(vol, buf, count, offset);
	if (r < 0)
		return io_error((int)r, "write", count, offset, err);
	if ((size_t)r != count) {
		*err = ENOSPC;
		return -1;
	}
	return flush_if_fua(flags, err);
}

static int
geli_flush(nbdkit_next *next, void *handle, uint32_t flags, int *err)
{
	int r;

	(void)next;
	(void)handle;
	(void)flags;
	r = geli_volume_flush(vol);
	return r == 0 ? 0 : io_error(r, "flush", 0, 0, err);
}

static int
geli_trim(nbdkit_next *next, void *handle, uint32_t count, uint64_t offset,
    uint32_t flags, int *err)
{
	int r;

	(void)next;
	(void)handle;
	r = geli_volume_discard(vol, offset, count);
	if (r != 0)
		return io_error(r, "trim", count, offset, err);
	return flush_if_fua(flags, err);
}

static int
geli_zero(nbdkit_next *next, void *handle, uint32_t count, uint64_t offset,
    uint32_t flags, int *err)
{
	(void)next;
	(void)handle;
	while (count > 0) {
		uint32_t n = count < ZERO_CHUNK ? count : ZERO_CHUNK;
		ssize_t r = geli_volume_write(vol, zeros, n, offset);

		if (r < 0)
			return io_error((int)r, "zero", n, offset, err);
		if ((size_t)r != n) {
			*err = ENOSPC;
			return -1;
		}
		count -= n;
		offset += n;
	}
	return flush_if_fua(flags, err);
}

static struct nbdkit_filter filter = {
	.name = "geli",
	.longname = "nbdkit GELI filter",
	.description = "FreeBSD GELI volumes, decrypted",
	.unload = geli_unload,
	.config = geli_config,
	.config_help =
	    "password=<SECRET>|-|+FILE|-FD  Passphrase (if the volume has one).\n"
	    "keyfile=FILE                   Keyfile (repeatable, in order).\n"
	    "keyno=0|1                      Only this key slot.\n"
	    "readonly=true                  Refuse writes.\n"
	    "psize=N                        Provider sector size (512).\n"
	    "workers=N                      Threads per request (1).",
	.thread_model = geli_thread_model,
	.get_ready = geli_get_ready,
	.after_fork = geli_after_fork,
	.cleanup = geli_cleanup,
	.open = geli_open,
	.get_size = geli_get_size,
	.export_description = geli_export_description,
	.block_size = geli_block_size,
	.can_write = geli_can_write,
	.can_flush = geli_can_flush,
	.is_rotational = geli_is_rotational,
	.can_trim = geli_can_trim,
	.can_zero = geli_can_zero,
	.can_fast_zero = geli_can_fast_zero,
	.can_extents = geli_can_extents,
	.can_fua = geli_can_fua,
	.can_multi_conn = geli_can_multi_conn,
	.can_cache = geli_can_cache,
	.pread = geli_pread,
	.pwrite = geli_pwrite,
	.flush = geli_flush,
	.trim = geli_trim,
	.zero = geli_zero,
};

NBDKIT_REGISTER_FILTER(filter)
