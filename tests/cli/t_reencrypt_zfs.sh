#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# suite: zfs
# docs/leave-geli.md, run: a raidz (OpenZFS in the guest lane, else
# zfs-fuse) on three Blowfish GELI
# providers (as an old FreeBSD made them), by the document's command blocks
# with this test's paths in place of the system's.  Online, the pool stays
# imported, ONLINE and in use (a writer and a reader checking its files)
# while each member is converted in turn, and scrubs clean after each:
# Blowfish to AES-XTS with a new Master Key, then (after the offline block
# made them AES-XTS again) a new Master Key alone, then GELI to plain,
# after which the pool imports from the raw disks.
. "$(dirname "$0")/lib.sh"
need_fuse || { done_testing; exit; }
need_zfs || { done_testing; exit; }

TOP=$(cd "$GELI_TESTS/.." && pwd)
DOC=$TOP/docs/leave-geli.md
ROOT=$T/root
mkdir -p "$ROOT/root" "$ROOT/dev" "$ROOT/var/backups" "$T/mnt"
export PATH="$(dirname "$GELI"):$PATH"
passfile "$ROOT/root/tank.pass" "tank passphrase"
for d in sdb sdc sdd; do
	if [ "$ZFS_KIND" = openzfs ]; then
		# OpenZFS imports a pool made of disks from block devices only:
		# the members are loop devices, named in $ROOT/dev.
		mkprov "$T/$d.img" 72M
		l=$(losetup -f --show "$T/$d.img")
		on_exit "drop_loop $l $T/$d.img"
		ln -s "$l" "$ROOT/dev/$d"
	else
		mkprov "$ROOT/dev/$d" 72M
	fi
	"$GELI" init -B none -e blowfish -l 128 -i 1000 -J "$ROOT/root/tank.pass" "$ROOT/dev/$d" 2>/dev/null
done
zfs_attach -j "$ROOT/root/tank.pass" "$ROOT"/dev/sd[bcd]
zpool create -f -m "$T/mnt/tank" tank raidz $(zdev sdb sdc sdd) >/dev/null 2>&1
head -c 5000000 /dev/urandom >"$T/data"
cp "$T/data" "$T/mnt/tank/data" && sync
on_exit "zpool destroy -f tank 2>/dev/null"

# The document's paths made this test's: /dev/sdX and /root under $ROOT,
# /run/geli as $GELI_RUNDIR, a backup of each new record under $ROOT, the
# attached providers looked for in $ZDIR (zfs-fuse: attached without -L),
# and the raw disks in $ROOT/dev.
kind=()
[ "$ZFS_KIND" = openzfs ] || kind=(-e "s#geli attach -L #geli attach #")
localize() {
	sed "${kind[@]}" -e "s#zpool import tank#zpool import -d $ZDIR tank#" \
		-e "s#\(^\|[ =>\"']\)/\(root/\|dev/\)#\1$ROOT/\2#g" \
		-e "s#/run/geli#$GELI_RUNDIR#g" \
		-e "s#geli reencrypt #geli reencrypt -B $ROOT/var/backups/\$d.eli #" \
		-e "s#zpool import -d /dev #zpool import -d $ROOT/dev #" \
		-e "s#sleep 5#sleep 0.2#"
}
doc() { doc_run "$DOC" "$1"; }
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

# watch: while online blocks run, the pool's state every 0.2 s, and a
# writer and reader of its files; what went wrong in $T/watch.bad.
watch_start() {
	rm -f "$T/watch.stop" "$T/watch.bad" "$T/watch.status"
	(
		i=0
		while [ ! -e "$T/watch.stop" ]; do
			st=$(state tank)
			[ "$st" = ONLINE ] || { echo "state $st" >>"$T/watch.bad"
				[ -e "$T/watch.status" ] || zpool status tank >"$T/watch.status" 2>&1; }
			head -c 65536 /dev/urandom >"$T/w.in"
			cp "$T/w.in" "$T/mnt/tank/w.$((i % 4))" && cmp -s "$T/w.in" "$T/mnt/tank/w.$((i % 4))" ||
			    echo "write $i" >>"$T/watch.bad"
			cmp -s "$T/data" "$T/mnt/tank/data" || echo "read $i" >>"$T/watch.bad"
			i=$((i + 1))
			sleep 0.2
		done
		echo "$i" >"$T/watch.n"
	) &
	watch_pid=$!
}
watch_stop() { touch "$T/watch.stop"; wait "$watch_pid"; }
# online BLOCK DESC: the block run under watch; its checks.
online() {
	watch_start
	doc "$1"
	watch_stop
	check "$2: the blocks ran" test "$rc" = 0
	check "$2: the pool stayed ONLINE and in use throughout ($(cat "$T/watch.n") looks)" \
		test ! -s "$T/watch.bad"
	[ -s "$T/watch.bad" ] && { sort "$T/watch.bad" | uniq -c | head -5; cat "$T/watch.status"; } | diag
	check "$2: a clean scrub after each member" \
		test "$(grep -cE "scrub (completed|repaired).* with 0 errors" "$T/out")" = 3
}

doc_all_tagged "$DOC"
doc before
[ "$rc" = 0 ] || diag <"$T/err"
check "before: the raidz is ONLINE on Blowfish providers" \
	eval 'test $rc = 0 && grep -q "state: ONLINE" "$T/out" && grep -q "ealgo: Blowfish-CBC" "$T/out"'

online modernise-online "modernise online (Blowfish to AES-XTS)"
check "modernise online: every member is AES-XTS 256 now, version 7" members_are AES-XTS/256/7
check "modernise online: a backup of each new record" backups_made
doc reattach
check "attached again: the pool imports ONLINE, scrubs clean, its data intact" \
	eval 'test $rc = 0 && zpool scrub tank && clean'

doc modernise-offline
check "modernise offline: the blocks ran" test "$rc" = 0
check "modernise offline: every member is AES-XTS 256, version 7" members_are AES-XTS/256/7
check "modernise offline: the pool imports ONLINE, scrubs clean, its data intact" clean
check "modernise offline: a backup of each new record" backups_made

online modernise-online "a new Master Key online"
check "a new Master Key online: a backup of each new record" backups_made
run "$GELI" reencrypt -D -j "$ROOT/root/tank.pass" -B none "$ROOT/dev/sdb"
check "converted members refuse another conversion until attached again" \
	eval 'test $rc = 1 && test "$(cat "$T/err")" = "geli: Provider $ROOT/dev/sdb was converted: detach it and attach it again first."'
doc reattach
check "attached again" test "$rc" = 0

online leave-online "leave online"
doc leave-import
check "leave: the blocks that import from the raw disks ran" test "$rc" = 0
check "leave: no member holds GELI metadata" no_metadata
check "leave: the pool imports from the raw disks ONLINE, scrubs clean, its data intact" clean
check "leave: its members are the raw disks" \
	eval 'test "$(zpool status tank | grep -c "$ROOT/dev/sd[bcd]")" = 3'
if [ "$failed" != 0 ]; then diag <"$T/err"; zpool status tank 2>&1 | diag; fi
zpool export tank 2>/dev/null
done_testing
