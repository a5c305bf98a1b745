/* The attach daemon (see daemon.h). */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ctl.h"
#include "daemon.h"
#include "fusefile.h"
#include "loopdev.h"

struct dmn {
	struct attach_req r;
	char name[256], prov[1024], provpath[1024];
	char elipath[1024], ctlpath[1024], logpath[1024], pidpath[1024];
	struct geli_volume *v;
	struct geli_provider *p;	/* owned by v */
	struct fusefile *ff;
	uint8_t *mkey;			/* secure; wiped while suspended */
	uint32_t flags;			/* runtime flags, as geli list shows */
	uint32_t psize;
	char loopdev[64];
	int ctlfd, evfd;
	pthread_mutex_t lock;
	unsigned opens, wopens;
	bool stop;
	FILE *log;
};

/* ---- Logging (the console messages of FreeBSD's kernel) ------------------------ */

static void __attribute__((format(printf, 2, 3)))
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

void
flags_string(uint32_t flags, char *buf, size_t len)
{
	static const struct { uint32_t f; const char *n; } names[] = {
		{ GELI_FLAG_SUSPEND, "SUSPEND" },
		{ GELI_FLAG_SINGLE_KEY, "SINGLE-KEY" },
		{ GELI_FLAG_NATIVE_BYTE_ORDER, "NATIVE-BYTE-ORDER" },
		{ GELI_FLAG_ONETIME, "ONETIME" },
		{ GELI_FLAG_BOOT, "BOOT" },
		{ GELI_FLAG_WO_DETACH, "W-DETACH" },
		{ GELI_FLAG_RW_DETACH, "RW-DETACH" },
		{ GELI_FLAG_AUTH, "AUTH" },
		{ GELI_FLAG_WOPEN, "W-OPEN" },
		{ GELI_FLAG_DESTROY, "DESTROY" },
		{ GELI_FLAG_RO, "READ-ONLY" },
		{ GELI_FLAG_NODELETE, "NODELETE" },
		{ GELI_FLAG_GELIBOOT, "GELIBOOT" },
		{ GELI_FLAG_GELIDISPLAYPASS, "GELIDISPLAYPASS" },
		{ GELI_FLAG_AUTORESIZE, "AUTORESIZE" },
	};
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if ((flags & names[i].f) == 0)
			continue;
		n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%s",
		    n > 0 ? ", " : "", names[i].n);
	}
	if (n == 0)
		snprintf(buf, len, "NONE");
}

/* ---- The backend of the FUSE file ----------------------------------------------- */

static uint64_t
be_size(void *arg)
{
	return geli_volume_size(((struct dmn *)arg)->v);
}

static ssize_t
be_read(void *arg, void *buf, size_t len, uint64_t off)
{
	struct dmn *d = arg;
	ssize_t n = geli_volume_read(d->v, buf, len, off);

	if (n == -EBADMSG)
		dlog(d, "%s.eli: Failed to authenticate %zu bytes of data at "
		    "offset %ju.", d->name, len, (uintmax_t)off);
	return n;
}

static ssize_t
be_write(void *arg, const void *buf, size_t len, uint64_t off)
{
	return geli_volume_write(((struct dmn *)arg)->v, buf, len, off);
}

static int
be_flush(void *arg)
{
	return geli_volume_flush(((struct dmn *)arg)->v);
}

static void
be_opened(void *arg, bool w)
{
	struct dmn *d = arg;

	pthread_mutex_lock(&d->lock);
	d->opens++;
	if (w) {
		d->wopens++;
		d->flags |= GELI_FLAG_WOPEN;
	}
	pthread_mutex_unlock(&d->lock);
}

static void
be_closed(void *arg, bool w)
{
	struct dmn *d = arg;
	uint64_t one = 1;
	bool wake;

	pthread_mutex_lock(&d->lock);
	d->opens--;
	if (w)
		d->wopens--;
	/* Detach on last close: -d after a writer, -l (detach -l) always. */
	wake = d->opens == 0 && ((d->flags & GELI_FLAG_RW_DETACH) ||
	    ((d->flags & GELI_FLAG_WO_DETACH) && (d->flags & GELI_FLAG_WOPEN)));
	pthread_mutex_unlock(&d->lock);
	if (wake && write(d->evfd, &one, sizeof(one)) < 0)
		dlog(d, "cannot wake the daemon: %s", strerror(errno));
}

