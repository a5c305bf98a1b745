/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer harness: the control protocol's decoders (common/ctl_proto.c).
 *
 * The first byte picks the request or the reply decoder, the rest is the
 * packet.  A packet that decodes must encode back to the same bytes.  The
 * request encoder is also fed a struct made of the raw bytes: what it
 * encodes must decode to the same fields.
 */
#include <stdlib.h>
#include <string.h>

#include "ctl.h"

static uint8_t out[CTL_MAX + 16];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
request_from_bytes(const uint8_t *data, size_t size)
{
	struct ctl_request r, back;
	ssize_t n;

	memset(&r, 0, sizeof(r));
	r.verb = data[0] % (CTL_VERB_END + 1);
	if (size >= 1 + 19) {
		memcpy(&r.flags, data + 1, 4);
		r.flags &= 0xf;
		r.keyno = (int8_t)data[5];
		memcpy(&r.iterations, data + 6, 8);
		memcpy(&r.set, data + 14, 4);
		r.clear = r.set >> 16;
		r.set &= 0xffff;
		r.keylen = data[18] & 1 ? GELI_USERKEYLEN : data[19];
		memcpy(r.key, data + 1, size - 1 < sizeof(r.key) ?
		    size - 1 : sizeof(r.key));
	}
	n = ctl_request_encode(&r, out, sizeof(out));
	if (n < 0)
		return;
	if (ctl_request_decode(out, (size_t)n, &back) != 0 ||
	    back.verb != r.verb || back.flags != r.flags ||
	    back.keyno != r.keyno || back.iterations != r.iterations ||
	    back.set != r.set || back.clear != r.clear ||
	    back.keylen != r.keylen || memcmp(back.key, r.key, r.keylen) != 0)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ctl_request req;
	struct ctl_reply *rep;
	ssize_t n;

	if (size < 1)
		return 0;
	switch (data[0] % 3) {
	case 0:
		if (ctl_request_decode(data + 1, size - 1, &req) != 0)
			break;
		n = ctl_request_encode(&req, out, sizeof(out));
		if (n < 0 || (size_t)n != size - 1 ||
		    memcmp(out, data + 1, (size_t)n) != 0)
			abort();
		break;
	case 1:
		rep = malloc(sizeof(*rep));
		if (rep == NULL)
			abort();
		if (ctl_reply_decode(data + 1, size - 1, rep) == 0) {
			n = ctl_reply_encode(rep, out, sizeof(out));
			if (n < 0 || (size_t)n != size - 1 ||
			    memcmp(out, data + 1, (size_t)n) != 0)
				abort();
		}
		free(rep);
		break;
	case 2:
		if (size >= 2)
			request_from_bytes(data + 1, size - 1);
		break;
	}
	return 0;
}
