/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The control channel between geli and the daemon of an attached provider:
 * a SOCK_SEQPACKET Unix socket, <name>.ctl in the run directory (rundir.h,
 * mode 0600), one request packet and one reply packet per connection.  Both
 * are typed here, once, for the two sides; ctl_proto.c encodes and decodes
 * them.
 *
 * Wire format, little-endian: "GELC", a version byte (CTL_VERSION), a kind
 * byte (request or reply), then the fields of the struct in the order
 * declared, integers at their width, strings as a 16-bit length and that
 * many bytes (no NUL inside).  A decoder takes a packet only when every
 * field is in range and nothing is left over.
 */
#ifndef GELI_CTL_H
#define GELI_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "geli.h"

#define CTL_MAX		8192	/* bytes of a packet, either way */
#define CTL_VERSION	4

enum ctl_verb {
	CTL_STATUS = 1,
	CTL_DETACH,		/* flags: CTL_F_FORCE, CTL_F_LAST */
	CTL_SUSPEND,
	CTL_RESUME,		/* key: the user key */
	CTL_SETKEY,		/* keyno, iterations; key: the new user key */
	CTL_DELKEY,		/* keyno; flags: CTL_F_ALL, CTL_F_FORCE */
	CTL_KILL,
	CTL_CONFIGURE,		/* set, clear: GELI_CONFIGURABLE_FLAGS */
	CTL_REENCRYPT,		/* reenc: start, go on; CTL_F_PAUSE: pause;
				 * CTL_F_FINISH: end (CTL_REENC_CONVERTED) */
	CTL_VERB_END
};

#define CTL_F_FORCE	0x1
#define CTL_F_LAST	0x2
#define CTL_F_ALL	0x4
#define CTL_F_PAUSE	0x8
#define CTL_F_FINISH	0x10	/* REENCRYPT: a LUKS2 target's end */
#define CTL_F_MASK	0x1f

/* A conversion to start online (kind != 0), or the one there to go on. */
struct ctl_reenc {
	uint32_t kind;		/* 0, GELI_REENC_REKEY, _DECRYPT or _LUKS2 */
	uint32_t hotzone;	/* bytes, 0: the default */
	uint8_t uuid[16];
	char journal[1024];	/* absolute */
	uint16_t mdlen;		/* REKEY, LUKS2: GELI_MD_SIZE, else 0 */
	uint8_t md[GELI_MD_SIZE];	/* the new record, encoded */
	uint16_t mklen;		/* REKEY, LUKS2: GELI_MKEY_DATALEN, else 0 */
	uint8_t mk[GELI_MKEY_DATALEN];	/* its Master Key (LUKS2's volume key) */
};

struct ctl_request {
	uint32_t verb;		/* enum ctl_verb */
	uint32_t flags;		/* CTL_F_* */
	int32_t keyno;		/* -1: the slot used to attach */
	int64_t iterations;	/* -1: keep */
	uint32_t set, clear;	/* on-disk flags to set and to clear */
	uint16_t keylen;	/* 0, or GELI_USERKEYLEN for RESUME/SETKEY */
	uint8_t key[GELI_USERKEYLEN];
	struct ctl_reenc reenc;	/* REENCRYPT only (keyno: the slot kept) */
};

/* Where an attached provider's conversion is. */
enum ctl_reenc_state {
	CTL_REENC_NONE = 0,
	CTL_REENC_RUNNING,
	CTL_REENC_PAUSED,	/* by request, or detach to come */
	CTL_REENC_FAILED,	/* reenc_error says why; run it again */
	CTL_REENC_DONE,		/* detach and attach for the new record */
	CTL_REENC_CONVERTED,	/* LUKS2: every sector; GELI's record and the
				 * journal stay until CTL_F_FINISH */
	CTL_REENC_STATE_END
};

/* What an attached provider is, for list and status (§9.16). */
struct ctl_status {
	char name[256];		/* without .eli */
	char prov[1024];	/* as given to attach */
	char provpath[1024];	/* the absolute path served */
	char elipath[1024];	/* the .eli file */
	char loop[64];		/* the block device (loop or ublk), or "" */
	char dev[1024];		/* its stable name (devlink_path), or "" */
	char backend[8];	/* "fuse" or "ublk" */
	int32_t pid;		/* the server's, which serves the I/O */
	int32_t keeper_pid;	/* its keeper's (keeper.h), 0 for none */
	uint32_t restarts;	/* servers started after a death */
	uint32_t flags;		/* runtime flags, GELI_FLAG_SUSPEND included */
	uint16_t ealgo, aalgo, keylen;
	uint32_t version;
	int32_t usedkey;	/* -1 for a one-time key */
	uint64_t keysallocated, keystotal;
	uint64_t mediasize, provsize;
	uint32_t sectorsize, psize;
	uint32_t opens, wopens;
	uint64_t integrity_errors;
	uint32_t reenc_state;	/* enum ctl_reenc_state */
	uint32_t reenc_kind;	/* enum geli_reenc_kind, 0 for none */
	int32_t reenc_error;	/* FAILED: the negative code */
	uint64_t reenc_done, reenc_total, reenc_bytes;	/* chunks, bytes */
	char journal[1024];
};

enum ctl_outcome {
	CTL_DONE = 0,
	CTL_DETACHED,		/* the daemon stops: wait for its files to go */
	CTL_DETACH_LATER,	/* detach -l: at the last close */
	CTL_OUTCOME_END
};

struct ctl_reply {
	int32_t code;		/* 0, or a negative libgeli or msg.h code */
	uint32_t outcome;	/* enum ctl_outcome */
	char message[1024];	/* code != 0: FreeBSD's kernel words */
	bool has_status;
	struct ctl_status status;
};

/* A request for verb with nothing else asked (keyno and iterations -1). */
void ctl_request_init(struct ctl_request *r, enum ctl_verb verb);
/* Encode into buf: the packet's length, or -EMSGSIZE / -EINVAL. */
ssize_t ctl_request_encode(const struct ctl_request *r, uint8_t *buf,
    size_t len);
ssize_t ctl_reply_encode(const struct ctl_reply *r, uint8_t *buf, size_t len);
/* Decode a packet: 0, -EMSGSIZE (larger than CTL_MAX) or -EBADMSG
 * (truncated, garbage, a field out of range, bytes left over). */
int ctl_request_decode(const uint8_t *buf, size_t len, struct ctl_request *r);
int ctl_reply_decode(const uint8_t *buf, size_t len, struct ctl_reply *r);

/* ---- The client side (ctl_client.c) ----------------------------------------------- */

/* The process at the other end of a control socket is root or us. */
bool ctl_peer_trusted(int fd);
/*
 * Send one request to the daemon of name and wait for its reply: 0 with
 * the reply (whose code says how the request went), or -errno when there
 * is no daemon to talk to or it answered garbage.  The request, which may
 * hold a key, is encoded in locked memory and wiped.
 */
int ctl_call(const char *name, const struct ctl_request *req,
    struct ctl_reply *reply);
/* The status of name's daemon: 0, or -errno as ctl_call. */
int ctl_status(const char *name, struct ctl_status *st);

#endif
