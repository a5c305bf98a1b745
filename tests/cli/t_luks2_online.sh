#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# geli reencrypt -t luks2 on attached providers (docs/reencrypt.md, "To
# LUKS2"): the daemon converts every sector while the .eli is in use, GELI's
# record and the journal stay until the command has checked the header and
# put it in place, then the daemon ends it; the .eli serves the same bytes
# throughout.  Proven as t_luks2 proves offline conversions: cryptsetup reads
# each header and gives the volume key for the carried key material, and
# Python's cryptography decrypts the provider to what the .eli held at the
# end.  fio writes and verifies through the .eli during a conversion; the
# command killed (-9) halfway, the daemon converting on to the last sector
# and waiting, the same command ending it (it asks for the key again); a
# provider detached halfway, attached again (the daemon goes on) and, once
# converted, detached and ended offline; a read-only provider refused, no
# header left.  (The header on the disk with the partition attached:
# t_luks2_disk; dm-crypt itself: the guest lane.)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/luks2_lib.sh"
need_fuse || { done_testing; exit; }
need_luks2_tools || { done_testing; exit; }
passfile "$T/pass" "luks2 online"
head -c 64 /dev/urandom >"$T/key1"
# slow_attach PROV ARGS...: PROV attached by a daemon slowed (lib.sh).
slow_attach() { slowed "$1" "$GELI" attach "${@:2}" "$1"; }
# snap NAME: what NAME.img's .eli holds now, into NAME.ref (read through
# the daemon, past the page cache).
snap() {
	dd if="$GELI_RUNDIR/$1.img.eli" of="$T/$1.ref" bs=1M iflag=direct status=none
}

# ---- Beside fio ----------------------------------------------------------------------
# AES-CBC 128, 4096-byte sectors, a passphrase: converted while fio writes
# 4 regions of 4 MiB at sizes from 512 bytes to 128 KiB and verifies them,
# run after run, until the command has ended.
mkprov "$T/a.img" 40M
"$GELI" init -B none -e aes-cbc -l 128 -s 4096 -i 1000 -J "$T/pass" "$T/a.img" >/dev/null
"$GELI" attach -j "$T/pass" "$T/a.img"
dd if=/dev/urandom of="$GELI_RUNDIR/a.img.eli" bs=1M count=39 conv=fsync status=none
if command -v fio >/dev/null; then
	fio_job() {
		(cd "$T" && fio --name=luks2 --filename="$GELI_RUNDIR/a.img.eli" \
			--ioengine=psync --rw=randwrite --bsrange=512-128k \
			--blockalign=512 --numjobs=4 --size=4M --offset_increment=8M \
			--verify=crc32c --verify_backlog=16 --do_verify=1 \
			--verify_fatal=1 --randseed=9 "$@" >>"$T/fio.log" 2>&1)
	}
	(runs=0 bad=0
	 while [ ! -e "$T/stop" ]; do
		fio_job || bad=$((bad + 1))
		runs=$((runs + 1))
	 done
	 echo "$runs $bad" >"$T/fio.result") &
	fpid=$!
	wait_for test -e "$T/fio.log"
fi
run "$GELI" reencrypt -t luks2 -B none -H "$T/a.hdr" -i 1000 -j "$T/pass" -z 65536 "$T/a.img"
if [ -n "${fpid:-}" ]; then
	touch "$T/stop"
	wait "$fpid"
	read -r runs bad <"$T/fio.result"
	check "fio: $runs runs beside the conversion verify every block" test "$bad" = 0 -a "$runs" -ge 1
	[ "$bad" = 0 ] || grep -iE "verify|bad|error" "$T/fio.log" | head -5 | diag
	check "... and the last run's blocks verify after it" fio_job --verify_only=1
fi
check "AES-CBC 128/4096 attached: the conversion ends with status 0" test "$rc" = 0
[ "$rc" = 0 ] || diag <"$T/err"
check "... the output: the .eli serves it until it is detached" grep -qx "a.img.eli serves it until it is detached." "$T/out"
check "... and crypttab's line, with header=" \
	grep -qx "/etc/crypttab: a.img.eli $T/a.img none luks,header=$T/a.hdr" "$T/out"
check "... status says converted, no journal left" \
	eval '[ "$(state_of a.img)" = "ACTIVE, converted" ] && [ "$(journals)" = 0 ]'
snap a
"$GELI" detach a.img
converted a "$T/a.hdr" "$(nonl "$T/pass")" 4096 "online, beside fio"

