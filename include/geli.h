/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libgeli — FreeBSD GELI volumes on Linux.
 *
 * The only public header.  Every function returns 0 (or a documented
 * non-negative value) on success and a negative errno value on failure; the
 * library never prints, never exits and never reads a terminal.
 *
 * Error codes with a meaning of their own:
 *   -EINVAL        no GELI magic, or a bad argument
 *   -EBADMSG       the metadata MD5 does not match ("Inconsistent ... metadata")
 *   -EOPNOTSUPP    metadata version newer than GELI_VERSION
 *   -GELI_EWRONGKEY no key slot opens with the given user key
 *
 * Format references (§n) point at docs/format.md.
 */
#ifndef GELI_H
#define GELI_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GELI_API __attribute__((visibility("default")))

/* ---- Format constants (§1, §4.1) -------------------------------------- */

#define GELI_MAGIC          "GEOM::ELI"
#define GELI_VERSION        7   /* newest metadata version (G_ELI_VERSION) */
#define GELI_MD_SIZE        511 /* encoded record, versions 1..7 */
#define GELI_MD_SIZE_V0     509 /* encoded record, version 0 (no md_aalgo) */
#define GELI_SALTLEN        64
#define GELI_USERKEYLEN     64  /* HMAC-SHA512 output */
#define GELI_MKEY_DATALEN   128 /* Master Key = IV Key (0..63) || Data Key (64..127) */
#define GELI_MKEYLEN        192 /* one encrypted slot: Master Key || HMAC-SHA512 */
#define GELI_MAXMKEYS       2
#define GELI_OVERWRITES     5   /* random passes when destroying metadata */
#define GELI_MAX_PASSLEN    1023

/* A distinct code for "wrong key", so callers can say so and ask again. */
#define GELI_EWRONGKEY      EKEYREJECTED

/* ---- Algorithms: opencrypto numbers stored in md_ealgo/md_aalgo (§3.1) - */

enum geli_algo {
	GELI_ALGO_NONE         = 0,
	GELI_ALGO_3DES_CBC     = 2,   /* legacy */
	GELI_ALGO_BLOWFISH_CBC = 3,   /* legacy */
	GELI_ALGO_HMAC_MD5     = 6,   /* legacy */
	GELI_ALGO_HMAC_SHA1    = 7,
	GELI_ALGO_HMAC_RMD160  = 8,
	GELI_ALGO_AES_CBC      = 11,
	GELI_ALGO_NULL         = 16,
	GELI_ALGO_HMAC_SHA256  = 18,
	GELI_ALGO_HMAC_SHA384  = 19,
	GELI_ALGO_HMAC_SHA512  = 20,
	GELI_ALGO_CAMELLIA_CBC = 21,
	GELI_ALGO_AES_XTS      = 22,
};

/* ---- Flags (§2) --------------------------------------------------------- */

/* Stored on disk. */
#define GELI_FLAG_ONETIME          0x00000001u
#define GELI_FLAG_BOOT             0x00000002u
#define GELI_FLAG_WO_DETACH        0x00000004u
#define GELI_FLAG_RW_DETACH        0x00000008u
#define GELI_FLAG_AUTH             0x00000010u
#define GELI_FLAG_RO               0x00000020u
#define GELI_FLAG_NODELETE         0x00000040u
#define GELI_FLAG_GELIBOOT         0x00000080u
#define GELI_FLAG_GELIDISPLAYPASS  0x00000100u
#define GELI_FLAG_AUTORESIZE       0x00000200u
/* Runtime only: never written to disk. */
#define GELI_FLAG_WOPEN            0x00010000u
#define GELI_FLAG_DESTROY          0x00020000u
#define GELI_FLAG_NATIVE_BYTE_ORDER 0x00040000u /* v<4: host-order offset in the CBC IV */
#define GELI_FLAG_SINGLE_KEY       0x00080000u /* v<5: one data key */
#define GELI_FLAG_SUSPEND          0x00100000u
#define GELI_FLAG_FIRST_KEY        0x00200000u /* v<6 with AUTH: key #0 everywhere */
#define GELI_FLAG_ENC_IVKEY        0x00400000u /* v<7: range keys from the IV key */

/* ---- Metadata (§1) ------------------------------------------------------ */

/* The decoded metadata record.  Field names follow g_eli_metadata. */
struct geli_metadata {
	char     magic[16];     /* "GEOM::ELI" + NUL padding */
	uint32_t version;
	uint32_t flags;         /* on-disk flags */
	uint16_t ealgo;
	uint16_t keylen;        /* bits; for AES-XTS the size of one AES key */
	uint16_t aalgo;         /* 0 unless GELI_FLAG_AUTH (absent in v0) */
	uint64_t provsize;      /* size of the underlying provider at init */
	uint32_t sectorsize;    /* GELI sector size S */
	uint8_t  keys;          /* bit n: slot n valid */
	int32_t  iterations;    /* -1: no passphrase; 0: no PBKDF2 */
	uint8_t  salt[GELI_SALTLEN];
	uint8_t  mkeys[GELI_MAXMKEYS * GELI_MKEYLEN];
	uint8_t  hash[16];      /* MD5 of the encoded bytes before it */
};

/* Bytes of the encoded record for a version: 509 for v0, 511 otherwise. */
GELI_API size_t geli_metadata_size(uint32_t version);

/*
 * Decode a record from buf (len bytes; at least geli_metadata_size()).
 * -EINVAL: no magic or too short; -EOPNOTSUPP: version > GELI_VERSION (md->version
 * is set so the caller can name it); -EBADMSG: MD5 mismatch;
 * -GELI_EINPROGRESS: a record marked by an unfinished conversion
 * (GELI_REENC_MARK), decoded whole, md->version still marked.
 */
GELI_API int geli_metadata_decode(const void *buf, size_t len,
    struct geli_metadata *md);

/*
 * A conversion in progress (geli_reenc_*) marks the record it keeps on the
 * provider: md_version = GELI_REENC_MARK | the record's own version.  Every
 * reader that does not know conversions refuses it as "too new" (FreeBSD's
 * kernel and geli(8), GRUB: they accept versions up to 7), and the MD5 stays
 * valid.  geli_metadata_encode() writes such a version too.
 */
#define GELI_REENC_MARK		0x52450000u	/* "RE" */
#define GELI_REENC_MARKED(v)	(((v) & 0xffff0000u) == GELI_REENC_MARK)

/* True when buf starts with the GELI magic (bytes 0..9 = "GEOM::ELI\0"). */
GELI_API bool geli_metadata_has_magic(const void *buf, size_t len);

