#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# suite: plain
# Crash states.  Under a write load (random and sequential, fsync every few
# writes) the attach daemon (its server and keeper) is killed with SIGKILL
# at 50 random moments (12 in a sanitized build and in the guest lane);
# after each re-attach every record acknowledged by fsync reads back intact
# (crashio.py keeps the log of acknowledged records outside the volume).
# Then (on the host: no part of it is the kernel's) every metadata-changing
# verb (setkey, delkey, configure, resize, restore, init -B; setkey, delkey,
# configure and AUTORESIZE of an attached provider in its daemon) is killed
# by strace at each of its writes, before and after the write: the provider
# keeps the old metadata or has the new, never neither, and the keys of that
# state open it.
. "$(dirname "$0")/lib.sh"
need_fuse || { done_testing; exit; }
CRASHIO=$(dirname "$0")/crashio.py
passfile "$T/pass" "crash"
passfile "$T/new" "crash new"

# ---- SIGKILL of the daemon under a write load ------------------------------

# crash_cycles DESC SECTORSIZE MODE COUNT PIECE INIT-OPTIONS: COUNT kills.
# PIECE (0: none): a block that a write not yet acknowledged was replacing
# may be torn into pieces of PIECE bytes (crashio.py verify --piece).
kills=0 lost=0 hung=0 reattach=0 cycles=0
crash_cycles() {
	local desc=$1 bs=$2 mode=$3 count=$4 piece=$5; shift 5
	local prov=$T/c.img eli=$GELI_RUNDIR/c.img.eli log=$T/c.log i pid wpid gen=0 bad=0
	mkprov "$prov" 4M
	rm -f "$log" "$log.try"
	"$GELI" init -B none -i 10 -s "$bs" -J "$T/pass" "$@" "$prov" >/dev/null
	"$GELI" attach -j "$T/pass" "$prov"
	for i in $(seq "$count"); do
		cycles=$((cycles + 1))
		gen=$((gen + 1000000))
		pid=$(cat "$GELI_RUNDIR/c.img.pid")
		rm -f "$T/ready"
		# The writer goes on until its daemon dies (its first error), however
		# slow the machine; 120 s is a hang's bound, never the load's length.
		timeout 120 python3 "$CRASHIO" write "$eli" "$log" --gen $gen --mode "$mode" \
			--bs "$bs" --blocks 512 --seconds inf --seed $((RANDOM)) --ready "$T/ready" \
			>/dev/null 2>"$T/w.err" &
		wpid=$!
		# A random moment: 0 to 300 ms into the load.
		wait_for test -e "$T/ready"
		sleep "0.$(printf '%03d' $((RANDOM % 300)))"
		# A ublk device that waits for a server (USER_RECOVERY) holds the
		# writer's I/O until the attach takes it back; then the writer,
		# which saw no error, is told to stop.  Elsewhere the writer ends
		# at its first error, before the attach.
		waits=0
		waits_for_server c.img && waits=1
		# (no daemon to kill: the writer is told to stop instead)
		if kill_daemon "$pid"; then kills=$((kills + 1)); else kill "$wpid"; fi
		if [ "$waits" = 0 ]; then
			wait "$wpid"
			[ $? = 124 ] && { hung=$((hung + 1)); echo "cycle $i: the writer hung" | diag; }
		fi
		if ! "$GELI" attach -j "$T/pass" "$prov" 2>"$T/a.err"; then
			reattach=$((reattach + 1)); diag <"$T/a.err"
			wait_for attached c.img || "$GELI" attach -j "$T/pass" "$prov"
		fi
		if [ "$waits" = 1 ]; then
			kill "$wpid" 2>/dev/null
			wait "$wpid"
		fi
		if ! python3 "$CRASHIO" verify "$eli" "$log" --bs "$bs" --piece "$piece" >"$T/v.out" 2>&1; then
			bad=$((bad + 1)); lost=$((lost + 1))
			{ echo "$desc cycle $i:"; cat "$T/v.out"; } | diag
		elif grep -q ' [1-9][0-9]* torn' "$T/v.out"; then
			echo "$desc cycle $i: $(tail -n1 "$T/v.out")" | diag
		fi
	done
	check "$desc: $count kills under load, every fsynced record intact" test $bad = 0
	"$GELI" detach c.img
	"$GELI" attach -j "$T/pass" "$prov"
	python3 "$CRASHIO" verify "$eli" "$log" --bs "$bs" --piece "$piece" >"$T/v.out" 2>&1
	check "$desc: ... and after a clean detach and attach ($(tail -n1 "$T/v.out"))" test $? = 0
	"$GELI" detach c.img
}
start=$SECONDS
# 50 kills; 12 in a sanitized build, whose pass is for memory errors on the
# way, and in the guest lane's, which is for the ublk device's part (the
# plain pass has the 50).
K1=17 K2=17 K3=16 KALL=50
if [ -n "${GELI_SANITIZED:-}" ] || in_guest; then
	K1=4 K2=4 K3=4 KALL=12