/* ---- Metadata on disk ----------------------------------------------------------------- */

static int
md_read(struct dmn *d, struct geli_metadata *md)
{
	return geli_provider_read_metadata(d->p, md);
}

/* Write md, and for key destruction overwrite the sector several times. */
static int
md_write(struct dmn *d, struct geli_metadata *md)
{
	return geli_provider_write_metadata(d->p, md);
}

/* ---- Requests ----------------------------------------------------------------------- */

struct reply {
	char buf[CTL_MAX];
	size_t len;
	bool err;
};

static void
reply_vappend(struct reply *rp, const char *fmt, va_list ap)
{
	int n = vsnprintf(rp->buf + rp->len, sizeof(rp->buf) - rp->len, fmt, ap);

	if (n > 0)
		rp->len += (size_t)n;
	if (rp->len >= sizeof(rp->buf))
		rp->len = sizeof(rp->buf) - 1;
}

/* Text after "OK\n"; ignored once an error was given. */
static void __attribute__((format(printf, 2, 3)))
reply_ok(struct reply *rp, const char *fmt, ...)
{
	va_list ap;

	if (rp->err)
		return;
	if (rp->len == 0)
		rp->len = (size_t)snprintf(rp->buf, sizeof(rp->buf), "OK\n");
	va_start(ap, fmt);
	reply_vappend(rp, fmt, ap);
	va_end(ap);
}

/* "ERR <message>", replacing anything said so far. */
static void __attribute__((format(printf, 2, 3)))
reply_err(struct reply *rp, const char *fmt, ...)
{
	va_list ap;

	rp->err = true;
	rp->len = (size_t)snprintf(rp->buf, sizeof(rp->buf), "ERR ");
	va_start(ap, fmt);
	reply_vappend(rp, fmt, ap);
	va_end(ap);
}

static uint32_t
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

static void
do_status(struct dmn *d, struct reply *rp)
{
	const struct geli_metadata *md = geli_volume_metadata(d->v);
	uint32_t f = dmn_flags(d);
	char fl[512];
	unsigned opens, wopens;

	pthread_mutex_lock(&d->lock);
	opens = d->opens;
	wopens = d->wopens;
	pthread_mutex_unlock(&d->lock);
	flags_string(f & ~(GELI_FLAG_FIRST_KEY | GELI_FLAG_ENC_IVKEY), fl,
	    sizeof(fl));
	reply_ok(rp, "name=%s.eli\nprov=%s\nprovpath=%s\npid=%d\n", d->name,
	    d->prov, d->provpath, (int)getpid());
	reply_ok(rp, "state=%s\nflags=%s\nflagbits=0x%x\n",
	    (f & GELI_FLAG_SUSPEND) ? "SUSPENDED" : "ACTIVE", fl, (unsigned)f);
	reply_ok(rp, "ealgo=%s\nkeylen=%u\nversion=%u\n",
	    geli_algo_name(md->ealgo), (unsigned)md->keylen,
	    (unsigned)md->version);
	if (f & GELI_FLAG_AUTH)
		reply_ok(rp, "aalgo=%s\n", geli_algo_name(md->aalgo));
	if (!(f & GELI_FLAG_ONETIME))
		reply_ok(rp, "usedkey=%d\n", d->r.used_key);
	reply_ok(rp, "keysallocated=%ju\n",
	    (uintmax_t)geli_volume_keys_allocated(d->v));
	reply_ok(rp, "keystotal=%ju\nmediasize=%ju\nsectorsize=%u\n",
	    (uintmax_t)geli_volume_keys_total(d->v),
	    (uintmax_t)geli_volume_size(d->v), geli_volume_sectorsize(d->v));
	reply_ok(rp, "provsize=%ju\npsize=%u\nopens=%u\nwopens=%u\n",
	    (uintmax_t)geli_provider_mediasize(d->p), d->psize, opens, wopens);
	reply_ok(rp, "loop=%s\nelipath=%s\nintegrity_errors=%ju\n", d->loopdev,
	    d->elipath, (uintmax_t)geli_volume_integrity_errors(d->v));
}

