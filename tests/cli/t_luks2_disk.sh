#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# geli reencrypt -t luks2 with the header on the disk itself (docs/
# reencrypt.md, "To LUKS2"): GPT disks in files on loop devices with their
# partitions (losetup -P, partx), a GELI partition after a swap partition
# (a FreeNAS/TrueNAS CORE disk), after free space, and after a partition
# of another kind.  Proven with what no one here wrote: sgdisk reads the
# edited table, blkid calls the partition crypto_LUKS, cryptsetup reads its
# header from the partition itself (no header file) and gives the volume
# key for the carried passphrase, and Python's cryptography decrypts the
# data after the header to the .eli's bytes.  Refusals (a swap partition in
# use) change nothing; a conversion whose table edit did not reach the
# kernel, and one stopped after GELI's record went and before the table was
# edited, end with the same command; one converted attached (online) gets
# its table edited by the same command after the detach.  (dm-crypt
# itself: the guest lane.)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/luks2_lib.sh"
need_luks2_tools sgdisk "sgdisk (gdisk)" || { done_testing; exit; }
passfile "$T/pass" "luks2 disk test"
PASS=$(nonl "$T/pass")
HDR=$((16 << 20))

# disk NAME MiB SGDISK-ARGS...: a GPT disk in a file, its loop device with
# partitions in LOOP_NAME (the partitions added by partx where the kernel's
# own scan does not read GPT).
disk() {
	local name=$1 mib=$2 dev
	shift 2
	truncate -s "${mib}M" "$T/$name"
	sgdisk "$@" "$T/$name" >/dev/null
	dev=$(losetup -f -P --show "$T/$name") || return 1
	on_exit "drop_loop '$dev' '$T/$name' 2>/dev/null"
	[ -b "${dev}p1" ] || partx -a "$dev" 2>/dev/null
	printf -v "LOOP_$name" %s "$dev"
}
# mkgeli PART: a GELI provider made by -E from random bytes on partition
# PART (512-byte sectors, PBKDF2 of 1000); its .eli's bytes in PART's
# NAME.ref (NAME the partition's base name).
mkgeli() {
	local part=$1 size
	size=$(blockdev --getsize64 "$part")
	head -c "$size" /dev/urandom >"$T/${part##*/}.src"
	dd if="$T/${part##*/}.src" of="$part" bs=1M conv=fsync status=none
	head -c $((size - 512)) "$T/${part##*/}.src" >"$T/${part##*/}.ref"
	"$GELI" reencrypt -E -f -B none -i 1000 -J "$T/pass" "$part" >/dev/null 2>"$T/mk.err" ||
		{ echo "mkgeli $part:"; cat "$T/mk.err"; } | diag
}
# start_of DISK N / size_of DISK N: partition N's start and size, in
# 512-byte sectors, as sgdisk reads the table.
start_of() { sgdisk -i "$2" "$1" | sed -n 's/^First sector: \([0-9]*\).*/\1/p'; }
end_of() { sgdisk -i "$2" "$1" | sed -n 's/^Last sector: \([0-9]*\).*/\1/p'; }
# on_disk PART DESC: the checks on a partition converted with its header
# before it: cryptsetup reads it alone, Python decrypts the data after it.
on_disk() {
	local part=$1 desc=$2 name=${1##*/} vk len
	len=$(stat -c %s "$T/$name.ref")
	check "$desc: blkid calls it crypto_LUKS" \
		test "$(blkid -p -o value -s TYPE "$part" 2>/dev/null)" = crypto_LUKS
	check "$desc: cryptsetup reads the header from the partition (LUKS2, data at 16 MiB)" \
		bash -c 'd=$(cryptsetup luksDump "$1"); grep -q "^Version:[[:space:]]*2$" <<<"$d" &&
			grep -q "cipher: aes-xts-plain64" <<<"$d" && grep -q "offset: $2 \[bytes\]" <<<"$d"' _ "$part" "$HDR"
	vk=$(volume_key "$part" "$PASS")
	check "$desc: the carried passphrase opens a keyslot" test ${#vk} = 128
	luks2_plain "$part" "$vk" 512 "$T/$name.got" "$len" "$HDR"
	check "$desc: the data after the header decrypts to the .eli's bytes" cmp -s "$T/$name.got" "$T/$name.ref"
	check "$desc: GELI's record is zeros" \
		cmp -s <(tail -c 512 "$part") <(head -c 512 /dev/zero)
	check "$desc: nothing of GELI for geli dump" fails "$GELI" dump "$part"
	check "$desc: the header file of its conversion is gone" \
		bash -c 'u=$(blkid -p -o value -s UUID "$1") && [ -n "$u" ] && [ ! -e "$2/luks2/$u.header" ]' \
		_ "$part" "$GELI_STATE_DIR"
}

# ---- After a swap partition: a TrueNAS CORE disk ----------------------------------------
# 64 MiB of freebsd-swap at 1 MiB, then the GELI partition (freebsd-zfs).
disk core 200 -a 2048 -n 1:2048:+64M -t 1:a502 -n 2:0:0 -t 2:a504
D=$LOOP_core
s2=$(start_of "$T/core" 2) e2=$(end_of "$T/core" 2) e1=$(end_of "$T/core" 1)
head -c $((64 << 20)) /dev/urandom >"$T/swap.bytes"
dd if="$T/swap.bytes" of="${D}p1" bs=1M conv=fsync status=none
mkgeli "${D}p2"
run "$GELI" reencrypt -t luks2 -B "$T/core.luks2" -j "$T/pass" -i 1000 "${D}p2"
check "swap: the conversion ends with status 0" test "$rc" = 0
[ "$rc" = 0 ] || diag <"$T/err"
check "swap: it says where the header went" \
	grep -qx "${D}p2 is a LUKS2 volume now, its header on the disk: partition 2 of $D begins 16 MiB earlier, over the end of the swap partition ${D}p1." "$T/out"
check "swap: crypttab's line needs no header file" grep -qx "/etc/crypttab: ${D##*/}p2.eli ${D}p2 none luks" "$T/out"
check "swap: the table has the partition 16 MiB earlier, its end where it was" \
	test "$(start_of "$T/core" 2) $(end_of "$T/core" 2)" = "$((s2 - HDR / 512)) $e2"
check "swap: the swap partition ends before it" test "$(end_of "$T/core" 1)" = "$((e1 - HDR / 512))"
check "swap: the kernel has the partition where the table says" \
	test "$(cat "/sys/class/block/${D##*/}p2/start")" = "$((s2 - HDR / 512))"
check "swap: the swap partition's bytes before the header are its own" \
	cmp -s <(head -c $((48 << 20)) "${D}p1") <(head -c $((48 << 20)) "$T/swap.bytes")
on_disk "${D}p2" swap
check "swap: the header's backup is LUKS2 for cryptsetup" \
	bash -c 'cryptsetup luksDump "$1" | grep -q "^Version:[[:space:]]*2$"' _ "$T/core.luks2"
expect_err "swap: run again, it is no GELI provider" "geli: Cannot read metadata from ${D}p2: Invalid argument." \
	"$GELI" reencrypt -t luks2 -j "$T/pass" "${D}p2"

# ---- After free space ---------------------------------------------------------------------
# 8 MiB of Linux data, 20 MiB free, then GELI.
disk gap 120 -a 2048 -n 1:2048:+8M -t 1:8300 -n 2:$((2048 + 28 * 2048)):0 -t 2:a504
D=$LOOP_gap
s2=$(start_of "$T/gap" 2) e1=$(end_of "$T/gap" 1)
mkgeli "${D}p2"
run "$GELI" reencrypt -t luks2 -B none -j "$T/pass" -i 1000 "${D}p2"
check "free space: the conversion ends with status 0" test "$rc" = 0
[ "$rc" = 0 ] || diag <"$T/err"
check "free space: it says where the header went" \
	grep -qx "${D}p2 is a LUKS2 volume now, its header on the disk: partition 2 of $D begins 16 MiB earlier." "$T/out"
check "free space: the partition begins 16 MiB earlier, the one before unchanged" \
	test "$(start_of "$T/gap" 2) $(end_of "$T/gap" 1)" = "$((s2 - HDR / 512)) $e1"
on_disk "${D}p2" "free space"

# ---- Attached: converted online, the table edited after the detach ---------------------------
# The daemon holds the partition, whose start the kernel cannot move
# meanwhile: the header goes before it at the end of the conversion, and
# the same command after the detach edits the table (no key needed).
if need_fuse; then
	disk live 140 -a 2048 -n 1:2048:+32M -t 1:a502 -n 2:0:0 -t 2:a504
	D=$LOOP_live
	P=${D##*/}p2
	s2=$(start_of "$T/live" 2)
	mkgeli "${D}p2"
	"$GELI" attach -j "$T/pass" "${D}p2"
	run "$GELI" reencrypt -t luks2 -B none -j "$T/pass" -i 1000 "${D}p2"
	check "attached: the conversion ends with status 0" test "$rc" = 0
	[ "$rc" = 0 ] || diag <"$T/err"
	check "attached: it says the partition begins at the header once detached" \
		grep -qx "${D}p2 is a LUKS2 volume now, its header on the disk before partition 2 of $D, which begins there once $P.eli is detached: detach it, then run 'geli reencrypt -t luks2 ${D}p2'." "$T/out"
	check "attached: the table unchanged meanwhile" test "$(start_of "$T/live" 2)" = "$s2"
	check "attached: the .eli reads the same bytes" cmp -s "$GELI_RUNDIR/$P.eli" "$T/$P.ref"
	"$GELI" detach "$P"
	run "$GELI" reencrypt -t luks2 "${D}p2"
	check "detached: the same command edits the table" test "$rc" = 0
	[ "$rc" = 0 ] || diag <"$T/err"
	check "detached: it says where the header is" \
		grep -qx "${D}p2 is a LUKS2 volume now, its header on the disk: partition 2 of $D begins 16 MiB earlier, over the end of the swap partition ${D}p1." "$T/out"
	check "detached: the partition begins 16 MiB earlier" \
		test "$(start_of "$T/live" 2)" = "$((s2 - HDR / 512))"
	on_disk "${D}p2" "attached, then detached"
fi

# ---- No room: a file under the state directory ---------------------------------------------
disk full 100 -a 2048 -n 1:2048:+8M -t 1:8300 -n 2:0:0 -t 2:a504
D=$LOOP_full
s2=$(start_of "$T/full" 2)
mkgeli "${D}p2"
run "$GELI" reencrypt -v -t luks2 -B none -j "$T/pass" -i 1000 "${D}p2"
check "no room: the conversion ends with status 0" test "$rc" = 0
check "no room: -v says why the header goes in a file" \
	grep -qx "The LUKS2 header of ${D}p2 goes in a file: there are not 16 MiB of free space or a swap partition right before ${D}p2." "$T/out"
hdr=$(sed -n 's/.* is a LUKS2 volume now, its header \(.*\)\.$/\1/p' "$T/out")
check "no room: the header is a file under the state directory" \
	bash -c '[[ $1 == "$2"/luks2/*.header ]] && [ -f "$1" ]' _ "$hdr" "$GELI_STATE_DIR"
check "no room: the table unchanged" test "$(start_of "$T/full" 2)" = "$s2"
check "no room: the header's data offset is 0" \
	bash -c 'cryptsetup luksDump "$1" | grep -q "offset: 0 \[bytes\]"' _ "$hdr"

# ---- Refused: the swap partition in use -----------------------------------------------------
disk busy 200 -a 2048 -n 1:2048:+64M -t 1:8200 -n 2:0:0 -t 2:a504
D=$LOOP_busy
mkgeli "${D}p2"
cp "$T/busy" "$T/busy.before"
find "$GELI_STATE_DIR" -type f | sort >"$T/state.before"
# A holder of its own opens the swap partition exclusively, as swapon does.
coproc HOLD { python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY | os.O_EXCL); print("held", flush=True); sys.stdin.read()' "${D}p1"; }
read -r held <&"${HOLD[0]}"
check "in use: the swap partition is held" test "$held" = held
expect_err "in use: refused, the swap partition and -H named" \
	"geli: The swap partition ${D}p1 before ${D}p2 is in use: name a header file with -H." \
	"$GELI" reencrypt -t luks2 -B none -j "$T/pass" -i 1000 "${D}p2"
eval "exec ${HOLD[1]}>&-"
wait "$HOLD_PID"
check "in use: nothing changed on the disk" cmp -s "$T/busy" "$T/busy.before"
check "in use: no header, no journal" \
	cmp -s <(find "$GELI_STATE_DIR" -type f | sort) "$T/state.before"

# ---- The table's edit not finished -----------------------------------------------------------
# The partition held open while the table is written: the kernel keeps the
# old one, and says so; then the table as it was before the edit (GELI's
# record gone, the header before the partition): the same command ends it.
disk late 200 -a 2048 -n 1:2048:+64M -t 1:a502 -n 2:0:0 -t 2:a504
D=$LOOP_late
s2=$(start_of "$T/late" 2)
sgdisk -b "$T/late.gpt" "$T/late" >/dev/null
mkgeli "${D}p2"
coproc HOLD2 { python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); print("held", flush=True); sys.stdin.read()' "${D}p2"; }
read -r held <&"${HOLD2[0]}"
run "$GELI" reencrypt -t luks2 -B none -j "$T/pass" -i 1000 "${D}p2"
check "held: the kernel kept the old table, and it says how to go on" \
	bash -c '[ "$1" != 0 ] && grep -q "but the kernel kept the old one" "$2"' _ "$rc" "$T/err"
diag <"$T/err"
eval "exec ${HOLD2[1]}>&-"
wait "$HOLD2_PID"
check "held: the table on the disk has the partition 16 MiB earlier" \
	test "$(start_of "$T/late" 2)" = "$((s2 - HDR / 512))"
# As if stopped before the edit: the old table back, on the disk and in the
# kernel (through the loop device, whose cache the file's writes would pass
# by; sgdisk's reread may drop partitions a kernel without GPT cannot find).
sgdisk -l "$T/late.gpt" "$D" >/dev/null 2>&1
partx -a "$D" 2>/dev/null
partx -u "$D" 2>/dev/null
check "held: the kernel has the old table again" \
	test "$(cat "/sys/class/block/${D##*/}p2/start")" = "$s2"
expect_ok "held: the same command ends it" "$GELI" reencrypt -t luks2 -j "$T/pass" "${D}p2"
check "held: it says where the header went" grep -q "its header on the disk: partition 2 of $D begins 16 MiB earlier" "$T/out"
check "held: the kernel has the partition 16 MiB earlier" \
	test "$(cat "/sys/class/block/${D##*/}p2/start")" = "$((s2 - HDR / 512))"
on_disk "${D}p2" "held, ended"

done_testing
