#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# suite: alone
# SIGTERM and SIGINT to an attach daemon (what a shutdown or systemctl stop
# sends) are an orderly detach, as FreeBSD detaches every device at
# shutdown: the write in flight finishes, the provider is fsynced, the .eli
# unmounted, the run directory's entries removed, "Device NAME.eli
# destroyed." logged.  Each signal with a writer busy on the .eli, and once
# on an idle provider with a loop device.
. "$(dirname "$0")/lib.sh"

need_fuse || { done_testing; exit; }
passfile "$T/pass" "signals"
head -c $((16 << 20)) /dev/urandom >"$T/data"
cat >"$T/writer.py" <<'EOF'
import os, sys, time
data = open(sys.argv[1], 'rb').read()
fd = os.open(sys.argv[2], os.O_WRONLY)
n = 0
chunks = len(data) // 65536
try:
    # Over the data again and again (the same bytes in the same places)
    # until a write fails, the daemon gone, or the test says stop: a writer
    # that ended by itself could end before the signal on a slow machine.
    # Counted: the chunks written once.
    while not os.path.exists(sys.argv[4]):
        for off in range(0, len(data), 65536):
            os.pwrite(fd, data[off:off + 65536], off)
            n += 1
            with open(sys.argv[3], 'w') as f:
                f.write(str(min(n, chunks)))
            time.sleep(0.004)
except OSError:
    pass
EOF

mounted() { awk -v m="$1" '$2 == m { f = 1 } END { exit !f }' /proc/mounts; }
# traced PID: every thread of PID traced (strace, -qq, says nothing when it
# has attached; a slow machine makes that late, never absent).
traced() {
	local s
	for s in /proc/"$1"/task/*/status; do
		grep -q '^TracerPid:[[:space:]]*[1-9]' "$s" 2>/dev/null || return 1
	done
}

for sig in TERM INT; do
	p=$T/p$sig
	mkprov "$p" 40M
	geli init -B none -i 10 -J "$T/pass" "$p" >/dev/null
	expect_ok "$sig: attach" "$GELI" attach -j "$T/pass" "$p"
	name=p$sig
	pid=$(cat "$GELI_RUNDIR/$name.pid")
	# The daemon's fsync calls, seen from outside.
	strace -f -qq -e trace=fsync,fdatasync -o "$T/strace.$sig" -p "$pid" 2>/dev/null &
	st=$!
	wait_for traced "$pid"
	# A writer busy on the .eli when the signal comes: 64 KiB requests,
	# each counted in done.$sig once it returned.
	python3 "$T/writer.py" "$T/data" "$GELI_RUNDIR/$name.eli" "$T/done.$sig" "$T/stop.$sig" &
	w_pid=$!
	wait_for test -s "$T/done.$sig"
	busy=
	alive "$w_pid" && busy=1
	kill -s "$sig" "$pid"
	check "$sig: the daemon exits" wait_for fails kill -0 "$pid"
	# (its next write fails once the daemon is gone; else it stops at the
	# end of its pass over the data)
	: >"$T/stop.$sig"
	wait "$w_pid" 2>/dev/null
	kill "$st" 2>/dev/null
	wait "$st" 2>/dev/null
	check "$sig: logged as a detach on that signal" \
		grep -q "Detaching $name.eli on signal" "$GELI_RUNDIR/$name.log"
	check "$sig: \"Device $name.eli destroyed.\" logged" \
		grep -q "GEOM_ELI: Device $name.eli destroyed.$" "$GELI_RUNDIR/$name.log"
	check "$sig: the .eli is unmounted" fails mounted "$GELI_RUNDIR/$name.eli"
	check "$sig: the run directory's entries are gone" \
		test ! -e "$GELI_RUNDIR/$name.eli" -a ! -e "$GELI_RUNDIR/$name.ctl" -a ! -e "$GELI_RUNDIR/$name.pid"
	check "$sig: the provider was fsynced on the way out" \
		grep -qE "f(data)?sync\(" "$T/strace.$sig"
	# What the writer was told was written is on the provider.
	done_bytes=$(( $(cat "$T/done.$sig" 2>/dev/null || echo 0) * 65536 ))
	check "$sig: the signal came while the writer was busy" \
		test "$done_bytes" -gt 0 -a -n "$busy"
	expect_ok "$sig: attach again" "$GELI" attach -r -j "$T/pass" "$p"
	check "$sig: the $done_bytes bytes the writer was told were written read back" \
		cmp -n "$done_bytes" "$T/data" "$GELI_RUNDIR/$name.eli"
	expect_ok "$sig: detach" "$GELI" detach "$name.eli"
done

# Idle, with a loop device: the loop device goes too.
if losetup -f >/dev/null 2>&1; then
	mkprov "$T/q" 8M
	geli init -B none -i 10 -J "$T/pass" "$T/q" >/dev/null
	run "$GELI" attach -L -j "$T/pass" "$T/q"
	loop=$(cat "$T/out")
	check "loop: attached with $loop" test "$rc" = 0 -a -b "$loop"
	pid=$(cat "$GELI_RUNDIR/q.pid")
	kill -TERM "$pid"
	check "loop: the daemon exits on SIGTERM" wait_for fails kill -0 "$pid"
	check "loop: its loop device is released" \
		bash -c '! losetup -a | grep -q "$0"' "$GELI_RUNDIR/q.eli"
	check "loop: destroyed, logged" grep -q "Device q.eli destroyed." "$GELI_RUNDIR/q.log"
else
	skip "no free loop device"
fi
done_testing
