#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Verbs on attached providers (setkey, delkey, kill, configure), onetime,
# AUTORESIZE growth, several providers in one attach.
. "$(dirname "$0")/lib.sh"
need_fuse || { done_testing; exit; }

prov=$T/p.img
eli=$GELI_RUNDIR/p.img.eli
passfile "$T/pass" "runtime"
passfile "$T/new" "runtime new"
mkprov "$prov" 8M
"$GELI" init -B none -i 500 -J "$T/pass" "$prov" >/dev/null
"$GELI" attach -j "$T/pass" "$prov"

# setkey without the old key: the daemon's Master Key goes into slot 1.
run "$GELI" setkey -n 1 -J "$T/new" "$prov"
check "setkey on an attached provider needs no old key" test $rc = 0
check "... prints the backup note" grep -q "^Note, that the master key" "$T/out"
check "... slot 1 opens with the new key" key_opens "$prov" 1 -j "$T/new"
expect_err "setkey -i with two keys" "geli: To be able to use '-i' option, only one key can be defined." \
	-- "$GELI" setkey -n 1 -i 900 -J "$T/new" "$prov"
expect_ok "delkey -n 0 of the attached provider" "$GELI" delkey -n 0 "$prov"
check "keys is 0x02" test "$(dumpfield "$prov" keys)" = 0x02
expect_err "delkey of the last key" "geli: This is the last Master Key. Use '-f' flag if you really want to remove it." \
	-- "$GELI" delkey -n 1 "$prov"
expect_ok "delkey -f -n 1" "$GELI" delkey -f -n 1 "$prov"
check "keys is 0x00" test "$(dumpfield "$prov" keys)" = 0x00
check "slot 1 was zeroed in the end" test "$("$GELI" dump "$prov" | sed -n 's/^Master Key: //p' | cut -c385-768)" = "$(printf '%0384d' 0)"
expect_ok "setkey rescues a provider with no keys left (attached)" bash -c '"$0" setkey -n 0 -J "$1" "$2" >/dev/null' "$GELI" "$T/pass" "$prov"
check "slot 0 opens again" key_opens "$prov" 0 -j "$T/pass"

# configure: memory and disk.
expect_ok "configure -b -T on the attached provider" "$GELI" configure -b -T "$prov"
check "on disk" test "$(dumpfield "$prov" flags)" = 0x242
check "in memory" bash -c '"$0" list p.img | grep -q "^Flags: BOOT, NODELETE, AUTORESIZE"' "$GELI"
"$GELI" configure -B -t "$prov"

# kill: metadata gone, device gone.
dd if=/dev/urandom of="$eli" bs=4096 count=1 conv=notrunc status=none
expect_ok "kill of an attached provider" "$GELI" kill "$prov"
check "the device is gone" fails attached p.img
check "the last sector is zeros" cmp -s <(tail -c 512 "$prov") <(head -c 512 /dev/zero)
check "the daemon logged it" grep -q "p.img has been killed." "$GELI_RUNDIR/p.img.log"

# kill of a read-only attached provider keeps the metadata.
mkprov "$prov" 8M
"$GELI" init -B none -i 500 -J "$T/pass" "$prov" >/dev/null
"$GELI" attach -r -j "$T/pass" "$prov"
expect_ok "kill of a read-only provider" "$GELI" kill "$prov"
check "... keeps the metadata" key_opens "$prov" 0 -j "$T/pass"
check "... with a warning in the log" grep -q "WARNING: Metadata won't be erased on read-only provider" "$GELI_RUNDIR/p.img.log"

# onetime: random key, nothing written to the provider.
mkprov "$T/ot" 8M
dd if=/dev/urandom of="$T/ot" bs=1M count=8 conv=notrunc status=none
sum=$(md5sum <"$T/ot")
expect_ok "onetime" "$GELI" onetime -e aes-cbc -l 256 -s 1024 "$T/ot"
check "onetime writes nothing to the provider" test "$(md5sum <"$T/ot")" = "$sum"
check "onetime: the whole provider is usable" test "$(stat -c %s "$GELI_RUNDIR/ot.eli")" = 8388608
head -c 1048576 /dev/urandom >"$T/otdata"
dd if="$T/otdata" of="$GELI_RUNDIR/ot.eli" bs=64k conv=notrunc,fsync status=none
check "onetime round trip" cmp -s <(head -c 1048576 "$GELI_RUNDIR/ot.eli") "$T/otdata"
check "onetime list: ONETIME, no UsedKey" bash -c '"$0" list ot | grep -q "^Flags: ONETIME" && ! "$0" list ot | grep -q UsedKey' "$GELI"
expect_err "suspend of a onetime device" "geli: Device ot.eli is using one-time key, suspend not supported." -- "$GELI" suspend ot
"$GELI" detach ot
expect_ok "onetime -d -a hmac/sha1 -s 1536 (any multiple of the sector size)" \
	"$GELI" onetime -d -a hmac/sha1 -s 1536 "$T/ot"