/* Is the .eli file, or its loop device, used by anyone but ourselves? */
static bool
dmn_busy(struct dmn *d)
{
	unsigned opens;

	pthread_mutex_lock(&d->lock);
	opens = d->opens;
	pthread_mutex_unlock(&d->lock);
	if (d->loopdev[0] != '\0') {
		if (loop_in_use(d->loopdev))
			return true;
		return opens > 1;	/* the loop device's own open */
	}
	return opens > 0;
}

static void
do_detach(struct dmn *d, struct reply *rp, bool force, bool last)
{
	if (last) {
		pthread_mutex_lock(&d->lock);
		d->flags |= GELI_FLAG_RW_DETACH;
		pthread_mutex_unlock(&d->lock);
		if (dmn_busy(d)) {
			reply_ok(rp, "detach on last close\n");
			return;
		}
	} else if (!force && dmn_busy(d)) {
		reply_err(rp, "Cannot destroy device %s.eli (error=%d).",
		    d->name, EBUSY);
		return;
	}
	d->stop = true;
	reply_ok(rp, "detached\n");
}

static void
do_suspend(struct dmn *d, struct reply *rp)
{
	if (d->flags & GELI_FLAG_ONETIME) {
		reply_err(rp, "Device %s.eli is using one-time key, suspend "
		    "not supported.", d->name);
		return;
	}
	if (geli_volume_suspend(d->v) != 0) {
		reply_err(rp, "Device %s.eli already suspended.", d->name);
		return;
	}
	geli_wipe(d->mkey, GELI_MKEY_DATALEN);
	dlog(d, "Device %s.eli has been suspended.", d->name);
	reply_ok(rp, "suspended\n");
}

/* resume, with the user key: the slot is decrypted from the disk's metadata. */
static void
do_resume(struct dmn *d, struct reply *rp, const uint8_t *ukey, size_t klen)
{
	struct geli_metadata md;
	int error, used;

	if (!geli_volume_suspended(d->v)) {
		reply_err(rp, "Device %s.eli is not suspended.", d->name);
		return;
	}
	if (klen != GELI_USERKEYLEN || md_read(d, &md) != 0) {
		reply_err(rp, "Cannot read metadata from %s.", d->prov);
		return;
	}
	error = geli_mkey_decrypt(&md, ukey, -1, d->mkey, &used);
	if (error == 0)
		error = geli_volume_resume(d->v, d->mkey);
	if (error == -GELI_EWRONGKEY) {
		reply_err(rp, "Wrong key for %s.", d->prov);
		return;
	}
	if (error != 0) {
		reply_err(rp, "Cannot resume %s.eli: %s.", d->name,
		    strerror(-error));
		return;
	}
	dlog(d, "Device %s.eli has been resumed.", d->name);
	reply_ok(rp, "resumed\n");
}

/* Destroy slots of md: GELI_OVERWRITES random passes, then zeros (§5.3). */
static int
wipe_slots(struct dmn *d, struct geli_metadata *md, int keyno)
{
	uint8_t *slot = keyno < 0 ? md->mkeys : md->mkeys + keyno * GELI_MKEYLEN;
	size_t len = keyno < 0 ? sizeof(md->mkeys) : GELI_MKEYLEN;
	int error = 0;

	for (int i = 0; i <= GELI_OVERWRITES && error == 0; i++) {
		if (i < GELI_OVERWRITES)
			error = geli_random(slot, len);
		else
			memset(slot, 0, len);
		if (error == 0)
			error = md_write(d, md);
	}
	return error;
}

