#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# An independent check of the whole key chain (§4, §5): volumes made by
# geli init are opened by a separate implementation written here with
# Python's hashlib/hmac and the openssl command line, from the spec alone.
. "$(dirname "$0")/lib.sh"

if ! command -v openssl >/dev/null || ! command -v python3 >/dev/null; then
	skip "needs python3 and openssl"; done_testing; exit
fi
cat >"$T/oracle.py" <<'PY'
import hashlib, hmac, struct, subprocess, sys
prov, passfile, keyfile, cipher, klen = sys.argv[1:6]
klen = int(klen)
with open(prov, 'rb') as f:
    f.seek(-512, 2)
    s = f.read(512)
assert s[:10] == b'GEOM::ELI\0', 'magic'
assert hashlib.md5(s[:495]).digest() == s[495:511], 'md5'
version, flags, ealgo, keylen, aalgo, provsize, sectorsize, keys, iters = \
    struct.unpack_from('<IIHHHQIBi', s, 16)
salt, slot0 = s[47:111], s[111:303]
kf = open(keyfile, 'rb').read() if keyfile != '-' else b''
pw = open(passfile, 'rb').read().split(b'\n')[0] if passfile != '-' else None
if pw is None:
    part = b''
elif iters == 0:
    part = salt + pw
else:
    part = hashlib.pbkdf2_hmac('sha512', pw, salt, iters)
ukey = hmac.new(b'', kf + part, hashlib.sha512).digest()
ek = hmac.new(ukey, b'\x01', hashlib.sha512).digest()
hk = hmac.new(ukey, b'\x00', hashlib.sha512).digest()
if cipher == 'null':
    plain = slot0