/*
 * Encode md in the layout of md->version (0..7, or marked) into buf (at least
 * GELI_MD_SIZE bytes; bytes past the record up to GELI_MD_SIZE are zeroed),
 * computing and storing md->hash.  Returns the record length or -EINVAL.
 */
GELI_API int geli_metadata_encode(struct geli_metadata *md, void *buf);
/* a and b encode to the same record (false when either does not encode). */
GELI_API bool geli_metadata_same(const struct geli_metadata *a,
    const struct geli_metadata *b);

/*
 * The one place where a metadata version turns into behaviour (§1.6): the
 * runtime flags (NATIVE_BYTE_ORDER, SINGLE_KEY, FIRST_KEY, ENC_IVKEY) the
 * kernel derives from md->version and md->flags, ORed with the on-disk flags.
 */
GELI_API uint32_t geli_metadata_runtime_flags(const struct geli_metadata *md);

/*
 * The largest GELI sector size: FreeBSD's MAXPHYS on 64-bit systems, the
 * largest single transfer GEOM passes down (a sector is read whole).
 */
#define GELI_MAX_SECTORSIZE	(1u << 20)

/*
 * The one check of a decoded record against what the code behind it can
 * do, before any work with keys (§8.2): 0, or the first of
 *   -EOPNOTSUPP        md->version > GELI_VERSION
 *   -GELI_EEALGO       md_ealgo unknown (or not in the crypto backend)
 *   -GELI_EKEYLEN      md_keylen not one of md_ealgo's lengths
 *   -GELI_EAALGO       GELI_FLAG_AUTH with md_aalgo unknown (0 included)
 *   -GELI_ESECTORSIZE  md_sectorsize 0, not a multiple of psize or of 16,
 *                      above GELI_MAX_SECTORSIZE, not a power of two
 *                      (except with GELI_FLAG_ONETIME, as onetime -s
 *                      allows), or with AUTH a psize with no room for data
 *                      beside the tag; psize 0 is -EINVAL
 *   -GELI_ENOROOM      an underlying provider of provsize bytes (0: not
 *                      checked) holds no whole GELI sector (§8.1)
 * md_provsize itself is not compared with provsize: the callers that must
 * (attach, resume) say "Provider size mismatch." first.  md_keys and
 * md_iterations are not looked at: FreeBSD accepts any count.
 */
GELI_API int geli_metadata_check(const struct geli_metadata *md,
    uint64_t provsize, uint32_t psize);

/* Size of the decrypted provider for an underlying provider of provsize bytes
 * with sector size psize (§8.1).  onetime: no metadata sector reserved. */
GELI_API uint64_t geli_eli_mediasize(const struct geli_metadata *md,
    uint64_t provsize, uint32_t psize, bool onetime);

/* Authenticated layout (§7.1): data bytes per physical sector and physical
 * sectors per GELI sector.  Returns -EINVAL when not an AUTH volume. */
GELI_API int geli_auth_layout(const struct geli_metadata *md, uint32_t psize,
    uint32_t *dps, uint32_t *lsec);

/* ---- Algorithms (§3) ---------------------------------------------------- */

/* "AES-XTS", "HMAC/SHA256", ... or "unknown" (g_eli_algo2str). */
GELI_API const char *geli_algo_name(unsigned algo);
/* Parse a -e / -a name, case-insensitive; GELI_ALGO_NONE when unknown. */
GELI_API unsigned geli_str2ealgo(const char *name);
GELI_API unsigned geli_str2aalgo(const char *name);
/* Validate a key length in bits (0 = the cipher's default); 0 = invalid. */
GELI_API unsigned geli_keylen(unsigned ealgo, unsigned keylen);
/* Digest length of an HMAC algorithm, 0 if unknown. */
GELI_API unsigned geli_hashlen(unsigned aalgo);
/* True for the algorithms current FreeBSD refuses (Blowfish, 3DES, HMAC/MD5). */
GELI_API bool geli_algo_is_legacy(unsigned algo);
/* True when the selected crypto backend can run the algorithm. */
GELI_API bool geli_algo_available(unsigned algo);

/* ---- Crypto backends --------------------------------------------------- */

/*
 * Both are built in: "gcrypt" (libgcrypt, the default) and "openssl"
 * (OpenSSL 3 libcrypto).  geli_crypto_select(NULL) takes $GELI_CRYPTO, else
 * the default; it is also what the first crypto call does when nothing was
 * selected.  -EINVAL: no such backend; -ENOSYS: its library cannot start.
 * Objects made earlier (volumes, contexts) keep their backend.
 */
GELI_API int geli_crypto_select(const char *name);
/* The backend in use ("gcrypt"), and its library ("libgcrypt 1.10.1"). */
GELI_API const char *geli_crypto_name(void);
GELI_API const char *geli_crypto_version(void);
/* The CPU features the backend's library uses, in its own words (libgcrypt:
 * "intel-aesni:intel-avx2:..."), or NULL when it does not say (OpenSSL). */
GELI_API const char *geli_crypto_hwfeatures(void);
/*
 * The accelerator of AES-CBC runs in use, with what it runs ("ipsec-mb 1.3.0
 * (avx512, encryption and decryption)", "ipsec-mb 1.3.0 (avx2, encryption)":
 * Intel's multi-buffer library, for many sectors at once), or NULL: not built, no
 * AES-NI, $GELI_ACCEL=none, or switched off here.  Everything else, and
 * single sectors, stay on the backend.
 */
GELI_API const char *geli_crypto_accel(void);
/* Switch it off (or on again) for this process: the benchmark compares. */
GELI_API void geli_crypto_set_accel(bool on);
/* The i-th backend's name (0 is the default), NULL past the last. */
GELI_API const char *geli_crypto_backend(unsigned i);
/* Before the first selection: no AES-NI, VAES or PCLMUL in libgcrypt for
 * this process (OpenSSL takes OPENSSL_ia32cap from the environment). */
GELI_API void geli_crypto_disable_hwaccel(void);

/* ---- Secure memory ------------------------------------------------------ */

/*
 * Locked (mlock), excluded from core dumps, zeroed; NULL on failure.  Past
 * the process's RLIMIT_MEMLOCK the memory is given unlocked, and
 * geli_secure_unlocked() says so from then on: warn the user.
 */
GELI_API void *geli_secure_alloc(size_t size);
GELI_API bool geli_secure_unlocked(void);
/*
 * The same, except that a child made by fork(2) keeps the bytes (secure
 * memory is wiped in children): for a secret a process reads before it
 * forks the child that uses it (nbdkit reads parameters, then forks its
 * server).  The child's copy is not locked (locks are not inherited):
 * move it into geli_secure_alloc() memory there.
 */