static bool
refuse_ro(struct dmn *d, struct reply *rp, const char *what)
{
	if (d->flags & GELI_FLAG_RO) {
		reply_err(rp, "%s", what);
		return true;
	}
	if (d->flags & GELI_FLAG_ONETIME) {
		reply_err(rp, "Provider %s.eli uses a one-time key.", d->name);
		return true;
	}
	if (geli_volume_suspended(d->v)) {
		reply_err(rp, "Device %s.eli is suspended.", d->name);
		return true;
	}
	return false;
}

static void
do_setkey(struct dmn *d, struct reply *rp, int keyno, long long iterations,
    const uint8_t *ukey, size_t klen)
{
	struct geli_metadata md;
	int error;

	if (refuse_ro(d, rp, "Cannot change keys for read-only provider."))
		return;
	if (klen != GELI_USERKEYLEN || md_read(d, &md) != 0) {
		reply_err(rp, "Cannot read metadata from %s.", d->prov);
		return;
	}
	if (keyno == -1)
		keyno = d->r.used_key;
	if (keyno < 0 || keyno >= GELI_MAXMKEYS) {
		reply_err(rp, "Invalid '%s' argument.", "keyno");
		return;
	}
	if (iterations != -1 && md.iterations == -1) {
		md.iterations = (int32_t)iterations;
	} else if (iterations != -1 && iterations != md.iterations) {
		if (__builtin_popcount(md.keys) != 1) {
			reply_err(rp, "To be able to use '-i' option, only one "
			    "key can be defined.");
			return;
		}
		if (md.keys != (1u << keyno)) {
			reply_err(rp, "Only already defined key can be changed "
			    "when '-i' option is used.");
			return;
		}
		md.iterations = (int32_t)iterations;
	}
	error = geli_mkey_encrypt(md.ealgo, md.keylen, ukey, d->mkey,
	    md.mkeys + keyno * GELI_MKEYLEN);
	if (error == 0) {
		md.keys |= (uint8_t)(1u << keyno);
		error = md_write(d, &md);
	}
	if (error != 0) {
		reply_err(rp, "Cannot store metadata on %s (error=%d).",
		    d->prov, -error);
		return;
	}
	dlog(d, "Key %d changed on %s.", keyno, d->name);
	reply_ok(rp, "key %d set\n", keyno);
}

static void
do_delkey(struct dmn *d, struct reply *rp, int keyno, bool all, bool force)
{
	struct geli_metadata md;
	int error;

	if (refuse_ro(d, rp, "Cannot delete keys for read-only provider."))
		return;
	if (md_read(d, &md) != 0) {
		reply_err(rp, "Cannot read metadata from %s.", d->prov);
		return;
	}
	if (all) {
		keyno = -1;
	} else {
		if (keyno == -1)
			keyno = d->r.used_key;
		if (keyno < 0 || keyno >= GELI_MAXMKEYS) {
			reply_err(rp, "Invalid '%s' argument.", "keyno");
			return;
		}
		if (!(md.keys & (1u << keyno)) && !force) {
			reply_err(rp, "Master Key %d is not set.", keyno);
			return;
		}
		md.keys &= (uint8_t)~(1u << keyno);
		if (md.keys == 0 && !force) {
			reply_err(rp, "This is the last Master Key. Use '-f' "
			    "flag if you really want to remove it.");
			return;
		}
	}
	error = wipe_slots(d, &md, keyno);
	if (error != 0) {
		reply_err(rp, "Cannot store metadata on %s (error=%d).",
		    d->prov, -error);
		return;
	}
	reply_ok(rp, "deleted\n");
}

