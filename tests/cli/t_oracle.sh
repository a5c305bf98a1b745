#!/usr/bin/env bash
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
done_testing
