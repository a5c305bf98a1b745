/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * User key derivation (§4.2–§4.4):
 *
 *   UserKey  = HMAC_SHA512(key = "", KF_1 || ... || KF_n || PASSPART)
 *   PASSPART = ""                                   no passphrase (-p/-P)
 *            = salt || passphrase                   iterations == 0
 *            = PBKDF2_HMAC_SHA512(passphrase, salt, iterations, 64)
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "crypto.h"
#include "geli.h"

/*
 * The keyfiles' bytes, kept in secure memory until geli_ukey_final hashes
 * them: a hash context fed as they come would hold their last partial
 * block in ordinary memory, which a forked attach daemon inherits.
 */
struct geli_ukey_ctx {
	uint8_t *data;		/* secure */
	size_t len, cap;
};

int
geli_ukey_new(struct geli_ukey_ctx **out)
{
	struct geli_ukey_ctx *ctx;

	ctx = calloc(1, sizeof(*ctx));
	if (ctx == NULL)
		return -ENOMEM;
	*out = ctx;
	return 0;
}

/* Room for len more bytes (the secure buffer doubled as needed). */
static int
reserve(struct geli_ukey_ctx *ctx, size_t len)
{
	uint8_t *n;
	size_t cap;

	if (len > SIZE_MAX / 2 - ctx->len)
		return -ENOMEM;
	if (ctx->len + len <= ctx->cap)
		return 0;
	for (cap = ctx->cap != 0 ? ctx->cap : 4096; cap < ctx->len + len;)
		cap *= 2;
	n = geli_secure_alloc(cap);
	if (n == NULL)
		return -ENOMEM;
	if (ctx->len > 0)
		memcpy(n, ctx->data, ctx->len);
	geli_secure_free(ctx->data);
	ctx->data = n;
	ctx->cap = cap;
	return 0;
}

int
geli_ukey_update(struct geli_ukey_ctx *ctx, const void *data, size_t len)
{
	int error = reserve(ctx, len);

	if (error != 0)
		return error;
	memcpy(ctx->data + ctx->len, data, len);
	ctx->len += len;
	return 0;
}

int
geli_ukey_update_fd(struct geli_ukey_ctx *ctx, int fd)
{
	ssize_t n;
	int error;

	/* Read straight into the secure buffer: no copy anywhere else. */
	do {
		if ((error = reserve(ctx, 4096)) != 0)
			return error;
		while ((n = read(fd, ctx->data + ctx->len, ctx->cap - ctx->len)) < 0 &&
		    errno == EINTR)
			;
		if (n < 0)
			return -errno;
		ctx->len += (size_t)n;
	} while (n > 0);
	return 0;
}

int
geli_ukey_final(const struct geli_ukey_ctx *ctx, const struct geli_metadata *md,
    const char *passphrase, size_t passlen, uint8_t *ukey)
{
	struct gc_hmac *h;
	uint8_t *dkey;
	int error;

	if (passphrase != NULL && md->iterations < 0)
		return -EINVAL;
	error = gc_hmac_sha512_new(NULL, 0, &h);
	if (error != 0)
		return error;
	if (ctx->len > 0)
		error = gc_hmac_update(h, ctx->data, ctx->len);
	if (error == 0 && passphrase != NULL && md->iterations == 0) {
		error = gc_hmac_update(h, md->salt, sizeof(md->salt));
		if (error == 0)
			error = gc_hmac_update(h, passphrase, passlen);
	} else if (error == 0 && passphrase != NULL) {
		dkey = geli_secure_alloc(GELI_USERKEYLEN);
		if (dkey == NULL) {
			error = -ENOMEM;
		} else {
			error = gc_pbkdf2_sha512(passphrase, passlen, md->salt,
			    sizeof(md->salt), (uint32_t)md->iterations, dkey,
			    GELI_USERKEYLEN);
			if (error == 0)
				error = gc_hmac_update(h, dkey,
				    GELI_USERKEYLEN);
			geli_secure_free(dkey);
		}
	}
	if (error == 0)
		error = gc_hmac_final(h, ukey, GELI_USERKEYLEN);
	gc_hmac_free(h);
	if (error != 0)
		geli_wipe(ukey, GELI_USERKEYLEN);
	return error;
}

void
geli_ukey_free(struct geli_ukey_ctx *ctx)
{
	if (ctx == NULL)
		return;
	geli_secure_free(ctx->data);
	free(ctx);
}

int
geli_pbkdf2_sha512(const void *pass, size_t passlen, const void *salt,
    size_t saltlen, uint32_t iterations, void *out, size_t outlen)
{
	return gc_pbkdf2_sha512(pass, passlen, salt, saltlen, iterations, out,
	    outlen);
}

/* User CPU time of this thread, in microseconds. */
static long long
cpu_usecs(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru) != 0)
		return -1;
	return (long long)ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec;
}

int
geli_pbkdf2_calibrate(unsigned long usecs)
{
	static const char pass[] = "passphrase";
	uint8_t salt[GELI_SALTLEN] = { 0 }, key[GELI_USERKEYLEN];
	long long t0, t1, spent;
	long long result;
	uint32_t it;
	int error;

	/*
	 * As pkcs5v2_calculate(): double the count until one run takes more
	 * than two seconds of CPU, then scale to the wanted time.
	 */
	for (it = 1; ; it <<= 1) {
		t0 = cpu_usecs();
		error = gc_pbkdf2_sha512(pass, sizeof(pass) - 1, salt,
		    sizeof(salt), it, key, sizeof(key));
		t1 = cpu_usecs();
		if (error != 0)
			return error;
		if (t0 < 0 || t1 < 0)
			return -EIO;
		spent = t1 - t0;
		if (spent > 2000000 || it >= (1u << 30))
			break;
	}
	geli_wipe(key, sizeof(key));
	if (spent <= 0)
		spent = 1;
	result = (long long)it * (long long)usecs / spent;
	if (result < 1)
		result = 1;
	if (result > INT32_MAX)
		result = INT32_MAX;
	return (int)result;
}
