#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# geli attach through ublk (src/attach/ublk.c), on a kernel that has it
# (bookworm-backports' 6.12; the lane): the block device and its names,
# ext4 and fio on it, read-only, discard and write-zeroes, an integrity
# failure as EIO, suspend (I/O waits) and resume, detach busy, -f and -l,
# onetime, server and keeper killed under load (attach takes the waiting
# device back), growth with the provider (UPDATE_SIZE,
# 6.16+), an ordinary user's devices, and GELI_BACKEND=fuse on the same
# kernel.
# In a guest of tests/vm/run.
. "$(dirname "$0")/guest.sh"
if [ ! -c /dev/ublk-control ]; then
	skip "this kernel has no ublk (Debian 12's 6.1 does not build it)"; done_testing; exit
fi
ublkdev() { readlink "$GELI_RUNDIR/$1.eli"; }
ublk_devs() { ls /sys/class/ublk-char 2>/dev/null | wc -l; }

mkprovs 64M -- a
mkprov "$T/b" 16M
"$GELI" init -B none -P -K "$T/key" "$T/b" >/dev/null
run "$GELI" attach -p -k "$T/key" -L "$T/a"
dev=$(cat "$T/out")
check "attach makes a ublk device by default, and -L prints it" test "$rc" = 0 -a -b "$dev" -a "${dev#/dev/ublkb}" != "$dev"
check "... geli list says ublk" test "$(backend_of a)" = ublk
check "... the .eli in the run directory and /dev/a.eli lead to it" \
	test "$(ublkdev a)" = "$dev" -a "$(readlink /dev/a.eli)" = "$dev"
check "... of GELI's size and 4096-byte sectors" \
	test "$(blockdev --getsize64 "$dev")" = $((64 * 1048576 - 4096)) -a "$(blockdev --getss "$dev")" = 4096
# (contrib/61-geli-ublk.rules.in: OpenZFS waits 3 s for each member of a pool
# that has none)
udevadm settle
check "... udev gives it its links (by-diskseq)" \
	bash -c 'udevadm info -q property "$0" | grep -q "^DEVLINKS=.*/dev/disk/by-diskseq/"' "$dev"
"$GELI" attach -p -k "$T/key" "$T/b"
check "a 512-byte provider: 512-byte logical sectors" test "$(blockdev --getss "$(ublkdev b)")" = 512
check "the daemon is in a mount namespace of its own" \
	test "$(readlink "/proc/$(cat "$GELI_RUNDIR/a.pid")/ns/mnt")" != "$(readlink /proc/self/ns/mnt)"

# ext4, written, checked, and again after detach and attach.
mkfs.ext4 -q -F /dev/a.eli
mkdir -p "$T/mnt"
mount /dev/a.eli "$T/mnt"
put_files "$T/mnt" 12
expect_err "detach of a mounted provider" "geli: Cannot destroy device a.eli (error=16)." -- "$GELI" detach a
umount "$T/mnt"
check "ext4 on the ublk device: fsck finds it clean" fsck.ext4 -fn /dev/a.eli
expect_ok "detach" "$GELI" detach a
check "... removes the device and its names" \
	test ! -e "$dev" -a ! -e /dev/a.eli -a ! -e "$GELI_RUNDIR/a.eli" -a "$(ublk_devs)" = 1
"$GELI" attach -p -k "$T/key" -L "$T/a" >/dev/null
mount /dev/a.eli "$T/mnt"
check "attached again: the files read back" files_ok "$T/mnt"
umount "$T/mnt"

# fio verifies what it wrote, 4 KiB random and 1 MiB sequential.
check "fio: random 4 KiB writes verified" fio --name=r --filename=/dev/a.eli --rw=randwrite --bs=4k \
	--size=24M --direct=1 --ioengine=libaio --iodepth=16 --eta=never --verify=crc32c --do_verify=1 \
	--output="$T/fio.out"
check "fio: sequential 1 MiB writes verified" fio --name=s --filename=/dev/a.eli --rw=write --bs=1M \
	--size=48M --direct=1 --ioengine=libaio --iodepth=4 --eta=never --verify=md5 --do_verify=1 \
	--output="$T/fio.out"

# Discard: the provider's blocks given back; write-zeroes: zeros.
sync
before=$(du -k "$T/a" | cut -f1)
blkdiscard -f /dev/a.eli
after=$(du -k "$T/a" | cut -f1)
check "discard of the whole device gives the provider's blocks back ($before KiB -> $after KiB)" \
	test "$after" -lt $((before / 4))
