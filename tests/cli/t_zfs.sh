#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# suite: zfs
# ZFS on GELI, as people run it: pools on attached providers (OpenZFS's
# in a guest of tests/vm/run, zfs-fuse's on the host) in the studies'
# layouts, each written, scrubbed and read back, three of them exported,
# detached, attached and imported (zdb in between on OpenZFS);
# a raidz and a mirror with one provider missing; damaged ciphertext repaired
# with and without integrity; a pool keeps its providers from being detached.
. "$(dirname "$0")/lib.sh"
need_fuse || { done_testing; exit; }
need_zfs || { done_testing; exit; }
R=$GELI_RUNDIR

passfile "$T/pass" "zfs on geli"
head -c 64 /dev/urandom >"$T/kf"
for i in 1 2 3 4 5 6 7 8; do mkprov "$T/p$i.img" 96M; done
"$GELI" init -B none -i 100 -s 4096 -J "$T/pass" "$T"/p[1-6].img >/dev/null
"$GELI" init -B none -P -K "$T/kf" -s 4096 "$T/p7.img" "$T/p8.img" >/dev/null
# A raidz of five across ciphers and key lengths, 4096-byte sectors.
ciphers=(aes-xts:128 aes-xts:256 aes-cbc:192 camellia-cbc:256 blowfish-cbc:448)
for i in 1 2 3 4 5; do
	mkprov "$T/c$i.img" 96M
	c=${ciphers[$((i - 1))]}
	"$GELI" init -B none -P -K "$T/kf" -s 4096 -e "${c%:*}" -l "${c#*:}" "$T/c$i.img" >/dev/null
