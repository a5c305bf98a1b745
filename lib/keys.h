/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Runtime keys of an attached volume (docs/format.md §6.2, §7.3), derived
 * from the 128-byte Master Key MK = IVK || DK:
 *
 *   IV key          IVK                              (CBC IVs, §6.3)
 *   auth key        AK  = HMAC_SHA512(DK, 0x11)      (integrity, §7.3)
 *   encryption base EKB = DK, or HMAC_SHA512(DK, 0x10) with AUTH
 *   range key k     RangeKey(B, k) = HMAC_SHA512(B, "ekey" || LE64(k)),
 *                   B = IVK when ENC_IVKEY (v < 7), else EKB
 *   single key      EKB for the whole volume when SINGLE_KEY (v < 5)
 *
 * Key number of a byte offset: (off >> 20) / S without AUTH, and
 * (phys >> 20) / P with AUTH; always 0 with FIRST_KEY (v5 with AUTH).
 */
#ifndef GELI_KEYS_H
#define GELI_KEYS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "geli.h"

/* The secrets, in secure memory; only keys.c looks inside. */
struct keys_secret;

/* Embedded in the volume; its fields are keys.c's, read through the
 * functions below. */
struct geli_keys {
	uint32_t rflags;	/* runtime flags (geli_metadata_runtime_flags) */
	uint32_t divisor;	/* S, or P with AUTH */
	unsigned shift;		/* 20 + log2(divisor) when a power of two, else 0 */
	bool single;		/* one key everywhere (SINGLE_KEY) */
	struct keys_secret *s;	/* secure memory */
	pthread_mutex_t lock;
};

/* one_key: DK is the one key of the whole volume whatever md says (LUKS2:
 * GELI_VOLUME_LUKS2). */
int keys_init(struct geli_keys *keys, const struct geli_metadata *md,
    const uint8_t *mkey, uint32_t psize, bool one_key);
/* The 64-byte IV key IVK and auth key AK (secure memory; valid until the
 * next keys_wipe or keys_destroy). */
const uint8_t *keys_ivk(const struct geli_keys *keys);
const uint8_t *keys_ak(const struct geli_keys *keys);
/* The key number for a byte offset (logical, or physical with AUTH). */
uint64_t keys_number(const struct geli_keys *keys, uint64_t off);
/* The 64-byte encryption key number k. */
int keys_get(struct geli_keys *keys, uint64_t k, uint8_t *out);
/* Range keys over n bytes (logical, or physical with AUTH): KeysTotal. */
uint64_t keys_total(const struct geli_keys *keys, uint64_t n);
/* Range keys derived and cached now (KeysAllocated; 0 with one key). */
uint64_t keys_cached(struct geli_keys *keys);
/* Wipe everything (suspend, close). */
void keys_wipe(struct geli_keys *keys);
void keys_destroy(struct geli_keys *keys);

#endif
