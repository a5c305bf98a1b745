/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * accel.h through Intel's ipsec-mb, when meson found it (GELI_HAVE_IPSECMB);
 * without it every call says -ENOTSUP and gc_accel_name() NULL.
 *
 * A run: the IVs, then one synchronous CBC cipher burst over the n units,
 * each with its IV.  Each IV is SHA256(IVK || LE64(off)), two SHA-256
 * blocks; two routes:
 *   - Nettle's SHA-256 state with the IV key absorbed (once, when the key is
 *     made), copied, given the offset and finished: one block per IV, with
 *     the SHA extensions where the CPU has them (Nettle's fat build);
 *   - ipsec-mb's SHA-256 jobs, each over its own 72-byte message in locked
 *     memory, up to 16 side by side (AVX-512): faster where the CPU lacks
 *     the SHA extensions.
 * The job API and the synchronous burst are sound in 1.3 (its asynchronous
 * burst miscounts completions, fixed in 1.4); its one-block SHA functions
 * would not use SHA-NI, and it has no SHA-256 state to start from.
 */
#include <errno.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accel.h"
#include "crypto.h"
#include "endian.h"
#include "geli.h"

static atomic_bool switched_off;
static atomic_int ivs_route = -1, dec_route = -1;
/* ipsec-mb's AVX-512 code with VAES, 16 units side by side (probe). */
static bool wide;

void
gc_accel_ivs_as_jobs(int how)
{
	atomic_store(&ivs_route, how);
}

void
gc_accel_decrypt_runs(int how)
{
	atomic_store(&dec_route, how);
}

bool
gc_accel_decrypts(void)
{
	int how = atomic_load(&dec_route);

	(void)gc_accel_name();	/* probed */
	return how >= 0 ? how != 0 : wide;
}

bool
gc_accel_enabled(void)
{
	return !atomic_load(&switched_off) && !gc_hw_disabled() &&
	    gc_accel_name() != NULL;
}

/* The accelerator's name with what it runs: encryption, and decryption
 * where it decrypts (gc_accel_decrypts). */
static char said[2][96];
static pthread_once_t said_once = PTHREAD_ONCE_INIT;

static void
say_routes(void)
{
	const char *n = gc_accel_name();
	size_t len;

	if (n == NULL)
		return;
	len = strlen(n);
	/* "ipsec-mb 1.3.0 (avx2)" -> "ipsec-mb 1.3.0 (avx2, encryption)" */
	if (len > 0 && n[len - 1] == ')')
		len--;
	snprintf(said[0], sizeof(said[0]), "%.*s, encryption%s", (int)len, n,
	    n + len);
	snprintf(said[1], sizeof(said[1]), "%.*s, encryption and decryption%s",
	    (int)len, n, n + len);
}

const char *
geli_crypto_accel(void)
{
	if (!gc_accel_enabled())
		return NULL;
	pthread_once(&said_once, say_routes);
	return said[gc_accel_decrypts() ? 1 : 0];
}

void
geli_crypto_set_accel(bool on)
{
	atomic_store(&switched_off, !on);
}

#if GELI_HAVE_IPSECMB

/* Before the header: its 0.53 compatibility names (SHA1, MD5, ...) would
 * clash with OpenSSL's. */
#define NO_COMPAT_IMB_API_053
#include <intel-ipsec-mb.h>
#include <nettle/sha2.h>

struct gc_accel {
	IMB_MGR *mgr;
	uint8_t *msg;			/* GC_ACCEL_MAX_UNITS * 72, locked: IVK */
	struct sha256_ctx *work;	/* locked: the IV key's state, copied */
	uint8_t ivs[GC_ACCEL_MAX_UNITS][32];
	IMB_JOB jobs[GC_ACCEL_MAX_UNITS];
};

struct gc_accel_cbc {
	/* 16-byte aligned (geli_secure_alloc), as the library wants. */
	uint32_t enc[60], dec[60];
	IMB_KEY_SIZE_BYTES size;
	uint8_t ivk[64];		/* for the jobs */
	struct sha256_ctx ivstate;	/* the IV key absorbed */
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char name[64];
static bool usable, has_sha;	/* has_sha: the CPU's SHA extensions */

static bool
ivs_as_jobs(void)
{
	int how = atomic_load(&ivs_route);

	return how >= 0 ? how != 0 : !has_sha;
}

static const char *
arch_name(IMB_ARCH arch)
{
	switch (arch) {
	case IMB_ARCH_SSE:
		return "sse";
	case IMB_ARCH_AVX:
		return "avx";
	case IMB_ARCH_AVX2:
		return "avx2";
	case IMB_ARCH_AVX512:
		return "avx512";
	default:
		return NULL;
	}
}

/* Once per process: what the library picks for this CPU.  Without AES-NI
 * (IMB_ARCH_NOAESNI) the backends do as well: not used. */
static void
probe(void)
{
	const char *off = getenv("GELI_ACCEL");
	IMB_MGR *m;
	IMB_ARCH arch = IMB_ARCH_NONE;

	if (off != NULL && strcmp(off, "none") == 0)
		return;
	m = alloc_mb_mgr(0);
	if (m == NULL)
		return;
	init_mb_mgr_auto(m, &arch);
	if (imb_get_errno(m) == 0 && arch_name(arch) != NULL) {
		snprintf(name, sizeof(name), "ipsec-mb %s (%s)",
		    imb_get_version_str(), arch_name(arch));
		usable = true;
	}
#if defined(__x86_64__) || defined(__i386__)
	/* CPUID leaf 7: EBX bit 29 the SHA extensions, ECX bit 9 VAES. */
	unsigned a, b, c, d;

	if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
		has_sha = (b & (1u << 29)) != 0;
		wide = arch == IMB_ARCH_AVX512 && (c & (1u << 9)) != 0;
	}
#endif
	free_mb_mgr(m);
}

const char *
gc_accel_name(void)
{
	pthread_once(&once, probe);
	return usable ? name : NULL;
}

int
gc_accel_new(struct gc_accel **out)
{
	struct gc_accel *a;
	IMB_ARCH arch;

	*out = NULL;
	if (gc_accel_name() == NULL)
		return -ENOTSUP;
	a = calloc(1, sizeof(*a));
	if (a == NULL)
		return -ENOMEM;
	a->msg = geli_secure_alloc(GC_ACCEL_MAX_UNITS * 72);
	a->work = geli_secure_alloc(sizeof(*a->work));
	a->mgr = alloc_mb_mgr(0);
	if (a->msg == NULL || a->work == NULL || a->mgr == NULL) {
		gc_accel_free(a);
		return -ENOMEM;
	}
	init_mb_mgr_auto(a->mgr, &arch);
	if (imb_get_errno(a->mgr) != 0) {
		gc_accel_free(a);
		return -ENOTSUP;
	}
	*out = a;
	return 0;
}

void
gc_accel_free(struct gc_accel *a)
{
	if (a == NULL)
		return;
	if (a->mgr != NULL)
		free_mb_mgr(a->mgr);
	geli_secure_free(a->msg);
	geli_secure_free(a->work);
	free(a);
}

int
gc_accel_cbc_new(struct gc_accel *a, const uint8_t *key, size_t keybytes,
    const uint8_t ivk[64], struct gc_accel_cbc **out)
{
	struct gc_accel_cbc *k;

	*out = NULL;
	if (keybytes != 16 && keybytes != 24 && keybytes != 32)
		return -EINVAL;
	k = geli_secure_alloc(sizeof(*k));
	if (k == NULL)
		return -ENOMEM;
	switch (keybytes) {
	case 16:
		IMB_AES_KEYEXP_128(a->mgr, key, k->enc, k->dec);
		k->size = IMB_KEY_128_BYTES;
		break;
	case 24:
		IMB_AES_KEYEXP_192(a->mgr, key, k->enc, k->dec);
		k->size = IMB_KEY_192_BYTES;
		break;
	default:
		IMB_AES_KEYEXP_256(a->mgr, key, k->enc, k->dec);
		k->size = IMB_KEY_256_BYTES;
		break;
	}
	memcpy(k->ivk, ivk, sizeof(k->ivk));
	sha256_init(&k->ivstate);
	sha256_update(&k->ivstate, sizeof(k->ivk), k->ivk);
	*out = k;
	return 0;
}

void
gc_accel_cbc_free(struct gc_accel_cbc *k)
{
	geli_secure_free(k);	/* wipes the schedules and the IV key */
}

/* One job's status; every job of the run is checked. */
static int
job_done(const IMB_JOB *j, size_t *done)
{
	if (j->status != IMB_STATUS_COMPLETED)
		return -EIO;
	(*done)++;
	return 0;
}

/* The IVs of n units from the IV key's state, one at a time. */
static void
state_ivs(struct gc_accel *a, const struct gc_accel_cbc *k, uint64_t off,
    size_t n, size_t len)
{
	uint8_t off8[8];

	for (size_t i = 0; i < n; i++) {
		*a->work = k->ivstate;
		le64enc(off8, off + i * len);
		sha256_update(a->work, sizeof(off8), off8);
		sha256_digest(a->work, 16, a->ivs[i]);
	}
	geli_wipe(a->work, sizeof(*a->work));
}

/* The IVs of n units: SHA-256 jobs, submitted, then flushed. */
static int
job_ivs(struct gc_accel *a, const uint8_t ivk[64], uint64_t off, size_t n,
    size_t len)
{
	IMB_MGR *m = a->mgr;
	IMB_JOB *j;
	size_t done = 0;
	int error = 0;

	for (size_t i = 0; i < n; i++) {
		uint8_t *msg = a->msg + i * 72;

		memcpy(msg, ivk, 64);
		le64enc(msg + 64, off + i * len);
		j = IMB_GET_NEXT_JOB(m);
		j->cipher_mode = IMB_CIPHER_NULL;
		j->cipher_direction = IMB_DIR_ENCRYPT;
		j->chain_order = IMB_ORDER_HASH_CIPHER;
		j->hash_alg = IMB_AUTH_SHA_256;
		j->src = msg;
		j->dst = NULL;
		j->msg_len_to_cipher_in_bytes = 0;
		j->cipher_start_src_offset_in_bytes = 0;
		j->hash_start_src_offset_in_bytes = 0;
		j->msg_len_to_hash_in_bytes = 72;
		j->auth_tag_output = a->ivs[i];
		j->auth_tag_output_len_in_bytes = 32;
		for (j = IMB_SUBMIT_JOB(m); j != NULL; j = IMB_GET_COMPLETED_JOB(m))
			if (error == 0)
				error = job_done(j, &done);
	}
	while ((j = IMB_FLUSH_JOB(m)) != NULL)
		if (error == 0)
			error = job_done(j, &done);
	if (error == 0 && done != n)
		error = -EIO;
	return error;
}

/* The IVs of n units into a->ivs, by the route of the moment. */
static int
make_ivs(struct gc_accel *a, const struct gc_accel_cbc *k, uint64_t off,
    size_t n, size_t len)
{
	int error = 0;

	if (ivs_as_jobs()) {
		error = job_ivs(a, k->ivk, off, n, len);
		geli_wipe(a->msg, n * 72);
	} else {
		state_ivs(a, k, off, n, len);
	}
	return error;
}

int
gc_accel_cbc_ivs(struct gc_accel *a, struct gc_accel_cbc *k, uint64_t off,
    size_t n, size_t len, uint8_t *ivs)
{
	int error;

	if (n > GC_ACCEL_MAX_UNITS)
		return -EINVAL;
	error = make_ivs(a, k, off, n, len);
	for (size_t i = 0; i < n && error == 0; i++)
		memcpy(ivs + i * 16, a->ivs[i], 16);
	return error;
}

int
gc_accel_cbc_run(struct gc_accel *a, struct gc_accel_cbc *k, uint64_t off,
    size_t n, const uint8_t *in, uint8_t *out, size_t len, int enc)
{
	IMB_CIPHER_DIRECTION dir = enc ? IMB_DIR_ENCRYPT : IMB_DIR_DECRYPT;
	int error;

	if (n == 0)
		return 0;
	if (n > GC_ACCEL_MAX_UNITS || len == 0 || len % 16 != 0 ||
	    len > GC_ACCEL_MAX_UNIT)
		return -EINVAL;
	error = make_ivs(a, k, off, n, len);
	for (size_t i = 0; i < n && error == 0; i++) {
		IMB_JOB *j = &a->jobs[i];

		j->src = in + i * len;
		j->dst = out + i * len;
		j->cipher_start_src_offset_in_bytes = 0;
		j->msg_len_to_cipher_in_bytes = len;
		j->iv = a->ivs[i];
		j->iv_len_in_bytes = 16;
		j->enc_keys = k->enc;
		j->dec_keys = k->dec;
		j->key_len_in_bytes = k->size;
	}
	if (error == 0 && IMB_SUBMIT_CIPHER_BURST(a->mgr, a->jobs, (uint32_t)n,
	    IMB_CIPHER_CBC, dir, k->size) != n)
		error = -EIO;
	return error;
}

#else /* !GELI_HAVE_IPSECMB */

struct gc_accel { int unused; };
struct gc_accel_cbc { int unused; };

const char *
gc_accel_name(void)
{
	return NULL;
}

int
gc_accel_new(struct gc_accel **out)
{
	*out = NULL;
	return -ENOTSUP;
}

void
gc_accel_free(struct gc_accel *a)
{
	(void)a;
}

int
gc_accel_cbc_new(struct gc_accel *a, const uint8_t *key, size_t keybytes,
    const uint8_t ivk[64], struct gc_accel_cbc **out)
{
	(void)a, (void)key, (void)keybytes, (void)ivk;
	*out = NULL;
	return -ENOTSUP;
}

void
gc_accel_cbc_free(struct gc_accel_cbc *k)
{
	(void)k;
}

int
gc_accel_cbc_ivs(struct gc_accel *a, struct gc_accel_cbc *k, uint64_t off,
    size_t n, size_t len, uint8_t *ivs)
{
	(void)a, (void)k, (void)off, (void)n, (void)len, (void)ivs;
	return -ENOTSUP;
}

int
gc_accel_cbc_run(struct gc_accel *a, struct gc_accel_cbc *k, uint64_t off,
    size_t n, const uint8_t *in, uint8_t *out, size_t len, int enc)
{
	(void)a, (void)k, (void)off, (void)n, (void)in, (void)out, (void)len;
	(void)enc;
	return -ENOTSUP;
}

#endif
