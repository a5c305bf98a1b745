#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Power loss, replayed: the attach daemon's writes and fsyncs to the provider
# are recorded (strace) while a program writes records through the .eli and
# fsyncs now and then; the provider is then rebuilt as a power loss could
# leave it (everything up to one of the daemon's fsyncs, any subset of the
# writes after it) and attached again.  Every record that the program's
# fsync acknowledged reads back as that record or a later one written to the
# same place.  Then the same with ext4 on top: every rebuilt state fscks
# clean after its journal is replayed, and files fsynced before it read back.
. "$(dirname "$0")/lib.sh"

need_fuse || { done_testing; exit; }
command -v strace >/dev/null || { skip "strace is not installed"; done_testing; exit; }
passfile "$T/pass" "power loss"
mkdir -p "$T/states"

# trace PID: record the daemon's provider writes and fsyncs into $T/trace.
# It returns once strace holds every thread of PID (or has given up):
# a write before would be missing from the trace.
traced_by() {
	local f
	for f in /proc/"$1"/task/*/status; do
		[ "$(awk '/^TracerPid/ { print $2 }' "$f" 2>/dev/null)" = "$2" ] || return 1
	done
}
trace_start() {
	strace -f -qq -xx -s 2000000 -e trace=pwrite64,fsync,fdatasync \
		-o "$T/trace" -p "$1" 2>/dev/null &
	st=$!
	on_exit "kill $st 2>/dev/null"
	wait_for eval "traced_by $1 $st || ! alive $st"
}
trace_stop() { sleep 0.3; kill "$st"; wait "$st" 2>/dev/null; }

# The writer: 4 KiB records (block, generation, digest) at random blocks,
# an fsync after every 4 writes; the log says what each fsync acknowledged.
cat >"$T/writer.py" <<'PY'
import hashlib, os, random, struct, sys
eli, log, nblocks, nwrites = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
random.seed(int(sys.argv[5]))
fd = os.open(eli, os.O_WRONLY)
with open(log, 'w') as lg:
    for i in range(1, nwrites + 1):
        b = random.randrange(nblocks)
        head = struct.pack('<QQ', b, i)
        rec = (head + hashlib.sha256(head).digest()) * (4096 // 48) 
        rec += b'\0' * (4096 - len(rec))
        os.pwrite(fd, rec, b * 4096)
        lg.write('W %d %d\n' % (b, i))
        if i % 4 == 0:
            os.fsync(fd)
            lg.write('F %d\n' % i)
            lg.flush()
PY

# The replayer: states from the base image and the trace.
cat >"$T/replay.py" <<'PY'
import random, re, shutil, sys
base, trace, fdpath, outdir, nstates, seed = sys.argv[1:7]
random.seed(int(seed))
ev = []
pw = re.compile(r'^\d+ +pwrite64\((\d+), "((?:\\x[0-9a-f]{2})*)", (\d+), (\d+)')
fs = re.compile(r'^\d+ +f(?:data)?sync\((\d+)')
fd = int(fdpath)
for line in open(trace):
    m = pw.match(line)
    if m and int(m.group(1)) == fd:
        data = bytes.fromhex(m.group(2).replace('\\x', ''))
        assert len(data) == int(m.group(3)), 'a write printed whole'
        ev.append(('W', int(m.group(4)), data))
        continue
    m = fs.match(line)
    if m and int(m.group(1)) == fd:
        ev.append(('F',))
syncs = [i for i, e in enumerate(ev) if e[0] == 'F']
print('events %d writes %d fsyncs %d' % (len(ev), len(ev) - len(syncs), len(syncs)))
for n in range(int(nstates)):
    # Up to the k-th fsync (0: none), then any subset of what follows
    # until the next one; the first state is everything.
    k = len(syncs) if n == 0 else random.randrange(len(syncs) + 1)
    end = syncs[k - 1] + 1 if k > 0 else 0
    nxt = syncs[k] if k < len(syncs) else len(ev)
    out = '%s/state%02d' % (outdir, n)
    shutil.copyfile(base, out)
    with open(out, 'r+b') as f:
        for i, e in enumerate(ev[:nxt]):
            if e[0] == 'W' and (i < end or n == 0 or random.random() < 0.5):
                f.seek(e[1])
                f.write(e[2])
    print('%s %d' % (out, k))
PY

# The checker: each block is its acknowledged record or a later one.
cat >"$T/check.py" <<'PY'
import hashlib, struct, sys
eli, log, k, nblocks = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
acked, later, nf = {}, {}, 0
for line in open(log):
    p = line.split()
    if p[0] == 'F':
        nf += 1
        continue
    b, g = int(p[1]), int(p[2])
    if nf < k:
        acked[b] = g
        later[b] = {g}
    else:
        later.setdefault(b, set()).add(g)
bad = 0
with open(eli, 'rb') as f:
    for b in range(nblocks):
        blk = f.read(4096)
        head = blk[:16]
        rb, g = struct.unpack('<QQ', head)
        whole = blk[16:48] == hashlib.sha256(head).digest() and rb == b
        if b in acked:
            if not whole or g not in later[b] or g < acked[b]:
                bad += 1
        elif b in later and whole and g not in later[b]:
            bad += 1
print('bad %d acked %d' % (bad, len(acked)))
sys.exit(1 if bad else 0)
PY

# ---- Records -----------------------------------------------------------------
mkprov "$T/p" 2M
geli init -B none -s 4096 -i 10 -J "$T/pass" "$T/p" >/dev/null
cp "$T/p" "$T/base"
expect_ok "attach" "$GELI" attach -j "$T/pass" "$T/p"
pid=$(cat "$GELI_RUNDIR/p.pid")
pfd=$(for f in /proc/"$pid"/fd/*; do [ "$(readlink "$f")" = "$T/p" ] && basename "$f"; done | head -n 1)
check "the daemon's provider descriptor is found" test -n "$pfd"
trace_start "$pid"
python3 "$T/writer.py" "$GELI_RUNDIR/p.eli" "$T/wlog" 128 200 7
check "the writer wrote 200 records, 50 fsyncs" test "$(grep -c '^F' "$T/wlog")" = 50
trace_stop
expect_ok "detach" "$GELI" detach p.eli
python3 "$T/replay.py" "$T/base" "$T/trace" "$pfd" "$T/states" 25 11 >"$T/replay.out"
check "the trace has the daemon's 50 fsyncs" grep -q "fsyncs 50$" "$T/replay.out"
good=0 total=0
while read -r st k; do
	total=$((total + 1))
	mv "$st" "$T/r"
	"$GELI" attach -r -j "$T/pass" "$T/r" >/dev/null 2>&1 || { echo "# $st: no attach"; continue; }
	if python3 "$T/check.py" "$GELI_RUNDIR/r.eli" "$T/wlog" "$k" 128 >"$T/chk" 2>&1; then
		good=$((good + 1))
	else
		echo "# $st (after fsync $k): $(cat "$T/chk")"
	fi
	"$GELI" detach r.eli
done < <(grep '^/' "$T/replay.out")
check "25 power-loss states: every acknowledged record intact ($good of $total)" \
	test "$good" = 25 -a "$total" = 25
# The checker itself: the provider as it was before any write has lost
# every acknowledged record.
cp "$T/base" "$T/r"
"$GELI" attach -r -j "$T/pass" "$T/r" >/dev/null 2>&1
check "the checker sees acknowledged records lost (the provider before any write)" \
	bash -c '! python3 "$@" >/dev/null' _ "$T/check.py" "$GELI_RUNDIR/r.eli" "$T/wlog" 50 128
"$GELI" detach r.eli

# ---- ext4 on top ---------------------------------------------------------------
if command -v mkfs.ext4 >/dev/null && losetup -f >/dev/null 2>&1; then
	mkprov "$T/e" 64M
	geli init -B none -s 4096 -i 10 -J "$T/pass" "$T/e" >/dev/null
	"$GELI" attach -j "$T/pass" "$T/e"
	mkfs.ext4 -q -F -b 4096 "$GELI_RUNDIR/e.eli"
	"$GELI" detach e.eli
	cp "$T/e" "$T/ebase"
	run "$GELI" attach -L -j "$T/pass" "$T/e"
	loop=$(cat "$T/out")
	check "ext4: attached with a loop device" test -b "$loop"
	pid=$(cat "$GELI_RUNDIR/e.pid")
	pfd=$(for f in /proc/"$pid"/fd/*; do [ "$(readlink "$f")" = "$T/e" ] && basename "$f"; done | head -n 1)
	mkdir "$T/mnt"
	# From the state copied above on, every write is in the trace: the
	# mount's own writes (the journal's start) too.
	trace_start "$pid"
	check "ext4: mounted on the loop device" mount "$loop" "$T/mnt"
	on_exit "umount '$T/mnt' 2>/dev/null"
	for i in $(seq 1 12); do
		head -c $((i * 37000)) /dev/urandom >"$T/mnt/f$i"
		sync "$T/mnt/f$i"
		md5sum "$T/mnt/f$i" | sed "s|$T/mnt/||" >>"$T/esums"
	done
	trace_stop
	umount "$T/mnt"
	"$GELI" detach e.eli
	python3 "$T/replay.py" "$T/ebase" "$T/trace" "$pfd" "$T/states" 10 5 >"$T/replay.out"
	clean=0 whole=0 total=0 complete=
	while read -r st k; do
		total=$((total + 1))
		mv "$st" "$T/r"
		"$GELI" attach -j "$T/pass" "$T/r" >/dev/null 2>&1 || continue
		img=$GELI_RUNDIR/r.eli
		# Journal replay, as a mount after a crash does; then a full check.
		e2fsck -p "$img" >/dev/null 2>&1
		if e2fsck -fn "$img" >"$T/fsck" 2>&1; then
			clean=$((clean + 1))
		else
			echo "# $st (after fsync $k):"; sed 's/^/#   /' "$T/fsck" | head -n 8
		fi
		# A file of its full size has its content (ext4's ordered data).
		ok_files=0 bad_files=0
		for i in $(seq 1 12); do
			size=$(debugfs -R "stat /f$i" "$img" 2>/dev/null | sed -n 's/.*Size: \([0-9]*\).*/\1/p' | head -n 1)
			[ "${size:-0}" = $((i * 37000)) ] || continue
			if [ "$(debugfs -R "cat /f$i" "$img" 2>/dev/null | md5sum | cut -d' ' -f1)" = \
			    "$(sed -n "s/  f$i\$//p" "$T/esums")" ]; then
				ok_files=$((ok_files + 1))
			else
				bad_files=$((bad_files + 1))
			fi
		done
		[ "$bad_files" = 0 ] && whole=$((whole + 1))
		[ "$total" = 1 ] && complete=$ok_files
		"$GELI" detach r.eli
	done < <(grep '^/' "$T/replay.out")
	check "ext4: 10 power-loss states fsck clean after journal replay ($clean of $total)" \
		test "$clean" = 10 -a "$total" = 10
	check "ext4: in each, every file of its full size has its content ($whole of $total)" \
		test "$whole" = 10
	check "ext4: with every write, all 12 fsynced files read back (${complete:-0})" \
		test "${complete:-0}" = 12
else
	skip "ext4 part: needs mkfs.ext4 and a free loop device"
fi
done_testing