static void
do_kill(struct dmn *d, struct reply *rp)
{
	uint32_t P = d->psize;
	uint8_t *sector;
	int error = 0;

	if (d->flags & GELI_FLAG_RO) {
		dlog(d, "WARNING: Metadata won't be erased on read-only "
		    "provider: %s.", d->prov);
	} else if (!(d->flags & GELI_FLAG_ONETIME)) {
		/* The whole last sector: random passes, then zeros (§9.9). */
		sector = malloc(P);
		for (int i = 0; sector != NULL && i <= GELI_OVERWRITES; i++) {
			if (i < GELI_OVERWRITES)
				(void)geli_random(sector, P);
			else
				memset(sector, 0, P);
			if (geli_provider_write_last(d->p, sector) != 0)
				error = EIO;
		}
		free(sector);
	}
	dlog(d, "%s has been killed.", d->name);
	d->stop = true;
	if (error != 0)
		reply_err(rp, "Cannot kill %s: %s.", d->name, strerror(error));
	else
		reply_ok(rp, "killed\n");
}

static void
do_configure(struct dmn *d, struct reply *rp, uint32_t set, uint32_t clear)
{
	struct geli_metadata md;

	if (d->flags & GELI_FLAG_RO) {
		reply_err(rp, "Cannot change configuration of read-only "
		    "provider %s.", d->prov);
		return;
	}
	pthread_mutex_lock(&d->lock);
	d->flags = (d->flags | set) & ~clear;
	pthread_mutex_unlock(&d->lock);
	if (d->flags & GELI_FLAG_ONETIME) {
		reply_ok(rp, "configured\n");
		return;
	}
	/* The on-disk flags, from the metadata re-read from disk. */
	if (md_read(d, &md) != 0) {
		reply_err(rp, "Cannot read metadata from %s.", d->prov);
		return;
	}
	md.flags = (md.flags | set) & ~clear;
	if (md_write(d, &md) != 0) {
		reply_err(rp, "Cannot store metadata on %s.", d->prov);
		return;
	}
	reply_ok(rp, "configured\n");
}

static void
handle(struct dmn *d, int fd)
{
	struct reply *rp;
	uint8_t *msg;
	const uint8_t *key = NULL;
	size_t klen = 0;
	ssize_t n;
	char verb[32] = "";
	long long a = 0, b = 0, c = 0;

	msg = geli_secure_alloc(CTL_MAX + 1);
	rp = calloc(1, sizeof(*rp));
	if (msg == NULL || rp == NULL)
		goto out;
	n = recv(fd, msg, CTL_MAX, 0);
	if (n <= 0)
		goto out;
	msg[n] = '\0';
	size_t tlen = strlen((char *)msg);
	if ((size_t)n > tlen + 1) {
		key = msg + tlen + 1;
		klen = (size_t)n - tlen - 1;
	}
	int fields = sscanf((char *)msg, "%31s %lld %lld %lld", verb, &a, &b, &c);
	(void)fields;
	if (strcmp(verb, "status") == 0)
		do_status(d, rp);
	else if (strcmp(verb, "detach") == 0)
		do_detach(d, rp, a != 0, b != 0);
	else if (strcmp(verb, "suspend") == 0)
		do_suspend(d, rp);
	else if (strcmp(verb, "resume") == 0)
		do_resume(d, rp, key, klen);
	else if (strcmp(verb, "setkey") == 0)
		do_setkey(d, rp, (int)a, b, key, klen);
	else if (strcmp(verb, "delkey") == 0)
		do_delkey(d, rp, (int)a, b != 0, c != 0);
	else if (strcmp(verb, "kill") == 0)
		do_kill(d, rp);
	else if (strcmp(verb, "configure") == 0)
		do_configure(d, rp, (uint32_t)a, (uint32_t)b);
	else
		reply_err(rp, "Unknown request %s.", verb);
	(void)send(fd, rp->buf, rp->len, MSG_NOSIGNAL);
out:
	free(rp);
	geli_secure_free(msg);
}

/* ---- Growth of the provider (AUTORESIZE, §8.4) --------------------------------- */