GELI_API void *geli_secure_alloc_inherited(size_t size);
/*
 * The same, shared with the children fork(2) makes (one copy, which any of
 * them may change): for a secret that outlives the processes that use it
 * (the attach daemon's keeper).  In memfd_secret(2) memory where the
 * kernel offers it (Linux 5.14 with secretmem.enable=1, on by default from
 * 6.5: out of the kernel's own mappings too), else locked shared memory;
 * *secret says which.  A child should madvise(MADV_DONTFORK) it before it
 * starts programs of its own.
 */
GELI_API void *geli_secure_alloc_shared(size_t size, bool *secret);
/* Wipes and frees memory from geli_secure_alloc (NULL is fine). */
GELI_API void geli_secure_free(void *p);
/* A wipe the compiler cannot remove. */
GELI_API void geli_wipe(void *p, size_t len);
/* Constant-time equality: true when equal. */
GELI_API bool geli_ct_equal(const void *a, const void *b, size_t len);
/* Fill buf from the crypto library's CSPRNG (nonces, salts, overwrites). */
GELI_API int geli_random(void *buf, size_t len);
/* The same at the library's strongest level: for new Master Keys. */
GELI_API int geli_random_key(void *buf, size_t len);
/* Disable core dumps and ptrace-style inspection of this process, and lock
 * current and future memory where the system allows it.  Returns -errno if
 * core dumps could not be disabled; a failed mlockall is tolerated (secrets
 * still live in individually locked pages) and reported by *locked. */
GELI_API int geli_protect_process(bool *locked);
/* Its first half: no core dumps, not dumpable; nothing locked (a library
 * loaded into someone else's process, like the nbdkit filter). */
GELI_API int geli_protect_dumps(void);

/* ---- User key (§4) ------------------------------------------------------ */

/*
 * UserKey = HMAC-SHA512(key = "", KF_1 || ... || KF_n || PASSPART).
 * A context collects keyfile bytes (in locked memory, wiped on free: no hash
 * state holding their tail outlives the call); geli_ukey_final() hashes them
 * with the passphrase part for a given metadata (salt/iterations), so one
 * context serves several providers.
 */
struct geli_ukey_ctx;
GELI_API int geli_ukey_new(struct geli_ukey_ctx **ctx);
GELI_API int geli_ukey_update(struct geli_ukey_ctx *ctx, const void *data,
    size_t len);
/* A keyfile's bytes, read from fd to its end; -errno (the bytes read so
 * far stay in ctx: free it). */
GELI_API int geli_ukey_update_fd(struct geli_ukey_ctx *ctx, int fd);
/*
 * passphrase == NULL: no passphrase part (-p/-P).  Otherwise PASSPART is
 * salt || passphrase when md->iterations == 0, PBKDF2-HMAC-SHA512(passphrase,
 * salt, iterations) when > 0.  -EINVAL when md->iterations < 0 with a
 * passphrase (calibrate first).  ukey: GELI_USERKEYLEN bytes.
 */
GELI_API int geli_ukey_final(const struct geli_ukey_ctx *ctx,
    const struct geli_metadata *md, const char *passphrase, size_t passlen,
    uint8_t *ukey);
GELI_API void geli_ukey_free(struct geli_ukey_ctx *ctx);

/* PBKDF2-HMAC-SHA512 (RFC 2898), as GELI's pkcs5v2_genkey. */
GELI_API int geli_pbkdf2_sha512(const void *pass, size_t passlen,
    const void *salt, size_t saltlen, uint32_t iterations, void *out,
    size_t outlen);
/* FreeBSD's pkcs5v2_calculate: the iteration count that takes about usecs of
 * user CPU time here.  Returns a positive count or -errno. */
GELI_API int geli_pbkdf2_calibrate(unsigned long usecs);

/* ---- Master key slots (§5) ---------------------------------------------- */

/* Encrypt the 128-byte Master Key for slot use: slot = E(MK || HMAC(HK, MK)). */
GELI_API int geli_mkey_encrypt(unsigned ealgo, unsigned keylen,
    const uint8_t *ukey, const uint8_t *mkey, uint8_t *slot);
/*
 * Try slot keyno (0/1), or every set slot in order when keyno == -1.  On
 * success the Master Key (GELI_MKEY_DATALEN bytes) is in mkey and the slot
 * number in *used.  -GELI_EWRONGKEY if none verifies, -EINVAL for a bad
 * keyno, another -errno if the cipher failed.
 */
GELI_API int geli_mkey_decrypt(const struct geli_metadata *md,
    const uint8_t *ukey, int keyno, uint8_t *mkey, int *used);

/* ---- Providers ---------------------------------------------------------- */

/*
 * A provider is a regular file or a block device; anything else (a FIFO, a
 * terminal, a directory) is -ENOTBLK at once.  Its size comes from stat or
 * BLKGETSIZE64, its sector size from BLKSSZGET; a regular file's is 512,
 * unless it carries the extended attribute GELI_XATTR_SECTORSIZE (the .eli
 * file of an attached provider does: its GELI sector size).
 *
 * A writable open shares a lock (flock) on the provider that the daemon of
 * an attached provider holds exclusively (geli_provider_open_exclusive):
 * while it is attached, writable opens fail with -EPERM, as FreeBSD's
 * exclusive open refuses them.  Read-only opens never lock.
 */
#define GELI_XATTR_SECTORSIZE "user.geli.sectorsize"
struct geli_provider;
GELI_API int geli_provider_open(const char *path, bool writable,
    struct geli_provider **out);
/* Writable and exclusive: -EPERM while anyone has it open for writing. */
GELI_API int geli_provider_open_exclusive(const char *path,
    struct geli_provider **out);
GELI_API void geli_provider_close(struct geli_provider *p);
/* The same, opened with O_DIRECT (bypassing the page cache); -EINVAL where
 * the file system does not allow it.  Volumes keep their buffers aligned. */
GELI_API int geli_provider_open_direct(const char *path, bool writable,
    struct geli_provider **out);
GELI_API uint64_t geli_provider_mediasize(const struct geli_provider *p);
GELI_API uint32_t geli_provider_sectorsize(const struct geli_provider *p);
GELI_API int geli_provider_fd(const struct geli_provider *p);
/* Whole-buffer pread/pwrite (retrying short transfers); -EIO on EOF. */
GELI_API int geli_provider_pread(struct geli_provider *p, void *buf,
    size_t len, uint64_t off);
GELI_API int geli_provider_pwrite(struct geli_provider *p, const void *buf,
    size_t len, uint64_t off);