else:
    extra = ['-provider', 'legacy', '-provider', 'default'] if cipher == 'bf-cbc' else []
    ivlen = 8 if cipher in ('bf-cbc', 'des-ede3-cbc') else 16
    plain = subprocess.run(['openssl', 'enc', '-d', '-' + cipher, '-nopad', '-K',
                            ek[:klen // 8].hex(), '-iv', '00' * ivlen] + extra,
                           input=slot0, capture_output=True, check=True).stdout
ok = hmac.compare_digest(hmac.new(hk, plain[:128], hashlib.sha512).digest(), plain[128:])
print('verified' if ok else 'MISMATCH')
PY
passfile "$T/pass" "oracle passphrase"
head -c 77 /dev/urandom >"$T/kf"
while read -r e l cipher; do
	mkprov "$T/p"
	"$GELI" init -B none -i 1000 -e "$e" -l "$l" -J "$T/pass" "$T/p" >/dev/null 2>&1
	r=$(python3 "$T/oracle.py" "$T/p" "$T/pass" - "$cipher" "$l" 2>&1)
	check "$e $l: slot 0 opens with an independent implementation ($cipher)" test "$r" = verified
done <<'LIST'
aes-xts 128 aes-128-cbc
aes-xts 256 aes-256-cbc
aes-cbc 128 aes-128-cbc
aes-cbc 192 aes-192-cbc
aes-cbc 256 aes-256-cbc
camellia-cbc 128 camellia-128-cbc
camellia-cbc 192 camellia-192-cbc
camellia-cbc 256 camellia-256-cbc
blowfish-cbc 128 bf-cbc
3des-cbc 192 des-ede3-cbc
null 512 null
LIST
mkprov "$T/p"
"$GELI" init -B none -i 0 -K "$T/kf" -J "$T/pass" "$T/p" >/dev/null 2>&1
check "-i 0 with a keyfile: salt || passphrase after the keyfile" \
	test "$(python3 "$T/oracle.py" "$T/p" "$T/pass" "$T/kf" aes-128-cbc 128 2>&1)" = verified
mkprov "$T/p"
"$GELI" init -B none -P -K "$T/kf" "$T/p" >/dev/null 2>&1
check "keyfile only" test "$(python3 "$T/oracle.py" "$T/p" - "$T/kf" aes-128-cbc 128 2>&1)" = verified
head -c 77 /dev/urandom >"$T/kf2"
check "the oracle refuses another keyfile" \
	test "$(python3 "$T/oracle.py" "$T/p" - "$T/kf2" aes-128-cbc 128 2>&1)" = MISMATCH

# The data path too (§6, §7): a sector written through geli attach is
# checked by the oracle: every chunk's tag recomputed from AK and its
# physical offset, and the AES-CBC ciphertext decrypted with the range key
# and the SHA256 IV by the openssl command line.
cat >"$T/data.py" <<'PY'
import hashlib, hmac, struct, subprocess, sys
prov, passfile, aalgo, S, plainfile = sys.argv[1:6]
S = int(S)
P = 512
with open(prov, 'rb') as f:
    f.seek(-512, 2)
    s = f.read(512)
    f.seek(0)
    data = f.read()
version, flags, ealgo, keylen, mdaalgo, provsize, sectorsize, keys, iters = \
    struct.unpack_from('<IIHHHQIBi', s, 16)
salt, slot0 = s[47:111], s[111:303]
pw = open(passfile, 'rb').read().split(b'\n')[0]
ukey = hmac.new(b'', hashlib.pbkdf2_hmac('sha512', pw, salt, iters), hashlib.sha512).digest()
ek = hmac.new(ukey, b'\x01', hashlib.sha512).digest()
mk = subprocess.run(['openssl', 'enc', '-d', '-aes-128-cbc', '-nopad', '-K', ek[:16].hex(),
                     '-iv', '00' * 16], input=slot0, capture_output=True, check=True).stdout[:128]
ivk, dk = mk[:64], mk[64:]
def rangekey(base, k):
    return hmac.new(base, b'ekey' + struct.pack('<Q', k), hashlib.sha512).digest()
def cbc_decrypt(key, off, ct):
    iv = hashlib.sha256(ivk + struct.pack('<Q', off)).digest()[:16]
    return subprocess.run(['openssl', 'enc', '-d', '-aes-128-cbc', '-nopad', '-K', key[:16].hex(),
                           '-iv', iv.hex()], input=ct, capture_output=True, check=True).stdout
plain = b''
if aalgo == 'none':
    plain = cbc_decrypt(rangekey(dk, 0), 0, data[:S])
else:
    h = getattr(hashlib, aalgo) if hasattr(hashlib, aalgo) else (lambda d=b'': hashlib.new(aalgo, d))
    alen = h().digest_size
    dps = (P - alen) // 16 * 16
    lsec = (S - 1) // dps + 1
    ak = hmac.new(dk, b'\x11', hashlib.sha512).digest()
    key = rangekey(hmac.new(dk, b'\x10', hashlib.sha512).digest(), 0)
    for j in range(lsec):
        phys = j * P
        n = dps if j < lsec - 1 else S - (lsec - 1) * dps
        sec = data[phys:phys + P]
        ct = sec[alen:alen + n]
        tag = hmac.new(hashlib.sha256(ak + struct.pack('<Q', phys)).digest(), ct, h).digest()
        if not hmac.compare_digest(tag, sec[:alen]):
            print('TAG MISMATCH in chunk', j)
            sys.exit(0)
        plain += cbc_decrypt(key, phys, ct)
print('verified' if plain == open(plainfile, 'rb').read() else 'DATA MISMATCH')
PY
if need_fuse; then
	head -c 4096 /dev/urandom >"$T/sector"
	while read -r a py; do
		aopt=()
		[ "$a" = - ] || aopt=(-a "$a")
		mkprov "$T/d.img" 1M
		"$GELI" init -B none -i 1000 -e aes-cbc -l 128 -s 4096 "${aopt[@]}" -J "$T/pass" \
			"$T/d.img" >/dev/null 2>&1
		"$GELI" attach -j "$T/pass" "$T/d.img"
		dd if="$T/sector" of="$GELI_RUNDIR/d.img.eli" bs=4096 conv=notrunc,fsync status=none
		"$GELI" detach "$T/d.img"
		r=$(python3 "$T/data.py" "$T/d.img" "$T/pass" "$py" 4096 "$T/sector" 2>&1)
		check "AES-CBC-128 ${a/-/without HMAC}: a sector written by attach, checked by the oracle" \
			test "$r" = verified
	done <<'LIST'
- none
HMAC/MD5 md5
HMAC/SHA1 sha1
HMAC/RIPEMD160 ripemd160
HMAC/SHA256 sha256
HMAC/SHA384 sha384
HMAC/SHA512 sha512
LIST
fi
done_testing
