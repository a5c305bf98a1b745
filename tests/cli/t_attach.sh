#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# attach and the runtime verbs on one provider:
# ext4 on the loop device round trip, ciphertext on disk, integrity errors,
# -r, -d, detach -l/-f, suspend/resume with a waiting reader, wrong keys.
. "$(dirname "$0")/lib.sh"
need_fuse || { done_testing; exit; }

prov=$T/disk.img
eli=$GELI_RUNDIR/disk.img.eli
passfile "$T/pass" "attach test"
mkprov "$prov" 64M
"$GELI" init -B none -i 1000 -s 4096 -J "$T/pass" "$prov" >/dev/null

# Wrong key: FreeBSD's message, exit 1, nothing mounted.
passfile "$T/wrong" "attach tesT"
expect_err "a wrong key" "geli: Wrong key for $prov."$'\n'"geli: There was an error with at least one provider." \
	--same "$prov" -- "$GELI" attach -j "$T/wrong" "$prov"
check "... and nothing attached" test ! -e "$eli"
expect_ok "attach -C checks the key only" "$GELI" attach -C -j "$T/pass" "$prov"
check "... and attaches nothing" test ! -e "$eli"
expect_err "attach -n 1 tries slot 1 only" "geli: Wrong key for $prov."$'\n'"geli: There was an error with at least one provider." \
	-- "$GELI" attach -C -n 1 -j "$T/pass" "$prov"
expect_err "attach -d -r" "geli: Options -d and -r are mutually exclusive." -- "$GELI" attach -d -r -j "$T/pass" "$prov"

# init -> attach -> mkfs.ext4 on the loop device -> mount -> write -> umount
# -> detach -> attach -> read back equal.
run "$GELI" attach -L -j "$T/pass" "$prov"
loop=$(cat "$T/out")
be=$(backend_of disk.img)
check "attach -L reports a block device ($be)" test -b "$loop"
check "the decrypted provider has the right size" test "$(eli_size "$eli")" = $((64 * 1048576 - 4096))
check "the block device has the provider's size" test "$(blockdev --getsize64 "$loop")" = $((64 * 1048576 - 4096))
check "the block device has the GELI sector size" test "$(blockdev --getss "$loop")" = 4096
# Its stable name, as FreeBSD's /dev/ada1.eli ($GELI_DEVDIR here).
check "the stable name $GELI_DEVDIR/disk.img.eli leads to the block device" \
	test "$(readlink "$GELI_DEVDIR/disk.img.eli")" = "$loop"
check "list names the device" bash -c '"$0" list disk.img | grep -qxF "   Device: $1/disk.img.eli"' "$GELI" "$GELI_DEVDIR"
mkdir -p "$T/mnt"
check "mkfs.ext4 on the block device" mkfs.ext4 -q "$loop"
check "mount it" mount "$loop" "$T/mnt"
head -c 3000000 /dev/urandom >"$T/data"
yes "GELI PLAINTEXT MARKER" | head -c 2000000 >"$T/marker.txt"
cp "$T/data" "$T/marker.txt" "$T/mnt/"
check "umount" umount "$T/mnt"
expect_ok "detach" "$GELI" detach "$prov"
check "detach removes the block device" wait_for blkdev_gone "$loop"
check "detach removes the .eli file" test ! -e "$eli"
check "detach removes the stable name" test ! -L "$GELI_DEVDIR/disk.img.eli"
check "the plaintext is not on the disk" fails grep -q "GELI PLAINTEXT MARKER" "$prov"
run "$GELI" attach -L -j "$T/pass" "$prov"
loop=$(cat "$T/out")
mount "$loop" "$T/mnt"
check "after attaching again the files read back equal" \
	bash -c 'cmp -s "$0/data" "$1/data" && cmp -s "$0/marker.txt" "$1/marker.txt"' "$T" "$T/mnt"