static void
check_resize(struct dmn *d)
{
	uint64_t oldn = geli_provider_mediasize(d->p), newn;
	struct geli_metadata md;
	uint8_t *sector;
	uint32_t P = d->psize;
	int error;

	if (geli_provider_query_size(d->p, &newn) != 0 || newn <= oldn)
		return;
	if (!(d->flags & GELI_FLAG_ONETIME)) {
		if (!(d->flags & GELI_FLAG_AUTORESIZE)) {
			static uint64_t warned;
			if (warned != newn)
				dlog(d, "%s.eli: Autoresize is turned off, old "
				    "size: %ju.", d->name, (uintmax_t)oldn);
			warned = newn;
			return;
		}
		/* Move the metadata from old_N - P to new_N - P. */
		sector = calloc(1, P);
		if (sector == NULL)
			return;
		error = geli_provider_pread(d->p, sector, P, oldn - P);
		if (error == 0)
			error = geli_metadata_decode(sector, P, &md);
		if (error != 0) {
			dlog(d, "%s.eli: Cannot read metadata from %s (error=%d).",
			    d->name, d->prov, -error);
			free(sector);
			return;
		}
		md.provsize = newn;
		memset(sector, 0, P);
		error = geli_metadata_encode(&md, sector) < 0 ? -EIO :
		    geli_provider_pwrite(d->p, sector, P, newn - P);
		if (error == 0)
			error = geli_provider_flush(d->p);
		if (error != 0) {
			dlog(d, "%s.eli: Cannot store metadata on %s (error=%d).",
			    d->name, d->prov, -error);
			free(sector);
			return;
		}
		memset(sector, 0, P);
		(void)geli_provider_pwrite(d->p, sector, P, oldn - P);
		(void)geli_provider_flush(d->p);
		free(sector);
	}
	uint64_t before = geli_volume_size(d->v);
	geli_volume_grow(d->v, newn);
	fusefile_size_changed(d->ff);
	if (d->loopdev[0] != '\0')
		(void)loop_set_capacity(d->loopdev);
	dlog(d, "Device %s.eli size changed from %ju to %ju.", d->name,
	    (uintmax_t)before, (uintmax_t)geli_volume_size(d->v));
}

/* ---- Start and stop ------------------------------------------------------------------ */

static void
teardown(struct dmn *d)
{
	if (d->loopdev[0] != '\0') {
		int error = loop_detach(d->loopdev);
		if (error != 0)
			dlog(d, "cannot detach %s: %s", d->loopdev,
			    strerror(-error));
		d->loopdev[0] = '\0';
	}
	fusefile_stop(d->ff);
	d->ff = NULL;
	if (d->ctlfd >= 0) {
		close(d->ctlfd);
		unlink(d->ctlpath);
	}
	geli_volume_close(d->v);
	d->v = NULL;
	geli_secure_free(d->mkey);
	d->mkey = NULL;
	unlink(d->elipath);
	unlink(d->pidpath);
	dlog(d, "Device %s.eli destroyed.", d->name);
}

static void
serve(struct dmn *d)
{
	struct pollfd pf[2];
	uint64_t ev;
	int fd;

	pf[0].fd = d->ctlfd;
	pf[0].events = POLLIN;
	pf[1].fd = d->evfd;
	pf[1].events = POLLIN;
	while (!d->stop) {
		int n = poll(pf, 2, 1000);
		if (n > 0 && (pf[0].revents & POLLIN)) {
			fd = accept4(d->ctlfd, NULL, NULL, SOCK_CLOEXEC);
			if (fd >= 0) {
				handle(d, fd);
				close(fd);
			}
		}
		if (n > 0 && (pf[1].revents & POLLIN) &&
		    read(d->evfd, &ev, sizeof(ev)) == sizeof(ev)) {
			pthread_mutex_lock(&d->lock);
			if (d->opens == 0)
				d->stop = true;
			pthread_mutex_unlock(&d->lock);
			if (d->stop)
				dlog(d, "Detaching %s.eli on last close.", d->name);
		}
		if (fusefile_ended(d->ff)) {
			dlog(d, "%s.eli was unmounted.", d->name);
			d->stop = true;
		}
		if (!d->stop)
			check_resize(d);
	}
}

