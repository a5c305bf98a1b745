#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# geli reencrypt on attached providers (docs/reencrypt.md, "Online"): the
# daemon converts while fio writes and verifies through the .eli the whole
# time (AES-CBC to AES-XTS with a new passphrase; decryption to plain, the
# raw provider then verified by fio); a conversion paused by SIGINT of the
# command, refused verbs meanwhile, list and status showing it, detach
# keeping the journal, attach going on with it, the command following it to
# the end; kill -9 of the daemon mid-conversion, attach going on; EIO on the
# provider (the command's error, the hotzone in doubt refused, a resume
# later); kill during a conversion removes its journal; what attach says
# when the journal is missing.
. "$(dirname "$0")/lib.sh"
need_fuse || { done_testing; exit; }

passfile "$T/pass" "online"
passfile "$T/pass2" "online, new"
Z="-B none"
# Conversions sync often: in a directory of /dev/shm of this test's own.
W=$(mktemp -d /dev/shm/geli-test.reencrypt-online.XXXXXX)
on_exit "rm -rf '$W'"
export GELI_STATE_DIR=$W/state

# ---- fio throughout ---------------------------------------------------------
# fio_loop FILE: fio runs one after the other on FILE until $T/stop exists,
# each writing 4 regions of 8 MiB at random sizes from 512 bytes (partial
# GELI sectors) to 128 KiB and verifying what it wrote as it goes; the runs
# and the failed ones counted in $T/fio.runs and $T/fio.bad.
fio_job() {
	(cd "$T" && fio --name=online --filename="$1" --ioengine=psync \
		--rw=randwrite --bsrange=512-128k --blockalign=512 --numjobs=4 \
		--size=8M --offset_increment=16M --verify=crc32c \
		--verify_backlog=16 --do_verify=1 --verify_fatal=1 \
		--randseed=7 "${@:2}" >>"$T/fio.log" 2>&1)
}
fio_loop() {
	local runs=0 bad=0
	while [ ! -e "$T/stop" ]; do
		fio_job "$1" || bad=$((bad + 1))
		runs=$((runs + 1))
	done
	echo "$runs" >"$T/fio.runs"
	echo "$bad" >"$T/fio.bad"
}
# online_with_fio DESC PROV CMD...: CMD while fio_loop runs on PROV's .eli.
online_with_fio() {
	local desc=$1 prov=$2 pid; shift 2
	rm -f "$T/stop" "$T/fio.log"
	fio_loop "$GELI_RUNDIR/$(basename "$prov").eli" &
	pid=$!
	# (the loop's first run begun: the command runs beside fio, however
	# late the loop starts on a loaded machine)
	wait_for test -e "$T/fio.log"
	run "$@"
	touch "$T/stop"
	wait "$pid"
	check "$desc: the command ends (status $rc)" test "$rc" = 0
	[ "$rc" = 0 ] || diag <"$T/err"
	check "$desc: $(cat "$T/fio.runs") fio runs beside it verify every block" \
		test "$(cat "$T/fio.bad")" = 0 -a "$(cat "$T/fio.runs")" -ge 1
	[ "$(cat "$T/fio.bad")" = 0 ] || grep -iE "verify|bad|error" "$T/fio.log" | head -5 | diag
}
# The last run's blocks read back (fio_job's seed makes them the same).
fio_verifies() { fio_job "$1" --verify_only=1; }

if command -v fio >/dev/null; then
	P=$W/c.img
	mkprov "$P" 72M
	"$GELI" init $Z -e aes-cbc -l 128 -s 4096 -i 1000 -J "$T/pass" "$P" 2>/dev/null
	"$GELI" attach -j "$T/pass" "$P"
	online_with_fio "AES-CBC-128 to AES-XTS-256, new passphrase" "$P" \
		"$GELI" reencrypt -j "$T/pass" -J "$T/pass2" -i 1000 -e aes-xts -l 256 -z 65536 $Z "$P"
	check "status says converted; list names the conversion" \
		eval '[ "$(state_of c.img)" = "ACTIVE, converted" ] && "$GELI" list c.img | grep -q "^Conversion: a new Master Key, 1152 of 1152 hotzones done$"'
	check "the .eli still verifies" fio_verifies "$GELI_RUNDIR/c.img.eli"
	expect_err "setkey is refused until it is attached again" \
		"geli: Provider $P was converted: detach it and attach it again first." \
		"$GELI" setkey -J "$T/pass" "$P"
	"$GELI" detach c.img
	check "on disk: AES-XTS 256, version 7, no journal left" \
		eval '[ "$(dumpfield "$P" ealgo)/$(dumpfield "$P" keylen)/$(dumpfield "$P" version)" = AES-XTS/256/7 ] && [ "$(journals)" = 0 ]'
	run "$GELI" attach -j "$T/pass" "$P"
	check "the old passphrase no longer opens it" test "$rc" != 0
	"$GELI" attach -j "$T/pass2" "$P"
	check "the new one does, and fio's blocks verify" fio_verifies "$GELI_RUNDIR/c.img.eli"
	"$GELI" detach c.img

	P=$W/d.img
	mkprov "$P" 72M
	"$GELI" init $Z -s 512 -i 1000 -J "$T/pass" "$P" 2>/dev/null
	"$GELI" attach -j "$T/pass" "$P"
	online_with_fio "AES-XTS to plain" "$P" "$GELI" reencrypt -D -j "$T/pass" -z 65536 $Z "$P"
	# (its record gone, the daemon still serving: the ended conversion
	# said, not the missing record)
	expect_err "decrypted, still attached: another -D says to attach again" \
		"geli: Provider $P was converted: detach it and attach it again first." \
		"$GELI" reencrypt -D -j "$T/pass" $Z "$P"
	"$GELI" detach d.img
	check "decrypted: no GELI metadata, the last sector zeros" \
		eval '! "$GELI" dump "$P" >/dev/null 2>&1 && [ "$(tail -c 512 "$P" | tr -d "\0" | wc -c)" = 0 ]'
	check "decrypted: fio's blocks verify on the raw provider" fio_verifies "$P"
