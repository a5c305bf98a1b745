#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# suite: zfs
# geli bench --pool: a pool on attached providers against the same pool on
# plain files; nothing left behind.  With zfs-fuse here (started by the
# benchmark), on OpenZFS's module in the guest lane (the providers as block
# devices, attach -L).
. "$(dirname "$0")/lib.sh"

openzfs=0
have_openzfs && openzfs=1
if [ "$(id -u)" -ne 0 ] || [ ! -c /dev/fuse ]; then
	skip "--pool needs root and /dev/fuse"
elif [ $openzfs = 0 ] && { ! command -v zfs-fuse >/dev/null || zpool list >/dev/null 2>&1; }; then
	skip "--pool needs OpenZFS's module, or zfs-fuse and no other ZFS running"
else
	run "$GELI" bench --pool 1xraidz --size 64 --json
	check "--pool 1xraidz: write, rewrite and read, raw and GELI" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["results"]
assert [x["ealgo"] for x in r] == [None, "AES-XTS"], r
assert all(x["study"] == "pool" and x["providers"] == 3 and x["layout"] == "1xraidz" for x in r)
assert all(x[k] > 0 for x in r for k in ("write_MBps", "rewrite_MBps", "read_MBps"))
' "$T/out"
	if [ $openzfs = 1 ]; then
		run "$GELI" bench --pool 2xmirror --size 48
		check "--pool 2xmirror on OpenZFS $(cat /sys/module/zfs/version): the table, GELI as block devices" \
			eval 'test $rc = 0 && grep -q "as block devices, attach -L, under OpenZFS" "$T/out" &&
				grep -q "^GELI / raw" "$T/out"'
		check "--pool leaves no pool, provider or loop device behind" bash -c \
			'! zpool list -H -o name | grep -q gelibench && ! ls /dev/shm | grep -q geli-pool &&
			 ! losetup -a | grep -q geli-pool'
	else
		check "--pool leaves no pool, daemon or provider behind" bash -c \
			'! zpool list >/dev/null 2>&1 && ! ls /dev/shm | grep -q geli-pool'
	fi
fi
done_testing