GELI_API int geli_provider_flush(struct geli_provider *p);
/*
 * Give back whole bytes [off, off+len) of the provider (TRIM): a hole
 * punched in a regular file, BLKDISCARD on a block device, the discard
 * operation of a provider of operations.  -EOPNOTSUPP where none exists,
 * -EIO past the end.
 */
GELI_API int geli_provider_discard(struct geli_provider *p, uint64_t off,
    uint64_t len);

/*
 * A provider whose bytes are reached through operations (an nbdkit plugin
 * below a filter, say) instead of a file descriptor.  Each operation
 * transfers the whole range or fails with -errno; they may be called from
 * several threads at once.  pwrite NULL: read-only (-EROFS); flush NULL:
 * nothing to flush; discard NULL: -EOPNOTSUPP.  The provider has no
 * descriptor (geli_provider_fd() is -1) and is never mapped; its size is
 * the one given.  opaque stays the caller's.
 */
struct geli_provider_ops {
	int (*pread)(void *opaque, void *buf, size_t len, uint64_t off);
	int (*pwrite)(void *opaque, const void *buf, size_t len, uint64_t off);
	int (*flush)(void *opaque);
	int (*discard)(void *opaque, uint64_t off, uint64_t len);
};
GELI_API int geli_provider_open_ops(const struct geli_provider_ops *ops,
    void *opaque, uint64_t mediasize, uint32_t sectorsize,
    struct geli_provider **out);
/* The provider's size now (it may have grown since it was opened). */
GELI_API int geli_provider_query_size(struct geli_provider *p, uint64_t *size);
/* Read or write the last sector (sectorsize bytes); writes are flushed. */
GELI_API int geli_provider_read_last(struct geli_provider *p, void *sector);
GELI_API int geli_provider_write_last(struct geli_provider *p,
    const void *sector);
/* Read and decode the metadata in the last sector (geli_mdstore_read's
 * codes). */
GELI_API int geli_provider_read_metadata(struct geli_provider *p,
    struct geli_metadata *md);
/* Encode md and write it as the last sector, zero-padded. */
GELI_API int geli_provider_write_metadata(struct geli_provider *p,
    struct geli_metadata *md);

/*
 * Providers inside a larger one (geli search): every 512-byte boundary of p
 * is read once, in order, and each sector that starts with the GELI magic
 * is handed to found().  decoded is geli_metadata_decode()'s code, or
 * -ERANGE when the record decodes but the provider it describes
 * (md.provsize bytes ending with the record's sector) does not fit in p;
 * when 0, the provider is [start, start + md.provsize) of p and lived on
 * sectors of psectorsize bytes (4096 when that puts its start on a 4 KiB
 * boundary and 512 would not, else 512 or p's own).  found() returning
 * non-zero ends the search with that value; progress (may be NULL) hears
 * the bytes done after each read.  Returns 0, a read's -errno or found()'s.
 */
struct geli_found {
	uint64_t mdoffset;		/* where the record is in p */
	int decoded;
	uint64_t start;
	uint32_t psectorsize;
	struct geli_metadata md;
};
typedef int (*geli_search_found_fn)(const struct geli_found *f, void *arg);
typedef void (*geli_search_progress_fn)(uint64_t done, uint64_t total,
    void *arg);
GELI_API int geli_search(struct geli_provider *p, geli_search_found_fn found,
    geli_search_progress_fn progress, void *arg);

/* ---- Attached volumes: the sector data path (§6, §7) -------------------- */

#include <sys/types.h>

#define GELI_VOLUME_READONLY 0x1	/* writes fail with -EROFS */
#define GELI_VOLUME_ONETIME  0x2	/* no metadata sector reserved (§8.1) */
/*
 * Decrypt reads straight from a read-only shared mapping of the provider
 * (one copy less than pread + decrypt in place) when the volume has no
 * integrity and the provider is not O_DIRECT.  Installs a SIGBUS handler
 * for the process: a page of the mapping that cannot be read (an I/O error,
 * a file shrunk underneath) sends that read down the pread path, which
 * reports the error, instead of killing the process.
 */
#define GELI_VOLUME_MMAP     0x4
/*
 * Not GELI's sectors but LUKS2's aes-xts-plain64 (dm-crypt's), the target
 * of geli_reenc's GELI_REENC_LUKS2: one key for the whole volume, the 64
 * bytes after mkey's first 64 (AES-256-XTS, md: AES-XTS with keylen 256),
 * and as each sector's tweak its byte offset / 512 (plain64 counts 512-byte
 * sectors whatever the sector size), where GELI's is the byte offset.
 */
#define GELI_VOLUME_LUKS2    0x8

/*
 * The decrypted provider.  Takes ownership of p.  mkey is the 128-byte
 * Master Key (copied into locked memory).  nthreads: worker threads
 * including the caller (1 = no pool).  Reads and writes are safe from many
 * threads at once; overlapping ones are serialised per sector range.  The
 * volume keeps the crypto backend selected when it was opened.
 */
struct geli_volume;
GELI_API int geli_volume_open(struct geli_provider *p,
    const struct geli_metadata *md, const uint8_t *mkey, unsigned flags,
    unsigned nthreads, struct geli_volume **out);
GELI_API void geli_volume_close(struct geli_volume *v);
GELI_API uint64_t geli_volume_size(const struct geli_volume *v);
GELI_API uint32_t geli_volume_sectorsize(const struct geli_volume *v);
GELI_API struct geli_provider *geli_volume_provider(const struct geli_volume *v);
GELI_API const struct geli_metadata *geli_volume_metadata(
    const struct geli_volume *v);
/* KeysTotal of geli list (§6.2, §7.3). */
GELI_API uint64_t geli_volume_keys_total(const struct geli_volume *v);
/* Range keys derived and held now (KeysAllocated; 0 for one-key volumes). */
GELI_API uint64_t geli_volume_keys_allocated(struct geli_volume *v);
/* Reads that failed authentication so far. */
GELI_API uint64_t geli_volume_integrity_errors(const struct geli_volume *v);
/*
 * Bytes [off, off+len), any alignment.  Returns the bytes transferred
 * (short at the end of the volume; 0 at or past it for reads) or -errno:
 * -EBADMSG when a sector fails authentication (no data of it is returned),
 * -EROFS, -ENOSPC (write at or past the end), -EIO.
 */
GELI_API ssize_t geli_volume_read(struct geli_volume *v, void *buf,
    size_t len, uint64_t off);
GELI_API ssize_t geli_volume_write(struct geli_volume *v, const void *buf,
    size_t len, uint64_t off);