else
	skip "fio not installed"
fi

# ---- Paused, detached, attached, resumed -----------------------------------------
P=$W/b.img
mkprov "$P" 48M
"$GELI" init $Z -e blowfish -l 128 -i 1000 -J "$T/pass" "$P" 2>/dev/null
"$GELI" attach -j "$T/pass" "$P"
head -c $((48 * 1048576 - 512)) /dev/urandom >"$T/data"
dd if="$T/data" of="$GELI_RUNDIR/b.img.eli" bs=1M conv=fsync status=none
"$GELI" reencrypt -j "$T/pass" -e aes-xts -z 4096 $Z "$P" 2>"$T/int.err" &
pid=$!
wait_for converting b.img
kill -INT "$pid"; wait "$pid"; rc=$?
check "SIGINT of the command pauses it: status 1, and how to go on" \
	eval 'test $rc = 1 && grep -q "^geli: Conversion of $P paused at [0-9.]*%: run .geli reencrypt $P. again to go on.$" "$T/int.err"'
check "status shows the pause" eval '[[ "$(state_of b.img)" == "ACTIVE, conversion paused at "* ]]'
check "list shows what, how far and the journal" \
	eval '"$GELI" list b.img | grep -Eq "^Conversion: a new Master Key, [0-9]+ of 12288 hotzones done$" && "$GELI" list b.img | grep -q "^Journal: $W/state/reencrypt/[0-9a-f]*.journal$"'
check "the .eli reads what was written, half converted" cmp -s "$T/data" "$GELI_RUNDIR/b.img.eli"
expect_err "suspend is refused meanwhile" \
	"geli: Provider $P is being converted: let 'geli reencrypt' finish, or detach it, first." \
	"$GELI" suspend b.img
expect_err "setkey too" \
	"geli: Provider $P is being converted: run 'geli reencrypt $P' to finish." \
	"$GELI" setkey -J "$T/pass2" "$P"
expect_err "a second conversion is refused" \
	"geli: Provider $P is being converted to AES-XTS 128 (a new Master Key): a resume takes the same parameters." \
	"$GELI" reencrypt -j "$T/pass" -D $Z "$P"
"$GELI" detach b.img
check "detached: the record is marked, the journal kept" \
	eval '"$GELI" dump "$P" | grep -q "^   version: 7 (being converted)$" && [ "$(journals)" = 1 ]'
expect_err "attach -r refuses it" \
	"geli: Provider $P is being converted: run 'geli reencrypt $P' to finish.
geli: There was an error with at least one provider." \
	"$GELI" attach -r -j "$T/pass" "$P"
run "$GELI" attach -j "$T/pass" "$P"
check "attach goes on with the conversion" \
	eval 'test $rc = 0 && [[ "$(state_of b.img)" == "ACTIVE, conver"* ]] && grep -q "conversion (a new Master Key) resumed at" "$GELI_RUNDIR/b.img.log"'
expect_ok "geli reencrypt follows it to the end" "$GELI" reencrypt $Z "$P"
check "every byte as written, through the old keys in memory" cmp -s "$T/data" "$GELI_RUNDIR/b.img.eli"
"$GELI" detach b.img
"$GELI" attach -j "$T/pass" "$P"
check "attached again (same passphrase): AES-XTS, every byte as written" \
	eval '"$GELI" list b.img | grep -q "^EncryptionAlgorithm: AES-XTS$" && cmp -s "$T/data" "$GELI_RUNDIR/b.img.eli"'
"$GELI" detach b.img

