#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# suite: zfs
# geli bench --pool: a zfs-fuse pool on attached providers against the same
# pool on plain files; nothing left behind.
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" -eq 0 ] && [ -c /dev/fuse ] && command -v zfs-fuse >/dev/null && ! zpool list >/dev/null 2>&1; then
	run "$GELI" bench --pool 1xraidz --size 64 --json
	check "--pool 1xraidz: write, rewrite and read, raw and GELI" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["results"]
assert [x["ealgo"] for x in r] == [None, "AES-XTS"], r
assert all(x["study"] == "pool" and x["providers"] == 3 and x["layout"] == "1xraidz" for x in r)
assert all(x[k] > 0 for x in r for k in ("write_MBps", "rewrite_MBps", "read_MBps"))
' "$T/out"
	check "--pool leaves no pool, daemon or provider behind" bash -c \
		'! zpool list >/dev/null 2>&1 && ! ls /dev/shm | grep -q geli-pool'
else
	skip "--pool needs root, /dev/fuse and zfs-fuse, and no other ZFS running"
fi
done_testing
