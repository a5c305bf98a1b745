#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# suite: zfs
# A killed server is replaced and nothing above it sees an error
# (src/attach/keeper.h; FUSE: fusefile_adopt, on the host; ublk:
# ublk_recover, in the guest lane).  An ext4 on the block device of an
# attached provider (FUSE's loop device, or ublk's), fio --verify writing
# and checking files on it:
# the server killed with -9 twenty times in a row, each time the keeper
# starts another, which takes the session over (geli list counts them, the
# keeper stays); fio reports no error, the kernel log no I/O error, fsck
# finds the file system clean, what was written before reads back.  The
# same under a raidz on three providers (OpenZFS in the guest lane,
# zfs-fuse on the host), their servers killed in turn: the pool never
# degraded, no error counted, scrub clean.  The time from each kill to the
# first read completed after it, printed (the figures of
# docs/benchmarks.md; never a verdict).  The OOM killer picking the
# server (a memory cgroup it is moved to, a hog beside it, its
# oom_score_adj raised):
# replaced the same.  A geli list and an attach made while no server runs
# (its keeper stopped) wait for the next one.  A kill in the middle of an online conversion, to
# each target (a new key and cipher, plain, LUKS2): the new server goes on
# from the journal, and the command that followed the dead one follows it
# to the end.  Keeper and server both killed: attach serves the provider
# again (a ublk device, which waited, taken back); killed again, detach
# gives the waiting device up, and a reader waiting on it ends with an error.
# Where the kernel cannot resend FUSE requests (before 6.9), or take a ublk
# device back, a death ends the provider as before: the log does not say
# it is started again, and the test skips.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/luks2_lib.sh"
need_fuse || { done_testing; exit; }
for c in fio mkfs.ext4 e2fsck losetup; do
	command -v "$c" >/dev/null || { skip "$c not installed"; done_testing; exit; }
done
losetup -f >/dev/null 2>&1 || { skip "no free loop device"; done_testing; exit; }

passfile "$T/pass" "restart"
prov=$T/r.img
mkprov "$prov" 192M
"$GELI" init -B none -i 10 -s 4096 -J "$T/pass" "$prov" >/dev/null
run "$GELI" attach -L -j "$T/pass" "$prov"
loop=$(cat "$T/out")
check "attached with a block device ($(backend_of r.img))" test "$rc" = 0 -a -b "$loop"
if ! grep -q "is started again if it dies" "$GELI_RUNDIR/r.img.log"; then
	skip "this kernel cannot give a dead server's requests to another ($(backend_of r.img)): a death ends the provider"
	"$GELI" detach r.img
	done_testing; exit
fi
# server, listed FIELD: the server's pid, and a field of geli list, of $cur.
cur=r.img
server() { cat "$GELI_RUNDIR/$cur.pid"; }
listed() { "$GELI" list "$cur" | sed -n "s/^   $1: //p"; }
kpid=$(keeper_of "$(server)")
check "geli list names the server and its keeper, 0 restarts" \
	test "$(listed "Server PID")" = "$(server)" -a "$(listed "Keeper PID")" = "$kpid" -a "$(listed Restarts)" = 0

mkfs.ext4 -q -F "$loop"
mkdir "$T/mnt"
mount "$loop" "$T/mnt"
on_exit "umount -l '$T/mnt' 2>/dev/null"
head -c 8M /dev/urandom >"$T/before"
cp "$T/before" "$T/mnt/before"
sync
# ioerrs SEQ: the kernel's I/O errors logged after record SEQ (kmsg_seq).
ioerrs() { kmsg_since "$1" | grep -cE "I/O error|EXT4-fs error|EXT4-fs warning"; }
k0=$(kmsg_seq)

# stuck WHAT: I/O that never ends (a request lost in a hand-over): a
# failure, with what the kernel and the daemon show of the provider, and
# the test ends here (a guest's watchdog would end it 3 minutes on, with
# nothing said).
stuck() {
	local b
	nok "$1: what the kernel and the daemon show below"
	{
		"$GELI" list "$cur"
		tail -n 20 "$GELI_RUNDIR/$cur.log"
		ps -eo pid,ppid,stat,wchan:32,args | grep -E "[g]eli|[f]io|[d]d "
		b=$(basename "$(readlink -f "$GELI_RUNDIR/$cur.eli")")
		[ -b "/dev/$b" ] || b=$(basename "$loop")
		echo "/sys/block/$b/inflight: $(cat "/sys/block/$b/inflight" 2>/dev/null)"
		in_guest && ! mountpoint -q /sys/kernel/debug && mount -t debugfs none /sys/kernel/debug
		grep -r . "/sys/kernel/debug/block/$b" 2>/dev/null | grep -vE "/(sched_tags|tags)(_bitmap)?:|poll_stat" | head -n 60
		# (every ublk device's requests in flight, and every daemon's
		# last lines: a raidz member's request may be the lost one)
		grep -H . /sys/kernel/debug/block/ublkb*/hctx*/busy 2>/dev/null | head -n 20
		for f in "$GELI_RUNDIR"/*.log; do [ "$f" = "$GELI_RUNDIR/$cur.log" ] || tail -n 4 "$f"; done
		grep -H . /sys/fs/fuse/connections/*/waiting 2>/dev/null
	} 2>&1 | diag
	done_testing
	exit 1
}