GELI_API int geli_volume_flush(struct geli_volume *v);
/*
 * BIO_DELETE (§6): the whole GELI sectors inside [off, off+len) given back
 * on the provider (geli_provider_discard); partial sectors at the edges are
 * left as they are, and a range with no whole sector is done at once.
 * -EOPNOTSUPP with NODELETE, and for integrity volumes (their sectors do
 * not map onto the provider's one to one); -EROFS; the provider's error.
 */
GELI_API int geli_volume_discard(struct geli_volume *v, uint64_t off,
    uint64_t len);
/* True when geli_volume_discard can work (no NODELETE, no integrity). */
GELI_API bool geli_volume_can_discard(const struct geli_volume *v);
/* NODELETE of the attached volume from now on (configure -T / -t). */
GELI_API void geli_volume_set_nodelete(struct geli_volume *v, bool on);
/*
 * Bytes [off, off+len) read as zeros afterwards (fallocate's PUNCH_HOLE
 * and ZERO_RANGE).  deallocate: the whole GELI sectors inside are deleted
 * on the provider (a hole in a regular file; on a block device a zeroing
 * that unmaps, which a device that cannot do refuses)
 * and read as zeros because a sector stored as all zeros is a hole (never
 * written, or deleted) and reads as zeros; the partial sectors at the edges
 * get encrypted zeros.  -EOPNOTSUPP where geli_volume_can_discard is
 * false, and for a provider of operations.  Without deallocate: encrypted
 * zeros over the whole range.  -EROFS; the provider's error.
 */
GELI_API int geli_volume_zero(struct geli_volume *v, uint64_t off,
    uint64_t len, bool deallocate);
/*
 * The sector transform alone, without I/O (benchmarks): n whole GELI
 * sectors starting at sector first, between plain (n*S bytes) and phys
 * (n*bps bytes; the same buffer as plain without integrity), on the pool.
 */
GELI_API int geli_volume_transform(struct geli_volume *v, uint64_t first,
    size_t n, uint8_t *plain, uint8_t *phys, bool encrypt);
/* Physical bytes per GELI sector (S, or lsec*P with integrity). */
GELI_API uint32_t geli_volume_physical_sectorsize(const struct geli_volume *v);
/* The provider grew to newsize (metadata already moved): recompute the
 * decrypted size.  Keys of new ranges are derived on first use. */
GELI_API int geli_volume_grow(struct geli_volume *v, uint64_t newsize);
/* Wait for I/O in flight, wipe every key; new I/O waits until resume. */
GELI_API int geli_volume_suspend(struct geli_volume *v);
GELI_API int geli_volume_resume(struct geli_volume *v, const uint8_t *mkey);
GELI_API bool geli_volume_suspended(struct geli_volume *v);
/* A forced end: I/O waiting for resume (or for a range) and every new
 * request fail with -ENXIO; requests in progress finish. */
GELI_API void geli_volume_shutdown(struct geli_volume *v);

/* ---- Administration (§9): the metadata-changing verbs ------------------- */

/*
 * Failures with a meaning of their own, returned negated by the functions
 * below (beside -errno for I/O and the metadata codes above).  They sit
 * above every errno value.  geli_strerror() names any code.
 */
enum geli_error {
	GELI_ENOMAGIC = 1000,	/* the sector holds no GELI metadata */
	GELI_ETOOSMALL,		/* provider smaller than one sector */
	GELI_ESHORT,		/* backup file shorter than a record */
	GELI_ENOKEYS,		/* md_keys == 0 */
	GELI_EKEYNO,		/* key number out of range */
	GELI_EKEYNOREQ,		/* delkey without a key number (detached) */
	GELI_EKEYNOTSET,	/* delkey of a slot that is not set */
	GELI_ELASTKEY,		/* delkey of the last key without force */
	GELI_EITERATIONS,	/* iteration count out of range */
	GELI_EITERMULTI,	/* -i changes the count while two keys are set */
	GELI_EITERSLOT,		/* -i changes the count of another slot */
	GELI_ESIZE,		/* md_provsize does not match the provider */
	GELI_EOLDSIZE,		/* resize: old size out of range */
	GELI_EFLAGS,		/* configure: not a configurable flag */
	GELI_ERANDOM,		/* the random source failed */
	GELI_ECRYPTO,		/* the crypto library failed */
	/* geli_metadata_check(): metadata no provider can be opened with. */
	GELI_EEALGO,		/* md_ealgo unknown, or the backend lacks it */
	GELI_EKEYLEN,		/* md_keylen not valid for md_ealgo (§3.3) */
	GELI_EAALGO,		/* AUTH with an unknown (or no) md_aalgo */
	GELI_ESECTORSIZE,	/* md_sectorsize impossible here (§8.2) */
	GELI_ENOROOM,		/* no GELI sector fits beside the metadata */
	/* geli_unlock(): key material it cannot use. */
	GELI_ENOKEYMAT,		/* neither a keyfile nor a passphrase */
	GELI_ENOPASSPHRASE,	/* a passphrase, and md_iterations -1 */
	/* In-place conversion (geli_reenc_*). */
	GELI_EINPROGRESS,	/* the record is marked: a conversion is unfinished */
	GELI_EJOURNAL,		/* not a journal, or not this provider's */
	GELI_EJOURNALAUTH,	/* the journal fails authentication */
	GELI_EJOURNALEXISTS,	/* a new journal's file is there already */
	GELI_ELAST
};

/* A short text for code (negative or not): ours, or strerror's. */
GELI_API const char *geli_strerror(int code);

/* Which step of an operation failed, for callers that word each one. */
enum geli_step {
	GELI_STEP_NONE = 0,
	GELI_STEP_READ,		/* reading (or decoding) the metadata */
	GELI_STEP_OPEN,		/* opening the other file (a backup) */
	GELI_STEP_WRITE,	/* writing the metadata (or the backup) */
	GELI_STEP_TRASH,	/* overwriting the old metadata sector */
};

/*
 * A metadata store: where a record lives.  A provider keeps it in its last
 * sector; a backup file (a regular file of at most 4096 bytes that starts
 * with the magic, as geli backup and init -B write it) at offset 0.  Every
 * metadata write of the library goes through geli_mdstore_write().
 */
struct geli_mdstore;
#define GELI_MDS_WRITABLE	0x1
#define GELI_MDS_PROVIDER	0x2	/* a provider only, never a backup file */

/* True when path is a backup file by the rule above. */
GELI_API bool geli_is_backup_file(const char *path);
/* Open path (provider open errors as -errno). */
GELI_API int geli_mdstore_open(const char *path, unsigned flags,
    struct geli_mdstore **out);