# A daemon killed with -9 leaves its name, and the next attach takes it
# over; a name that is not a link of ours is left alone, and attach fails.
umount "$T/mnt"
kill_daemon "$(cat "$GELI_RUNDIR/disk.img.pid")"
check "a daemon killed with -9 leaves its stable name" test -L "$GELI_DEVDIR/disk.img.eli"
run "$GELI" attach -L -j "$T/pass" "$prov"
loop2=$(cat "$T/out")
check "attach again points the name at the new block device" \
	test -n "$loop2" -a "$(readlink "$GELI_DEVDIR/disk.img.eli")" = "$loop2"
"$GELI" detach "$prov"
check "the block device of the killed daemon is gone" wait_for blkdev_gone "$loop"
# Cleared, the loop device may be someone else's by the next attach (the
# run directory's record of the link says it was ours).  (A ublk device's
# number is the next attach's to take.)
if [ "$be" = fuse ]; then
	run "$GELI" attach -L -j "$T/pass" "$prov"
	loop=$(cat "$T/out")
	kill_daemon "$(cat "$GELI_RUNDIR/disk.img.pid")"
	truncate -s 1M "$T/other"
	wait_for losetup "$loop" "$T/other"
	run "$GELI" attach -L -j "$T/pass" "$prov"
	check "a killed daemon's name is taken over when its loop device is another's" \
		test "$rc" = 0 -a "$(readlink "$GELI_DEVDIR/disk.img.eli")" = "$(cat "$T/out")" -a "$(cat "$T/out")" != "$loop"
	losetup -d "$loop"
	"$GELI" detach "$prov"
else
	skip "a killed daemon's loop device taken by another: loop devices only (here: $be)"
fi
ln -s /dev/null "$GELI_DEVDIR/disk.img.eli"
expect_err "a stable name that leads elsewhere is kept and attach -L fails" \
	"geli: Cannot create $GELI_DEVDIR/disk.img.eli: File exists."$'\n'"geli: There was an error with at least one provider." -- "$GELI" attach -L -j "$T/pass" "$prov"
check "... leaving nothing attached and the link as it was" \
	test ! -e "$eli" -a "$(readlink "$GELI_DEVDIR/disk.img.eli")" = /dev/null
rm "$GELI_DEVDIR/disk.img.eli"
run "$GELI" attach -L -j "$T/pass" "$prov"
loop=$(cat "$T/out")
mount "$loop" "$T/mnt"

# Busy: detach refused while mounted; -f forces.
expect_err "detach of a mounted provider" "geli: Cannot destroy device disk.img.eli (error=16)." -- "$GELI" detach "$prov"
umount "$T/mnt"
exec 7<"$eli"
expect_err "detach while the .eli file is open" "geli: Cannot destroy device disk.img.eli (error=16)." -- "$GELI" detach disk.img.eli
expect_ok "detach -f while open" "$GELI" detach -f "$eli"
check "forced: gone" test ! -e "$GELI_RUNDIR/disk.img.ctl"
exec 7<&-
expect_err "detach of something not attached" "geli: No such device: $prov." -- "$GELI" detach "$prov"

# A daemon under a block device goes on under memory pressure: the OOM
# killer passes it by (where root may ask: CAP_SYS_RESOURCE, which some
# containers withhold), and the provider's pages it reads through its
# mapping stay page cache, not locked memory (they were, up to the disk's
# size: a 512 MiB guest's OOM killer took the daemons under a pool).
"$GELI" attach -j "$T/pass" "$prov"
dpid=$(cat "$GELI_RUNDIR/disk.img.pid")
if [ $(( 0x$(awk '/^CapEff/ { print $2 }' /proc/self/status) >> 24 & 1 )) = 1 ]; then
	check "the daemon is exempt from the OOM killer" test "$(cat "/proc/$dpid/oom_score_adj")" = -1000
	# (PF_MEMALLOC_NOIO, the task flag PR_SET_IO_FLUSHER sets: /proc's
	# stat, the 7th field after the command's name)
	flags=$(sed 's/.*) //' "/proc/$dpid/stat" | awk '{ print $7 }')
	check "the daemon is an I/O flusher (flags $flags)" test $(( flags & 0x80000 )) != 0
