#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# suite: zfs
# What ZFS makes of a pool member converted to LUKS2 (docs/reencrypt.md,
# "ZFS's labels on the LUKS2 device"): the LUKS2 device is larger than the
# .eli by GELI's metadata sector, and ZFS looks for its two end labels at
# the device's size rounded down to 256 KiB.  Here the LUKS2 device is
# read as dm-crypt would map it (Python's AES-XTS with the volume key
# cryptsetup gives) into a file: where the .eli's size rounded down and the
# device's differ, labels 0, 1 and 2 are found (the .eli's label 3 is where
# the device's label 2 goes) and label 3 is not; the pool
# imports all the same, its file intact, a scrub clean, and the import
# writes the end labels where the device's size puts them (four labels
# after its export).  Where both sizes round down alike nothing moves.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/luks2_lib.sh"
need_luks2_tools || { done_testing; exit; }
need_fuse || { done_testing; exit; }
need_zfs || { done_testing; exit; }
passfile "$T/pass" "zfs to luks2"
head -c 3000000 /dev/urandom >"$T/data"
sum=$(md5sum <"$T/data")

# labels FILE: how many of ZFS's four labels zdb finds on FILE (zfs-fuse
# prints each valid label's config, one pool_guid line each; OpenZFS
# prints each different label once, with a "labels = 0 1 ..." line).
labels() {
	zdb -l "$1" 2>/dev/null | awk '/^[[:space:]]+labels = / { n += NF - 2; o = 1 }
		/^[[:space:]]+pool_guid/ { g++ } END { print o ? n : g + 0 }'
}

# member NAME SIZE S DESC MOVED: a pool on the provider, converted
# offline, the LUKS2 device's plaintext imported; MOVED is 1 where the
# device's size rounded down to 256 KiB is not the .eli's.
member() {
	local name=$1 size=$2 S=$3 desc=$4 moved=$5 pool=gtl$1 vk dir=$T/dev-$1
	mkprov "$T/$name.img" "$size"
	"$GELI" init -B none -i 1000 -s "$S" -J "$T/pass" "$T/$name.img" >/dev/null
	zfs_attach -j "$T/pass" "$T/$name.img"
	zpool create -f -m "$T/mnt-$pool" "$pool" "$(zdev "$name.img")" >"$T/zc.log" 2>&1 ||
		{ nok "$desc: zpool create"; diag <"$T/zc.log"; "$GELI" detach "$name.img"; return; }
	cp "$T/data" "$T/mnt-$pool/data" && sync
	zpool export "$pool"
	"$GELI" detach "$name.img"
	run "$GELI" reencrypt -t luks2 -B none -H "$T/$name.hdr" -i 1000 -j "$T/pass" "$T/$name.img"
	check "$desc: converted" test "$rc" = 0
	vk=$(volume_key "$T/$name.hdr" "$(nonl "$T/pass")")
	mkdir -p "$dir"
	# The LUKS2 device: the whole provider (the header is a file).
	luks2_plain "$T/$name.img" "$vk" "$S" "$dir/$name.luks2" "$(stat -c %s "$T/$name.img")"
	if [ "$moved" = 1 ]; then
		# Label 3 of the .eli is 512 KiB before the end of the device
		# rounded down, where the device's label 2 goes: it counts.
		check "$desc: zdb finds 3 labels, not the last (the .eli's last where the device's label 2 goes)" \
			test "$(labels "$dir/$name.luks2")" = 3
	else
		check "$desc: zdb finds the four labels (the device's size rounds down as the .eli's did)" \
			test "$(labels "$dir/$name.luks2")" = 4
	fi
	zpool import -d "$dir" "$pool" >"$T/zi.log" 2>&1
	check "$desc: the pool imports from the LUKS2 device, ONLINE" \
		bash -c "zpool status $pool 2>/dev/null | grep -q 'state: ONLINE'"
	diag <"$T/zi.log"
	check "$desc: its file intact" test "$(md5sum <"$T/mnt-$pool/data" 2>/dev/null)" = "$sum"
	zpool scrub "$pool"
	zpool_scrubbed "$pool"
	check "$desc: a scrub finds no errors" bash -c "zpool status $pool | grep -q 'with 0 errors'"
	zpool export "$pool"
	check "$desc: after the export, the four labels" test "$(labels "$dir/$name.luks2")" = 4
	zpool import -d "$dir" "$pool" >/dev/null 2>&1
	check "$desc: imported again, its file intact" test "$(md5sum <"$T/mnt-$pool/data" 2>/dev/null)" = "$sum"
	zpool export "$pool"
}
# 96 MiB: the .eli (96 MiB less 4096 bytes) rounds down to 96 MiB less
# 256 KiB, the device to 96 MiB.  (64 MiB is ZFS's least device.)
member a 96M 4096 "96 MiB, 4096-byte sectors" 1
# 96 MiB and 100 KiB: both round down to 96 MiB.
member b 98404K 512 "96 MiB 100 KiB, 512-byte sectors" 0
done_testing