/* A store on an open provider, which stays the caller's. */
GELI_API int geli_mdstore_wrap(struct geli_provider *p,
    struct geli_mdstore **out);
/*
 * Read and decode the record: -GELI_ETOOSMALL, -GELI_ESHORT, -GELI_ENOMAGIC,
 * -errno from the read, or geli_metadata_decode()'s codes.
 */
GELI_API int geli_mdstore_read(struct geli_mdstore *s,
    struct geli_metadata *md);
/* Encode md and write it (the rest of a provider's sector zeroed), then
 * flush; a backup file keeps its length. */
GELI_API int geli_mdstore_write(struct geli_mdstore *s,
    struct geli_metadata *md);
GELI_API bool geli_mdstore_is_backup(const struct geli_mdstore *s);
/* The provider (NULL for a backup file). */
GELI_API struct geli_provider *geli_mdstore_provider(
    const struct geli_mdstore *s);
GELI_API void geli_mdstore_close(struct geli_mdstore *s);

/*
 * The way FreeBSD destroys key material differs between its userland
 * (detached providers: one random pass) and its kernel (attached ones:
 * GELI_OVERWRITES random passes, then zeros, each written and flushed).
 * GELI_ADMIN_KERNEL asks for the kernel's way.
 */
#define GELI_ADMIN_KERNEL	0x1
#define GELI_ADMIN_FORCE	0x2	/* delkey -f, restore -f */
#define GELI_ADMIN_ALL		0x4	/* delkey -a */

/*
 * setkey's iteration rules (§4.5): the count slot keyno (0/1) gets when
 * iterations (-1: keep) is asked for.  -GELI_EKEYNO, -GELI_EITERATIONS,
 * -GELI_EITERMULTI, -GELI_EITERSLOT.
 */
GELI_API int geli_setkey_check(const struct geli_metadata *md, int keyno,
    int64_t iterations, int32_t *newcount);
/*
 * geli setkey (§9.6): the Master Key mkey, encrypted with ukey (made for
 * md with the count geli_setkey_check gave), in slot keyno; the slot's bit
 * set; md written to s.  geli_setkey_check's codes, -GELI_ECRYPTO, or the
 * write's -errno.  md is updated to what was written.
 */
GELI_API int geli_setkey(struct geli_mdstore *s, struct geli_metadata *md,
    int keyno, int64_t iterations, const uint8_t *mkey, const uint8_t *ukey);
/*
 * geli delkey (§9.8, §5.3): slot keyno (-1: not given) destroyed and its bit
 * cleared; with GELI_ADMIN_ALL both slots destroyed and md_keys left as it
 * is.  -GELI_EKEYNOREQ, -GELI_EKEYNO, -GELI_EKEYNOTSET, -GELI_ELASTKEY
 * (without GELI_ADMIN_FORCE), -GELI_ERANDOM, or the write's -errno.
 */
GELI_API int geli_delkey(struct geli_mdstore *s, struct geli_metadata *md,
    int keyno, unsigned flags);
/* The on-disk flags geli configure may change. */
#define GELI_CONFIGURABLE_FLAGS (GELI_FLAG_BOOT | GELI_FLAG_GELIBOOT | \
    GELI_FLAG_GELIDISPLAYPASS | GELI_FLAG_NODELETE | GELI_FLAG_AUTORESIZE)
/*
 * geli configure (§9.5): set, then clear, on-disk flags of md and write it
 * when that changes anything.  Returns 1 when written, 0 when nothing
 * changed, -GELI_EFLAGS for a flag outside GELI_CONFIGURABLE_FLAGS, or the
 * write's -errno.
 */
GELI_API int geli_configure(struct geli_mdstore *s, struct geli_metadata *md,
    uint32_t set, uint32_t clear);
/*
 * geli kill (§9.9): the last sector overwritten GELI_OVERWRITES times with
 * random data (then once with zeros with GELI_ADMIN_KERNEL), flushed after
 * each pass.  No check that it held metadata.  -GELI_ETOOSMALL when the
 * provider is not larger than one sector, -ENOMEM, -GELI_ERANDOM, or the
 * first write error (every pass is still tried).
 */
GELI_API int geli_kill(struct geli_provider *p, unsigned flags);
/*
 * geli resize (§8.5, §8.4): the record at oldsize - P moves to the last
 * sector of p (newsize bytes; 0: the size p was opened with) with
 * md_provsize = newsize, then the old sector is trashed (random passes;
 * with GELI_ADMIN_KERNEL zeroed once, as the kernel's AUTORESIZE does).
 * Nothing to do when oldsize == newsize.  -GELI_EOLDSIZE, the read and
 * decode codes, -GELI_ESIZE (md_provsize != oldsize), write and trash
 * errors; *step (may be NULL) says which step failed.
 */
GELI_API int geli_resize(struct geli_provider *p, uint64_t oldsize,
    uint64_t newsize, unsigned flags, enum geli_step *step);
/*
 * geli backup (§9.10): the last sector of p, which must hold the magic
 * (-GELI_ENOMAGIC), copied to a new file (mode 0600, fsynced; removed
 * again on failure).  *step: READ, OPEN or WRITE.
 */
GELI_API int geli_backup(struct geli_provider *p, const char *file,
    enum geli_step *step);
/* The same for a record not yet on disk (init -B): md encoded into a
 * sector of psize bytes. */
GELI_API int geli_backup_metadata(struct geli_metadata *md, uint32_t psize,
    const char *file, enum geli_step *step);
/*
 * geli restore (§9.10): md (from a backup) written to p.  md_provsize must
 * match the provider (-GELI_ESIZE) unless GELI_ADMIN_FORCE, which rewrites
 * it; -GELI_ETOOSMALL when p cannot hold a record; the write's -errno.
 */
GELI_API int geli_restore(struct geli_provider *p, struct geli_metadata *md,
    unsigned flags);
/* geli clear (§9.14): the last sector zeroed when it holds the magic
 * (-GELI_ENOMAGIC otherwise). */
GELI_API int geli_clear(struct geli_provider *p);

/* ---- Unlocking a provider (§4, §5, §9.2) ------------------------------- */

/*
 * The key material of an unlock: what geli attach's -k/-j/-p (and the
 * nbdkit filter's keyfile=/password=) give.  Either the parts of the user
 * key, or a user key made before (a resume, whose key was made where the
 * passphrase was typed).
 */
struct geli_keymat {
	const struct geli_ukey_ctx *keyfiles;	/* their bytes, in order; NULL: none */
	unsigned nkeyfiles;		/* how many keyfiles went in (0: none) */
	const char *passphrase;		/* NULL: no passphrase part (-p) */
	size_t passlen;
	const uint8_t *ukey;		/* GELI_USERKEYLEN bytes: the parts unused */
};

