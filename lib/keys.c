/* SPDX-License-Identifier: BSD-2-Clause */
/* Runtime keys and the range-key cache (see keys.h). */
#include <string.h>

#include "crypto.h"
#include "endian.h"
#include "keys.h"

#define KEYS_CACHE 64	/* range keys kept (direct-mapped by key number) */

struct keys_secret {
	uint8_t ivk[64];
	uint8_t base[64];	/* range-key base, or the single key */
	uint8_t ak[64];
	struct {
		uint64_t k;
		bool valid;
		uint8_t key[64];
	} cache[KEYS_CACHE];
};

int
keys_init(struct geli_keys *keys, const struct geli_metadata *md,
    const uint8_t *mkey, uint32_t psize, bool one_key)
{
	static const uint8_t x10 = 0x10, x11 = 0x11;
	const uint8_t *dk = mkey + 64;
	int error = 0;

	if (keys->s == NULL) {
		memset(keys, 0, sizeof(*keys));
		keys->s = geli_secure_alloc(sizeof(*keys->s));
		if (keys->s == NULL)
			return -ENOMEM;
		pthread_mutex_init(&keys->lock, NULL);
	}
	keys->rflags = geli_metadata_runtime_flags(md);
	keys->single = one_key || (keys->rflags & GELI_FLAG_SINGLE_KEY) != 0;
	keys->divisor = (md->flags & GELI_FLAG_AUTH) ? psize : md->sectorsize;
	keys->shift = 0;
	if ((keys->divisor & (keys->divisor - 1)) == 0)
		keys->shift = 20 + (unsigned)__builtin_ctz(keys->divisor);
	memset(keys->s, 0, sizeof(*keys->s));
	memcpy(keys->s->ivk, mkey, 64);
	if (md->flags & GELI_FLAG_AUTH) {
		error = gc_hmac_sha512(dk, 64, &x11, 1, keys->s->ak);
		if (error == 0)
			error = gc_hmac_sha512(dk, 64, &x10, 1, keys->s->base);
	} else {
		memcpy(keys->s->base, dk, 64);
	}
	/* v5/v6: range keys come from the IV key (ENC_IVKEY). */
	if (!keys->single && (keys->rflags & GELI_FLAG_ENC_IVKEY))
		memcpy(keys->s->base, keys->s->ivk, 64);
	if (error != 0)
		keys_wipe(keys);
	return error;
}

const uint8_t *
keys_ivk(const struct geli_keys *keys)
{
	return keys->s->ivk;
}

const uint8_t *
keys_ak(const struct geli_keys *keys)
{
	return keys->s->ak;
}

uint64_t
keys_number(const struct geli_keys *keys, uint64_t off)
{
	if (keys->single || (keys->rflags & GELI_FLAG_FIRST_KEY))
		return 0;
	/* (off >> 20) / divisor, without a division on the hot path. */
	if (keys->shift != 0)
		return off >> keys->shift;
	return (off >> 20) / keys->divisor;
}

int
keys_get(struct geli_keys *keys, uint64_t k, uint8_t *out)
{
	uint8_t msg[12];
	unsigned slot;
	int error = 0;

	if (keys->single) {
		memcpy(out, keys->s->base, 64);
		return 0;
	}
	slot = (unsigned)(k % KEYS_CACHE);
	pthread_mutex_lock(&keys->lock);
	if (keys->s->cache[slot].valid && keys->s->cache[slot].k == k) {
		memcpy(out, keys->s->cache[slot].key, 64);
	} else {
		memcpy(msg, "ekey", 4);
		le64enc(msg + 4, k);
		error = gc_hmac_sha512(keys->s->base, 64, msg, sizeof(msg),
		    keys->s->cache[slot].key);
		keys->s->cache[slot].valid = error == 0;
		keys->s->cache[slot].k = k;
		if (error == 0)
			memcpy(out, keys->s->cache[slot].key, 64);
	}
	pthread_mutex_unlock(&keys->lock);
	return error;
}

uint64_t
keys_total(const struct geli_keys *keys, uint64_t n)
{
	if (keys->single)
		return 1;
	return n == 0 ? 1 : ((n - 1) >> 20) / keys->divisor + 1;
}

uint64_t
keys_cached(struct geli_keys *keys)
{
	uint64_t n = 0;

	if (keys->single)
		return 0;
	pthread_mutex_lock(&keys->lock);
	for (unsigned i = 0; i < KEYS_CACHE; i++)
		n += keys->s->cache[i].valid;
	pthread_mutex_unlock(&keys->lock);
	return n;
}

void
keys_wipe(struct geli_keys *keys)
{
	if (keys->s != NULL)
		geli_wipe(keys->s, sizeof(*keys->s));
}

void
keys_destroy(struct geli_keys *keys)
{
	if (keys->s == NULL)
		return;
	geli_secure_free(keys->s);
	keys->s = NULL;
	pthread_mutex_destroy(&keys->lock);
}