# ---- kill -9, twenty times, under fio --verify ----------------------------------
# fio writes and checks until it is told to stop (SIGINT, once the kills are
# over): each block read back and compared soon after it is written.
(cd "$T" && exec fio --name=v --directory="$T/mnt" --size=24M --numjobs=2 \
	--rw=randwrite --bsrange=4k-64k --ioengine=psync --fsync=8 \
	--verify=crc32c --verify_backlog=16 --verify_fatal=1 \
	--time_based --runtime=3600 --randrepeat=0 --group_reporting) >"$T/fio.log" 2>&1 &
fpid=$!
wait_for test -s "$T/mnt/v.0.0"
# replaced OLD N: a server other than OLD serves, the keeper's Nth.
replaced() { [ "$(server)" != "$1" ] && [ "$(listed Restarts)" = "$2" ]; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }
: >"$T/lat"
kills=0 same=0
for i in $(seq 20); do
	s=$(server)
	t0=$(now_ms)
	kill -9 "$s" && kills=$((kills + 1))
	# The first read that completes after the kill (through the loop device,
	# past its cache): a new server answered it.
	(dd if="$loop" of=/dev/null bs=4096 count=1 skip=$((RANDOM % 4096)) iflag=direct status=none
	 echo $(($(now_ms) - t0)) >>"$T/lat") &
	wait_for fails alive $! || stuck "the read after kill $i never ended"
	wait_for replaced "$s" "$i" || break
	[ "$(listed "Keeper PID")" = "$kpid" ] && same=$((same + 1))
done
alive "$fpid" && fio_ran=1 || fio_ran=0
kill -INT "$fpid"
wait_for fails alive "$fpid" || stuck "fio did not end once interrupted"
wait "$fpid"
check "20 kills of the server: 20 servers started by the same keeper (geli list: Restarts: 20)" \
	test "$kills" = 20 -a "$same" = 20 -a "$(listed Restarts)" = 20
check "fio ran through them, and reports no error (every block it wrote read back as written)" \
	eval 'test "$fio_ran" = 1 && grep -q "err= 0" "$T/fio.log" && ! grep -qE "err= *[1-9]|verify: bad|fio: pid=.*error" "$T/fio.log"'
grep -E "err=|verify|error" "$T/fio.log" | head -5 | diag
check "... the log names each death and restart" \
	test "$(grep -c "its server died (signal 9); served again" "$GELI_RUNDIR/r.img.log")" = 20
sort -n "$T/lat" >"$T/lat.sorted"
echo "kill to the first read completed after it, 20 kills: median $(sed -n 10p "$T/lat.sorted") ms, max $(tail -n 1 "$T/lat.sorted") ms" | diag

# ---- The OOM killer ---------------------------------------------------------------
# The server made the victim: its oom_score_adj raised (root's server sets
# -1000, so that the OOM killer passes it by) and moved into a memory cgroup
# of its own (v2, else v1) with a 1 MiB limit; a hog joins it and takes
# 16 MB that cannot be reclaimed (a shell's string, no swap).  The cgroup's
# OOM killer then picks the task with the most points, which its
# oom_score_adj makes the server's however little it holds; the hog is
# killed after it.  (The server alone under the limit was no sure OOM:
# what it allocates while serving is little, and mostly page cache the
# kernel reclaims.)  Readers keep going on the provider meanwhile.
s=$(server)
echo 1000 >"/proc/$s/oom_score_adj"
oom=
# (in a guest, cgroup v2's memory controller given to the root's children)
in_guest && grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null &&
	echo +memory >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
