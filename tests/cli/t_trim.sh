#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# TRIM: fallocate(PUNCH_HOLE) on the .eli deletes the whole GELI sectors it
# covers on the provider (a hole in a file; on a block device a zeroing that
# unmaps) and the range reads as zeros; ZERO_RANGE writes zeros; NODELETE (init -T,
# configure -T, also on an attached provider) and integrity refuse with
# EOPNOTSUPP and change nothing; ext4 on the -L device gives space back with
# fstrim and checks clean.  The .eli's own punches (partial sectors kept,
# past the end) are a FUSE file's: -b fuse; the block devices are what
# attach makes (ublk where the kernel has it: the guest lane).
. "$(dirname "$0")/lib.sh"
need_fuse || { done_testing; exit; }
passfile "$T/pass" "trim"
prov=$T/t.img
eli=$GELI_RUNDIR/t.img.eli
S=4096
blocks() { stat -c %b "$1"; }
# same FILE1 OFF1 FILE2 OFF2 LEN: those bytes are equal.
same() { cmp -s -n "$5" -i "$2:$4" "$1" "$3"; }
zeros() { cmp -s -n "$3" -i "$2:0" "$1" /dev/zero; }
# fresh INIT-OPTIONS...: a new 64 MiB provider, attached, its first 32 MiB
# written with $T/data (fsynced).
head -c 32M /dev/urandom >"$T/data"
fresh() {
	"$GELI" detach t.img 2>/dev/null
	mkprov "$prov" 64M
	"$GELI" init -B none -i 10 -J "$T/pass" "$@" "$prov" >/dev/null
	"$GELI" attach -b fuse -j "$T/pass" "$prov"
	dd if="$T/data" of="$eli" bs=1M conv=notrunc,fsync status=none
}

# ---- Punching a hole in the .eli ----------------------------------------------

fresh -s $S
before=$(blocks "$prov")
off=1000 len=20000000
expect_ok "fallocate --punch-hole on the .eli" fallocate -p -o $off -l $len "$eli"
after=$(blocks "$prov")
# The whole sectors inside [off, off+len): 1 to (off+len)/S - 1.
whole=$(( ((off + len) / S - (off + S - 1) / S) * S ))
check "the $((whole / S)) whole GELI sectors inside are given back, the partial ones kept ($before -> $after blocks)" \
	test $((before - after)) = $((whole / 512))
check "the punched range reads as zeros, its partial edges too" zeros "$eli" $off $len
check "the bytes before it read as written" same "$eli" 0 "$T/data" 0 $off
check "the bytes after it read as written" \
	same "$eli" $((off + len)) "$T/data" $((off + len)) $((32 * 1048576 - off - len))
"$GELI" detach t.img
"$GELI" attach -b fuse -j "$T/pass" "$prov"
check "after detach and attach: still zeros" zeros "$eli" $off $len
check "... and the rest as written" same "$eli" 0 "$T/data" 0 $off
expect_ok "a punch inside one sector" fallocate -p -o $((S * 7000 + 10)) -l 100 "$eli"
check "... zeros there, the sector kept" zeros "$eli" $((S * 7000 + 10)) 100
check "... its other bytes as written" same "$eli" $((S * 7000 + 110)) "$T/data" $((S * 7000 + 110)) 100

# ---- Zero range and preallocation ---------------------------------------------

before=$(blocks "$prov")
expect_ok "fallocate --zero-range" fallocate -z -o $((24 * 1048576)) -l 1M "$eli"
check "... reads as zeros" zeros "$eli" $((24 * 1048576)) 1048576
check "... and the provider keeps its blocks" test "$(blocks "$prov")" = "$before"
expect_ok "fallocate (preallocation) inside the size: nothing to do" \
	fallocate -o 0 -l 1M "$eli"