static int
ctl_listen(struct dmn *d)
{
	struct sockaddr_un sa;
	int fd;

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (strlen(d->ctlpath) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, d->ctlpath);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	unlink(d->ctlpath);
	mode_t old = umask(077);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    listen(fd, 16) != 0) {
		int e = -errno;
		umask(old);
		close(fd);
		return e;
	}
	umask(old);
	d->ctlfd = fd;
	return 0;
}

static void __attribute__((format(printf, 3, 4)))
status_msg(int fd, bool ok, const char *fmt, ...)
{
	char buf[1100];
	va_list ap;
	int n;

	n = snprintf(buf, sizeof(buf), "%s ", ok ? "OK" : "ERR");
	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
	va_end(ap);
	if (write(fd, buf, (size_t)n) < 0)
		return;
}

/* The daemon process: never returns. */
static void __attribute__((noreturn))
daemon_main(struct dmn *d, int keyfd, int stfd)
{
	const struct geli_metadata *md = &d->r.md;
	struct fusefile_backend be = {
		.arg = d, .size = be_size, .read = be_read, .write = be_write,
		.flush = be_flush, .opened = be_opened, .closed = be_closed,
	};
	unsigned vflags = 0, threads;
	int error, fd;
	bool ro = (d->r.flags & GELI_FLAG_RO) != 0;

	setsid();
	/* Request buffers (1 MiB each) stay in the heap and stay mapped: with
	 * locked memory a page fault per request would cost more. */
	mallopt(M_MMAP_THRESHOLD, 64 << 20);
	mallopt(M_TRIM_THRESHOLD, 256 << 20);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	(void)geli_protect_process(NULL);
	fd = open("/dev/null", O_RDWR);
	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		if (fd > 2)
			close(fd);
	}
	if (chdir("/") != 0)
		_exit(1);
	d->log = fopen(d->logpath, "a");
	d->ctlfd = -1;
	pthread_mutex_init(&d->lock, NULL);

	d->mkey = geli_secure_alloc(GELI_MKEY_DATALEN);
	if (d->mkey == NULL ||
	    read(keyfd, d->mkey, GELI_MKEY_DATALEN) != GELI_MKEY_DATALEN) {
		status_msg(stfd, false, "Cannot receive the key.");
		_exit(1);
	}
	close(keyfd);

	error = geli_provider_open(d->provpath, !ro, &d->p);
	if (error != 0) {
		status_msg(stfd, false, "Cannot open %s: %s.", d->prov,
		    strerror(-error));
		_exit(1);
	}
	d->psize = geli_provider_sectorsize(d->p);
	if (ro)
		vflags |= GELI_VOLUME_READONLY;
	if (d->r.flags & GELI_FLAG_ONETIME)
		vflags |= GELI_VOLUME_ONETIME;
	/* Reads decrypt from a mapping of the provider: one copy less. */
	vflags |= GELI_VOLUME_MMAP;
	threads = d->r.threads;
	if (threads == 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		threads = n > 0 ? (unsigned)n : 1;
	}
	error = geli_volume_open(d->p, md, d->mkey, vflags, threads, &d->v);
	if (error != 0) {
		status_msg(stfd, false, "Cannot attach %s: %s.", d->prov,
		    strerror(-error));
		_exit(1);
	}
	d->flags = geli_metadata_runtime_flags(md) | d->r.flags;
	d->evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

	fd = open(d->elipath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		status_msg(stfd, false, "Provider %s.eli already exists.",
		    d->name);
		_exit(1);
	}
	close(fd);
	error = ctl_listen(d);
	if (error == 0)
		error = fusefile_start(d->elipath, &be, ro, !d->r.cached, &d->ff);
	if (error != 0) {
		status_msg(stfd, false, "Cannot create %s: %s.", d->elipath,
		    strerror(-error));
		teardown(d);
		_exit(1);
	}
	if (d->r.loop) {
		uint32_t bs = geli_volume_sectorsize(d->v);
		error = loop_attach(d->elipath, bs > 4096 ? 4096 : bs, ro,
		    d->loopdev, sizeof(d->loopdev));
		if (error != 0) {
			d->loopdev[0] = '\0';
			status_msg(stfd, false, "Cannot create a loop device on "
			    "%s: %s.", d->elipath, strerror(-error));
			teardown(d);
			_exit(1);
		}
	}
	FILE *pf = fopen(d->pidpath, "w");
	if (pf != NULL) {
		fprintf(pf, "%d\n", (int)getpid());
		fclose(pf);
	}
	dlog(d, "Device %s.eli created.", d->name);
	dlog(d, "Encryption: %s %u", geli_algo_name(md->ealgo),
	    (unsigned)md->keylen);
	if (md->flags & GELI_FLAG_AUTH)
		dlog(d, " Integrity: %s", geli_algo_name(md->aalgo));
	dlog(d, "    Crypto: software (%s), %u threads", geli_crypto_version(),
	    threads);
	status_msg(stfd, true, "%s", d->loopdev);
	close(stfd);

	serve(d);
	teardown(d);
	if (d->log != NULL)
		fclose(d->log);
	_exit(0);
}