if grep -qw memory /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null; then
	cg=/sys/fs/cgroup/geli-test-$$
	mkdir "$cg" && on_exit "rmdir '$cg' 2>/dev/null"
	echo 0 >"$cg/memory.swap.max" 2>/dev/null
	echo 1M >"$cg/memory.max" && echo "$s" >"$cg/cgroup.procs" && oom="cgroup v2"
elif [ -w /sys/fs/cgroup/memory/cgroup.procs ]; then
	cg=/sys/fs/cgroup/memory/geli-test-$$
	mkdir "$cg" && on_exit "rmdir '$cg' 2>/dev/null"
	echo 0 >"$cg/memory.swappiness" 2>/dev/null
	echo 1M >"$cg/memory.limit_in_bytes" && echo "$s" >"$cg/cgroup.procs" && oom="cgroup v1"
fi
if [ -n "$oom" ]; then
	(exec fio --name=oom --filename="$GELI_RUNDIR/r.img.eli" --readonly --rw=randread \
		--bs=64k --direct=1 --ioengine=psync --numjobs=4 --thread --size=64M \
		--time_based --runtime=3600 --group_reporting) >"$T/oom.log" 2>&1 &
	opid=$!
	# read_past N: fio's threads have read N MiB more than they had at this call's first.
	rchar() { awk '$1 == "rchar:" { print $2 }' "/proc/$opid/io"; }
	read_past() { [ $(($(rchar) - r0)) -gt $(($1 * 1048576)) ]; }
	r0=$(rchar)
	wait_for read_past 4
	bash -c 'echo $$ >"$1/cgroup.procs" && x=$(head -c 16000000 /dev/zero | tr "\0" x) && echo "${#x}"' \
		hog "$cg" >"$T/hog.out" 2>&1
	check "the OOM killer (a memory cgroup, $oom) picks the server: another serves (Restarts: 21)" \
		wait_for replaced "$s" 21
	r0=$(rchar)
	wait_for read_past 4
	kill -INT "$opid"
	wait_for fails alive "$opid" || stuck "the readers did not end once interrupted"
	wait "$opid"
	if grep -q "err= 0" "$T/oom.log" && ! grep -qE "err= *[1-9]" "$T/oom.log"; then
		ok "... the readers read before and after, and saw no error"
	else
		nok "... the readers read before and after, and saw no error"
		grep -iE "err" "$T/oom.log" | head -n 5 | diag
	fi
	check "... the kernel says the OOM killer killed it" \
		eval 'kmsg_since "$k0" | grep -qE "Killed process $s "'
	check "... and the hog after it (it got no 16 MB)" test ! -s "$T/hog.out"
	rmdir "$cg"
else
	skip "no memory cgroup to make the OOM killer pick the server"
fi

# ---- A request while no server runs ------------------------------------------------
# The keeper stopped before the server is killed holds the window between a
# death and the next server open: a geli list and an attach of the same
# provider made in it wait in the control socket the keeper holds, and the
# next server answers them (no stale files seen and cleared, no second
# daemon on the provider).
s=$(server)
r=$(($(listed Restarts) + 1))
kill -STOP "$kpid"
kill -9 "$s"
wait_for fails alive "$s"
"$GELI" list r.img >"$T/wl.out" 2>&1 &
lpid=$!
"$GELI" attach -j "$T/pass" "$prov" >"$T/wa.out" 2>&1 &
apid=$!
# (each waits once it has a socket: it is connected then, or about to be)
has_socket() { ls -l "/proc/$1/fd" 2>/dev/null | grep -q "socket:"; }
wait_for has_socket "$lpid"
wait_for has_socket "$apid"
kill -CONT "$kpid"
wait "$lpid"
lrc=$?
wait "$apid"
arc=$?
check "a request made while no server ran waits for the next: list answers it (Restarts: $r)" \
	eval '[ "$lrc" = 0 ] && grep -q "^   Restarts: $r$" "$T/wl.out"'
check "... an attach of the provider then is refused, and it is served on" \
	eval '[ "$arc" != 0 ] && grep -q "already exists" "$T/wa.out" && replaced "$s" "$r" && cmp -s "$T/before" "$T/mnt/before"'
check "the kernel log has no I/O error" test "$(ioerrs "$k0")" = 0
check "what was written before the kills reads back" cmp -s "$T/before" "$T/mnt/before"
umount "$T/mnt"
check "fsck: the file system is clean" e2fsck -fn "$loop"
"$GELI" detach r.img
check "detach ends the server and its keeper" eval '! alive "$kpid"'

# ---- A raidz on three providers (OpenZFS in the guest lane, zfs-fuse here) -------
zfs_here=
if have_openzfs || command -v zfs-fuse >/dev/null; then
	need_zfs && zfs_here=1
