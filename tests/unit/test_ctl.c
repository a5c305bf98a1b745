/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The control protocol between geli and an attach daemon (common/ctl.h):
 * every request and reply round-trips; truncated, oversized, padded and
 * garbage packets and out-of-range fields are refused.
 */
#include <errno.h>

#include "tap.h"

#include "ctl.h"

static uint8_t buf[CTL_MAX + 64];

static struct ctl_request
request(enum ctl_verb verb)
{
	struct ctl_request r;

	ctl_request_init(&r, verb);
	return r;
}

static void
test_requests(void)
{
	struct ctl_request r, back;
	ssize_t n;

	for (unsigned v = CTL_STATUS; v < CTL_VERB_END; v++) {
		r = request(v);
		if (v == CTL_RESUME || v == CTL_SETKEY) {
			r.keylen = GELI_USERKEYLEN;
			for (int i = 0; i < GELI_USERKEYLEN; i++)
				r.key[i] = (uint8_t)(i * 7 + v);
		}
		if (v == CTL_SETKEY) {
			r.keyno = 1;
			r.iterations = INT32_MAX;
		}
		if (v == CTL_DELKEY)
			r.flags = CTL_F_ALL | CTL_F_FORCE;
		if (v == CTL_CONFIGURE) {
			r.set = GELI_FLAG_BOOT | GELI_FLAG_AUTORESIZE;
			r.clear = GELI_FLAG_NODELETE;
		}
		n = ctl_request_encode(&r, buf, sizeof(buf));
		tap_ok(n > 0 && ctl_request_decode(buf, (size_t)n, &back) == 0 &&
		    memcmp(&r, &back, sizeof(r)) == 0,
		    "verb %u: request round trip (%zd bytes)", v, n);
		/* Every shorter packet is a truncated one. */
		int refused = 0;
		for (ssize_t k = 0; k < n; k++)
			refused += ctl_request_decode(buf, (size_t)k, &back) ==
			    -EBADMSG;
		tap_ok(refused == n, "verb %u: all %zd truncations refused", v, n);
		buf[n] = 0;
		tap_ok(ctl_request_decode(buf, (size_t)n + 1, &back) == -EBADMSG,
		    "verb %u: a byte left over is refused", v);
	}
}

/* Encode r by hand (a hostile client does) and see the decoder refuse it. */
static void
refused_field(const char *what, struct ctl_request r)
{
	struct ctl_request ok = request(CTL_STATUS), back;
	ssize_t n;

	/* The encoder refuses it too; patch a valid packet's field instead. */
	tap_ok(ctl_request_encode(&r, buf, sizeof(buf)) == -EINVAL,
	    "encoder refuses %s", what);
	ok.verb = r.verb;
	ok.keylen = r.keylen <= GELI_USERKEYLEN &&
	    (r.verb == CTL_RESUME || r.verb == CTL_SETKEY) ? GELI_USERKEYLEN : 0;
	n = ctl_request_encode(&ok, buf, sizeof(buf));
	if (n < 0) {
		/* The verb itself is what is wrong: write it by hand. */
		ok = request(CTL_STATUS);
		n = ctl_request_encode(&ok, buf, sizeof(buf));
	}
	/* Fields after the 6-byte head: verb 4, flags 4, keyno 4, iter 8,
	 * set 4, clear 4, keylen 2. */
	uint8_t *f = buf + 6;
	for (int i = 0; i < 4; i++) {
		f[i] = (uint8_t)(r.verb >> (8 * i));
		f[4 + i] = (uint8_t)(r.flags >> (8 * i));
		f[8 + i] = (uint8_t)((uint32_t)r.keyno >> (8 * i));
		f[20 + i] = (uint8_t)(r.set >> (8 * i));
		f[24 + i] = (uint8_t)(r.clear >> (8 * i));
	}
	for (int i = 0; i < 8; i++)
		f[12 + i] = (uint8_t)((uint64_t)r.iterations >> (8 * i));
	tap_ok(ctl_request_decode(buf, (size_t)n, &back) == -EBADMSG,
	    "decoder refuses %s", what);
}