/*
 * Only what decrypting a slot needs is checked (md_keys, the slots' cipher
 * and key length), as FreeBSD's resume and setkey look at nothing else: a
 * suspended provider keeps the rest of what it was attached with.
 */
#define GELI_UNLOCK_SLOTS	0x1

/*
 * The refusals of geli_unlock() alone, before any key material is asked
 * for (a hostile record may ask for any number of PBKDF2 iterations):
 * 0, or the first of
 *   -GELI_ESIZE     p given and md_provsize is not its size
 *   -GELI_ENOKEYS   md_keys == 0
 *   geli_metadata_check()'s codes for p's size and sector size (p NULL: no
 *                   size, 512-byte sectors); with GELI_UNLOCK_SLOTS only
 *                   -GELI_EEALGO and -GELI_EKEYLEN
 *   -GELI_EKEYNO    keyno not -1, 0 or 1
 */
GELI_API int geli_unlock_check(struct geli_provider *p,
    const struct geli_metadata *md, int keyno, unsigned flags);
/*
 * Unlock a provider, as attach, attach -C, setkey, resume and the nbdkit
 * filter do: geli_unlock_check(), the user key from km (§4), then slot
 * keyno (-1: every set slot in turn) decrypted and verified (§5).  0 with
 * the Master Key in mkey (GELI_MKEY_DATALEN bytes; NULL: only checked, as
 * attach -C) and the slot that opened in *used (may be NULL).  Besides
 * geli_unlock_check()'s codes: -GELI_ENOKEYMAT (no keyfile and no
 * passphrase), -GELI_ENOPASSPHRASE (a passphrase for metadata made without
 * one), -GELI_EWRONGKEY (no slot opens), -ENOMEM, or the crypto library's
 * -errno.
 */
GELI_API int geli_unlock(struct geli_provider *p, const struct geli_metadata *md,
    const struct geli_keymat *km, int keyno, unsigned flags, uint8_t *mkey,
    int *used);

/* ---- In-place conversion (docs/reencrypt.md) ---------------------------- */

/*
 * A provider converted where it lies, a hotzone of sectors at a time, with a
 * journal in a file elsewhere: GELI to GELI with a new Master Key (and maybe
 * a new cipher), plain to GELI, GELI to plain.  The sectors and their sizes
 * stay where they are (no integrity volumes).  While it runs the provider's
 * last sector holds a marked record (GELI_REENC_MARK) that the key which
 * started the conversion opens: the old record for REKEY and DECRYPT, the
 * new one for ENCRYPT.  Its unused key slot names the journal (its UUID).
 *
 * The journal: a header (what is converted into what, authenticated), two
 * progress records written in turn (chunk k PREPARED or DONE), and the
 * hotzone record: the chunk's new bytes, written and synced before the
 * provider is touched.  One step: hotzone record, fsync; PREPARED, fsync;
 * the chunk written to the provider, flushed; DONE.  A resume redoes a
 * PREPARED chunk from the journal and starts a DONE one's successor.
 * Everything is authenticated with HMAC-SHA512 keys derived from the
 * Master Keys involved (old || new for REKEY): a journal that fails is
 * refused, never used.
 */
enum geli_reenc_kind {
	GELI_REENC_REKEY = 1,	/* GELI -> GELI: new Master Key, maybe cipher */
	GELI_REENC_ENCRYPT,	/* plain -> GELI */
	GELI_REENC_DECRYPT,	/* GELI -> plain */
	/*
	 * GELI -> LUKS2's data area (aes-xts-plain64, GELI_VOLUME_LUKS2):
	 * newmd is geli_luks2_record()'s description of it and newmk's last
	 * 64 bytes its volume key, wrapped in the journal as REKEY's Master
	 * Key; the marked record is the old one.  Every sector is written
	 * (a hole, which the .eli reads as zeros, as LUKS2's zeros) and at
	 * the end the bytes past the data area, GELI's record among them,
	 * are zeroed.  The LUKS2 header is the caller's (libcryptsetup).
	 */
	GELI_REENC_LUKS2,
};
#define GELI_REENC_EDGE		(4u << 20)	/* see geli_reenc_chunk() */
#define GELI_REENC_HOTZONE	(4u << 20)	/* default chunk size */

struct geli_reenc;

/*
 * A new conversion of p (opened writable, exclusively, by the caller, who
 * keeps it): kind; oldmd and oldmk (the record on p and its Master Key;
 * NULL for ENCRYPT), oldslot (the slot that opened it: the marked record
 * keeps that one); newmd and newmk (the record p ends with, its slot 0
 * holding newmk; NULL for DECRYPT); the journal's UUID (random: the
 * caller may name the file after it) and its file, created (mode 0600;
 * -GELI_EJOURNALEXISTS when it exists); hotzone bytes (0: the default;
 * rounded to the sector size).  Writes the journal header, then the marked
 * record.  -EINVAL for parameters that cannot convert (integrity, sector
 * or provider sizes that differ); -errno.
 */
GELI_API int geli_reenc_start(struct geli_provider *p,
    enum geli_reenc_kind kind, const struct geli_metadata *oldmd,
    const uint8_t *oldmk, int oldslot, const struct geli_metadata *newmd,
    const uint8_t *newmk, const uint8_t uuid[16], const char *journal,
    uint32_t hotzone, struct geli_reenc **out);
/*
 * The journal of p's marked record md (decoded by geli_metadata_decode,
 * -GELI_EINPROGRESS), opened with mk (md's Master Key): -ENOENT when the
 * file is not there, -GELI_EJOURNAL when it is not the journal that record
 * names, -GELI_EJOURNALAUTH when it fails authentication; then, if a chunk
 * was PREPARED, that chunk written again from the journal.
 */
GELI_API int geli_reenc_resume(struct geli_provider *p,
    const struct geli_metadata *md, const uint8_t *mk, const char *journal,
    struct geli_reenc **out);
/*
 * What GELI_REENC_LUKS2 converts into, for a provider of provsize bytes
 * whose GELI sectors are S bytes: LUKS2 sectors of S bytes, or 4096 for a
 * larger S (a multiple of them), AES-XTS with a 512-bit key.  -EINVAL for
 * an S that LUKS2 cannot take (not a power of two from 512).
 */
GELI_API int geli_luks2_record(uint32_t S, uint64_t provsize,
    struct geli_metadata *md);