else
	skip "the daemon's OOM exemption: no CAP_SYS_RESOURCE here"
	skip "the daemon as an I/O flusher: no CAP_SYS_RESOURCE here"
fi
dd if="$eli" of=/dev/null bs=1M status=none
lck=$(awk '/^Locked:/ { print $2 }' "/proc/$dpid/smaps_rollup")
check "reading the whole 64 MiB provider leaves the daemon's locked pages under 32 MiB ($lck KiB)" \
	test "$lck" -lt 32768
"$GELI" detach "$prov"

# -r: writes refused, the provider untouched.
sum=$(md5sum <"$prov")
expect_ok "attach -r" "$GELI" attach -r -j "$T/pass" "$prov"
check "a write to a read-only provider fails" fails dd if=/dev/zero of="$eli" bs=4096 count=1 conv=notrunc status=none
check "reads work read-only" cmp -s <(dd if="$eli" bs=1M count=1 status=none | head -c 10) <(dd if="$eli" bs=1M count=1 status=none | head -c 10)
check "list says READ-ONLY" bash -c '"$0" list disk.img | grep -q "^Flags: .*READ-ONLY"' "$GELI"
"$GELI" detach "$prov"
check "the provider is unchanged after -r" test "$(md5sum <"$prov")" = "$sum"

# -d: detach after the last writer closes; a reader closing does not detach.
expect_ok "attach -d" "$GELI" attach -d -j "$T/pass" "$prov"
dd if="$eli" of=/dev/null bs=4096 count=1 status=none
sleep 1.2
check "a reader closing does not detach" attached disk.img
dd if=/dev/urandom of="$eli" bs=4096 count=4 conv=notrunc status=none
check "the last writer closing detaches" wait_for fails attached disk.img

# detach -l: detach on the last close of any opener.
"$GELI" attach -j "$T/pass" "$prov"
exec 7<"$eli"
run "$GELI" detach -l disk.img
check "detach -l of an open provider leaves it attached" attached disk.img
check "list shows RW-DETACH" bash -c '"$0" list disk.img | grep -q "^Flags: .*RW-DETACH"' "$GELI"
exec 7<&-
check "... until the last close" wait_for fails attached disk.img

# suspend / resume while a reader waits.
"$GELI" attach -j "$T/pass" "$prov"
dd if=/dev/urandom of="$eli" bs=1M count=2 conv=notrunc status=none
dd if="$eli" of="$T/before" bs=1M count=2 status=none
expect_ok "suspend" "$GELI" suspend disk.img
check "status says SUSPENDED" bash -c '"$0" status -s disk.img | grep -q SUSPENDED' "$GELI"
expect_err "suspend twice" "geli: Device disk.img.eli already suspended." -- "$GELI" suspend disk.img
dd if="$eli" of="$T/during" bs=1M count=2 status=none &
reader=$!
sleep 1
check "a reader waits while suspended" kill -0 $reader
expect_err "resume with a wrong key" "geli: Wrong key for $prov." -- "$GELI" resume -j "$T/wrong" "$prov"
check "... still waiting" kill -0 $reader
expect_ok "resume" "$GELI" resume -j "$T/pass" "$prov"
wait $reader
check "the waiting reader got the right data" cmp -s "$T/before" "$T/during"
expect_err "resume when not suspended" "geli: Device disk.img.eli is not suspended." -- "$GELI" resume -j "$T/pass" "$prov"
expect_ok "suspend -a" "$GELI" suspend -a
check "suspend -a suspended it" bash -c '"$0" status -s | grep -q SUSPENDED' "$GELI"
"$GELI" resume -j "$T/pass" "$prov"
"$GELI" detach "$prov"