fi
# Without integrity a block is one GELI sector, written to the provider in
# one piece (a page of the provider file at most): it is old or new.  With
# HMAC/SHA256 a 4096-byte GELI sector lies in 9 provider sectors of 512
# bytes, each a 32-byte tag and 480 bytes of its data (each its own unit of
# cipher and tag), and a kill can leave some of them written and not the
# rest, as a power loss can on FreeBSD.
crash_cycles "AES-XTS S=4096 random" 4096 rand $K1 0 -e aes-xts
crash_cycles "AES-CBC S=512 sequential" 512 seq $K2 0 -e aes-cbc -l 128
# Tears are rare unless the daemon's writes sleep between pages: with little
# dirty memory allowed the kernel throttles them there, as on a busy
# machine, and a kill lands in the middle of one now and then.
vm=/proc/sys/vm dirty_saved=""
for f in dirty_bytes dirty_background_bytes dirty_ratio dirty_background_ratio; do
	# Of each pair (bytes, ratio) one is set, the other 0.
	v=$(cat "$vm/$f" 2>/dev/null) && [ "$v" != 0 ] && dirty_saved="$dirty_saved echo $v >$vm/$f;"
done
if echo 2000000 >"$vm/dirty_bytes" 2>/dev/null; then
	echo 1000000 >"$vm/dirty_background_bytes"
	on_exit "$dirty_saved"
else
	echo "cannot set $vm/dirty_bytes: writes not throttled" | diag
fi
crash_cycles "HMAC/SHA256 S=4096 random" 4096 rand $K3 480 -a hmac/sha256
eval "$dirty_saved"
check "$cycles daemons killed ($kills signals sent)" test "$kills" = "$cycles" -a "$cycles" -ge $KALL
check "no writer hung after its daemon died" test $hung = 0
check "every re-attach after a kill succeeded at once" test $reattach = 0
echo "# the kills took $((SECONDS - start)) s"
start=$SECONDS

# ---- Metadata verbs killed at each of their writes -------------------------

if ! command -v strace >/dev/null; then
	skip "strace not installed"
	done_testing
	exit
fi
# (the daemon's metadata writes go to the provider whatever serves the .eli)
if in_guest; then
	skip "metadata verbs killed at their writes: the host's passes prove them"
	done_testing
	exit
fi

prov=$T/m.img
# slot_opens SLOT PASSFILE: that key opens that slot of $prov.
slot_opens() { key_opens "$prov" "$1" -j "$2"; }
keys_are() { test "$(dumpfield "$prov" keys)" = "$1"; }
flags_are() { test "$(dumpfield "$prov" flags)" = "$1"; }

# fresh: a new provider, slot 0 with $T/pass.
fresh() {
	mkprov "$prov" 4M
	rm -f "$T/m.init.bk"
	"$GELI" init -B none -i 10 -J "$T/pass" "$prov" >/dev/null
}

# Each verb: its setup (prep_X), the command (run_X PREFIX..., detached) or
# what makes the daemon act (act_X, attached), and the two states it may
# leave (new_X, checked first, and old_X, which may repair a failed resize).
prep_setkey() { fresh; }
run_setkey() { "$@" "$GELI" setkey -n 1 -i 10 -j "$T/pass" -J "$T/new" "$prov"; }
old_setkey() { keys_are 0x01 && slot_opens 0 "$T/pass"; }
new_setkey() { keys_are 0x03 && slot_opens 0 "$T/pass" && slot_opens 1 "$T/new"; }

prep_delkey() { fresh; "$GELI" setkey -n 1 -i 10 -j "$T/pass" -J "$T/new" "$prov" >/dev/null; }
run_delkey() { "$@" "$GELI" delkey -n 1 "$prov"; }
old_delkey() { new_setkey; }
new_delkey() { old_setkey; }

prep_configure() { fresh; }
run_configure() { "$@" "$GELI" configure -b -R "$prov"; }
old_configure() { flags_are 0x200 && slot_opens 0 "$T/pass"; }
new_configure() { flags_are 0x2 && slot_opens 0 "$T/pass"; }

prep_resize() { fresh; truncate -s 8M "$prov"; }
run_resize() { "$@" "$GELI" resize -s 4M "$prov"; }
# Old: the record still at the old end, where resize -s finds it (FreeBSD's
# way out of a failed resize) and moves it.
old_resize() {
	! "$GELI" dump "$prov" >/dev/null 2>&1 &&
		"$GELI" resize -s 4M "$prov" && new_resize
}
new_resize() { test "$(dumpfield "$prov" provsize)" = 8388608 && slot_opens 0 "$T/pass"; }

prep_restore() { fresh; "$GELI" backup "$prov" "$T/m.bk"; prep_delkey_keep; }
prep_delkey_keep() { "$GELI" setkey -n 1 -i 10 -j "$T/pass" -J "$T/new" "$prov" >/dev/null; }
run_restore() { "$@" "$GELI" restore "$T/m.bk" "$prov"; }
old_restore() { new_setkey; }
new_restore() { old_setkey; }