else
	skip "a raidz on three providers under kills: needs OpenZFS or zfs-fuse"
fi
if [ -n "$zfs_here" ]; then
	# (zfs-fuse, of 2013, knows 512-byte blocks alone: on ublk devices of
	# 4096-byte logical blocks, in the newest kernel's guest, its zpool
	# create read and wrote them for 20 minutes without an end, where at
	# 512 bytes it takes 5 s; OpenZFS takes ashift 12 from them)
	zss=4096
	[ "$ZFS_KIND" = zfs-fuse ] && zss=512
	for i in 1 2 3; do
		mkprov "$T/z$i.img" 128M
		"$GELI" init -B none -i 10 -s "$zss" -J "$T/pass" "$T/z$i.img" >/dev/null
		zfs_attach -j "$T/pass" "$T/z$i.img"
	done
	pool=gelirestart
	zpool create -f -m "$T/pool" "$pool" raidz $(zdev z1.img z2.img z3.img)
	zk0=$(kmsg_seq)
	(cd "$T" && exec fio --name=p --directory="$T/pool" --size=16M --numjobs=2 \
		--rw=randwrite --bsrange=4k-64k --ioengine=psync --fsync=8 \
		--verify=crc32c --verify_backlog=16 --verify_fatal=1 \
		--time_based --runtime=3600 --randrepeat=0 --group_reporting) >"$T/pfio.log" 2>&1 &
	fpid=$!
	wait_for test -s "$T/pool/p.0.0"
	zserver() { cat "$GELI_RUNDIR/z$1.img.pid"; }
	zrestarts() { "$GELI" list "z$1.img" | sed -n 's/^   Restarts: //p'; }
	# zreplaced M OLD N: member M served by another server than OLD, its Nth.
	zreplaced() { [ "$(zserver "$1")" != "$2" ] && [ "$(zrestarts "$1")" = "$3" ]; }
	kills=0 degraded=0
	for i in $(seq 20); do
		m=$(((i - 1) % 3 + 1))
		s=$(zserver "$m")
		kill -9 "$s" && kills=$((kills + 1))
		if ! wait_for zreplaced "$m" "$s" $(((i - 1) / 3 + 1)); then
			tail -n 20 "$GELI_RUNDIR/z$m.img.log" | diag
			break
		fi
		[ "$(zpool list -H -o health "$pool")" = ONLINE ] || degraded=$((degraded + 1))
	done
	kill -INT "$fpid"
	wait_for fails alive "$fpid" || stuck "fio on the pool did not end once interrupted"
	wait "$fpid"
	check "a raidz on three providers: 20 kills of its members' servers in turn, each replaced (7, 7, 6)" \
		test "$kills" = 20 -a "$(zrestarts 1)" = 7 -a "$(zrestarts 2)" = 7 -a "$(zrestarts 3)" = 6
	check "... fio on the pool reports no error" \
		eval 'grep -q "err= 0" "$T/pfio.log" && ! grep -qE "err= *[1-9]|verify: bad" "$T/pfio.log"'
	grep -E "err=|verify" "$T/pfio.log" | head -3 | diag
	check "... the pool never degraded" test "$degraded" = 0
	check "... zpool status: 0 read, write and checksum errors" \
		eval 'zpool status $([ "$ZFS_KIND" = openzfs ] && echo -p) "$pool" | awk "NF == 5 && \$3 ~ /^[0-9]+\$/ && \$3 \$4 \$5 != \"000\" { bad = 1 } END { exit bad }"'
	zpool status "$pool" | diag
	zpool scrub "$pool" && zpool_scrubbed "$pool"
	check "... scrub: nothing to repair, no error" \
		eval 'zpool status "$pool" | grep -qE "scrub (repaired 0B|completed) .* with 0 errors"'
	check "... the kernel log has no I/O error" test "$(ioerrs "$zk0")" = 0
	zpool destroy "$pool"
	"$GELI" detach z1.img z2.img z3.img
fi

