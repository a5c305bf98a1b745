/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A pool's providers on this machine (see truenas.h): by PARTUUID, else by
 * trying the key on freebsd-zfs partitions, read-only and in-process
 * (geli_unlock: attach -C's check).
 */
#include <stdio.h>
#include <string.h>

#include "truenas.h"

/* Does k open the GELI provider at dev?  Read-only; the slot in d. */
static void
try_key(const char *dev, const struct keys *k, struct disk *d)
{
	struct geli_provider *prov;
	struct geli_metadata md;
	struct geli_ukey_ctx *ctx = NULL;
	struct geli_keymat km = { 0 };
	int error;

	error = geli_provider_open(dev, false, &prov);
	if (error != 0) {
		d->key = K_ERROR;
		snprintf(d->why, sizeof(d->why), "cannot open it: %s",
		    strerror(-error));
		return;
	}
	error = geli_provider_read_metadata(prov, &md);
	if (error != 0) {
		d->key = K_NOGELI;
		snprintf(d->why, sizeof(d->why), "no GELI metadata on it");
		geli_provider_close(prov);
		return;
	}
	if (k == NULL || k->key == NULL ||
	    (k->pass == NULL && md.iterations != -1 && !k->recovery)) {
		d->key = K_UNTRIED;
		geli_provider_close(prov);
		return;
	}
	error = geli_ukey_new(&ctx);
	if (error == 0)
		error = geli_ukey_update(ctx, k->key, k->keylen);
	km.keyfiles = ctx;
	km.nkeyfiles = 1;
	km.passphrase = k->pass;
	km.passlen = k->pass != NULL ? strlen(k->pass) : 0;
	if (error == 0)
		error = geli_unlock(prov, &md, &km, -1, 0, NULL, &d->slot);
	geli_ukey_free(ctx);
	geli_provider_close(prov);
	if (error == 0)
		d->key = K_OPENS;
	else if (error == -GELI_EWRONGKEY || error == -GELI_ENOPASSPHRASE)
		d->key = K_WRONG;
	else {
		d->key = K_ERROR;
		snprintf(d->why, sizeof(d->why), "%s", geli_strerror(error));
	}
}

/*
 * Where pool p's providers are: by PARTUUID, then (with a key) the
 * freebsd-zfs partitions that no provider claimed and that the key opens,
 * for the providers left (stale names, changed tables).  disks gets one
 * entry per provider and one per partition found by key; their count.
 */
size_t
locate(const struct pool *p, struct part *parts, size_t nparts,
    const struct keys *k, struct disk *disks, size_t max)
{
	size_t n = 0, missing = 0;

	for (size_t i = 0; i < p->nproviders && n < max; i++) {
		struct disk *d = &disks[n++];
		const char *prov = p->providers[i];

		memset(d, 0, sizeof(*d));
		d->provider = prov;
		d->slot = -1;
		if (strncmp(prov, "gptid/", 6) == 0)
			d->part = parts_by_uuid(parts, nparts, prov + 6);
		if (d->part == NULL) {
			missing++;
			continue;
		}
		d->part->claimed = true;
		d->where = W_BY_UUID;
		try_key(d->part->dev, k, d);
	}
	if (missing == 0 || k == NULL || k->key == NULL)
		return n;
	for (size_t i = 0; i < nparts && n < max && missing > 0; i++) {
		struct disk d = { .where = W_BY_KEY, .part = &parts[i],
		    .slot = -1 };

		if (parts[i].claimed || strcmp(parts[i].type, GPT_FREEBSD_ZFS) != 0)
			continue;
		try_key(parts[i].dev, k, &d);
		if (d.key != K_OPENS)
			continue;
		parts[i].claimed = true;
		disks[n++] = d;
		missing--;
	}
	return n;
}

/* What was tried: "key", "key and passphrase" or "recovery key". */
static const char *
key_words(const struct keys *k)
{
	return k->recovery ? "recovery key" : k->pass != NULL ?
	    "key and passphrase" : "key";
}

static const char *
state_text(const struct disk *d, const struct keys *k, char *buf, size_t len)
{
	switch (d->key) {
	case K_OPENS:
		snprintf(buf, len, "the %s opens it (slot %d)", key_words(k),
		    d->slot);
		break;
	case K_WRONG:
		snprintf(buf, len, "the %s does not open it", key_words(k));
		break;
	case K_UNTRIED:
		snprintf(buf, len, "GELI provider; %s", k == NULL ||
		    k->key == NULL ? "no key to try" :
		    "the passphrase is needed to try the key (-j)");
		break;
	default:
		snprintf(buf, len, "%s", d->why);
	}
	return buf;
}

/* The disks of pool p, printed; the count of disks the key opens. */
size_t
print_disks(const struct disk *disks, size_t n,
    const struct keys *k, size_t *missing)
{
	size_t opens = 0, unfound = 0, bykey = 0;
	char st[200];

	for (size_t i = 0; i < n; i++) {
		const struct disk *d = &disks[i];

		if (d->where == W_MISSING) {
			unfound++;
			continue;
		}
		opens += d->key == K_OPENS;
		if (d->where == W_BY_UUID) {
			printf("  %s: %s, %s\n", d->provider, d->part->dev,
			    state_text(d, k, st, sizeof(st)));
		} else {
			bykey++;
			printf("  found by its key: %s (PARTUUID %s), %s\n",
			    d->part->dev, d->part->uuid,
			    state_text(d, k, st, sizeof(st)));
		}
	}
	/* Providers not found: those the key did not account for. */
	*missing = unfound > bykey ? unfound - bykey : 0;
	for (size_t i = 0; i < n; i++)
		if (disks[i].where == W_MISSING)
			printf("  %s: %s\n", disks[i].provider, bykey > 0 ?
			    "not found by its PARTUUID" : "not found");
	return opens;
}