check "onetime with integrity: size" test "$(stat -c %s "$GELI_RUNDIR/ot.eli")" = $((8388608 / (4 * 512) * 1536))
dd if=/dev/urandom of="$GELI_RUNDIR/ot.eli" bs=1536 count=10 conv=notrunc status=none
check "onetime -d: detached after the writer closes" wait_for fails attached ot
expect_err "onetime with a bad key length" "geli: Invalid 'keylen' argument." -- "$GELI" onetime -l 100 "$T/ot"
expect_err "onetime with a bad sector size" "geli: Invalid sector size." -- "$GELI" onetime -s 1000 "$T/ot"

# AUTORESIZE: the provider grows while attached.
mkprov "$prov" 8M
"$GELI" init -B none -i 500 -J "$T/pass" "$prov" >/dev/null
"$GELI" attach -j "$T/pass" "$prov"
dd if=/dev/urandom of="$T/keep" bs=1M count=2 status=none
dd if="$T/keep" of="$eli" bs=1M conv=notrunc status=none
truncate -s 16M "$prov"
size_is() { test "$(stat -c %s "$1")" = "$2"; }
check "the .eli grows with the provider" wait_for size_is "$eli" $((16 * 1048576 - 512))
check "the data is still there" cmp -s <(head -c 2097152 "$eli") "$T/keep"
check "the metadata moved to the new end" test "$(dumpfield "$prov" provsize)" = 16777216
check "the old metadata sector was zeroed" cmp -s <(dd if="$prov" bs=512 skip=$((8 * 2048 - 1)) count=1 status=none) <(head -c 512 /dev/zero)
check "the daemon logged the change" grep -q "size changed from 8388096 to 16776704" "$GELI_RUNDIR/p.img.log"
"$GELI" detach "$prov"
expect_ok "it attaches again at the new size" "$GELI" attach -j "$T/pass" "$prov"
check "... with the data" cmp -s <(head -c 2097152 "$eli") "$T/keep"
"$GELI" configure -R "$prov"
truncate -s 20M "$prov"
# The daemon's word that it saw the growth (it looks every little while),
# awaited; then the size it left alone.
wait_for grep -q "Autoresize is turned off, old size: 16777216." "$GELI_RUNDIR/p.img.log"
check "AUTORESIZE off: the size stays" test "$(stat -c %s "$eli")" = $((16 * 1048576 - 512))
check "... and the log says so" grep -q "Autoresize is turned off, old size: 16777216." "$GELI_RUNDIR/p.img.log"
"$GELI" detach "$prov"
expect_err "then attach sees the size mismatch" "geli: Cannot read metadata from $prov: Invalid argument."$'\n'"geli: There was an error with at least one provider." \
	-- "$GELI" attach -j "$T/pass" "$prov"
expect_ok "resize -s fixes it" "$GELI" resize -s 16M "$prov"
expect_ok "and it attaches" "$GELI" attach -j "$T/pass" "$prov"
"$GELI" detach "$prov"

# Several providers in one attach: one keyfile-only, and passphrase ones.
head -c 64 /dev/urandom >"$T/kf"
for i in 1 2 3; do mkprov "$T/m$i.img" 4M; done
"$GELI" init -B none -i 500 -J "$T/pass" "$T/m1.img" "$T/m2.img" >/dev/null
"$GELI" init -B none -P -K "$T/kf" "$T/m3.img" >/dev/null
expect_ok "attach of two providers in one call" "$GELI" attach -j "$T/pass" "$T/m1.img" "$T/m2.img"
expect_ok "attach -p -k of a keyfile-only provider" "$GELI" attach -p -k "$T/kf" "$T/m3.img"
check "three attached" test "$("$GELI" status -s | wc -l)" = 3
expect_err "attaching one twice" "geli: Provider m1.img.eli already exists."$'\n'"geli: There was an error with at least one provider." \
	-- "$GELI" attach -j "$T/pass" "$T/m1.img"
expect_ok "detach of three" "$GELI" detach m1.img m2.img "$T/m3.img"

# A daemon killed outright leaves files behind; the next attach cleans up.
"$GELI" attach -j "$T/pass" "$T/m1.img"
kill_daemon "$(cat "$GELI_RUNDIR/m1.img.pid")"
expect_ok "attach after a daemon died" "$GELI" attach -j "$T/pass" "$T/m1.img"
"$GELI" detach m1.img

done_testing
