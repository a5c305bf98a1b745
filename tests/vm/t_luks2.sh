#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Leaving GELI for dm-crypt with the data in use (geli reencrypt -t luks2 on
# attached providers, whose daemons convert them; docs/leave-geli.md, "To
# LUKS2").  ext4 on a provider converted while a writer appends to a file:
# dm-crypt (cryptsetup open of the header) gives the bytes the .eli gave,
# fsck finds it clean, every file intact.  A TrueNAS CORE disk (GPT, swap,
# then GELI) converted online, its daemon killed with -9 halfway and the
# conversion resumed, ends with its header on the disk, opened by dm-crypt
# with no header file.  Then the document's blocks, as
# written, on a raidz of three members of different ciphers (AES-XTS
# 256/4096, Blowfish 448/512, AES-CBC 128/4096) while fio writes and
# verifies files in the pool the whole time: each member converted, then
# handed over to the kernel with the pool imported (zpool offline, geli
# detach, cryptsetup open as NAME.eli: the package's udev rule makes
# /dev/NAME.eli lead to it, zpool online).  fio verifies every block; the
# pool stays ONLINE, a scrub finds 0 errors; it imports from /dev/mapper
# and zdb finds it consistent; the crypttab line the command printed opens
# a member through systemd-cryptsetup, as the boot would.
. "$(dirname "$0")/guest.sh"
. "$(dirname "$0")/../cli/luks2_lib.sh"
need_zfs || { done_testing; exit; }
command -v cryptsetup >/dev/null || { skip "cryptsetup is not installed"; done_testing; exit; }
export PATH="$(dirname "$GELI"):$PATH"
# At the end: the pool, then the mappings this test makes, then its loop
# devices.
loops=()
on_exit 'zpool destroy -f tank 2>/dev/null; for m in e tn sdb sdc sdd; do cryptsetup close $m.eli 2>/dev/null; done; udevadm settle; for x in "${loops[@]+"${loops[@]}"}"; do drop_loop ${x%%=*} ${x#*=}; done'

# ---- ext4, online, under a writer ------------------------------------------------
mkprovs 48M -e aes-xts -l 128 -- e
attach_keyed e
mkfs.ext4 -q /dev/e.eli
mkdir -p "$T/mnt"
mount /dev/e.eli "$T/mnt"
put_files "$T/mnt" 8
# (at most 200 writes of 32 KiB: the file system's room)
( i=0; while [ ! -e "$T/stop-e" ] && [ $i -lt 200 ]; do
	head -c 32768 /dev/urandom >>"$T/mnt/log"; sync "$T/mnt/log"; i=$((i + 1)); done
  echo "$i" >"$T/e.writes" ) &
wpid=$!
run "$GELI" reencrypt -t luks2 -B none -H "$T/e.hdr" -i 1000 -p -k "$T/key" "$T/e"
touch "$T/stop-e"
wait "$wpid"
check "ext4: converted by its daemon while a writer appended ($(cat "$T/e.writes") writes)" \
	bash -c '[ "$1" = 0 ] && grep -qx "e.eli serves it until it is detached." "$2"' _ "$rc" "$T/out"
[ "$rc" = 0 ] || diag <"$T/err"
cp "$T/mnt/log" "$T/e.log"
umount "$T/mnt"
size=$(blockdev --getsize64 /dev/e.eli)
want=$(head -c "$size" /dev/e.eli | md5sum)
"$GELI" detach e
cryptsetup open --header "$T/e.hdr" --key-file "$T/key" "$T/e" e.eli
check "ext4: dm-crypt gives the bytes the .eli gave" test "$(head -c "$size" /dev/mapper/e.eli | md5sum)" = "$want"
check "ext4: /dev/e.eli leads to the mapping (61-geli-dm.rules)" \
	wait_for bash -c '[ "$(readlink -f /dev/e.eli)" = "$(readlink -f /dev/mapper/e.eli)" ]'
check "ext4: fsck finds it clean" fsck.ext4 -fn /dev/mapper/e.eli
mount -o ro /dev/mapper/e.eli "$T/mnt"
check "ext4: every file intact" bash -c '(cd "$1" && md5sum --quiet -c "$2" >/dev/null 2>&1) && cmp -s "$1/log" "$3"' _ "$T/mnt" "$T/sums" "$T/e.log"
umount "$T/mnt"
cryptsetup close e.eli