# Integrity: a flipped bit and a copied physical sector give read errors.
aprov=$T/auth.img
aeli=$GELI_RUNDIR/auth.img.eli
mkprov "$aprov" 16M
"$GELI" init -B none -i 1000 -a hmac/sha256 -s 4096 -J "$T/pass" "$aprov" >/dev/null
"$GELI" attach -j "$T/pass" "$aprov"
check "a never-written sector gives a read error" fails dd if="$aeli" of=/dev/null bs=4096 count=1 status=none
dd if=/dev/urandom of="$T/adata" bs=4096 count=64 status=none
dd if="$T/adata" of="$aeli" bs=4096 conv=notrunc status=none
check "written sectors read back" cmp -s <(dd if="$aeli" bs=4096 count=64 status=none) "$T/adata"
"$GELI" detach auth.img
# Logical sector 0 is 9 physical sectors of 512 bytes (4608 bytes, §7.1).
flip_byte "$aprov" 100
"$GELI" attach -j "$T/pass" "$aprov"
check "one flipped bit: a read error" fails dd if="$aeli" of="$T/x" bs=4096 count=1 status=none
check "... and never wrong data" fails cmp -s "$T/x" <(head -c 4096 "$T/adata")
check "the neighbour sector still reads" cmp -s <(dd if="$aeli" bs=4096 skip=1 count=1 status=none) <(dd if="$T/adata" bs=4096 skip=1 count=1 status=none)
check "the daemon logs the failure" grep -q "Failed to authenticate" "$GELI_RUNDIR/auth.img.log"
"$GELI" detach auth.img
dd if="$aprov" of="$aprov" bs=512 skip=9 seek=18 count=1 conv=notrunc status=none
"$GELI" attach -j "$T/pass" "$aprov"
check "a physical sector copied over another: a read error" fails dd if="$aeli" of=/dev/null bs=4096 skip=2 count=1 status=none
"$GELI" detach auth.img