# ---- kill -9 of the daemon, EIO on the provider -------------------------------------
SHIM=$FAULTSHIM
K=$W/k.img
# slow_attach: K attached with each of its daemon's writes to it 1 ms long
# (the fault shim): the conversion lasts seconds, so that the kills land
# in it however much faster than this test the daemon runs.
slow_attach() {
	if [ -f "$SHIM" ]; then
		env LD_PRELOAD="$(preload_list "$SHIM")" FAULT_PATH="$K" FAULT_WRITE_DELAY_US=1000 \
			"$GELI" attach -j "$T/pass" "$K"
	else
		"$GELI" attach -j "$T/pass" "$K"
	fi
}
mkprov "$K" 32M
"$GELI" init $Z -s 4096 -i 1000 -J "$T/pass" "$K" 2>/dev/null
slow_attach
head -c $((32 * 1048576 - 4096)) /dev/urandom >"$T/kdata"
dd if="$T/kdata" of="$GELI_RUNDIR/k.img.eli" bs=1M conv=fsync status=none
"$GELI" reencrypt -j "$T/pass" -z 4096 $Z "$K" 2>/dev/null &
pid=$!
kills=0
# The last attach went on with it (or found it ended): its end, by itself.
ended() {
	[ "$(state_of k.img)" = "ACTIVE, converted" ] || { [ "$(state_of k.img)" = ACTIVE ] &&
	    [ "$(dumpfield "$K" version)" = 7 ]; }
}
again=0
for i in 1 2 3 4 5; do
	# (until it runs: the command's start, or the attach before, unless
	# that found it ended; a fresh provider looks ended before it starts)
	wait_for eval 'converting k.img || { [ "$again" = 1 ] && ended; }'
	converting k.img || break
	sleep "0.0$((RANDOM % 10))"
	dpid=$(cat "$GELI_RUNDIR/k.img.pid")
	kill_daemon "$dpid" && kills=$((kills + 1))
	slow_attach 2>>"$T/k.err" || break
	again=1
done
wait "$pid"
for i in $(seq 1 600); do
	ended && break
	sleep 0.1
done
check "kill -9 of the daemon mid-conversion ($kills times), each attach going on: it ends" \
	eval 'test "$kills" -ge 2 && ended'
[ -s "$T/k.err" ] && diag <"$T/k.err"
check "every byte as written" cmp -s "$T/kdata" "$GELI_RUNDIR/k.img.eli"
"$GELI" detach k.img

if [ -f "$SHIM" ]; then
	# The daemon's writes to the provider's 6th hotzone fail.
	"$GELI" init $Z -s 4096 -i 1000 -J "$T/pass" "$K" 2>/dev/null
	"$GELI" attach -j "$T/pass" "$K"
	dd if="$T/kdata" of="$GELI_RUNDIR/k.img.eli" bs=1M conv=fsync status=none
	"$GELI" detach k.img
	env LD_PRELOAD="$(preload_list "$SHIM")" FAULT_PATH="$K" \
		FAULT_WRITE_EIO=$((5 * 65536 + 8192)):4096 "$GELI" attach -j "$T/pass" "$K"
	expect_err "EIO on the provider: the command stops, says why and how to go on" \
		"geli: Cannot convert $K: Input/output error. Run 'geli reencrypt $K' again to go on." \
		"$GELI" reencrypt -j "$T/pass" -z 65536 $Z "$K"
	check "status and list show the failure" \
		eval '[ "$(state_of k.img)" = "ACTIVE, conversion failed at 1.0%" ] && "$GELI" list k.img | grep -q "^ConversionError: Input/output error$"'
	check "the hotzone in doubt reads EIO, the others what was written" \
		eval '! dd if="$GELI_RUNDIR/k.img.eli" of=/dev/null bs=64k skip=5 count=1 status=none 2>/dev/null &&
		    cmp -s <(head -c 327680 "$T/kdata") <(head -c 327680 "$GELI_RUNDIR/k.img.eli") &&
		    cmp -s <(tail -c +393217 "$T/kdata") <(tail -c +393217 "$GELI_RUNDIR/k.img.eli")'
	"$GELI" detach k.img
	"$GELI" attach -j "$T/pass" "$K"
	expect_ok "attached again without the fault: the command ends" "$GELI" reencrypt $Z "$K"
	check "every byte as written" cmp -s "$T/kdata" "$GELI_RUNDIR/k.img.eli"
	"$GELI" detach k.img
else
	skip "EIO: the fault shim is not built"
fi

# ---- kill, a lost journal --------------------------------------------------------
"$GELI" attach -j "$T/pass" "$P"
"$GELI" reencrypt -j "$T/pass" -D -z 4096 $Z "$P" 2>/dev/null &
pid=$!
wait_for converting b.img
kill -INT "$pid"; wait "$pid"
J=$(ls "$W"/state/reencrypt/*.journal)
"$GELI" detach b.img
mv "$J" "$T/j.moved"
expect_err "attach of a provider whose journal is missing says what to do" \
	"geli: Provider $P is being converted, and its journal $J cannot be used: No such file or directory. Run 'geli reencrypt' on it (with -F if the journal is elsewhere).
geli: There was an error with at least one provider." \
	"$GELI" attach -j "$T/pass" "$P"
mv "$T/j.moved" "$J"
"$GELI" attach -j "$T/pass" "$P"
"$GELI" kill b.img
check "kill during a conversion removes its journal" eval '[ "$(journals)" = 0 ] && ! attached b.img'
done_testing