prep_init() { fresh; }
run_init() { "$@" "$GELI" init -B "$T/m.init.bk" -i 10 -s 4096 -J "$T/new" "$prov"; }
old_init() { test "$(dumpfield "$prov" sectorsize)" = 512 && slot_opens 0 "$T/pass"; }
new_init() { test "$(dumpfield "$prov" sectorsize)" = 4096 && slot_opens 0 "$T/new"; }

# The attached ones: the daemon does the writes.
attach_m() { "$GELI" attach -j "$T/pass" "$prov"; }
prep_asetkey() { fresh; attach_m; }
act_asetkey() { "$GELI" setkey -n 1 -i 10 -J "$T/new" "$prov"; }
old_asetkey() { old_setkey; }
new_asetkey() { new_setkey; }

prep_adelkey() { prep_delkey; attach_m; }
act_adelkey() { "$GELI" delkey -n 1 "$prov"; }
old_adelkey() { old_delkey; }
new_adelkey() { new_delkey; }

prep_aconfigure() { fresh; attach_m; }
act_aconfigure() { "$GELI" configure -b -R "$prov"; }
old_aconfigure() { old_configure; }
new_aconfigure() { new_configure; }

# AUTORESIZE: the daemon notices the growth within a second (on a loaded
# machine later: waited for until it has resized or died).
prep_aresize() { fresh; attach_m; }
resized_or_dead() { ! alive "$1" || grep -q "size changed" "$GELI_RUNDIR/m.img.log" 2>/dev/null; }
act_aresize() {
	truncate -s 8M "$prov"
	wait_for resized_or_dead "$1"
}
old_aresize() { old_resize; }
new_aresize() { new_resize; }

# (alive, lib.sh: a killed daemon may stay a zombie a while, nobody's
# child here)
# held_by PID STRACE: STRACE traces PID, or has ended (it could not).
held_by() { [ "$(awk '/^TracerPid/ { print $2 }' "/proc/$1/status" 2>/dev/null)" = "$2" ] || ! alive "$2"; }
# traced VERB SYSCALL N: VERB with a SIGKILL at the entry of its Nth
# SYSCALL (N=0: none); the writes and flushes it made are listed in $T/st.
traced() {
	local verb=$1 sc=$2 nth=$3 inj=() pid spid i k
	[ "$nth" -gt 0 ] && inj=(-e "inject=$sc:signal=SIGKILL:when=$nth")
	if declare -F "run_$verb" >/dev/null; then
		"run_$verb" strace -qq -o "$T/st" -e trace=pwrite64,fsync,fdatasync "${inj[@]}" \
			>/dev/null 2>&1
		return 0
	fi
	pid=$(cat "$GELI_RUNDIR/m.img.pid")
	# The server's death is to be the daemon's, as a crash of both would
	# be: its keeper goes first, or it would start another server.
	k=$(keeper_of "$pid")
	[ -n "$k" ] && kill -9 "$k" && wait_for fails alive "$k"
	# (emptied, not removed: the daemon holds it open and writes on)
	: >"$GELI_RUNDIR/m.img.log"
	strace -qq -o "$T/st" -p "$pid" -e trace=pwrite64,fsync,fdatasync "${inj[@]}" 2>/dev/null &
	spid=$!
	# Until strace holds it (or gave up): an act before would go untraced.
	wait_for held_by "$pid" "$spid"
	"act_$verb" "$pid" >/dev/null 2>&1
	# The daemon dies at the Nth call; one that made fewer lives on.
	[ "$nth" -gt 0 ] && for i in $(seq 30); do alive "$pid" || break; sleep 0.1; done
	kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
	# The checks want the provider free of its daemon (killed or detached:
	# it ends, and the next attach of m.img must not meet it).
	alive "$pid" && "$GELI" detach -f m.img >/dev/null 2>&1
	wait_for fails alive "$pid"
	return 0
}

for verb in setkey delkey configure resize restore init asetkey adelkey aconfigure aresize; do
	"prep_$verb"
	traced "$verb" pwrite64 0
	writes=$(grep -c 'pwrite64(' "$T/st")
	new_ok=0
	"new_$verb" 2>/dev/null && new_ok=1
	check "$verb: runs to the end with $writes writes" test $new_ok = 1 -a "$writes" -ge 1
	bad=0 states=""
	for sc in pwrite64 fsync; do
		for k in $(seq "$writes"); do
			"prep_$verb"
			traced "$verb" "$sc" "$k"
			if "new_$verb" 2>/dev/null; then s=new
			elif "old_$verb" 2>/dev/null; then s=old
			else s=NEITHER; bad=$((bad + 1)); fi
			states+=" ${sc%64}#$k:$s"
		done
	done
	check "$verb killed before and after each write: old or new metadata,$states" test $bad = 0
done
echo "# the verbs took $((SECONDS - start)) s"

done_testing