/* geli_reenc_resume in two: the journal opened and every check made,
 * nothing written (the caller may check more of its own, e.g. a LUKS2
 * header against geli_reenc_newkey); then the PREPARED chunk, if any,
 * written again from the journal. */
GELI_API int geli_reenc_open(struct geli_provider *p,
    const struct geli_metadata *md, const uint8_t *mk, const char *journal,
    struct geli_reenc **out);
GELI_API int geli_reenc_recover(struct geli_reenc *r);
/* The journal UUID a marked record names (md: as decoded); -EINVAL. */
GELI_API int geli_reenc_uuid(const struct geli_metadata *md, uint8_t uuid[16]);
/* What a conversion does: its kind, and the record it goes to (zeros for
 * DECRYPT). */
GELI_API enum geli_reenc_kind geli_reenc_kind(const struct geli_reenc *r);
GELI_API const struct geli_metadata *geli_reenc_new(const struct geli_reenc *r);
/* The Master Key it goes to (REKEY; LUKS2: the volume key in its last 64
 * bytes), GELI_MKEY_DATALEN bytes of r's locked memory; NULL for DECRYPT. */
GELI_API const uint8_t *geli_reenc_newkey(const struct geli_reenc *r);
/* Chunk k of n (order of conversion) covers [*off, *off + *len) of the
 * data area (the decrypted provider's bytes): the first and last
 * GELI_REENC_EDGE bytes, where labels live, first when encrypting and last
 * when decrypting; in order otherwise. */
GELI_API void geli_reenc_chunk(const struct geli_reenc *r, uint64_t k,
    uint64_t *off, uint64_t *len);
/* Chunk k's position in that order for the chunk at byte off of the data
 * area, and whether it is converted already (its position below done). */
GELI_API bool geli_reenc_converted(const struct geli_reenc *r, uint64_t off);
/*
 * For a conversion beside I/O to the same provider (an attached one): each
 * step calls lock(arg, off, len) before it reads chunk [off, off+len) of
 * the data area and unlock(arg, off, len) once the chunk is written and
 * DONE, and no chunk is read ahead.  The caller keeps other I/O out of a
 * locked chunk and sends I/O to a converted chunk to the new record's keys.
 */
typedef void (*geli_reenc_lock_fn)(void *arg, uint64_t off, uint64_t len);
GELI_API void geli_reenc_set_locks(struct geli_reenc *r,
    geli_reenc_lock_fn lock, geli_reenc_lock_fn unlock, void *arg);
/* Chunks done and in all; bytes of the data area. */
GELI_API void geli_reenc_progress(const struct geli_reenc *r, uint64_t *done,
    uint64_t *total, uint64_t *bytes);
/* Convert the next chunk: 1 when one was done, 0 when none is left. */
GELI_API int geli_reenc_step(struct geli_reenc *r);
/*
 * Every chunk done: the final record written (REKEY, ENCRYPT), or for
 * DECRYPT the bytes past the data area zeroed (the record with them), the
 * provider flushed, then the journal removed.
 */
GELI_API int geli_reenc_finish(struct geli_reenc *r);
GELI_API void geli_reenc_free(struct geli_reenc *r);

/*
 * Online: the conversion of an attached volume while it serves I/O.  v is
 * the volume of r's provider (the same geli_provider), opened with the old
 * record's keys (REKEY, DECRYPT; not ENCRYPT).  Takes r (freed by close; an
 * unfinished journal stays for a resume).  I/O through the online object
 * goes to v for the chunks not converted yet, and for the converted ones to
 * the new record's keys (REKEY) or straight to the provider (DECRYPT); a
 * step holds its chunk against it.  nthreads: the new record's workers.
 */
struct geli_online;
GELI_API int geli_online_open(struct geli_reenc *r, struct geli_volume *v,
    unsigned nthreads, struct geli_online **out);
/* geli_volume_read/write/flush's contract.  zero: deallocate is refused
 * (-EOPNOTSUPP) while the conversion runs. */
GELI_API ssize_t geli_online_read(struct geli_online *o, void *buf,
    size_t len, uint64_t off);
GELI_API ssize_t geli_online_write(struct geli_online *o, const void *buf,
    size_t len, uint64_t off);
GELI_API int geli_online_zero(struct geli_online *o, uint64_t off,
    uint64_t len, bool deallocate);
GELI_API int geli_online_flush(struct geli_online *o);
/*
 * The next chunk converted beside the I/O (geli_reenc_step's values).
 * After an error the chunk stays held (its I/O fails with -EIO) until a
 * step succeeds: the next call first does what a resume does (a PREPARED
 * chunk written again from the journal).  With every chunk done, the
 * conversion finished (geli_reenc_finish) and 0; from then on all I/O goes
 * to the new side.  A conversion to LUKS2 is not finished there: every
 * chunk done, its record and journal stay (0, and again 0 for each call)
 * until geli_online_finish, once its header is in place.
 */
GELI_API int geli_online_step(struct geli_online *o);
/* The end of a conversion whose every chunk is done (-EINVAL before):
 * geli_reenc_finish's, once; 0 when it has ended already. */
GELI_API int geli_online_finish(struct geli_online *o);
GELI_API void geli_online_progress(struct geli_online *o, uint64_t *done,
    uint64_t *total, uint64_t *bytes);
GELI_API bool geli_online_finished(struct geli_online *o);
/* The journal removed, its hotzones zeroed first (after geli_kill: the
 * conversion can never go on, and a decryption's hotzone is plaintext). */
GELI_API int geli_online_abandon(struct geli_online *o);
GELI_API void geli_online_close(struct geli_online *o);

/* A journal's state as its file says, unauthenticated (geli dump). */
struct geli_reenc_info {
	enum geli_reenc_kind kind;
	uint8_t uuid[16];
	uint64_t done, total, bytes;
	bool prepared;		/* a chunk between PREPARED and DONE */
	struct geli_metadata from, to;	/* the records (zeros: none) */
};
GELI_API int geli_reenc_peek(const char *journal, struct geli_reenc_info *info);

/* ---- Layout for a wanted size (§7.1, §8.1) ----------------------------- */

/*
 * The inverse of geli_eli_mediasize(): the smallest provider size (bytes)
 * whose decrypted size, with metadata md (its sectorsize, and its flags and
 * aalgo for integrity) on physical sectors of psize bytes, is at least size.
 * 0 when md and psize make no layout (sectorsize 0, an AUTH volume whose
 * psize holds no data next to the tag) or the result would not fit 64 bits.
 */
GELI_API uint64_t geli_eli_provsize(const struct geli_metadata *md,
    uint64_t size, uint32_t psize, bool onetime);

#ifdef __cplusplus
}
#endif
#endif /* GELI_H */