dd if=/dev/urandom of=/dev/a.eli bs=1M count=4 oflag=direct status=none
blkdiscard -f -z -o 0 -l 4194304 /dev/a.eli
check "write-zeroes: the range reads as zeros" \
	cmp -s -n 4194304 /dev/a.eli /dev/zero

# Suspend: I/O waits for resume.
dd if=/dev/urandom of=/dev/a.eli bs=1M count=2 oflag=direct status=none
"$GELI" suspend a
dd if=/dev/a.eli of=/dev/null bs=1M count=2 iflag=direct status=none &
rd=$!
sleep 2
check "suspended: a read waits" kill -0 $rd
"$GELI" resume -p -k "$T/key" a
check "resumed: the read ends well" wait $rd

# Read-only.
"$GELI" detach a
"$GELI" attach -r -p -k "$T/key" "$T/a"
check "read-only attach: a read-only device" test "$(blockdev --getro "$(ublkdev a)")" = 1
check "... writes to it fail" fails dd if=/dev/zero of="$(ublkdev a)" bs=4096 count=1 oflag=direct status=none
"$GELI" detach a

# Integrity: a damaged sector is EIO, its neighbours read.
mkprovs 16M -a hmac/sha256 -- h
"$GELI" attach -p -k "$T/key" "$T/h"
hd=$(ublkdev h)
dd if=/dev/urandom of="$hd" bs=1M oflag=direct status=none 2>/dev/null
"$GELI" detach h
# (the first data sector of the provider: its first 4096 bytes)
printf '\xff' | dd of="$T/h" bs=1 seek=100 conv=notrunc status=none
"$GELI" attach -p -k "$T/key" "$T/h"
hd=$(ublkdev h)
check "integrity: the damaged sector reads as an I/O error" \
	fails dd if="$hd" of=/dev/null bs=4096 count=1 iflag=direct status=none
check "... its neighbour reads" dd if="$hd" of=/dev/null bs=4096 skip=8 count=1 iflag=direct status=none
"$GELI" detach h

# detach -l: at the last close; -f: the users get errors, nothing hangs.
"$GELI" attach -p -k "$T/key" -L "$T/a" >/dev/null
mkfs.ext4 -q -F /dev/a.eli
"$GELI" detach -l a
check "detach -l: still attached while nobody used it" attached a
mount /dev/a.eli "$T/mnt"
umount "$T/mnt"
check "... detached after a mount and umount" wait_for fails attached a
"$GELI" attach -p -k "$T/key" "$T/a"
exec 7<"$(ublkdev a)"
"$GELI" detach -l a
sleep 1.5
check "detach -l of an open device: attached while it is open" attached a
exec 7<&-
check "... detached at its close, with no I/O between" wait_for fails attached a
"$GELI" attach -p -k "$T/key" -L "$T/a" >/dev/null
mount /dev/a.eli "$T/mnt"
expect_ok "detach -f of a mounted provider" "$GELI" detach -f a
check "... reads under the mount fail, and return" fails cat "$T/mnt/f1"
umount -l "$T/mnt" 2>/dev/null

# onetime: a ublk device too.
mkprov "$T/o" 32M
run "$GELI" onetime -L -s 4096 "$T/o"
check "onetime: a ublk device" test "$rc" = 0 -a "$(backend_of o)" = ublk
"$GELI" detach o

# Server and keeper killed with -9 under load (a server alone is replaced:
# cli/t_restart.sh): root's device waits for a server (USER_RECOVERY), its
# I/O waits, and attach takes the same device back; the writer goes on
# without an error.  The writer goes over the device again and again until
# it is told to stop (an hour is a hang's bound, never the load's length);
# the kill comes once its first writes are done.
"$GELI" attach -p -k "$T/key" "$T/a"
ad=$(ublkdev a)
fio --name=w --filename="$ad" --rw=write --bs=1M --direct=1 --ioengine=psync \
	--verify=crc32c --verify_backlog=8 --verify_fatal=1 \
	--time_based --runtime=3600 --eta=never >"$T/dd.err" 2>&1 &
w=$!
# (the sectors the device has written, its stat's 7th field)
written() { awk '{ print $7 }' "/sys/block/${ad#/dev/}/stat"; }
wait_for eval '[ "$(written)" -gt 0 ]'
kill_daemon "$(cat "$GELI_RUNDIR/a.pid")"
check "server and keeper killed under writes: the device stays, waiting" \
	eval 'test -b "$ad" && alive "$w"'