# fsync on the .eli file reaches the provider (the daemon calls fsync on it).
if command -v strace >/dev/null; then
	"$GELI" attach -j "$T/pass" "$prov"
	pid=$(cat "$GELI_RUNDIR/disk.img.pid")
	strace -f -qq -e trace=fsync,fdatasync -p "$pid" -o "$T/strace.log" &
	tracer=$!
	# Every thread of the daemon traced (strace, -qq, says nothing when
	# it has attached; a slow machine makes that late, never absent).
	traced() {
		local s
		for s in /proc/"$pid"/task/*/status; do
			grep -q '^TracerPid:[[:space:]]*[1-9]' "$s" 2>/dev/null || return 1
		done
	}
	wait_for traced
	dd if=/dev/urandom of="$eli" bs=4096 count=2 conv=notrunc status=none
	# (a release comes after close returns: time for a wrong fsync to
	# show; a late machine can only hide one, never make one)
	sleep 0.5
	nosync=$(grep -c "fsync(" "$T/strace.log")
	dd if=/dev/urandom of="$eli" bs=4096 count=2 conv=notrunc,fsync status=none
	# (dd's fsync returned after the daemon's; strace may write its line
	# a moment later)
	wait_for grep -q "fsync(" "$T/strace.log"
	kill "$tracer"; wait "$tracer" 2>/dev/null
	check "a write and close without fsync syncs nothing" test "$nosync" = 0
	check "fsync on the .eli file is passed down to the provider" grep -q "fsync(" "$T/strace.log"
	"$GELI" detach "$prov"
else
	skip "strace not installed"
fi

# list / status shapes.
"$GELI" attach -j "$T/pass" "$prov" "$aprov"
run "$GELI" list
check "list shows both, with FreeBSD's items" bash -c '
	grep -qx "Geom name: disk.img.eli" "$0" && grep -qx "Geom name: auth.img.eli" "$0" &&
	grep -qx "EncryptionAlgorithm: AES-XTS" "$0" && grep -qx "AuthenticationAlgorithm: HMAC/SHA256" "$0" &&
	grep -qx "KeyLength: 128" "$0" && grep -q "^Flags: .*AUTH" "$0" && grep -qx "KeysTotal: 1" "$0" &&
	grep -qx "UsedKey: 0" "$0" && grep -qx "State: ACTIVE" "$0"' "$T/out"
run "$GELI" status
check "status has the columns Name, Status, Components" test "$(head -n1 "$T/out" | tr -s ' ')" = " Name Status Components"
check "status lists both providers" test "$(grep -c ACTIVE "$T/out")" = 2
expect_ok "detach two providers in one call" "$GELI" detach disk.img auth.img.eli
check "nothing is left in the run directory" test -z "$(ls "$GELI_RUNDIR"/*.eli "$GELI_RUNDIR"/*.ctl 2>/dev/null)"

# The provider file cut short while attached: reads past the cut fail with
# EIO (the daemon reads through a mapping, where such a read is a SIGBUS),
# the daemon lives on, reads before the cut still work.
mkprov "$T/cut.img" 8M
"$GELI" init -B none -i 100 -s 4096 -J "$T/pass" "$T/cut.img" >/dev/null
"$GELI" attach -j "$T/pass" "$T/cut.img"
ceil=$GELI_RUNDIR/cut.img.eli
head -c 4M /dev/urandom >"$T/cut.data"
dd if="$T/cut.data" of="$ceil" bs=1M conv=notrunc status=none
dd if="$ceil" of=/dev/null bs=1M status=none	# everything in the page cache
truncate -s 2M "$T/cut.img"
run dd if="$ceil" of=/dev/null bs=1M skip=3 count=1
check "a read past the cut: Input/output error" grep -q "Input/output error" "$T/err"
check "the daemon lives" attached cut.img
check "a read before the cut returns the data" \
	bash -c "cmp -s <(dd if='$ceil' bs=1M count=1 status=none) <(head -c 1M '$T/cut.data')"
"$GELI" detach -f cut.img

# The back end: ublk where the kernel has it (tests/vm/t_ublk.sh, in the
# guest lane), else FUSE with a line that says why; -b fuse asks for FUSE.
run "$GELI" attach -b fuse -j "$T/pass" "$prov"
check "-b fuse: FUSE" bash -c '"$0" list disk.img | grep -qx "   Backend: fuse"' "$GELI"
"$GELI" detach disk.img
if [ -c /dev/ublk-control ] || modprobe -n -q ublk_drv 2>/dev/null; then
	skip "the kernel has ublk: tests/vm/t_ublk.sh tests the default"
else
	why="no /dev/ublk-control, and ublk_drv does not load"
	run "$GELI" attach -v -j "$T/pass" "$prov"
	check "without ublk, attach -v says why and FUSE serves it" \
		test "$rc" = 0 -a "$(cat "$T/err")" = "geli: disk.img.eli: not through ublk ($why): through FUSE."
	check "... as geli list and the log say" bash -c '"$0" list disk.img | grep -qx "   Backend: fuse" &&
		grep -q "not through ublk" "$1"' "$GELI" "$GELI_RUNDIR/disk.img.log"
	"$GELI" detach disk.img
	run "$GELI" attach -b auto -j "$T/pass" "$prov"
	check "-b auto: the same, without a word" test "$rc" = 0 -a ! -s "$T/err"
	"$GELI" detach disk.img
	expect_err "-b ublk without ublk: refused, saying why" \
		"geli: Cannot create a ublk device for disk.img: $why."$'\n'"geli: There was an error with at least one provider." \
		-- "$GELI" attach -b ublk -j "$T/pass" "$prov"
fi
expect_err "GELI_BACKEND that names no back end" "geli: Invalid back end: zfs (fuse, ublk or auto)." \
	-- env GELI_BACKEND=zfs "$GELI" attach -j "$T/pass" "$prov"
check "... nothing attached" fails attached disk.img

done_testing
