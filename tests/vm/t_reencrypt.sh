#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# `geli reencrypt` of a raidz member online (AES-CBC 128 to AES-XTS 256
# with a new Master Key and keyfile) while fio writes and verifies files
# in the pool the whole time; after it, a scrub with 0 errors, the member
# opened by its new key only, zdb consistent.
. "$(dirname "$0")/guest.sh"
need_zfs || { done_testing; exit; }

mkprovs 96M -- a c
mkprovs 96M -e aes-cbc -l 128 -- b
attach_keyed a b c
zpool create tank raidz /dev/a.eli /dev/b.eli /dev/c.eli >"$T/zc" 2>&1 || diag <"$T/zc"
head -c 64 /dev/urandom >"$T/key2"

# fio in rounds until the conversion ends: every block verified.
fio_start online 12M
run "$GELI" reencrypt -p -k "$T/key" -P -K "$T/key2" -e aes-xts -l 256 -z 1048576 "$T/b"
fio_stop
check "geli reencrypt of the attached member ends (status $rc)" test "$rc" = 0
check "fio ran beside it and verified every block ($runs runs, $bad bad)" test "$runs" -ge 1 -a "$bad" = 0
check "the pool stayed ONLINE" test "$(pool_state tank)" = ONLINE
check "a scrub after it: 0 errors" scrub_clean tank
zpool export tank
"$GELI" detach a b c
check "b's record is AES-XTS 256 now" bash -c '"$0" dump "$1" | grep -q "ealgo: AES-XTS" && "$0" dump "$1" | grep -q "keylen: 256"' "$GELI" "$T/b"
check "the old key no longer opens b" fails "$GELI" attach -C -p -k "$T/key" "$T/b"
"$GELI" attach -p -k "$T/key2" -L "$T/b" >/dev/null
attach_keyed a c
check "attached with its new key, the pool imports ONLINE" bash -c 'zpool import tank && [ "$(zpool status tank | sed -n "s/^ *state: //p")" = ONLINE ]'
check "a scrub: 0 errors" scrub_clean tank
zpool export tank
check "zdb finds the pool consistent" zdb_clean tank
"$GELI" detach a b c
done_testing