check "... the data untouched" same "$eli" 0 "$T/data" 0 $off
run fallocate -o 60M -l 10M "$eli"
check "preallocation past the end: ENOSPC (a disk does not grow)" \
	test $rc != 0 -a "$(grep -c 'No space left' "$T/err")" = 1
expect_ok "a punch past the end (the size kept): nothing to do" \
	fallocate -p -o 70M -l 1M "$eli"

# ---- NODELETE -------------------------------------------------------------------

fresh -s $S -T
before=$(blocks "$prov")
run fallocate -p -o 0 -l 4M "$eli"
check "init -T (NODELETE): punch refused with EOPNOTSUPP" \
	test $rc != 0 -a "$(grep -c 'unsupported' "$T/err")" = 1
check "... the data unchanged" same "$eli" 0 "$T/data" 0 4194304
check "... nothing given back" test "$(blocks "$prov")" = "$before"
expect_ok "configure -t on the attached provider" "$GELI" configure -t t.img
check "... TRIM on in the metadata (NODELETE 0x40 gone, AUTORESIZE left)" test "$(dumpfield "$prov" flags)" = 0x200
expect_ok "... and at once: punch works" fallocate -p -o 0 -l 4M "$eli"
check "... zeros, blocks given back" \
	bash -c 'cmp -s -n 4194304 "$0" /dev/zero && [ $(stat -c %b "$1") -lt '"$before"' ]' "$eli" "$prov"
expect_ok "configure -T on the attached provider" "$GELI" configure -T t.img
run fallocate -p -o 8M -l 4M "$eli"
check "... and at once: punch refused" test $rc != 0
check "... the data unchanged" same "$eli" 8388608 "$T/data" 8388608 4194304

"$GELI" detach t.img
mkprov "$prov" 8M
"$GELI" onetime -b fuse -T "$prov"
run fallocate -p -o 0 -l 1M "$eli"
check "onetime -T: punch refused" test $rc != 0 -a "$(grep -c 'unsupported' "$T/err")" = 1
"$GELI" detach t.img
"$GELI" onetime -b fuse "$prov"
expect_ok "onetime without -T: punch works" fallocate -p -o 0 -l 1M "$eli"

# ---- Integrity --------------------------------------------------------------------

fresh -s $S -a hmac/sha256
before=$(blocks "$prov")
run fallocate -p -o 0 -l 4M "$eli"
check "integrity: punch refused with EOPNOTSUPP" \
	test $rc != 0 -a "$(grep -c 'unsupported' "$T/err")" = 1
check "... the data unchanged and authentic" same "$eli" 0 "$T/data" 0 4194304
expect_ok "integrity: zero range writes zeros" fallocate -z -o 0 -l 1M "$eli"
check "... which authenticate and read as zeros" zeros "$eli" 0 1048576
"$GELI" detach t.img

# ---- Read-only ----------------------------------------------------------------------

fresh -s $S
"$GELI" detach t.img
"$GELI" attach -b fuse -r -j "$T/pass" "$prov"
run fallocate -p -o 0 -l 1M "$eli"
check "read-only: punch refused" test $rc != 0
check "... the data unchanged" same "$eli" 0 "$T/data" 0 1048576
"$GELI" detach t.img

# ---- ext4 on the -L device, fstrim -------------------------------------------------

if ! losetup -f >/dev/null 2>&1 || ! command -v mkfs.ext4 >/dev/null || ! command -v fstrim >/dev/null; then
	skip "needs a free loop device, mkfs.ext4 and fstrim"
	done_testing
	exit
