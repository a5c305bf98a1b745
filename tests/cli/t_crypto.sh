#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The two crypto backends from the command line: GELI_CRYPTO picks
# one per command and an unknown name is refused; providers made and written
# through `geli attach` with one backend read back with the other, their key
# slots (setkey) open with the other; the attach log and geli bench name the
# library; bench --crypto all, --cipher-only and --no-aesni's libgcrypt mask.
. "$(dirname "$0")/lib.sh"

passfile "$T/pass" "two backends"
passfile "$T/pass2" "second slot"
mkprov "$T/p.img" 1M
"$GELI" init -B none -i 1000 -J "$T/pass" "$T/p.img" >/dev/null

# ---- Choosing a backend --------------------------------------------------------
msg="geli: Unknown crypto backend GELI_CRYPTO=nettle (gcrypt or openssl)."
expect_err "GELI_CRYPTO=nettle: a clear error, nothing changed" "$msg" --same "$T/p.img" -- \
	env GELI_CRYPTO=nettle "$GELI" setkey -n 1 -j "$T/pass" -J "$T/pass2" "$T/p.img"
expect_err "GELI_CRYPTO=nettle refuses geli bench too" "$msg" -- \
	env GELI_CRYPTO=nettle "$GELI" bench --quick
expect_err "bench --crypto with an unknown name" \
	"geli: Unknown crypto backend --crypto nettle (gcrypt, openssl or all)." -- \
	"$GELI" bench --quick --crypto nettle
for be in gcrypt openssl ""; do
	expect_ok "GELI_CRYPTO='$be': dump works" env GELI_CRYPTO="$be" "$GELI" dump "$T/p.img"
done

# ---- Key slots across backends ------------------------------------------------
for pair in "gcrypt openssl" "openssl gcrypt"; do
	set -- $pair
	cp "$T/p.img" "$T/s.img"
	head -c 64 /dev/urandom >"$T/kf"
	GELI_CRYPTO=$1 "$GELI" setkey -n 1 -j "$T/pass" -J "$T/pass2" -K "$T/kf" "$T/s.img" >/dev/null 2>&1
	check "a slot set with $1 (passphrase through PBKDF2 + keyfile) opens with $2" \
		key_opens_with "$2" "$T/s.img" 1 -j "$T/pass2" -k "$T/kf"
	check "... and slot 0 still opens with $2" key_opens_with "$2" "$T/s.img" 0 -j "$T/pass"
done

# ---- Through geli attach ----------------------------------------------------------
if need_fuse; then
	# cipher keylen sectorsize hmac: a subset of the library-level matrix.
	while read -r e l s a; do
		[ -n "$e" ] || continue
		aopt=()
		[ "$a" = - ] || aopt=(-a "$a")
		name=$(printf '%s' "$e-$l-$s-$a" | tr / _)
		prov=$T/$name.img
		eli=$GELI_RUNDIR/$name.img.eli
		mkprov "$prov" 4M
		GELI_CRYPTO=gcrypt "$GELI" init -B none -i 1000 -e "$e" -l "$l" -s "$s" \
			"${aopt[@]}" -J "$T/pass" "$prov" >/dev/null 2>&1
		# Integrity: every sector written once before any partial write
		# (as geli(8) advises: a never-written sector does not verify).
		if [ "$a" != - ]; then
			GELI_CRYPTO=gcrypt "$GELI" attach -j "$T/pass" "$prov"
			dd if=/dev/zero of="$eli" bs=1M status=none 2>/dev/null
			"$GELI" detach "$prov"
		fi
		head -c 1000000 /dev/urandom >"$T/w1"
		head -c 777777 /dev/urandom >"$T/w2"
		for pair in "gcrypt openssl" "openssl gcrypt"; do
			set -- $pair
			GELI_CRYPTO=$1 "$GELI" attach -j "$T/pass" "$prov"
			dd if="$T/w1" of="$eli" bs=65536 conv=notrunc,fsync status=none
			dd if="$T/w2" of="$eli" bs=12345 seek=12345 oflag=seek_bytes conv=notrunc,fsync status=none
			head -c 1000000 "$eli" >"$T/r1"
			"$GELI" detach "$prov"
			GELI_CRYPTO=$2 "$GELI" attach -r -j "$T/pass" "$prov"
			check "$name: written through attach with $1, read back with $2" \
				bash -c 'test "$(stat -c %s "$0")" = 1000000 && cmp -s "$0" <(head -c 1000000 "$1")' "$T/r1" "$eli"
			check "$name: ... including the unaligned write" \
				cmp -s "$T/w2" <(tail -c +12346 "$eli" | head -c 777777)
			"$GELI" detach "$prov"
		done
	done <<'LIST'