expect_ok "attach again" "$GELI" attach -p -k "$T/key" "$T/a"
check "... takes the same device back (the log says so)" \
	eval 'test "$(ublkdev a)" = "$ad" && grep -q "which waited since its server died, taken back" "$GELI_RUNDIR/a.log"'
w0=$(written)
wait_for eval '[ "$(written)" -gt "$w0" ]'
kill -INT "$w"
wait $w
check "... the writer went on, and saw no error" \
	eval 'grep -q "err= 0" "$T/dd.err" && ! grep -qE "err= *[1-9]|Input/output error" "$T/dd.err"'
check "... one device per attached provider" test "$(ublk_devs)" = 2
"$GELI" detach a b

# Growth (AUTORESIZE): where the kernel changes a ublk device's size
# (UPDATE_SIZE, Linux 6.16 and later: the lane's trixie) the device grows
# with the provider; elsewhere it keeps its size, and the log says why,
# until it is attached again.
mkprovs 32M -- g
"$GELI" attach -p -k "$T/key" "$T/g"
gd=$(ublkdev g)
head -c 4M /dev/urandom >"$T/gdata"
dd if="$T/gdata" of="$gd" bs=1M oflag=direct status=none
truncate -s 48M "$T/g"
grown=$((48 * 1048576 - 4096))
if [ "$(printf '%s\n' 6.16 "$(uname -r | cut -d- -f1)" | sort -V | head -n 1)" = 6.16 ]; then
	check "the provider grew: its ublk device grows with it (UPDATE_SIZE, $(uname -r))" \
		wait_for bash -c 'test "$(blockdev --getsize64 "$0")" = "$1"' "$gd" "$grown"
	check "... what was written reads back" cmp -s -n 4194304 "$gd" "$T/gdata"
	dd if="$T/gdata" of="$gd" bs=1M seek=43 oflag=direct status=none
	check "... and its new end is written and read" \
		bash -c 'cmp -s <(dd if="$0" bs=1M skip=43 count=4 iflag=direct status=none) "$1"' "$gd" "$T/gdata"
else
	check "the provider grew: the device keeps its size ($(uname -r) has no UPDATE_SIZE), and the log says why" \
		wait_for grep -q "this kernel cannot change a ublk device's size (no UPDATE_SIZE)" "$GELI_RUNDIR/g.log"
	check "... it still reads what was written" cmp -s -n 4194304 "$gd" "$T/gdata"
fi
"$GELI" detach g
"$GELI" attach -p -k "$T/key" "$T/g"
check "attached again: the new size" test "$(blockdev --getsize64 "$(ublkdev g)")" = "$grown"
"$GELI" detach g

# ---- An ordinary user -------------------------------------------------------
# Where the administrator gives users /dev/ublk-control (0666 here, as
# ublksrv's documentation has it) the kernel makes ublk devices for them,
# and 61-geli-ublk.rules gives them the device's nodes; where not, FUSE.
U=gelit$$
useradd -M -N -d /nonexistent -s /usr/sbin/nologin "$U"
uid=$(id -u "$U") gid=$(id -g "$U")
UD=$(mktemp -d /tmp/geli-user.XXXXXX)
on_exit "for p in '$UD'/run/*.pid; do [ -f \"\$p\" ] && kill \"\$(cat \"\$p\")\" 2>/dev/null; done; sleep 0.3; rm -rf '$UD'; userdel '$U' 2>/dev/null"
ctlmode=$(stat -c %a /dev/ublk-control)
on_exit "chmod $ctlmode /dev/ublk-control"
cp "$GELI" "$UD/geli"
cp "$T/key" "$UD/key"
mkprov "$UD/u.img" 32M
"$GELI" init -B none -P -K "$UD/key" "$UD/u.img" >/dev/null
head -c 8M /dev/urandom >"$UD/data"
chown -R "$U" "$UD"
chmod 0700 "$UD"
as_user() { (cd "$UD" && runuser -u "$U" -- env -i PATH=/usr/bin:/bin GELI_RUNDIR="$UD/run" "$@"); }
urun() { as_user "$@" >"$T/out" 2>"$T/err" </dev/null; rc=$?; }
ubackend() { as_user ./geli list u.img 2>/dev/null | sed -n 's/^   Backend: //p'; }
owner_of() { stat -c '%u:%g %a' "$1" 2>/dev/null; }