int
daemon_start(const struct attach_req *r, const uint8_t *mkey, char *loopdev,
    size_t loopdevlen, char *msg, size_t msglen)
{
	int keyp[2], stp[2], status;
	struct dmn *d;
	char buf[1100];
	ssize_t n;
	pid_t pid;

	d = calloc(1, sizeof(*d));
	if (d == NULL) {
		snprintf(msg, msglen, "Cannot allocate memory.");
		return -1;
	}
	d->r = *r;
	snprintf(d->name, sizeof(d->name), "%s", r->name);
	snprintf(d->prov, sizeof(d->prov), "%s", r->prov);
	snprintf(d->provpath, sizeof(d->provpath), "%s", r->provpath);
	d->r.name = d->name;
	d->r.prov = d->prov;
	d->r.provpath = d->provpath;
	if (rundir_path(d->name, ".eli", d->elipath, sizeof(d->elipath)) != 0 ||
	    rundir_path(d->name, ".ctl", d->ctlpath, sizeof(d->ctlpath)) != 0 ||
	    rundir_path(d->name, ".log", d->logpath, sizeof(d->logpath)) != 0 ||
	    rundir_path(d->name, ".pid", d->pidpath, sizeof(d->pidpath)) != 0) {
		snprintf(msg, msglen, "Run directory path too long.");
		free(d);
		return -1;
	}
	if (pipe2(keyp, O_CLOEXEC) != 0 || pipe2(stp, O_CLOEXEC) != 0) {
		snprintf(msg, msglen, "Cannot create a pipe: %s.", strerror(errno));
		free(d);
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		snprintf(msg, msglen, "Cannot fork: %s.", strerror(errno));
		free(d);
		return -1;
	}
	if (pid == 0) {
		/* The daemon is the grandchild, so that no zombie is left. */
		close(keyp[1]);
		close(stp[0]);
		pid = fork();
		if (pid != 0)
			_exit(pid < 0 ? 1 : 0);
		daemon_main(d, keyp[0], stp[1]);
	}
	close(keyp[0]);
	close(stp[1]);
	/* The key goes through a pipe: the daemon's locked pages are wiped on
	 * fork (MADV_WIPEONFORK), and it is only ever in memory of ours. */
	n = write(keyp[1], mkey, GELI_MKEY_DATALEN);
	close(keyp[1]);
	waitpid(pid, &status, 0);
	free(d);
	n = n == GELI_MKEY_DATALEN ? read(stp[0], buf, sizeof(buf) - 1) : -1;
	close(stp[0]);
	if (n <= 0) {
		snprintf(msg, msglen, "The daemon for %s did not start.", r->prov);
		return -1;
	}
	buf[n] = '\0';
	if (strncmp(buf, "OK ", 3) == 0) {
		snprintf(loopdev, loopdevlen, "%s", buf + 3);
		return 0;
	}
	snprintf(msg, msglen, "%s", strncmp(buf, "ERR ", 4) == 0 ? buf + 4 : buf);
	return -1;
}