done
attach_all() {
	zfs_attach -j "$T/pass" "$T"/p[1-6].img && zfs_attach -p -k "$T/kf" "$T"/p[78].img "$T"/c[1-5].img
}
detach_all() { "$GELI" detach p1.img p2.img p3.img p4.img p5.img p6.img p7.img p8.img c1.img c2.img c3.img c4.img c5.img; }
# members VDEVS...: the providers a pool is made of (p1.img c3.img ...);
# attach_some NAME...: those attached again, each with its key, as
# attach_all does.  A pool's members go through detach and attach; the
# others stay as they are.
members() { local x; for x in "$@"; do case $x in [pc][0-9]) echo "$x.img" ;; esac; done; }
attach_some() {
	local n pw=() kf=()
	for n; do case $n in p[1-6].img) pw+=("$T/$n") ;; *) kf+=("$T/$n") ;; esac; done
	{ [ ${#pw[@]} -eq 0 ] || zfs_attach -j "$T/pass" "${pw[@]}"; } &&
		{ [ ${#kf[@]} -eq 0 ] || zfs_attach -p -k "$T/kf" "${kf[@]}"; }
}
check "13 providers attached (two attach calls, passphrase and keyfile-only)" attach_all
e() { local out="" x; for x in "$@"; do case $x in [pc][0-9]) out="$out $(zdev $x.img)" ;; *) out="$out $x" ;; esac; done; echo "$out"; }
# zdestroy POOL: destroyed, asked again while it is busy (a loaded machine
# lets go of its mount late; 60 s is a hang's bound).
zgone() { ! zpool list "$1" >/dev/null 2>&1 || zpool destroy -f "$1" 2>/dev/null; }
zdestroy() { wait_for zgone "$1"; }

head -c 6000000 /dev/urandom >"$T/data"
sum=$(md5sum <"$T/data")
# Each layout written, scrubbed and read back; the export, zdb, detach,
# attach and import cycle (about 10 s a pool in a guest) for a pool of one
# vdev, one of two vdevs of eight providers, and one of five ciphers: what
# the cycle proves of geli (the members found again by their stable names,
# whichever provider a vdev holds) the others would prove again.
while IFS=: read -r name cycle opts vdevs; do
	pool=gt$name
	if ! zpool create -f -m "$T/mnt-$pool" $opts "$pool" $(e $vdevs) >"$T/zc.log" 2>&1; then
		nok "$name: zpool create"; diag <"$T/zc.log"; continue
	fi
	cp "$T/data" "$T/mnt-$pool/data" && sync
	zpool scrub "$pool"
	zpool_scrubbed "$pool"
	bad="" done="write, scrub, verify"
	zpool status "$pool" | grep -q "with 0 errors" || bad="$bad scrub"
	if [ "$cycle" = cycle ]; then
		done="write, scrub, export, detach, attach, import, verify"
		zpool export "$pool" || bad="$bad export"
		# OpenZFS's zdb reads every block of the exported pool: consistent.
		if [ "$ZFS_KIND" = openzfs ]; then
			zdb -e -p "$ZDIR" -bc "$pool" >"$T/zdb.log" 2>&1
			grep -q "No leaks" "$T/zdb.log" || bad="$bad zdb($(grep -m 1 -iE 'leak|error' "$T/zdb.log"))"
		fi
		m=$(members $vdevs)
		"$GELI" detach $m || bad="$bad detach"
		attach_some $m || bad="$bad attach"
		zpool import -d "$ZDIR" "$pool" >/dev/null 2>&1 || bad="$bad import"
		zpool status "$pool" | grep -q "state: ONLINE" || bad="$bad state"
	fi
	[ "$(md5sum <"$T/mnt-$pool/data")" = "$sum" ] || bad="$bad data"
	zdestroy "$pool"
	if [ -z "$bad" ]; then ok "$name: $done"; else
		nok "$name:$bad"; zpool status "$pool" 2>&1 | diag; fi
done <<'LAYOUTS'
stripe:::p1 p2
mirror:::mirror p1 p2
raidz:cycle::raidz p1 p2 p3
raidz2:::raidz2 p1 p2 p3 p4
4xmirror::-O compression=on:mirror p1 p2 mirror p3 p4 mirror p5 p6 mirror p7 p8
2xraidz2:cycle::raidz2 p1 p2 p3 p4 raidz2 p5 p6 p7 p8
compress::-O compression=on:raidz p1 p2 p3
ciphers:cycle::raidz c1 c2 c3 c4 c5
LAYOUTS

# A log on a GELI provider and a cache on the block device of another,
# by its stable name (zfs-fuse takes cache devices only if they are block
# devices).
"$GELI" detach p4.img
"$GELI" attach -L -j "$T/pass" "$T/p4.img" >/dev/null
cdev=$GELI_DEVDIR/p4.img.eli
imp_dirs=(-d "$ZDIR")
[ "$ZDIR" = "$GELI_DEVDIR" ] || imp_dirs+=(-d "$GELI_DEVDIR")
if zpool create -f -m "$T/mnt-gtlog" gtlog $(e mirror p1 p2 log p3) cache "$cdev" >"$T/zc.log" 2>&1; then
	cp "$T/data" "$T/mnt-gtlog/data" && sync
	zpool status gtlog >"$T/st"
	check "log and cache devices on GELI providers" bash -c '
		awk "/^	logs/ { s = 1 } /^	cache/ { s = 2 } s == 1 && /p3.img.eli +ONLINE/ { l = 1 }
		    s == 2 && /p4.img.eli +ONLINE/ { c = 1 } END { exit !(l && c) }" "$0"' "$T/st"
	zpool export gtlog
	detach_all 2>/dev/null
	attach_all 2>/dev/null
	"$GELI" detach p4.img
	"$GELI" attach -L -j "$T/pass" "$T/p4.img" >/dev/null
	zpool import "${imp_dirs[@]}" gtlog >/dev/null 2>&1
	check "log and cache: export, detach, attach, import, verify" test "$(md5sum <"$T/mnt-gtlog/data" 2>/dev/null)" = "$sum"
	check "... with the cache device ONLINE again" bash -c 'zpool status gtlog | grep -qE "p4.img.eli +ONLINE"'
	zdestroy gtlog
else
	nok "zpool create with log and cache"; diag <"$T/zc.log"
fi
"$GELI" detach p4.img
zfs_attach -j "$T/pass" "$T/p4.img"

# A pool keeps its providers busy; -f pulls one out from under it.
zpool create -f -m "$T/mnt-gtbusy" gtbusy $(e mirror p1 p2) >/dev/null 2>&1
cp "$T/data" "$T/mnt-gtbusy/data" && sync
expect_err "detach of a provider in use by a pool is refused" \
	"geli: Cannot destroy device p1.img.eli (error=16)." -- "$GELI" detach p1.img
check "the refused provider is still attached" attached p1.img
expect_ok "detach -f of a pool member goes through" "$GELI" detach -f p2.img
check "after detach -f: the provider is gone" wait_for fails attached p2.img
zpool scrub gtbusy 2>/dev/null
zpool_scrubbed gtbusy
# (ZFS may mark the member's loss after the scrub's end: waited for)
check "the mirror goes on without it (DEGRADED), data correct" \
	wait_for bash -c "zpool status gtbusy | grep -q 'state: DEGRADED' && [ \"\$(md5sum <$T/mnt-gtbusy/data)\" = '$sum' ]"
zfs_attach -j "$T/pass" "$T/p2.img"
zpool online gtbusy "$(zdev p2.img)" >/dev/null 2>&1
zpool clear gtbusy 2>/dev/null
zpool scrub gtbusy
check "attach again, zpool online, scrub: ONLINE and clean" \
	eval 'zpool_scrubbed gtbusy && zpool status gtbusy | grep -q "state: ONLINE" && zpool status gtbusy | grep -q "with 0 errors"'
zdestroy gtbusy

# Survival: one provider not attached at import.
for layout in "raidz p1 p2 p3" "mirror p4 p5"; do
	set -- $layout
	kind=$1 last=${*: -1}
	pool=gtdeg$kind
	zpool create -f -m "$T/mnt-$pool" "$pool" $(e "$@") >/dev/null 2>&1
	cp "$T/data" "$T/mnt-$pool/data" && sync
	zpool export "$pool"
	m=$(members "$@")
	"$GELI" detach $m
	attach_some $m
	"$GELI" detach "$last.img" 2>&1 | diag
	zpool import -d "$ZDIR" "$pool" >/dev/null 2>&1
	check "$kind with $last missing: DEGRADED" bash -c "zpool status $pool | grep -q 'state: DEGRADED'"
	check "$kind degraded: the data reads back correct" test "$(md5sum <"$T/mnt-$pool/data")" = "$sum"
	zfs_attach -j "$T/pass" "$T/$last.img"
	zpool online "$pool" "$(zdev "$last.img")" >/dev/null 2>&1
	check "$kind: after attach and zpool online: ONLINE" wait_for bash -c "zpool status $pool | grep -q 'state: ONLINE'"
	zpool scrub "$pool"
	zpool_scrubbed "$pool"
	check "$kind: scrub clean" bash -c "zpool status $pool | grep -q 'with 0 errors'"
	zdestroy "$pool"
done
detach_all

# Damaged ciphertext on one provider: with integrity ZFS gets I/O errors,
# without it checksum errors; it repairs from redundancy and loses nothing.
for mode in integrity plain; do
	aopt=""
	[ $mode = integrity ] && aopt="-a hmac/sha256"
	rm -f "$R"/q*.img.log
	for i in 1 2 3; do mkprov "$T/q$i.img" 128M; done
	"$GELI" init -B none -i 100 -s 4096 $aopt -J "$T/pass" "$T"/q[1-3].img >/dev/null
	zfs_attach -j "$T/pass" "$T"/q[1-3].img
	for i in 1 2 3; do dd if=/dev/zero of="$R/q$i.img.eli" bs=1M conv=notrunc status=none 2>/dev/null; done
	pool=gtdmg$mode
	zpool create -f -m "$T/mnt-$pool" "$pool" raidz $(zdev q1.img q2.img q3.img) >/dev/null 2>&1
	cp "$T/data" "$T/mnt-$pool/data" && sync
	zpool export "$pool"
	"$GELI" detach q1.img q2.img q3.img
	# Damage q2's ciphertext between its front and back labels.
	dd if=/dev/urandom of="$T/q2.img" bs=1M seek=8 count=100 conv=notrunc status=none
	zfs_attach -j "$T/pass" "$T"/q[1-3].img
	zpool import -d "$ZDIR" "$pool" >/dev/null 2>&1
	check "$mode: the data reads back correct despite the damage" test "$(md5sum <"$T/mnt-$pool/data")" = "$sum"
	zpool scrub "$pool"
	zpool_scrubbed "$pool"
	zpool status "$pool" >"$T/st"
	# ZFS counts a read that failed (EIO) under READ or CKSUM; what
	# tells the two modes apart is who noticed: the daemon or ZFS alone.
	# (OpenZFS 2.1 names a vdev outside /dev by its last part, 2.3 in full)
	if awk -v f="$(zdev q2.img)" '($1 == f || $1 == "q2.img.eli") && ($3 > 0 || $5 > 0 || /repaired/) { found = 1 } END { exit !found }' "$T/st"; then
		ok "$mode: ZFS counted errors on the damaged provider and repaired them"
	else
		nok "$mode: ZFS counted errors on the damaged provider"; diag <"$T/st"
	fi
	if [ $mode = integrity ]; then
		check "integrity: the damaged blocks reached ZFS as I/O errors, never as data" \
			grep -q "q2.img.eli: Failed to authenticate" "$R/q2.img.log"
	else
		check "plain: the damage reached ZFS as data, caught by its checksums" \
			fails grep -q "Failed to authenticate" "$R/q2.img.log"
	fi
	check "$mode: the scrub repaired it (no data errors)" grep -q "No known data errors" "$T/st"
	zpool clear "$pool"
	zpool scrub "$pool"
	zpool_scrubbed "$pool"
	check "$mode: a second scrub is clean" bash -c "zpool status $pool | grep -q 'with 0 errors'"
	zdestroy "$pool"
	"$GELI" detach q1.img q2.img q3.img
done

# The loop device carries a pool as well as ext4 does.
mkprov "$T/l.img" 96M
"$GELI" init -B none -i 100 -J "$T/pass" "$T/l.img" >/dev/null
run "$GELI" attach -L -j "$T/pass" "$T/l.img"
loop=$(cat "$T/out")
if zpool create -f -m "$T/mnt-gtloop" gtloop "$loop" >/dev/null 2>&1; then
	cp "$T/data" "$T/mnt-gtloop/data" && sync
	zpool export gtloop
	zpool import -d /dev gtloop >/dev/null 2>&1
	check "a pool on the loop device of an attached provider" test "$(md5sum <"$T/mnt-gtloop/data")" = "$sum"
	zdestroy gtloop
else
	nok "zpool create on $loop"
fi
"$GELI" detach l.img
done_testing
