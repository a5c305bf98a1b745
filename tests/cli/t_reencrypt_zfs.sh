#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# suite: zfs
# docs/leave-geli.md, run: a zfs-fuse raidz on three Blowfish GELI
# providers (as an old FreeBSD made them) is modernised to AES-XTS with a
# new Master Key, then taken off GELI, by the document's command blocks
# with this test's paths in place of the system's; after each, the pool
# imports ONLINE with its data and scrubs clean.
. "$(dirname "$0")/lib.sh"
need_fuse || { done_testing; exit; }
need_zfs_fuse || { done_testing; exit; }

TOP=$(cd "$GELI_TESTS/.." && pwd)
DOC=$TOP/docs/leave-geli.md
ROOT=$T/root
mkdir -p "$ROOT/root" "$ROOT/dev" "$ROOT/var/backups" "$T/mnt"
export PATH="$(dirname "$GELI"):$PATH"
passfile "$ROOT/root/tank.pass" "tank passphrase"
for d in sdb sdc sdd; do
	mkprov "$ROOT/dev/$d" 96M
	"$GELI" init -B none -e blowfish -l 128 -i 1000 -J "$ROOT/root/tank.pass" "$ROOT/dev/$d" 2>/dev/null
done
"$GELI" attach -j "$ROOT/root/tank.pass" "$ROOT"/dev/sd[bcd]
zpool create -f -m "$T/mnt/tank" tank raidz "$GELI_RUNDIR"/sd[bcd].eli >/dev/null 2>&1
head -c 5000000 /dev/urandom >"$T/data"
cp "$T/data" "$T/mnt/tank/data" && sync
on_exit "zpool destroy -f tank 2>/dev/null"

# The document's paths made this test's: /dev/sdX and /root under $ROOT,
# /run/geli as $GELI_RUNDIR, a backup of each new record under $ROOT, and
# the raw disks looked for in $ROOT/dev.
localize() {
	sed -e "s#\(^\|[ =>\"']\)/\(root/\|dev/\)#\1$ROOT/\2#g" \
		-e "s#/run/geli#$GELI_RUNDIR#g" \
		-e "s#geli reencrypt #geli reencrypt -B $ROOT/var/backups/\$d.eli #" \
		-e "s#zpool import -d /dev #zpool import -d $ROOT/dev #"
}
doc() {
	doc_block "$DOC" "$1" | localize >"$T/block.sh"
	(. "$T/block.sh") >"$T/out" 2>"$T/err" </dev/null
	rc=$?
}
state() { zpool status "$1" 2>/dev/null | sed -n 's/^ *state: //p'; }
clean() {
	zpool_scrubbed tank
	[ "$(state tank)" = ONLINE ] && zpool status tank | grep -q "with 0 errors" &&
	    cmp -s "$T/data" "$T/mnt/tank/data"
}

members_are() {
	local d
	for d in sdb sdc sdd; do
		[ "$(dumpfield "$ROOT/dev/$d" ealgo)/$(dumpfield "$ROOT/dev/$d" keylen)/$(dumpfield "$ROOT/dev/$d" version)" = "$1" ] || return 1
	done
}
backups_made() {
	local d
	for d in sdb sdc sdd; do
		cmp -s <(tail -c 512 "$ROOT/dev/$d") "$ROOT/var/backups/$d.eli" || return 1
	done
}
no_metadata() {
	local d
	for d in sdb sdc sdd; do
		"$GELI" dump "$ROOT/dev/$d" >/dev/null 2>&1 && return 1
	done
	return 0
}

doc_all_tagged "$DOC"
doc before
[ "$rc" = 0 ] || diag <"$T/err"
check "before: the raidz is ONLINE on Blowfish providers" \
	eval 'test $rc = 0 && grep -q "state: ONLINE" "$T/out" && grep -q "ealgo: Blowfish-CBC" "$T/out"'
doc modernise
check "modernise: the blocks ran" test "$rc" = 0
check "modernise: every member is AES-XTS 256 now, version 7" members_are AES-XTS/256/7
check "modernise: the pool imports ONLINE, scrubs clean, its data intact" clean
check "modernise: a backup of each new record" backups_made
doc leave
check "leave: the blocks ran" test "$rc" = 0
check "leave: no member holds GELI metadata" no_metadata
check "leave: the pool imports from the raw disks ONLINE, scrubs clean, its data intact" clean
check "leave: its members are the raw disks" \
	eval 'test "$(zpool status tank | grep -c "$ROOT/dev/sd[bcd]")" = 3'
if [ "$failed" != 0 ]; then diag <"$T/err"; zpool status tank 2>&1 | diag; fi
zpool export tank 2>/dev/null
done_testing