/* A conversion to start (each kind the daemon takes), to go on, to end. */
static void
test_reenc(void)
{
	static const uint32_t kinds[] = { GELI_REENC_REKEY, GELI_REENC_DECRYPT,
	    GELI_REENC_LUKS2 };
	struct ctl_request r, back;
	ssize_t n;

	for (unsigned i = 0; i < 3; i++) {
		bool newkey = kinds[i] != GELI_REENC_DECRYPT;

		r = request(CTL_REENCRYPT);
		r.reenc.kind = kinds[i];
		r.reenc.hotzone = 65536;
		memset(r.reenc.uuid, 0x5a, sizeof(r.reenc.uuid));
		snprintf(r.reenc.journal, sizeof(r.reenc.journal), "/j/%u", i);
		if (newkey) {
			r.reenc.mdlen = GELI_MD_SIZE;
			r.reenc.mklen = GELI_MKEY_DATALEN;
			memset(r.reenc.md, 0x11, GELI_MD_SIZE);
			memset(r.reenc.mk, 0x22, GELI_MKEY_DATALEN);
		}
		n = ctl_request_encode(&r, buf, sizeof(buf));
		tap_ok(n > 0 && ctl_request_decode(buf, (size_t)n, &back) == 0 &&
		    memcmp(&r, &back, sizeof(r)) == 0,
		    "conversion of kind %u: request round trip", kinds[i]);
		r.flags = CTL_F_FINISH;
		tap_ok(ctl_request_encode(&r, buf, sizeof(buf)) == -EINVAL,
		    "conversion of kind %u with its end: refused", kinds[i]);
	}
	r = request(CTL_REENCRYPT);
	r.flags = CTL_F_FINISH;
	n = ctl_request_encode(&r, buf, sizeof(buf));
	tap_ok(n > 0 && ctl_request_decode(buf, (size_t)n, &back) == 0 &&
	    back.flags == CTL_F_FINISH, "the end of a conversion: round trip");
}

static void
test_bad_requests(void)
{
	struct ctl_request r, back;
	ssize_t n;

	r = request(CTL_STATUS);
	r.verb = 0;
	refused_field("verb 0", r);
	r.verb = CTL_VERB_END;
	refused_field("an unknown verb", r);
	r = request(CTL_DETACH);
	r.flags = 0x80;
	refused_field("an unknown flag", r);
	r.flags = CTL_F_FINISH;
	refused_field("a conversion's end for detach", r);
	r = request(CTL_REENCRYPT);
	r.flags = CTL_F_FINISH | CTL_F_PAUSE;
	refused_field("a conversion's end and pause at once", r);
	r = request(CTL_DELKEY);
	r.keyno = GELI_MAXMKEYS;
	refused_field("key number 2", r);
	r.keyno = -2;
	refused_field("key number -2", r);
	r = request(CTL_SETKEY);
	r.keylen = GELI_USERKEYLEN;
	r.iterations = (int64_t)INT32_MAX + 1;
	refused_field("2^31 iterations", r);
	r = request(CTL_CONFIGURE);
	r.set = GELI_FLAG_AUTH;
	refused_field("configure AUTH", r);
	r = request(CTL_CONFIGURE);
	r.clear = GELI_FLAG_SUSPEND;
	refused_field("clearing SUSPEND", r);

	/* A key where none belongs, none where one must be. */
	r = request(CTL_STATUS);
	r.keylen = GELI_USERKEYLEN;
	tap_ok(ctl_request_encode(&r, buf, sizeof(buf)) == -EINVAL,
	    "status with a key refused");
	r = request(CTL_RESUME);
	tap_ok(ctl_request_encode(&r, buf, sizeof(buf)) == -EINVAL,
	    "resume without a key refused");
	r = request(CTL_RESUME);
	r.keylen = GELI_USERKEYLEN;
	n = ctl_request_encode(&r, buf, sizeof(buf));
	buf[n - GELI_USERKEYLEN - 2] = 63;	/* keylen 63, one byte more */
	tap_ok(ctl_request_decode(buf, (size_t)n, &back) == -EBADMSG,
	    "resume with a 63-byte key refused");
	buf[n - GELI_USERKEYLEN - 2] = 0xff;
	buf[n - GELI_USERKEYLEN - 1] = 0xff;
	tap_ok(ctl_request_decode(buf, (size_t)n, &back) == -EBADMSG,
	    "a key length past the packet refused");

	/* Garbage, a wrong magic, version or kind, an oversized packet. */
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 131 + 17);
	tap_ok(ctl_request_decode(buf, 100, &back) == -EBADMSG,
	    "garbage refused");
	r = request(CTL_KILL);
	n = ctl_request_encode(&r, buf, sizeof(buf));
	buf[0] = 'X';
	tap_ok(ctl_request_decode(buf, (size_t)n, &back) == -EBADMSG,
	    "wrong magic refused");
	buf[0] = 'G';
	buf[4] = CTL_VERSION + 1;
	tap_ok(ctl_request_decode(buf, (size_t)n, &back) == -EBADMSG,
	    "another protocol version refused");
	buf[4] = CTL_VERSION;
	buf[5] = 2;
	tap_ok(ctl_request_decode(buf, (size_t)n, &back) == -EBADMSG,
	    "a reply where a request belongs refused");
	tap_ok(ctl_request_decode(buf, CTL_MAX + 1, &back) == -EMSGSIZE,
	    "a packet over CTL_MAX refused as oversized");
	tap_ok(back.verb == 0 && back.keylen == 0,
	    "a refused request leaves nothing behind");
}