if [ -f "$FAULTSHIM" ]; then
	# ---- The command killed halfway ------------------------------------------------------
	# Blowfish 448, 512-byte sectors, a keyfile: the daemon converts on to the
	# last sector and waits with GELI's record and the journal; the same
	# command ends it.
	mkprov "$T/b.img" 24M
	"$GELI" init -B none -e blowfish -l 448 -P -K "$T/key1" "$T/b.img" >/dev/null
	slow_attach "$T/b.img" -p -k "$T/key1"
	dd if=/dev/urandom of="$GELI_RUNDIR/b.img.eli" bs=1M count=23 conv=fsync status=none
	"$GELI" reencrypt -t luks2 -B none -H "$T/b.hdr" -i 1000 -p -k "$T/key1" -z 65536 "$T/b.img" \
		>"$T/b.out" 2>&1 </dev/null &
	cpid=$!
	wait_for begun b.img "$cpid"
	check "killed: the conversion was under way" converting b.img
	kill -9 "$cpid" 2>/dev/null
	wait "$cpid" 2>/dev/null
	check "killed: the daemon converts on to the last sector, then waits (status)" wait_for waiting b.img
	check "... GELI's record stays, marked, and the journal" \
		eval '"$GELI" dump "$T/b.img" | grep -q "journal:" && [ "$(journals)" = 1 ]'
	check "... list names its journal" grep -q "^Journal: $GELI_STATE_DIR/reencrypt/" <("$GELI" list b.img)
	head -c 64 /dev/urandom >"$T/key2"
	expect_err "... the end asked with another keyfile: the wrong key, refused" \
		"geli: Wrong key for $T/b.img." \
		"$GELI" reencrypt -t luks2 -H "$T/b.hdr" -p -k "$T/key2" "$T/b.img"
	check "... still waiting, the journal there" eval 'waiting b.img && [ "$(journals)" = 1 ]'
	run "$GELI" reencrypt -t luks2 -H "$T/b.hdr" -p -k "$T/key1" "$T/b.img"
	check "... the same command ends it" test "$rc" = 0
	[ "$rc" = 0 ] || diag <"$T/err"
	check "... converted, no journal left" eval '[ "$(state_of b.img)" = "ACTIVE, converted" ] && [ "$(journals)" = 0 ]'
	snap b
	"$GELI" detach b.img
	converted b "$T/b.hdr" "$T/key1" 512 "online, its command killed"

	# ---- Detached halfway, attached again, ended offline ---------------------------------
	mkprov "$T/c.img" 24M
	"$GELI" init -B none -e camellia-cbc -l 256 -s 4096 -i 1000 -J "$T/pass" "$T/c.img" >/dev/null
	slow_attach "$T/c.img" -j "$T/pass"
	dd if=/dev/urandom of="$GELI_RUNDIR/c.img.eli" bs=1M count=23 conv=fsync status=none
	snap c
	"$GELI" reencrypt -t luks2 -B none -H "$T/c.hdr" -i 1000 -j "$T/pass" -z 65536 "$T/c.img" \
		>"$T/c.out" 2>&1 </dev/null &
	cpid=$!
	wait_for begun c.img "$cpid"
	check "detached: the conversion was under way" converting c.img
	"$GELI" detach c.img
	wait "$cpid"
	crc=$?
	check "detached halfway: the command says so and fails" \
		eval '[ "$crc" != 0 ] && grep -q "was detached during its conversion" "$T/c.out"'
	check "... the journal stays" test "$(journals)" = 1
	"$GELI" attach -j "$T/pass" "$T/c.img"
	check "attached again: the daemon goes on to the last sector and waits" wait_for waiting c.img
	check "... the .eli reads what it held" cmp -s "$GELI_RUNDIR/c.img.eli" "$T/c.ref"
	"$GELI" detach c.img
	run "$GELI" reencrypt -t luks2 -H "$T/c.hdr" -j "$T/pass" "$T/c.img"
	check "detached, ended offline by the same command" test "$rc" = 0
	[ "$rc" = 0 ] || diag <"$T/err"
	check "... no journal left" test "$(journals)" = 0
	converted c "$T/c.hdr" "$(nonl "$T/pass")" 4096 "online, detached, ended offline"
else
	skip "killed and detached halfway: faultshim.so not built"
fi

# ---- Refused ------------------------------------------------------------------------
mkprov "$T/r.img" 8M
"$GELI" init -B none -i 1000 -J "$T/pass" "$T/r.img" >/dev/null
"$GELI" attach -r -j "$T/pass" "$T/r.img"
expect_err "read-only: refused by the daemon" \
	"geli: Provider $T/r.img is attached read-only: it cannot be converted." \
	--same "$T/r.img" -- "$GELI" reencrypt -t luks2 -B none -H "$T/r.hdr" -i 1000 -j "$T/pass" "$T/r.img"
check "... and no header is left" test ! -e "$T/r.hdr"
"$GELI" detach r.img
done_testing