chmod 0600 /dev/ublk-control
urun ./geli attach -b ublk -p -k key u.img
# (after the warning of their small RLIMIT_MEMLOCK)
check "a user, /dev/ublk-control root's: -b ublk fails, saying why" eval 'test "$rc" = 1 &&
	grep -qxF "geli: Cannot create a ublk device for u.img: /dev/ublk-control: Permission denied." "$T/err"'
urun ./geli attach -v -p -k key u.img
check "... without -b: FUSE, and -v says why" eval 'test "$rc" = 0 && test "$(ubackend)" = fuse &&
	grep -qxF "geli: u.img.eli: not through ublk (/dev/ublk-control: Permission denied): through FUSE." "$T/err"'
as_user ./geli detach u.img
chmod 0666 /dev/ublk-control
n0=$(ublk_devs)
urun ./geli attach -v -p -k key u.img
ud=$(readlink "$UD/run/u.img.eli")
check "/dev/ublk-control theirs: attach makes a ublk device by default" \
	test "$rc" = 0 -a "$(ubackend)" = ublk -a -b "$ud" -a "$(ublk_devs)" = $((n0 + 1))
check "... its block node is theirs alone (udev), and so is /dev/ublkc" \
	test "$(owner_of "$ud")" = "$uid:$gid 600" -a "$(owner_of "/dev/ublkc${ud#/dev/ublkb}")" = "$uid:$gid 600"
check "... the daemon runs as the user" test "$(stat -c %u "/proc/$(cat "$UD/run/u.img.pid")")" = "$uid"
check "... udev's helper names them for it, and nothing for root's devices" \
	test "$("$GELI_BUILD/src/attach/geli-ublk-owner" "${ud#/dev/}")" = "$(printf 'GELI_UBLK_UID=%s\nGELI_UBLK_GID=%s' "$uid" "$gid")"
"$GELI" attach -p -k "$T/key" "$T/a"
check "... (root's: nothing, status 0)" \
	test -z "$("$GELI_BUILD/src/attach/geli-ublk-owner" "$(basename "$(ublkdev a)")")"
"$GELI" detach a
urun dd if=data of="$ud" bs=1M oflag=direct conv=fsync status=none
check "they write the block device" test "$rc" = 0
check "... it reads back, for them and for root" \
	bash -c 'runuser -u "$0" -- cmp -s -n 8388608 "$1" "$2/data" && cmp -s -n 8388608 "$1" "$2/data"' "$U" "$ud" "$UD"
chmod 0666 "$ud"
check "... the kernel opens it for its owner alone (even at 0666)" \
	fails runuser -u nobody -- dd if="$ud" of=/dev/null count=1 status=none
urun ./geli detach u.img
check "detach: the device goes" test "$rc" = 0 -a "$(ublk_devs)" = "$n0"
as_user ./geli attach -p -k key u.img
ud=$(readlink "$UD/run/u.img.eli")
kill -9 "$(cat "$UD/run/u.img.pid")"
# (dead, and its device stopped, as the kernel does once it finds the
# daemon gone: a loaded machine takes its time)
wait_for test ! -e "$ud"
rm -f "$UD/run/u.img".*
urun ./geli attach -p -k key u.img
check "killed with -9, attached again: their dead daemon's device deleted" \
	test "$rc" = 0 -a "$(ublk_devs)" = $((n0 + 1))
check "... and the data is there" \
	runuser -u "$U" -- cmp -s -n 8388608 "$(readlink "$UD/run/u.img.eli")" "$UD/data"
ud=$(readlink "$UD/run/u.img.eli")
kill -9 "$(cat "$UD/run/u.img.pid")"
wait_for test ! -e "$ud"
rm -f "$UD/run/u.img".*
"$GELI" attach -p -k "$T/key" "$T/a"
check "root's attach deletes a user's dead daemon's device too" test "$(ublk_devs)" = $((n0 + 1))
"$GELI" detach a
chmod "$ctlmode" /dev/ublk-control

# The same kernel, FUSE asked for.
GELI_BACKEND=fuse "$GELI" attach -p -k "$T/key" -L "$T/a" >/dev/null
check "GELI_BACKEND=fuse: FUSE and a loop device" \
	test "$(backend_of a)" = fuse -a "$(readlink /dev/a.eli | cut -c1-9)" = /dev/loop
"$GELI" detach a
check "nothing left: no ublk device" test "$(ublk_devs)" = 0
done_testing