static void
fill_status(struct ctl_status *s)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "disk0");
	snprintf(s->prov, sizeof(s->prov), "/tmp/p ä");
	snprintf(s->provpath, sizeof(s->provpath), "/tmp/p ä");
	snprintf(s->elipath, sizeof(s->elipath), "/run/geli/disk0.eli");
	snprintf(s->loop, sizeof(s->loop), "/dev/loop7");
	snprintf(s->dev, sizeof(s->dev), "/dev/disk0.eli");
	s->pid = 4242;
	s->flags = GELI_FLAG_AUTH | GELI_FLAG_SUSPEND | GELI_FLAG_RO;
	s->ealgo = GELI_ALGO_AES_XTS;
	s->aalgo = GELI_ALGO_HMAC_SHA256;
	s->keylen = 256;
	s->version = 7;
	s->usedkey = 1;
	s->keysallocated = 3;
	s->keystotal = 1ull << 40;
	s->mediasize = UINT64_MAX;
	s->provsize = 123456789012345ull;
	s->sectorsize = 4096;
	s->psize = 512;
	s->opens = 2;
	s->wopens = 1;
	s->integrity_errors = 99;
}

static void
test_replies(void)
{
	struct ctl_reply r, back;
	ssize_t n;
	int refused = 0;

	memset(&r, 0, sizeof(r));
	r.has_status = true;
	fill_status(&r.status);
	n = ctl_reply_encode(&r, buf, sizeof(buf));
	tap_ok(n > 0 && ctl_reply_decode(buf, (size_t)n, &back) == 0 &&
	    memcmp(&r, &back, sizeof(r)) == 0, "status reply round trip");
	for (ssize_t k = 0; k < n; k++)
		refused += ctl_reply_decode(buf, (size_t)k, &back) == -EBADMSG;
	tap_ok(refused == n, "all %zd truncations of a status reply refused", n);
	/* A conversion to LUKS2 waiting for its end. */
	r.status.reenc_state = CTL_REENC_CONVERTED;
	r.status.reenc_kind = GELI_REENC_LUKS2;
	r.status.reenc_done = r.status.reenc_total = 7;
	n = ctl_reply_encode(&r, buf, sizeof(buf));
	tap_ok(n > 0 && ctl_reply_decode(buf, (size_t)n, &back) == 0 &&
	    memcmp(&r, &back, sizeof(r)) == 0,
	    "status of a conversion to LUKS2, converted: round trip");
	r.status.reenc_kind = GELI_REENC_LUKS2 + 1;
	n = ctl_reply_encode(&r, buf, sizeof(buf));
	tap_ok(n > 0 && ctl_reply_decode(buf, (size_t)n, &back) == -EBADMSG,
	    "an unknown conversion kind refused");

	memset(&r, 0, sizeof(r));
	r.code = -GELI_ELASTKEY;
	r.outcome = CTL_DONE;
	snprintf(r.message, sizeof(r.message), "This is the last Master Key.");
	n = ctl_reply_encode(&r, buf, sizeof(buf));
	tap_ok(n > 0 && ctl_reply_decode(buf, (size_t)n, &back) == 0 &&
	    back.code == -GELI_ELASTKEY && !back.has_status &&
	    strcmp(back.message, r.message) == 0, "error reply round trip");

	r.code = 0;
	r.outcome = CTL_DETACHED;
	r.message[0] = '\0';
	n = ctl_reply_encode(&r, buf, sizeof(buf));
	tap_ok(n > 0 && ctl_reply_decode(buf, (size_t)n, &back) == 0 &&
	    back.outcome == CTL_DETACHED, "outcome round trip");
	buf[10] = CTL_OUTCOME_END;
	tap_ok(ctl_reply_decode(buf, (size_t)n, &back) == -EBADMSG,
	    "an unknown outcome refused");
	r.code = 5;
	tap_ok(ctl_reply_encode(&r, buf, sizeof(buf)) == -EINVAL,
	    "a positive code is not encoded");

	/* A string as long as its field, or with a NUL inside. */
	memset(&r, 0, sizeof(r));
	memset(r.message, 'x', sizeof(r.message));
	tap_ok(ctl_reply_encode(&r, buf, sizeof(buf)) == -EMSGSIZE,
	    "an unterminated message is not encoded");
	memset(&r, 0, sizeof(r));
	snprintf(r.message, sizeof(r.message), "abcd");
	n = ctl_reply_encode(&r, buf, sizeof(buf));
	buf[16] = '\0';	/* inside "abcd" (head 6, code 4, outcome 4, len 2) */
	tap_ok(ctl_reply_decode(buf, (size_t)n, &back) == -EBADMSG,
	    "a NUL inside a string refused");
	memset(&r, 0, sizeof(r));
	r.has_status = true;
	fill_status(&r.status);
	r.status.usedkey = 2;
	n = ctl_reply_encode(&r, buf, sizeof(buf));
	tap_ok(n > 0 && ctl_reply_decode(buf, (size_t)n, &back) == -EBADMSG,
	    "a status with key number 2 refused");
	tap_ok(ctl_reply_decode(buf, CTL_MAX + 1, &back) == -EMSGSIZE,
	    "an oversized reply refused");
	tap_ok(ctl_reply_encode(&r, buf, 40) == -EMSGSIZE,
	    "a reply larger than the buffer is not encoded");
}

int
main(void)
{
	test_requests();
	test_reenc();
	test_bad_requests();
	test_replies();
	return tap_done();
}
