#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# kill -9 of one raidz member's daemon, server and keeper (a server alone
# is replaced: cli/t_restart.sh), while the pool is written.  Where its
# device waits for a server (root's ublk device, USER_RECOVERY: the lane's
# 6.12), the member's I/O waits, attach takes the same device back, and the
# pool never degrades: no `zpool clear`.  Elsewhere the member's block
# device fails its I/O (EIO), the pool degrades (or suspends), nothing
# hangs and the writer ends; the member attached again (a new loop or ublk
# device under its name), `zpool clear` and `zpool online`.  Then a scrub
# with 0 errors, every file written before and after intact.
. "$(dirname "$0")/guest.sh"
need_zfs || { done_testing; exit; }

mkprovs 96M -- a b c
attach_keyed a b c
zpool create tank raidz /dev/a.eli /dev/b.eli /dev/c.eli >"$T/zc" 2>&1 || diag <"$T/zc"
put_files /tank 4

# A writer: files with their sums, each synced, until told to stop.
( i=0
  while [ ! -e "$T/stop" ]; do
	i=$((i + 1))
	head -c 524288 /dev/urandom >"/tank/w$i" && sync "/tank/w$i" &&
		echo "$(md5sum <"/tank/w$i" | cut -d' ' -f1)  w$i" >>"$T/wsums"
  done ) &
wpid=$!
# written: how many files the writer has synced.  The kill comes once it
# has synced one, however slow the machine.
written() { cat "$T/wsums" 2>/dev/null | wc -l; }
wait_for eval '[ "$(written)" -ge 1 ]'
nkill=$(written)
bdev=$(readlink "$GELI_RUNDIR/b.eli") be=$(backend_of b) waits=0
waits_for_server b && waits=1
kill_daemon "$(cat "$GELI_RUNDIR/b.pid")"
if [ "$waits" = 1 ]; then
	check "b's server and keeper killed: its device waits, the pool is ONLINE" \
		eval 'test -b "$bdev" && [ "$(pool_state tank)" = ONLINE ]'
	check "b attached again takes the same device back" \
		eval 'attach_keyed b && [ "$(readlink "$GELI_RUNDIR/b.eli")" = "$bdev" ]'
	# (a file synced since: the writer went on)
	wait_for eval '[ "$(written)" -gt "$nkill" ]'
	touch "$T/stop"
	wait "$wpid"
	check "the pool never degraded: ONLINE, no error counted, no zpool clear" \
		eval '[ "$(pool_state tank)" = ONLINE ] && zpool status -p tank | awk "NF == 5 && \$3 ~ /^[0-9]+\$/ && \$3 \$4 \$5 != \"000\" { bad = 1 } END { exit bad }"'
	zpool status tank | diag
else
	# (OpenZFS may show the pool ONLINE with the member FAULTED for a while)
	degraded=0
	for i in $(seq 120); do
		case $(pool_state tank) in DEGRADED | SUSPENDED | UNAVAIL) degraded=1; break ;; esac
		zpool status tank | grep -qE "b.eli +(FAULTED|UNAVAIL|REMOVED)" && { degraded=1; break; }
		sleep 0.5
	done
	check "the pool degrades (or suspends) within 60 s of the kill" test "$degraded" = 1
	zpool status tank | diag
	# (a file synced since the kill: the pool takes writes while degraded)
	wait_for eval '[ "$(written)" -gt "$nkill" ]'
	touch "$T/stop"
	ended=0
	for i in $(seq 120); do kill -0 "$wpid" 2>/dev/null || { ended=1; break; }; sleep 0.5; done
	check "the writer ends: nothing hangs" test "$ended" = 1
	wait "$wpid"
	check "it wrote files after the kill too" test "$(wc -l <"$T/wsums")" -ge 2

	check "b attached again" attach_keyed b
	be=$(backend_of b)
	if [ "$be" = ublk ]; then
		check "... its name leads to the new daemon's ublk device" \
			test "$(readlink /dev/b.eli)" = "$(readlink "$GELI_RUNDIR/b.eli")" -a -b /dev/b.eli
	else
		check "... its name leads to the new daemon's loop device" \
			grep -q "^$GELI_RUNDIR/b.eli" "/sys/block/$(basename "$(loop_of b)")/loop/backing_file"
	fi
	zpool clear tank
	zpool online tank b.eli
	zpool wait -t resilver tank
	check "zpool clear and online: ONLINE" test "$(pool_state tank)" = ONLINE
fi
check "a scrub with 0 errors" scrub_clean tank
check "every file of before the kill intact" files_ok /tank
check "every file the writer synced intact" bash -c 'cd /tank && md5sum --quiet -c "$0"' "$T/wsums"
zpool export tank
check "zdb finds the pool consistent" zdb_clean tank
if [ "$be" = ublk ]; then
	check "the killed daemon's ublk device taken back or deleted (3 ublk devices left)" \
		test "$(ls /sys/class/ublk-char | wc -l)" = 3
else
	check "the killed daemon's loop device cleared itself (3 loop devices left)" \
		test "$(ls /sys/block/loop*/loop/backing_file 2>/dev/null | wc -l)" = 3
fi
"$GELI" detach a b c
done_testing