AES-XTS 256 4096 -
AES-CBC 192 512 HMAC/SHA1
CAMELLIA-CBC 256 1024 HMAC/SHA256
Blowfish-CBC 448 2048 HMAC/MD5
3DES-CBC 192 4096 HMAC/RIPEMD160
AES-XTS 128 512 HMAC/SHA512
NULL 512 4096 HMAC/SHA384
LIST

	# The attach log names the library.
	for be in gcrypt openssl; do
		GELI_CRYPTO=$be "$GELI" attach -j "$T/pass" "$T/p.img"
		want=$(GELI_CRYPTO=$be "$GELI" bench --quick --json --ealgo null 2>/dev/null |
			python3 -c 'import json,sys; print(json.load(sys.stdin)["machine"]["crypto"])')
		check "GELI_CRYPTO=$be: the attach log says 'Crypto: software ($want), N threads'" \
			grep -qE "Crypto: software \($want\), [0-9]+ threads$" "$GELI_RUNDIR/p.img.log"
		"$GELI" detach "$T/p.img"
	done
fi

# ---- geli bench ----------------------------------------------------------------
run "$GELI" bench --quick --crypto all --ealgo aes-xts
check "bench --crypto all succeeds" test "$rc" = 0
check "... names both libraries in its header" grep -qE '^geli bench: .*libgcrypt [0-9.]+ vs OpenSSL 3' "$T/out"
check "... with both backends' columns and their ratio" \
	grep -qE '^cipher .* gcrypt write +gcrypt read +openssl write +openssl read +/openssl write +/openssl read$' "$T/out"
check "... for each key length" \
	test "$(grep -cE '^AES-XTS +(128|256) +4096 +- +([0-9]+ +){4}[0-9.]+x +[0-9.]+x$' "$T/out")" = 2
run "$GELI" bench --quick --crypto all --ealgo blowfish --keylen 448 --json
check "bench --crypto all --json: a row per backend with its ratio" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert set(d["machine"]["crypto_backends"]) == {"gcrypt", "openssl"}, d["machine"]
r = [x for x in d["results"] if x["ealgo"]]
assert [x["crypto"] for x in r] == ["gcrypt", "openssl"], r
assert r[0]["ratio"]["openssl"]["read"] > 0 and "ratio" not in r[1], r
assert d["results"][0]["crypto"] is None' "$T/out"

# Without GELI_CRYPTO (this test also runs with GELI_CRYPTO=openssl).
run env -u GELI_CRYPTO "$GELI" bench --quick --cipher-only --json
check "bench --cipher-only --json succeeds" test "$rc" = 0
check "... every row is the transform alone (target \"cipher\"), encrypt and decrypt measured" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
r = d["results"]
assert len(r) == 12, len(r)
assert all(x["target"] == "cipher" and x["write_MBps"] > 0 and x["read_MBps"] > 0 for x in r), r
assert all(x["crypto"] == "gcrypt" for x in r[1:]), r
assert d["machine"]["crypto"].startswith("libgcrypt ")' "$T/out"
run env -u GELI_CRYPTO "$GELI" bench --quick --cipher-only --integrity --threads 1 --csv
check "bench --cipher-only --integrity --csv: 4 sizes x 7 rows + raw, crypto column" \
	test "$(grep -c ',cipher,.*,gcrypt,$' "$T/out")" = 28
run "$GELI" bench --quick --cipher-only --sector-sizes 512,4096 --ealgo camellia
check "bench --cipher-only table: encrypt/decrypt columns, both sizes" \
	test "$(grep -cE '^CAMELLIA-CBC +(128|256) +(512|4096) ' "$T/out")" = 4 -a \
	"$(grep -c 'encrypt MB/s decrypt MB/s' "$T/out")" = 1
expect_err "bench --cipher-only --target" \
	"geli: --cipher-only measures no I/O: it goes with no --attached, --target, --disk or --pool." -- \
	"$GELI" bench --quick --cipher-only --target "$T/p.img"
expect_err "bench --crypto all --no-aesni" \
	"geli: --crypto all goes with the cipher studies, not with --no-aesni, --pool or --disk." -- \
	"$GELI" bench --quick --crypto all --no-aesni

# --no-aesni's child masks libgcrypt's AES-NI, VAES and PCLMUL (--aesni-off).
if grep -qw aes /proc/cpuinfo; then
	hw() { "$GELI" bench --quick --json --ealgo null --crypto gcrypt "$@" |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["machine"]["crypto_hwfeatures"])'; }
	check "libgcrypt uses AES-NI here" bash -c '[[ "$0" == *intel-aesni* ]]' "$(hw)"
	check "... and not in --no-aesni's child (--aesni-off)" \
		bash -c '[[ "$0" != *intel-aesni* && "$0" != *intel-vaes* && "$0" != *intel-pclmul* ]]' "$(hw --aesni-off)"
	run "$GELI" bench --quick --no-aesni --ealgo aes-xts --keylen 128 --crypto openssl
	check "--no-aesni with the OpenSSL backend" grep -qE '^AES-XTS +128 .*x$' "$T/out"
else
	skip "no AES-NI on this CPU"
	skip "no AES-NI on this CPU"
	skip "no AES-NI on this CPU"
fi

done_testing