fi
mkprov "$prov" 256M
"$GELI" init -B none -i 10 -s $S -J "$T/pass" "$prov" >/dev/null
dev=$("$GELI" attach -L -j "$T/pass" "$prov")
be=$(backend_of t.img)
sysq=/sys/block/${dev#/dev/}/queue
mkdir -p "$T/mnt"
on_exit "umount '$T/mnt' 2>/dev/null"
mkfs.ext4 -q -F "$dev" && mount "$dev" "$T/mnt"
check "ext4 on $dev ($be) mounted" mountpoint -q "$T/mnt"
check "$dev offers discards" test "$(cat "$sysq/discard_max_bytes")" -gt 0
head -c 96M /dev/urandom >"$T/mnt/f"
sync
full=$(blocks "$prov")
rm "$T/mnt/f"
sync
run fstrim -v "$T/mnt"
trimmed=$(blocks "$prov")
check "fstrim on the ext4 succeeds" test $rc = 0
check "... the provider gives back the file's blocks ($full -> $trimmed blocks)" \
	test $((full - trimmed)) -ge $((90 * 2048))
echo hello >"$T/mnt/keep"
sync
umount "$T/mnt"
run e2fsck -fn "$dev"
check "... the file system checks clean" test $rc = 0
blkdiscard -f -o 200M -l 8M "$dev" 2>/dev/null
check "blkdiscard on $dev: the range reads as zeros through the device" \
	cmp -s -n 8388608 -i 209715200:0 "$dev" /dev/zero
expect_ok "configure -T on the provider attached with -L" "$GELI" configure -T t.img
if [ "$be" = ublk ]; then
	# (a ublk device's limits are set once, before it starts; the kernel
	# passes over a discard refused with EOPNOTSUPP, as it may)
	head -c 8M /dev/urandom >"$T/d8"
	dd if="$T/d8" of="$dev" bs=1M seek=200 oflag=direct conv=notrunc status=none
	blkdiscard -f -o 200M -l 8M "$dev" 2>/dev/null
	check "... a discard refused by the daemon (EOPNOTSUPP): the data stays" \
		cmp -s -n 8388608 -i 209715200:0 "$dev" "$T/d8"
	expect_ok "configure -t" "$GELI" configure -t t.img
	blkdiscard -f -o 200M -l 8M "$dev" 2>/dev/null
	check "... $dev takes discards again: zeros" cmp -s -n 8388608 -i 209715200:0 "$dev" /dev/zero
else
	blkdiscard -f -o 200M -l 8M "$dev" 2>/dev/null
	check "... a discard refused: the kernel stops offering them" test "$(cat "$sysq/discard_max_bytes")" = 0
	expect_ok "configure -t" "$GELI" configure -t t.img
	check "... $dev offers discards again" test "$(cat "$sysq/discard_max_bytes")" -gt 0
fi
check "... at the block size it had" test "$(cat "$sysq/logical_block_size")" = $S
mount "$dev" "$T/mnt"
check "... the file system is still there" test "$(cat "$T/mnt/keep" 2>/dev/null)" = hello
umount "$T/mnt"
"$GELI" detach t.img

# ---- A block device as the provider: its zeroing that unmaps ------------------------------------

truncate -s 0 "$T/back"
truncate -s 64M "$T/back"
bdev=$(losetup -f --show "$T/back") || { nok "losetup"; done_testing; exit; }
on_exit "drop_loop '$bdev' '$T/back' 2>/dev/null"
"$GELI" init -B none -i 10 -s $S -J "$T/pass" "$bdev" >/dev/null
"$GELI" attach -j "$T/pass" "$bdev"
beli=$GELI_RUNDIR/$(basename "$bdev").eli
dd if="$T/data" of="$beli" bs=1M conv=notrunc,fsync status=none
before=$(blocks "$T/back")
expect_ok "punch on the .eli of a block device" fallocate -p -o 1M -l 16M "$beli"
check "... the range reads as zeros" zeros "$beli" 1048576 16777216
check "... the device below gave its blocks back ($before -> $(blocks "$T/back") blocks)" \
	test $((before - $(blocks "$T/back"))) -ge $((16 * 2048))
check "... the rest as written" same "$beli" 17825792 "$T/data" 17825792 1048576
"$GELI" detach "$(basename "$bdev")"
losetup -d "$bdev"
done_testing