# ---- A kill during an online conversion ----------------------------------------------
# Each online target: a new Master Key and cipher, GELI to plain (-D),
# GELI to LUKS2 (-t luks2, its header in a file).  The daemon slowed (its
# writes to the provider 2 ms each), so that the kill lands in the
# conversion; the command that started it follows it to its end.
# killed_conversion NAME DESC ARGS...: NAME.img (8 MiB, AES-XTS, 4096-byte
# sectors, its .eli filled from NAME.ref) converted online by `geli
# reencrypt ARGS NAME.img`, its server killed halfway.
killed_conversion() {
	local name=$1 desc=$2 prov=$T/$1.img s rc
	shift 2
	cur=$name.img
	mkprov "$prov" 8M
	"$GELI" init -B none -i 10 -s 4096 -J "$T/pass" "$prov" >/dev/null
	"$GELI" attach -j "$T/pass" "$prov"
	head -c $((8 * 1048576 - 4096)) /dev/urandom >"$T/$name.ref"
	dd if="$T/$name.ref" of="$GELI_RUNDIR/$cur.eli" bs=1M conv=notrunc,fsync status=none
	"$GELI" detach "$cur"
	slowed "$prov" "$GELI" attach -j "$T/pass" "$prov"
	"$GELI" reencrypt "$@" -j "$T/pass" -z 4096 "$prov" >"$T/re.out" 2>&1 &
	local cpid=$!
	wait_for begun "$cur" "$cpid"
	check "$desc: a conversion under way" converting "$cur"
	s=$(server)
	kill -9 "$s"
	check "... its server killed: another goes on with it from the journal" \
		eval 'wait_for replaced "$s" 1 && grep -q "conversion (.*) resumed" "$GELI_RUNDIR/$cur.log"'
	wait "$cpid"
	rc=$?
	check "... the command follows it in the new server, to the end" test "$rc" = 0
	[ "$rc" = 0 ] || diag <"$T/re.out"
	check "... converted, no journal left, every byte as written" \
		eval '[ "$(journals)" = 0 ] && cmp -s "$T/$name.ref" "$GELI_RUNDIR/$cur.eli"'
	"$GELI" detach "$cur"
}
killed_conversion c "a new Master Key, Camellia-CBC 256" -B none -e camellia-cbc -l 256
# (GELI_RESTART_ONE_TARGET, the lane's boot of the newest kernel: the
# resume is the daemon's, the same on every kernel; the host and the 6.12
# guest convert to the other two)
if [ -n "${GELI_RESTART_ONE_TARGET:-}" ]; then
	skip "GELI to plain and to LUKS2 under a kill: the same daemon on every kernel (the host and 6.12 run them)"
else
	killed_conversion d "GELI to plain" -D
	check "... the provider holds it in the clear" \
		cmp -s "$T/d.ref" <(head -c "$(stat -c %s "$T/d.ref")" "$T/d.img")
	killed_conversion l "GELI to LUKS2" -t luks2 -B none -H "$T/l.hdr" -i 1000
	if command -v cryptsetup >/dev/null && python3 -c 'import cryptography' 2>/dev/null; then
		converted l "$T/l.hdr" "$(nonl "$T/pass")" 4096 "... LUKS2"
	else
		skip "... LUKS2 read by cryptsetup and Python's cryptography: not installed"
	fi
fi
prov=$T/c.img
cur=c.img

# ---- Keeper and server killed ------------------------------------------------------
"$GELI" attach -j "$T/pass" "$prov" >/dev/null
dev0=$(readlink "$GELI_RUNDIR/c.img.eli")
kill_daemon "$(server)"
check "keeper and server killed: attach serves it again" \
	eval '"$GELI" attach -j "$T/pass" "$prov" && cmp -s "$T/c.ref" "$GELI_RUNDIR/c.img.eli"'
if [ "$(backend_of c.img)" = ublk ]; then
	check "... its ublk device, which waited, taken back" \
		eval '[ "$(readlink "$GELI_RUNDIR/c.img.eli")" = "$dev0" ] && grep -q "which waited since its server died, taken back" "$GELI_RUNDIR/c.img.log"'
	# Both killed again, a reader waiting on the device: detach gives the
	# device up instead of taking it back.
	kill_daemon "$(server)"
	dd if="$dev0" of=/dev/null bs=4096 count=1 iflag=direct status=none 2>/dev/null &
	dpid=$!
	wait_for eval 'ls -l "/proc/$dpid/fd" 2>/dev/null | grep -q "$dev0"'
	check "... both killed again: detach gives the waiting device up" "$GELI" detach c.img
	wait "$dpid"
	check "... the reader that waited on it ends with an error" test $? != 0
	check "... the device and the run directory's entries are gone" \
		eval 'wait_for test ! -e "$dev0" && ! ls "$GELI_RUNDIR"/c.img.eli "$GELI_RUNDIR"/c.img.ctl 2>/dev/null | grep -q .'
else
	"$GELI" detach c.img
fi
done_testing
