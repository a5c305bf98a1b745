#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The seeds' boot scenario on OpenZFS: a raidz of three GELI providers
# (AES-XTS 256, Blowfish 448, Camellia 256) whose second member is not
# attached when the pool is imported: DEGRADED, every file readable; the
# member attached later (as another loop device, under its old name),
# `zpool online` by that name, resilvered, a scrub with 0 errors, every
# file's checksum unchanged, zdb consistent.
. "$(dirname "$0")/guest.sh"
need_zfs || { done_testing; exit; }

mkprovs 96M -e aes-xts -l 256 -- a
mkprovs 96M -e blowfish-cbc -l 448 -- b
mkprovs 96M -e camellia-cbc -l 256 -- c
attach_keyed a b c
zpool create -o compatibility=openzfs-2.1-freebsd tank raidz /dev/a.eli /dev/b.eli /dev/c.eli >"$T/zc" 2>&1 || diag <"$T/zc"
check "a raidz of three on the stable names" test "$(pool_state tank)" = ONLINE
put_files /tank 10
zpool export tank
"$GELI" detach a b c

# At boot b is missing; the others come up in another order.
attach_keyed c a
zpool import tank >"$T/imp" 2>&1
check "imported without b: DEGRADED" test "$(pool_state tank)" = DEGRADED
check "... b shown by the name the pool recorded" grep -q "was /dev/b.eli" <(zpool status tank)
check "... every file reads back" files_ok /tank
echo more >/tank/written-degraded && sync

attach_keyed b
check "b attached later: its name leads to its new loop device" test -b /dev/b.eli
check "zpool online by that name" zpool online tank b.eli
zpool wait -t resilver tank
check "resilvered: ONLINE" test "$(pool_state tank)" = ONLINE
check "a scrub with 0 errors" scrub_clean tank
check "every file's checksum unchanged" files_ok /tank
check "what was written while degraded is there" grep -qx more /tank/written-degraded
zpool export tank
check "zdb finds the pool consistent" zdb_clean tank
"$GELI" detach a b c
done_testing
