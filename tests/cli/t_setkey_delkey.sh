#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# setkey and delkey on detached providers (FreeBSD setkey_test.sh,
# delkey_test.sh; §4.5, §5.3, §9.6, §9.8).
. "$(dirname "$0")/lib.sh"

prov=$T/prov
passfile "$T/p0" "key zero"
passfile "$T/p1" "key one"
passfile "$T/p2" "key two"
head -c 32 /dev/urandom >"$T/kf"

mkprov "$prov"
"$GELI" init -B none -i 100 -J "$T/p0" "$prov" >/dev/null
slot1_before=$("$GELI" dump "$prov" | sed -n 's/^Master Key: //p' | cut -c385-768)
run "$GELI" setkey -n 1 -j "$T/p0" -J "$T/p1" "$prov"
check "setkey -n 1 prints the backup note" grep -qx "Note, that the master key encrypted with old keys and/or passphrase may still exist in a metadata backup file." "$T/out"
check "keys is 0x03" test "$(dumpfield "$prov" keys)" = 0x03
check "slot 1 was rewritten" test "$("$GELI" dump "$prov" | sed -n 's/^Master Key: //p' | cut -c385-768)" != "$slot1_before"
check "the old key still opens slot 0" key_opens "$prov" 0 -j "$T/p0"
check "the new key opens slot 1" key_opens "$prov" 1 -j "$T/p1"
run "$GELI" setkey -v -j "$T/p1" -J "$T/p2" "$prov"
check "without -n the slot that opened is changed" grep -qx "Decrypted Master Key 1." "$T/out"
check "key two opens slot 1" key_opens "$prov" 1 -j "$T/p2"
check "key one no longer opens anything" fails key_opens "$prov" 1 -j "$T/p1"
expect_err "-n 2" "geli: Invalid 'keyno' argument." --same "$prov" -- \
	"$GELI" setkey -n 2 -j "$T/p0" -J "$T/p1" "$prov"
expect_err "setkey with two providers" "geli: Invalid number of arguments." -- \
	"$GELI" setkey -j "$T/p0" -J "$T/p1" "$prov" "$prov"

# -i: only with one key defined, and only for that key (§4.5).
expect_err "-i with two keys" "geli: To be able to use '-i' option, only one key can be defined." \
	--same "$prov" -- "$GELI" setkey -i 200 -j "$T/p0" -J "$T/p1" "$prov"
expect_ok "setkey -i equal to the stored count is fine" "$GELI" setkey -n 0 -i 100 -j "$T/p0" -J "$T/p0" "$prov"
mkprov "$prov"
"$GELI" init -B none -i 100 -J "$T/p0" "$prov" >/dev/null
expect_err "-i for the other slot" "geli: Only already defined key can be changed when '-i' option is used." \
	--same "$prov" -- "$GELI" setkey -n 1 -i 200 -j "$T/p0" -J "$T/p1" "$prov"
run "$GELI" setkey -i 300 -j "$T/p0" -J "$T/p1" "$prov"
check "-i changes the count of the only key" test "$(dumpfield "$prov" iterations)" = 300
check "... and the new key opens it" key_opens "$prov" 0 -j "$T/p1"

# A keyfile-only volume gets a passphrase slot (iterations set by -i).
mkprov "$prov"
"$GELI" init -B none -P -K "$T/kf" "$prov" >/dev/null
expect_ok "setkey adds a passphrase to a keyfile-only volume" bash -c \
	'"$0" setkey -n 1 -p -k "$1" -i 400 -J "$2" "$3" >/dev/null' "$GELI" "$T/kf" "$T/p1" "$prov"
check "iterations were set" test "$(dumpfield "$prov" iterations)" = 400
check "the keyfile still opens slot 0 with -p" key_opens "$prov" 0 -p -k "$T/kf"
check "the passphrase opens slot 1" key_opens "$prov" 1 -j "$T/p1"

# delkey.
mkprov "$prov"
"$GELI" init -B none -i 100 -J "$T/p0" "$prov" >/dev/null
"$GELI" setkey -n 1 -j "$T/p0" -J "$T/p1" "$prov" >/dev/null
expect_err "delkey needs -n" "geli: Key number has to be specified." --same "$prov" -- "$GELI" delkey "$prov"
expect_err "delkey -n 3" "geli: Invalid 'keyno' argument." --same "$prov" -- "$GELI" delkey -n 3 "$prov"
expect_ok "delkey -n 1" "$GELI" delkey -n 1 "$prov"
check "keys is 0x01" test "$(dumpfield "$prov" keys)" = 0x01
check "key one is gone" fails key_opens "$prov" 1 -j "$T/p1"
expect_err "delkey of an unset slot" "geli: Master Key 1 is not set." --same "$prov" -- "$GELI" delkey -n 1 "$prov"
expect_ok "delkey -f of an unset slot" "$GELI" delkey -f -n 1 "$prov"
expect_err "delkey of the last key" "geli: This is the last Master Key. Use '-f' option if you really want to remove it." \
	--same "$prov" -- "$GELI" delkey -n 0 "$prov"
slot0=$("$GELI" dump "$prov" | sed -n 's/^Master Key: //p' | cut -c1-384)
expect_ok "delkey -f -n 0 removes the last key" "$GELI" delkey -f -n 0 "$prov"
check "keys is 0x00" test "$(dumpfield "$prov" keys)" = 0x00
check "slot 0 was overwritten" test "$("$GELI" dump "$prov" | sed -n 's/^Master Key: //p' | cut -c1-384)" != "$slot0"
expect_err "setkey with no valid keys" "geli: No valid keys on $prov." --same "$prov" -- \
	"$GELI" setkey -j "$T/p0" -J "$T/p0" "$prov"

mkprov "$prov"
"$GELI" init -B none -i 100 -J "$T/p0" "$prov" >/dev/null
mk=$("$GELI" dump "$prov" | sed -n 's/^Master Key: //p')
expect_ok "delkey -a" "$GELI" delkey -a "$prov"
check "delkey -a keeps the keys bits" test "$(dumpfield "$prov" keys)" = 0x01
check "delkey -a destroys both slots" test "$("$GELI" dump "$prov" | sed -n 's/^Master Key: //p')" != "$mk"
expect_err "after delkey -a the key is wrong" "geli: Wrong key for $prov." --same "$prov" -- \
	"$GELI" setkey -j "$T/p0" -J "$T/p0" "$prov"

done_testing
