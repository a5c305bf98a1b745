#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# suite: alone
# Races with I/O in flight: detach (with and without -f), suspend and resume,
# AUTORESIZE growth, setkey, delkey and configure of the attached provider,
# all while a writer (crashio.py: records checked afterwards, fsynced ones
# logged) keeps the .eli busy; and two attaches of one provider at once.
# No daemon crashes, nothing hangs (every wait is bounded), the data reads
# back right, and the errors are the documented ones.
. "$(dirname "$0")/lib.sh"
need_fuse || { done_testing; exit; }
CRASHIO=$(dirname "$0")/crashio.py
passfile "$T/pass" "races"
passfile "$T/new" "races new"
prov=$T/r.img
eli=$GELI_RUNDIR/r.img.eli
name=r.img

# alive PID: running, not a zombie (a daemon is nobody's child here).
alive() { [ -e "/proc/$1" ] && [ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" != Z ]; }
dpid() { cat "$GELI_RUNDIR/$name.pid" 2>/dev/null; }
fresh() {
	mkprov "$prov" "${1:-8M}"
	"$GELI" init -B none -i 10 -J "$T/pass" "$prov" >/dev/null
	"$GELI" attach -j "$T/pass" "$prov"
	rm -f "$T/w.log"
	gen=0
}
# writer [crashio options]: records into the .eli in the background ($wpid),
# the fsynced ones logged in $T/w.log, until the provider fails it or
# writer_stop ends it: the load lasts as long as what the test does under
# it, however slow the machine.
gen=0
writer() {
	gen=$((gen + 1000000))
	rm -f "$T/ready"
	python3 "$CRASHIO" write "$eli" "$T/w.log" --gen $gen --blocks 1536 \
		--seconds inf --ready "$T/ready" "$@" >"$T/w.out" 2>"$T/w.err" &
	wpid=$!
	# Its first write done (python's start can take seconds on a loaded
	# machine: a detach before it would find the provider idle).
	local i
	for i in $(seq 600); do [ -e "$T/ready" ] && return 0; sleep 0.1; done
	nok "the writer started within 60 s"
}
# writer_stop: the writer told to stop after the write under way, and
# waited for; its exit status.
writer_stop() {
	kill -TERM "$wpid" 2>/dev/null
	wait "$wpid"
}
verified() { python3 "$CRASHIO" verify "$eli" "$T/w.log" >"$T/v.out" 2>&1 || { diag <"$T/v.out"; false; }; }
# ended PID: PID has exited (within 60 s, a hang's bound).
ended() { wait_for fails kill -0 "$1" 2>/dev/null; }
# sleeping PID: PID waits in the kernel (state S or D), as the writer does
# once a suspended provider holds its write or fsync.
sleeping() { case $(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) in S | D) return 0 ;; esac; return 1; }
no_writer_error() { [ "$1" = 0 ] && [ ! -s "$T/w.err" ] || { echo "status $1" | cat - "$T/w.err" | diag; false; }; }
size_is() { test "$(stat -c %s "$1" 2>/dev/null)" = "$2"; }

# ---- detach without -f of a busy provider ---------------------------------
fresh
pid=$(dpid)
writer
busy=0 others=0
for i in $(seq 10); do
	run "$GELI" detach "$name"
	if [ "$rc" = 1 ] && [ "$(cat "$T/err")" = "geli: Cannot destroy device $name.eli (error=16)." ]; then
		busy=$((busy + 1))
	else
		others=$((others + 1)); { echo "status $rc"; cat "$T/err"; } | diag
	fi
	sleep 0.1
done
check "detach of a busy provider: 'Cannot destroy device $name.eli (error=16).' every time" \
	test $busy = 10 -a $others = 0
check "... the daemon lives on" alive "$pid"
check "... and the writer was writing all along" alive "$wpid"
writer_stop
check "... told to stop, it ends without an error" no_writer_error $?
check "... every record reads back" verified
expect_ok "once idle, detach works" "$GELI" detach "$name"
check "... the daemon is gone" wait_for fails alive "$pid"

# ---- detach -f during I/O ------------------------------------------------
for mode in rand seq; do
	fresh
	pid=$(dpid)
	writer --mode $mode
	(timeout 30 dd if="$eli" of=/dev/null bs=64k iflag=direct status=none 2>/dev/null; \
		while timeout 30 dd if="$eli" of=/dev/null bs=64k status=none 2>/dev/null; do :; done) &
	rpid=$!
	sleep 0.3
	run timeout 60 "$GELI" detach -f "$name"
	check "detach -f during $mode writes and reads: succeeds" test "$rc" = 0 -a ! -s "$T/err"
	check "... the daemon is gone" wait_for fails alive "$pid"
	check "... the writer stops with an error, no hang" ended "$wpid"
	kill -9 "$wpid" 2>/dev/null
	wait "$wpid"
	check "... (it said: $(tr '\n' ' ' <"$T/w.err"))" grep -q "^stopped: " "$T/w.err"
	check "... the reader stops too" ended "$rpid"
	kill "$rpid" 2>/dev/null
	wait "$rpid" 2>/dev/null
	check "... the run directory is clean" \
		test -z "$(ls "$GELI_RUNDIR" | grep -v '\.log$')" -a -z "$(awk -v d="$GELI_RUNDIR" 'index($2, d) == 1' /proc/mounts)"
	expect_ok "... it attaches again" "$GELI" attach -j "$T/pass" "$prov"
	check "... every fsynced record reads back ($(tail -n1 "$T/v.out" 2>/dev/null))" verified
	"$GELI" detach "$name"
done

# ---- suspend and resume during writes --------------------------------------
fresh
pid=$(dpid)
writer --mode rand
head -c 65536 /dev/urandom >"$T/rd"
dd if="$T/rd" of="$eli" bs=65536 seek=100 conv=notrunc,fsync status=none
blocked=0 stilled=0 flagged=0 resumed=0 reads=0 wrote=0
for i in $(seq 5); do
	sleep 0.2
	run timeout 60 "$GELI" suspend "$name"
	[ "$rc" = 0 ] || { echo "suspend: $rc $(cat "$T/err")" | diag; continue; }
	# Nothing reaches the provider once suspend has returned: what was in
	# flight is done, what comes is held.  The writer, once it waits in
	# the kernel, logs nothing more (a write acknowledged before suspend
	# may still be logged after it: the log is read once it waits).
	a=$(md5sum <"$prov")
	wait_for sleeping "$wpid"
	l=$(stat -c %s "$T/w.log" 2>/dev/null)
	timeout -k 1 120 dd if="$eli" bs=65536 skip=100 count=1 iflag=direct status=none >"$T/rd.$i" &
	dpid_read=$!
	sleep 0.5
	[ "$a" = "$(md5sum <"$prov")" ] && stilled=$((stilled + 1))
	[ "$l" = "$(stat -c %s "$T/w.log" 2>/dev/null)" ] && sleeping "$wpid" && blocked=$((blocked + 1))
	alive "$dpid_read" && reads=$((reads + 1))
	timeout 60 "$GELI" list "$name" | grep -q "^Flags: .*SUSPEND" && flagged=$((flagged + 1))
	expect_err "setkey of a suspended provider" "geli: Device $name.eli is suspended." \
		-- timeout 60 "$GELI" setkey -n 1 -J "$T/new" "$prov"
	run timeout 60 "$GELI" resume -j "$T/pass" "$name"
	if [ "$rc" = 0 ]; then resumed=$((resumed + 1)); else
		{ echo "resume: $rc"; cat "$T/err"; gdb -p "$pid" -batch -ex "thread apply all bt 10" 2>&1 | grep -E '^#|^Thread'; } | diag
	fi
	wait "$dpid_read" && cmp -s "$T/rd" "$T/rd.$i" || reads=$((reads - 100))
	l2=$(stat -c %s "$T/w.log" 2>/dev/null)
	wait_for bash -c '[ "$(stat -c %s "$0" 2>/dev/null)" != "$1" ]' "$T/w.log" "$l2" && wrote=$((wrote + 1))
done
check "suspend during writes: the provider is still once suspend returned (5/5: $stilled)" test $stilled = 5
check "... writers block (5/5: $blocked)" test $blocked = 5
check "... readers block (5/5: $reads), then read the right data" test $reads = 5
check "... list says SUSPEND (5/5: $flagged)" test $flagged = 5
check "... resume succeeds (5/5: $resumed) and the writes go on (5/5: $wrote)" test $resumed = 5 -a $wrote = 5
timeout 60 "$GELI" suspend "$name"
expect_ok "... resume by the device's name from another directory" \
	bash -c 'cd / && timeout 60 "$0" resume -j "$1" "$2"' "$GELI" "$T/pass" "$name.eli"
check "... the daemon lives on" alive "$pid"
writer_stop
check "... every fsynced record reads back ($(tail -n1 "$T/v.out" 2>/dev/null))" verified
"$GELI" detach "$name"

# ---- AUTORESIZE during I/O --------------------------------------------------
fresh 4M
pid=$(dpid)
check "AUTORESIZE is set by init" bash -c '"$0" list "$1" | grep -q "^Flags: .*AUTORESIZE"' "$GELI" "$name"
writer --mode seq --blocks 1000
for s in 6 8 12; do
	truncate -s ${s}M "$prov"
	wait_for size_is "$eli" $((s * 1048576 - 512))
	check "grown to ${s}M while written: the .eli follows" size_is "$eli" $((s * 1048576 - 512))
done
check "... the writer wrote all along" alive "$wpid"
writer_stop
check "... told to stop, it ends without an error" no_writer_error $?
check "... the daemon logged each change" \
	test "$(grep -c "Device $name.eli size changed from" "$GELI_RUNDIR/$name.log")" = 3
check "... every record reads back" verified
head -c 65536 /dev/urandom >"$T/tail"
dd if="$T/tail" of="$eli" bs=65536 seek=$(((12 * 1048576 - 512) / 65536 - 1)) conv=notrunc,fsync status=none
check "... the new space takes data" cmp -s "$T/tail" <(dd if="$eli" bs=65536 skip=$(((12 * 1048576 - 512) / 65536 - 1)) count=1 status=none)
"$GELI" detach "$name"
expect_ok "... and it attaches at the new size" "$GELI" attach -j "$T/pass" "$prov"
check "... with the data" verified
"$GELI" detach "$name"

# ---- setkey, delkey, configure during I/O ------------------------------------
fresh
pid=$(dpid)
writer --mode rand
fails=0
for i in $(seq 4); do
	for cmd in "setkey -n 1 -i 10 -J $T/new $prov" "configure -b $prov" "delkey -n 1 $prov" "configure -B $prov"; do
		run timeout 60 "$GELI" $cmd
		[ "$rc" = 0 ] && [ ! -s "$T/err" ] || { fails=$((fails + 1)); { echo "$cmd: $rc"; cat "$T/err"; } | diag; }
	done
done
check "setkey, configure, delkey 4 times each under writes: all succeed" test $fails = 0
check "... the daemon lives on" alive "$pid"
check "... the writer is still writing" alive "$wpid"
writer_stop
check "... it saw no error" no_writer_error $?
check "... the metadata is as the last verbs left it" \
	test "$(dumpfield "$prov" keys)" = 0x01 -a "$(dumpfield "$prov" flags)" = 0x200
check "... slot 0 opens with its key" key_opens "$prov" 0 -j "$T/pass"
check "... every record reads back" verified
"$GELI" detach "$name"
expect_ok "... and after a new attach" "$GELI" attach -j "$T/pass" "$prov"
check "... too" verified
"$GELI" detach "$name"

# ---- detach -f of a suspended provider with a writer waiting ---------------
# The writer waits in the volume's suspend gate: the teardown fails it
# (geli_volume_shutdown) instead of waiting for ever.
{
	fresh
	pid=$(dpid)
	writer --mode rand
	timeout 60 "$GELI" suspend "$name"
	run timeout 60 "$GELI" detach -f "$name"
	check "detach -f of a suspended provider under writes: succeeds" test "$rc" = 0
	check "... the daemon is gone" wait_for fails alive "$pid"
	check "... the writer stops with an error" ended "$wpid"
	kill -9 "$pid" 2>/dev/null
}

# ---- Two attaches of one provider at once -------------------------------------
mkprov "$prov" 8M
"$GELI" init -B none -i 10 -J "$T/pass" "$prov" >/dev/null
for ro in "" -r; do
	good=0 bad=0
	for i in $(seq 15); do
		"$GELI" attach $ro -j "$T/pass" "$prov" >/dev/null 2>"$T/e1" &
		p1=$!
		"$GELI" attach $ro -j "$T/pass" "$prov" >/dev/null 2>"$T/e2" &
		p2=$!
		wait $p1; r1=$?
		wait $p2; r2=$?
		[ $r1 = 0 ] && e=$T/e2 || e=$T/e1
		msg=$(head -n1 "$e")
		if [ $((r1 + r2)) = 1 ] && attached "$name" &&
			{ [ "$msg" = "geli: Provider $name.eli already exists." ] ||
			  [ "$msg" = "geli: Cannot open $prov: Operation not permitted." ]; } &&
			[ "$(tail -n1 "$e")" = "geli: There was an error with at least one provider." ]; then
			good=$((good + 1))
		else
			bad=$((bad + 1)); { echo "$r1 $r2"; cat "$T/e1" "$T/e2"; } | diag
		fi
		timeout 60 "$GELI" detach "$name" 2>/dev/null
		wait_for fails attached "$name"
	done
	check "two attaches${ro:+ ($ro)} at once, 15 times: one attaches, the other says why" test $good = 15
done
check "... and nothing is left attached" test -z "$(ls "$GELI_RUNDIR" | grep -v '\.log$')"

done_testing
