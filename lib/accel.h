/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * An accelerator beside the crypto backends (crypto_backend.h): runs of
 * AES-CBC units, their IVs included, many at once, through Intel's ipsec-mb
 * (one CBC burst) with the IVs from Nettle's SHA-256 (the IV key absorbed
 * once) or ipsec-mb's multi-buffer SHA-256.  CBC is serial
 * inside a unit, so one unit at a time keeps one stage of the CPU's AES
 * pipeline busy; several units side by side fill it.  Everything else stays
 * on the selected backend.
 *
 * Built when meson finds the library (-Daccel=disabled leaves it out), used
 * when the CPU has AES-NI, unless GELI_ACCEL=none.  Its manager is not
 * thread-safe: one struct gc_accel per worker thread (sector_ctx).
 */
#ifndef GELI_ACCEL_H
#define GELI_ACCEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The fewest units per run worth a burst (one alone runs as fast on the
 * backend), and the largest unit the library takes. */
#define GC_ACCEL_MIN_UNITS 2
#define GC_ACCEL_MAX_UNIT 65534
#define GC_ACCEL_MAX_UNITS 256	/* most units per run */

struct gc_accel;	/* one worker thread's: the library's manager */
struct gc_accel_cbc;	/* one AES key, expanded both ways, locked memory */

/* "ipsec-mb 1.3.0 (avx512)" when the accelerator is in use in this process,
 * else NULL (not built, no AES-NI, GELI_ACCEL=none). */
const char *gc_accel_name(void);

/* Whether runs go to it now: it is in use, not switched off by
 * geli_crypto_set_accel(false), and the hardware is not disabled
 * (geli_crypto_disable_hwaccel). */
bool gc_accel_enabled(void);

/* A manager for the calling thread; -ENOTSUP when none is in use. */
int gc_accel_new(struct gc_accel **out);
void gc_accel_free(struct gc_accel *a);

/* AES key of 16, 24 or 32 bytes (-EINVAL for another length) and the
 * volume's 64-byte IV key, both kept in locked memory. */
int gc_accel_cbc_new(struct gc_accel *a, const uint8_t *key, size_t keybytes,
    const uint8_t ivk[64], struct gc_accel_cbc **out);
/* Wiped and freed (NULL is fine). */
void gc_accel_cbc_free(struct gc_accel_cbc *k);

/*
 * n units of len bytes (a multiple of 16, at most GC_ACCEL_MAX_UNIT), unit i
 * at byte offset off + i*len, from in + i*len to out + i*len (in == out is
 * fine), AES-CBC with k; n at most GC_ACCEL_MAX_UNITS.  Unit i's IV:
 * SHA256(IV key || LE64(off + i*len)) cut to 16 bytes.
 */
int gc_accel_cbc_run(struct gc_accel *a, struct gc_accel_cbc *k, uint64_t off,
    size_t n, const uint8_t *in, uint8_t *out, size_t len, int enc);

/* The IVs of such a run alone, 16 bytes each, into ivs: for a run that the
 * backend decrypts (gc_accel_decrypts). */
int gc_accel_cbc_ivs(struct gc_accel *a, struct gc_accel_cbc *k, uint64_t off,
    size_t n, size_t len, uint8_t *ivs);

/*
 * Whether runs are decrypted here too, or only their IVs made here and
 * the units decrypted by the backend (CBC decryption is parallel inside a
 * unit, and libgcrypt's VAES code beats ipsec-mb's 8-lane AES-NI code):
 * here only where ipsec-mb runs its AVX-512 code with VAES, 16 units side
 * by side (docs/benchmarks.md).  gc_accel_decrypt_runs(-1) is the CPU's
 * choice; 0 or 1 force one route (the tests run both).
 */
bool gc_accel_decrypts(void);
void gc_accel_decrypt_runs(int how);

/*
 * How the IVs are hashed: from Nettle's state of the IV key where the CPU
 * has the SHA extensions (one block per IV, with them), as ipsec-mb's
 * multi-buffer jobs where it has not (docs/benchmarks.md).
 * gc_accel_ivs_as_jobs(-1) is the CPU's choice; 0 (Nettle) or 1 (jobs)
 * force one route (the tests run both).
 */
void gc_accel_ivs_as_jobs(int how);

#endif
