/* SPDX-License-Identifier: BSD-2-Clause */
/* Encoding and decoding the control channel's packets (see ctl.h). */
#include <errno.h>
#include <string.h>

#include "ctl.h"

#define KIND_REQUEST	1
#define KIND_REPLY	2

static const uint8_t magic[4] = { 'G', 'E', 'L', 'C' };

/* A cursor over a packet; ok turns false at the first overrun. */
struct cur {
	uint8_t *w;		/* encoding */
	const uint8_t *r;	/* decoding */
	size_t len, off;
	bool ok;
};

static void
put(struct cur *c, const void *p, size_t n)
{
	if (!c->ok || c->len - c->off < n) {
		c->ok = false;
		return;
	}
	memcpy(c->w + c->off, p, n);
	c->off += n;
}

static void
put_u(struct cur *c, uint64_t v, size_t width)
{
	uint8_t b[8];

	for (size_t i = 0; i < width; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	put(c, b, width);
}

static void
put_str(struct cur *c, const char *s, size_t max)
{
	size_t n = strnlen(s, max);

	if (n >= max) {		/* not a string of this field */
		c->ok = false;
		return;
	}
	put_u(c, n, 2);
	put(c, s, n);
}

static void
get(struct cur *c, void *p, size_t n)
{
	if (!c->ok || c->len - c->off < n) {
		c->ok = false;
		memset(p, 0, n);
		return;
	}
	memcpy(p, c->r + c->off, n);
	c->off += n;
}

static uint64_t
get_u(struct cur *c, size_t width)
{
	uint8_t b[8];
	uint64_t v = 0;

	get(c, b, width);
	for (size_t i = 0; i < width; i++)
		v |= (uint64_t)b[i] << (8 * i);
	return v;
}

/* A string into a field of max bytes: shorter than max, no NUL inside. */
static void
get_str(struct cur *c, char *s, size_t max)
{
	size_t n = (size_t)get_u(c, 2);

	if (n >= max) {
		c->ok = false;
		n = 0;
	}
	get(c, s, n);
	s[c->ok ? n : 0] = '\0';
	if (c->ok && memchr(s, '\0', n) != NULL)
		c->ok = false;
}

static void
put_head(struct cur *c, uint8_t kind)
{
	put(c, magic, sizeof(magic));
	put_u(c, CTL_VERSION, 1);
	put_u(c, kind, 1);
}

static bool
get_head(struct cur *c, uint8_t kind)
{
	uint8_t m[4];

	get(c, m, sizeof(m));
	return memcmp(m, magic, sizeof(m)) == 0 &&
	    get_u(c, 1) == CTL_VERSION && get_u(c, 1) == kind && c->ok;
}

static ssize_t
finish(const struct cur *c)
{
	return c->ok ? (ssize_t)c->off : -EMSGSIZE;
}

/* The verbs that carry a key, and the only ones that may. */
static bool
verb_has_key(uint32_t verb)
{
	return verb == CTL_RESUME || verb == CTL_SETKEY;
}

/* A conversion's fields: all there for a new one, none to go on. */
static bool
reenc_valid(const struct ctl_request *r)
{
	const struct ctl_reenc *e = &r->reenc;
	bool rekey = e->kind == GELI_REENC_REKEY ||
	    e->kind == GELI_REENC_LUKS2;

	if (r->verb != CTL_REENCRYPT)
		return e->kind == 0 && e->mdlen == 0 && e->mklen == 0 &&
		    e->journal[0] == '\0' && !(r->flags & CTL_F_FINISH);
	if (e->kind == 0)
		return e->mdlen == 0 && e->mklen == 0 && e->journal[0] == '\0' &&
		    (r->flags & (CTL_F_PAUSE | CTL_F_FINISH)) !=
		    (CTL_F_PAUSE | CTL_F_FINISH);
	return (rekey || e->kind == GELI_REENC_DECRYPT) &&
	    e->journal[0] == '/' && !(r->flags & (CTL_F_PAUSE | CTL_F_FINISH)) &&
	    e->mdlen == (rekey ? GELI_MD_SIZE : 0) &&
	    e->mklen == (rekey ? GELI_MKEY_DATALEN : 0);
}

static bool
request_valid(const struct ctl_request *r)
{
	return r->verb >= CTL_STATUS && r->verb < CTL_VERB_END &&
	    reenc_valid(r) &&
	    (r->flags & ~CTL_F_MASK) == 0 &&
	    r->keyno >= -1 && r->keyno < GELI_MAXMKEYS &&
	    r->iterations >= -1 && r->iterations <= INT32_MAX &&
	    ((r->set | r->clear) & ~GELI_CONFIGURABLE_FLAGS) == 0 &&
	    r->keylen == (verb_has_key(r->verb) ? GELI_USERKEYLEN : 0);
}

void
ctl_request_init(struct ctl_request *r, enum ctl_verb verb)
{
	memset(r, 0, sizeof(*r));
	r->verb = verb;
	r->keyno = -1;
	r->iterations = -1;
}

ssize_t
ctl_request_encode(const struct ctl_request *r, uint8_t *buf, size_t len)
{
	struct cur c = { .w = buf, .len = len < CTL_MAX ? len : CTL_MAX,
	    .ok = true };

	if (!request_valid(r))
		return -EINVAL;
	put_head(&c, KIND_REQUEST);
	put_u(&c, r->verb, 4);
	put_u(&c, r->flags, 4);
	put_u(&c, (uint32_t)r->keyno, 4);
	put_u(&c, (uint64_t)r->iterations, 8);
	put_u(&c, r->set, 4);
	put_u(&c, r->clear, 4);
	put_u(&c, r->keylen, 2);
	put(&c, r->key, r->keylen);
	if (r->verb == CTL_REENCRYPT) {
		put_u(&c, r->reenc.kind, 4);
		put_u(&c, r->reenc.hotzone, 4);
		put(&c, r->reenc.uuid, 16);
		put_str(&c, r->reenc.journal, sizeof(r->reenc.journal));
		put_u(&c, r->reenc.mdlen, 2);
		put(&c, r->reenc.md, r->reenc.mdlen);
		put_u(&c, r->reenc.mklen, 2);
		put(&c, r->reenc.mk, r->reenc.mklen);
	}
	return finish(&c);
}

int
ctl_request_decode(const uint8_t *buf, size_t len, struct ctl_request *r)
{
	struct cur c = { .r = buf, .len = len, .ok = true };

	memset(r, 0, sizeof(*r));
	if (len > CTL_MAX)
		return -EMSGSIZE;
	if (!get_head(&c, KIND_REQUEST))
		return -EBADMSG;
	r->verb = (uint32_t)get_u(&c, 4);
	r->flags = (uint32_t)get_u(&c, 4);
	r->keyno = (int32_t)(uint32_t)get_u(&c, 4);
	r->iterations = (int64_t)get_u(&c, 8);
	r->set = (uint32_t)get_u(&c, 4);
	r->clear = (uint32_t)get_u(&c, 4);
	r->keylen = (uint16_t)get_u(&c, 2);
	if (c.ok && r->keylen <= sizeof(r->key))
		get(&c, r->key, r->keylen);
	else
		c.ok = false;
	if (c.ok && r->verb == CTL_REENCRYPT) {
		struct ctl_reenc *e = &r->reenc;

		e->kind = (uint32_t)get_u(&c, 4);
		e->hotzone = (uint32_t)get_u(&c, 4);
		get(&c, e->uuid, 16);
		get_str(&c, e->journal, sizeof(e->journal));
		e->mdlen = (uint16_t)get_u(&c, 2);
		if (e->mdlen <= sizeof(e->md))
			get(&c, e->md, e->mdlen);
		else
			c.ok = false;
		e->mklen = (uint16_t)get_u(&c, 2);
		if (c.ok && e->mklen <= sizeof(e->mk))
			get(&c, e->mk, e->mklen);
		else
			c.ok = false;
	}
	if (!c.ok || c.off != len || !request_valid(r)) {
		memset(r, 0, sizeof(*r));
		return -EBADMSG;
	}
	return 0;
}

static void
put_status(struct cur *c, const struct ctl_status *s)
{
	put_str(c, s->name, sizeof(s->name));
	put_str(c, s->prov, sizeof(s->prov));
	put_str(c, s->provpath, sizeof(s->provpath));
	put_str(c, s->elipath, sizeof(s->elipath));
	put_str(c, s->loop, sizeof(s->loop));
	put_str(c, s->dev, sizeof(s->dev));
	put_str(c, s->backend, sizeof(s->backend));
	put_u(c, (uint32_t)s->pid, 4);
	put_u(c, (uint32_t)s->keeper_pid, 4);
	put_u(c, s->restarts, 4);
	put_u(c, s->flags, 4);
	put_u(c, s->ealgo, 2);
	put_u(c, s->aalgo, 2);
	put_u(c, s->keylen, 2);
	put_u(c, s->version, 4);
	put_u(c, (uint32_t)s->usedkey, 4);
	put_u(c, s->keysallocated, 8);
	put_u(c, s->keystotal, 8);
	put_u(c, s->mediasize, 8);
	put_u(c, s->provsize, 8);
	put_u(c, s->sectorsize, 4);
	put_u(c, s->psize, 4);
	put_u(c, s->opens, 4);
	put_u(c, s->wopens, 4);
	put_u(c, s->integrity_errors, 8);
	put_u(c, s->reenc_state, 4);
	put_u(c, s->reenc_kind, 4);
	put_u(c, (uint32_t)s->reenc_error, 4);
	put_u(c, s->reenc_done, 8);
	put_u(c, s->reenc_total, 8);
	put_u(c, s->reenc_bytes, 8);
	put_str(c, s->journal, sizeof(s->journal));
}

static void
get_status(struct cur *c, struct ctl_status *s)
{
	get_str(c, s->name, sizeof(s->name));
	get_str(c, s->prov, sizeof(s->prov));
	get_str(c, s->provpath, sizeof(s->provpath));
	get_str(c, s->elipath, sizeof(s->elipath));
	get_str(c, s->loop, sizeof(s->loop));
	get_str(c, s->dev, sizeof(s->dev));
	get_str(c, s->backend, sizeof(s->backend));
	s->pid = (int32_t)(uint32_t)get_u(c, 4);
	s->keeper_pid = (int32_t)(uint32_t)get_u(c, 4);
	s->restarts = (uint32_t)get_u(c, 4);
	s->flags = (uint32_t)get_u(c, 4);
	s->ealgo = (uint16_t)get_u(c, 2);
	s->aalgo = (uint16_t)get_u(c, 2);
	s->keylen = (uint16_t)get_u(c, 2);
	s->version = (uint32_t)get_u(c, 4);
	s->usedkey = (int32_t)(uint32_t)get_u(c, 4);
	s->keysallocated = get_u(c, 8);
	s->keystotal = get_u(c, 8);
	s->mediasize = get_u(c, 8);
	s->provsize = get_u(c, 8);
	s->sectorsize = (uint32_t)get_u(c, 4);
	s->psize = (uint32_t)get_u(c, 4);
	s->opens = (uint32_t)get_u(c, 4);
	s->wopens = (uint32_t)get_u(c, 4);
	s->integrity_errors = get_u(c, 8);
	s->reenc_state = (uint32_t)get_u(c, 4);
	s->reenc_kind = (uint32_t)get_u(c, 4);
	s->reenc_error = (int32_t)(uint32_t)get_u(c, 4);
	s->reenc_done = get_u(c, 8);
	s->reenc_total = get_u(c, 8);
	s->reenc_bytes = get_u(c, 8);
	get_str(c, s->journal, sizeof(s->journal));
	if (s->usedkey < -1 || s->usedkey >= GELI_MAXMKEYS ||
	    s->name[0] == '\0' || s->reenc_state >= CTL_REENC_STATE_END ||
	    s->reenc_kind > GELI_REENC_LUKS2 || s->reenc_error > 0 ||
	    s->reenc_done > s->reenc_total)
		c->ok = false;
}

ssize_t
ctl_reply_encode(const struct ctl_reply *r, uint8_t *buf, size_t len)
{
	struct cur c = { .w = buf, .len = len < CTL_MAX ? len : CTL_MAX,
	    .ok = true };

	if (r->code > 0 || r->outcome >= CTL_OUTCOME_END)
		return -EINVAL;
	put_head(&c, KIND_REPLY);
	put_u(&c, (uint32_t)r->code, 4);
	put_u(&c, r->outcome, 4);
	put_str(&c, r->message, sizeof(r->message));
	put_u(&c, r->has_status, 1);
	if (r->has_status)
		put_status(&c, &r->status);
	return finish(&c);
}

int
ctl_reply_decode(const uint8_t *buf, size_t len, struct ctl_reply *r)
{
	struct cur c = { .r = buf, .len = len, .ok = true };
	uint64_t has;

	memset(r, 0, sizeof(*r));
	if (len > CTL_MAX)
		return -EMSGSIZE;
	if (!get_head(&c, KIND_REPLY))
		return -EBADMSG;
	r->code = (int32_t)(uint32_t)get_u(&c, 4);
	r->outcome = (uint32_t)get_u(&c, 4);
	get_str(&c, r->message, sizeof(r->message));
	has = get_u(&c, 1);
	if (has > 1)
		c.ok = false;
	r->has_status = has == 1;
	if (r->has_status)
		get_status(&c, &r->status);
	if (!c.ok || c.off != len || r->code > 0 ||
	    r->outcome >= CTL_OUTCOME_END) {
		memset(r, 0, sizeof(*r));
		return -EBADMSG;
	}
	return 0;
}