# ---- A TrueNAS CORE disk, its daemon killed halfway ------------------------------
# GPT: a freebsd-swap partition, then the GELI one (freebsd-zfs), on a loop
# device with its partitions.  The GELI partition attached by a daemon
# whose writes to it last 2 ms each (the fault shim: the kill lands in the
# conversion however fast the guest runs), converted online without -H;
# the daemon killed with -9 halfway; attached again, the same command
# follows the conversion it goes on with and ends it; after the detach the
# same command moves the partition's start back over the header (the swap
# partition shrinks).  blkid calls it crypto_LUKS, cryptsetup opens it with
# no header file and dm-crypt gives the bytes the .eli held.
if [ -f "$FAULTSHIM" ] && command -v sgdisk >/dev/null; then
	truncate -s 64M "$T/tn.img"
	sgdisk -a 2048 -n 1:2048:+20M -t 1:a502 -n 2:0:+40M -t 2:a504 "$T/tn.img" >/dev/null
	tn=$(losetup -f -P --show "$T/tn.img")
	loops+=("$tn=$T/tn.img")
	part=${tn}p2 pn=${tn#/dev/}p2
	wait_for test -b "$part"
	start=$(cat "/sys/class/block/$pn/start")
	passfile "$T/tn.pass" "truenas disk"
	"$GELI" init -B none -e aes-xts -l 256 -s 4096 -i 1000 -J "$T/tn.pass" "$part" >/dev/null
	slowed "$part" "$GELI" attach -L -j "$T/tn.pass" "$part" >/dev/null
	head -c "$(blockdev --getsize64 "/dev/$pn.eli")" /dev/urandom >"$T/tn.ref"
	dd if="$T/tn.ref" of="/dev/$pn.eli" bs=1M oflag=direct status=none
	tn_convert() { "$GELI" reencrypt -t luks2 -B "$T/tn.luks2" -i 1000 -j "$T/tn.pass" -z 65536 "$part"; }
	tn_convert >"$T/tn.out" 2>&1 </dev/null &
	cpid=$!
	wait_for begun "$pn" "$cpid"
	check "TrueNAS disk: converted by its daemon" converting "$pn"
	# (server and keeper: a server alone is replaced, and the conversion
	# goes on in the next one: cli/t_restart.sh)
	kill_daemon "$(cat "$GELI_RUNDIR/$pn.pid")"
	wait "$cpid"
	check "... its daemon killed halfway: the command says to attach again" \
		grep -qF "Provider $part was detached during its conversion: attach it again, and it goes on." "$T/tn.out"
	diag <"$T/tn.out"
	"$GELI" attach -L -j "$T/tn.pass" "$part" >/dev/null
	tn_convert >"$T/out" 2>"$T/err" </dev/null
	rc=$?
	check "... attached again: the same command follows it and ends it" \
		grep -qx "$part is a LUKS2 volume now, its header on the disk before partition 2 of $tn, which begins there once $pn.eli is detached: detach it, then run 'geli reencrypt -t luks2 $part'." "$T/out"
	[ "$rc" = 0 ] || diag <"$T/err"
	check "... the .eli reads the bytes written before" cmp -s "/dev/$pn.eli" "$T/tn.ref"
	"$GELI" detach "$pn"
	run "$GELI" reencrypt -t luks2 "$part"
	check "... detached, the same command moves the partition back over the header" \
		test "$rc" = 0 -a "$(cat "/sys/class/block/$pn/start")" = $((start - 32768))
	[ "$rc" = 0 ] || diag <"$T/err"
	check "... blkid calls it crypto_LUKS" test "$(blkid -p -o value -s TYPE "$part")" = crypto_LUKS
	cryptsetup open --key-file "$(nonl "$T/tn.pass")" "$part" tn.eli
	check "... dm-crypt opens it with no header file: the bytes the .eli held" \
		cmp -s -n "$(stat -c %s "$T/tn.ref")" /dev/mapper/tn.eli "$T/tn.ref"
	cryptsetup close tn.eli
else
	skip "the TrueNAS disk needs the fault shim ($FAULTSHIM) and sgdisk"
fi

# ---- docs/leave-geli.md on a raidz, with fio ---------------------------------------
DOC=$(cd "$GELI_TESTS/.." && pwd)/docs/leave-geli.md
ROOT=$T/root
mkdir -p "$ROOT/root" "$ROOT/dev"
passfile "$ROOT/root/tank.pass" "tank passphrase"
for c in sdb:aes-xts:256:4096 sdc:blowfish:448:512 sdd:aes-cbc:128:4096; do
	IFS=: read -r d e l s <<<"$c"
	mkprov "$T/$d.img" 72M
	l_dev=$(losetup -f --show "$T/$d.img")
	loops+=("$l_dev=$T/$d.img")
	ln -s "$l_dev" "$ROOT/dev/$d"
	"$GELI" init -B none -e "$e" -l "$l" -s "$s" -i 1000 -J "$ROOT/root/tank.pass" "$ROOT/dev/$d" >/dev/null
done
"$GELI" attach -L -j "$ROOT/root/tank.pass" "$ROOT"/dev/sd[bcd] >/dev/null
zpool create tank raidz /dev/sdb.eli /dev/sdc.eli /dev/sdd.eli >"$T/zc" 2>&1 || diag <"$T/zc"

# The document's paths made this test's: /root and the raw disks under
# $ROOT (the stable names /dev/NAME.eli are the guest's own), the header's
# backup there too, sleeps short.
localize() {
	sed -E -e "s#(^|[ <=\"'])/root/#\\1$ROOT/root/#g" \
		-e "s#/dev/\\\$d([^.]|\$)#$ROOT/dev/\$d\\1#g" -e "s#sleep 5#sleep 0.2#" \
		-e "s#geli reencrypt #geli reencrypt -B $ROOT/\$d.backup #"
}
doc() { doc_run "$DOC" "$1"; }

fio_start luks2 8M

doc luks2-online
check "luks2-online: each member converted by its daemon, the pool in use" \
	bash -c '[ "$1" = 0 ] && [ "$(grep -c "^sd[bcd].eli serves it until it is detached.$" "$2")" = 3 ]' _ "$rc" "$T/out"
grep "^/etc/crypttab: sdd.eli " "$T/out" >"$T/sdd.crypttab"
check "... the pool ONLINE" test "$(pool_state tank)" = ONLINE
doc luks2-handover
handed=$(grep -cE "^\++ zpool online tank /dev/sd[bcd]\.eli$" "$T/err")
check "luks2-handover: each member offline, detached, opened by dm-crypt and back online ($handed)" \
	test "$rc" = 0 -a "$handed" = 3
[ "$rc" = 0 ] && [ "$handed" = 3 ] || tail -n 20 "$T/err" | diag
check "... the pool ONLINE, its members dm-crypt's" \
	bash -c '[ "$(zpool status tank | sed -n "s/^ *state: //p")" = ONLINE ] && for d in sdb sdc sdd; do [ "$(readlink -f /dev/$d.eli)" = "$(readlink -f /dev/mapper/$d.eli)" ] || exit 1; done'
fio_stop
check "fio ran the whole time and verified every block ($runs runs, $bad bad)" test "$runs" -ge 1 -a "$bad" = 0
check "a scrub on dm-crypt: 0 errors" scrub_clean tank
zpool export tank
check "imported from /dev/mapper, ONLINE" \
	bash -c 'zpool import -d /dev/mapper tank && [ "$(zpool status tank | sed -n "s/^ *state: //p")" = ONLINE ]'
zpool export tank
zdb -e -p /dev/mapper -bc tank >"$T/zdb.log" 2>&1
check "zdb finds the pool consistent" grep -q "No leaks" "$T/zdb.log"

# crypttab's line, as systemd-cryptsetup reads it at boot (the passphrase
# from a keyfile without its newline, where "none" would ask for it).
cryptsetup close sdd.eli
read -r _ name dev key opts <"$T/sdd.crypttab"
(umask 077; printf %s "tank passphrase" >"$T/pass.raw")
/lib/systemd/systemd-cryptsetup attach "$name" "$dev" "$T/pass.raw" "$opts" >"$T/sc" 2>&1
check "crypttab's line ($name $dev $key $opts) opens sdd through systemd-cryptsetup" \
	test -b "/dev/mapper/$name"
diag <"$T/sc"
done_testing
