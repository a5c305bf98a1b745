#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# geli attach through ublk (src/attach/ublk.c), on a kernel that has it
# (bookworm-backports' 6.12; the lane): the block device and its names,
# ext4 and fio on it, read-only, discard and write-zeroes, an integrity
# failure as EIO, suspend (I/O waits) and resume, detach busy, -f and -l,
# onetime, a kill -9 under load, and GELI_BACKEND=fuse on the same kernel.
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
# (contrib/61-geli-ublk.rules: OpenZFS waits 3 s for each member of a pool
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

# kill -9 under load: I/O fails, nothing hangs; attach again, the dead
# daemon's device deleted.
"$GELI" attach -p -k "$T/key" "$T/a"
ad=$(ublkdev a)
dd if=/dev/zero of="$ad" bs=1M count=60 oflag=direct status=none 2>"$T/dd.err" &
w=$!
sleep 0.5
kill -9 "$(cat "$GELI_RUNDIR/a.pid")"
check "kill -9 under writes: the writer ends with an I/O error" \
	bash -c "wait_pid() { for i in \$(seq 300); do kill -0 $w 2>/dev/null || return 0; sleep 0.1; done; return 1; }; wait_pid"
wait $w
check "... (EIO)" grep -q "Input/output error" "$T/dd.err"
check "... the block device is gone" wait_for test ! -e "$ad"
expect_ok "attach again after the kill" "$GELI" attach -p -k "$T/key" "$T/a"
check "... the dead daemon's device deleted (one device per attached provider)" \
	test "$(ublk_devs)" = 2
"$GELI" detach a b

# The same kernel, FUSE asked for.
GELI_BACKEND=fuse "$GELI" attach -p -k "$T/key" -L "$T/a" >/dev/null
check "GELI_BACKEND=fuse: FUSE and a loop device" \
	test "$(backend_of a)" = fuse -a "$(readlink /dev/a.eli | cut -c1-9)" = /dev/loop
"$GELI" detach a
check "nothing left: no ublk device" test "$(ublk_devs)" = 0
done_testing
