#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# suite: plain
# geli reencrypt survives any crash (docs/reencrypt.md).  Each conversion
# (a new Master Key, Blowfish to AES-XTS, plain to GELI, GELI to plain,
# GELI to LUKS2 with a detached header) at
# S = 512 and 4096 runs once under strace, which records its writes and
# syncs to the provider and the journal; powerloss.py rebuilds 50 states a
# power loss could leave (everything up to a file's last sync, any subset
# of its writes after it), and in each the same command runs to the end
# (unless the journal was removed: then it had ended).
# The provider must then hold the original plaintext.  Then kill -9 at 20
# moments of one run, each followed by the command again; then EIO on the
# provider and on the journal: a clear error, and a resume that ends well.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/luks2_lib.sh"

command -v strace >/dev/null || { skip "strace is not installed"; done_testing; exit; }
PL=$(dirname "$0")/powerloss.py
# The conversions sync often: their files live in memory (a directory of
# /dev/shm of this test's own, removed at the end).
W=$(mktemp -d /dev/shm/geli-test.reencrypt.XXXXXX)
on_exit "rm -rf '$W'"
passfile "$T/pass" "reencrypt crash"
passfile "$T/pass2" "the new key"
SIZE=$((1 << 20))
Z="-B none -z 65536"
# 50 power-loss states of each; 12 in a sanitized build, whose pass is for
# memory errors on the way (the plain pass has the 50).
NSTATES=${GELI_SANITIZED:+12}
NSTATES=${NSTATES:-50}
NKILLS=${GELI_SANITIZED:+6}
NKILLS=${NKILLS:-20}

# plain_image FILE S: random data in what will be the data area, zeros
# after it (the metadata's room), its digest in $T/FILE.sum.
plain_image() {
	local e=$(( (SIZE - 512) / $2 * $2 ))
	head -c "$e" /dev/urandom >"$1"
	truncate -s "$SIZE" "$1"
	head -c "$e" "$1" | sha256sum >"$1.sum"
}

# holds_plain PROV PLAIN S KEYOPTS...: PROV (GELI, or plain with -) holds
# PLAIN's data; a GELI provider is decrypted to plain (on a copy) first.
holds_plain() {
	local prov=$1 plain=$2 s=$3 e=$(( (SIZE - 512) / $3 * $3 )); shift 3
	if [ "$1" != - ]; then
		cp "$prov" "$prov.v" && rm -f "$prov.vj"
		"$GELI" reencrypt -D "$@" $Z -F "$prov.vj" "$prov.v" >/dev/null 2>&1 || return 1
		prov=$prov.v
	fi
	[ "$(head -c "$e" "$prov" | sha256sum)" = "$(cat "$plain.sum")" ] &&
	    [ "$(tail -c $((SIZE - e)) "$prov" | tr -d '\0' | wc -c)" = 0 ]
}

# luks2_holds_plain PROV HDR PLAIN S: the LUKS2 volume PROV (its header
# HDR, opened by the passphrase) holds PLAIN's data, read with cryptsetup's
# volume key and Python's AES-XTS, not the project's code; after it, where
# GELI's record was, zeros on the disk.
luks2_holds_plain() {
	local e=$(( (SIZE - 512) / $4 * $4 )) vk
	vk=$(volume_key "$2" "$(nonl "$T/pass")")
	[ ${#vk} = 128 ] && luks2_plain "$1" "$vk" "$4" "$1.dec" "$e" &&
	    [ "$(sha256sum <"$1.dec")" = "$(cat "$3.sum")" ] &&
	    [ "$(tail -c $((SIZE - e)) "$1" | tr -d '\0' | wc -c)" = 0 ]
}

# conv NAME S: the conversion's options ($opts), its provider before
# ($T/NAME-S/p) and the keys that open the result ($after).
conv() {
	local d=$W/$1-$2
	mkdir -p "$d"
	plain_image "$d/plain" "$2"
	cp "$d/plain" "$d/p"
	case $1 in
	encrypt) opts="-E -J $T/pass -i 1000 -s $2"; after="-j $T/pass" ;;
	*)
		if [ "$1" = cipher ]; then
			"$GELI" reencrypt -E -J "$T/pass" -i 1000 -s "$2" -e blowfish -l 128 \
				$Z -F "$d/j0" "$d/p" >/dev/null 2>&1
		else
			"$GELI" reencrypt -E -J "$T/pass" -i 1000 -s "$2" $Z -F "$d/j0" "$d/p"
		fi
		case $1 in
		rekey) opts="-j $T/pass"; after="-j $T/pass" ;;
		cipher) opts="-j $T/pass -e aes-xts -l 256 -J $T/pass2 -i 1000"; after="-j $T/pass2" ;;
		decrypt) opts="-D -j $T/pass"; after="-" ;;
		luks2) opts="-t luks2 -j $T/pass -i 1000"; after=luks2 ;;
		esac ;;
	esac
}

# holds PROV DIR: PROV, converted by $opts in directory DIR (its LUKS2
# header there), holds the original plaintext ($d/plain).
holds() {
	if [ "$after" = luks2 ]; then luks2_holds_plain "$1" "$2/hdr" "$d/plain" "$S"; else
		holds_plain "$1" "$d/plain" "$S" $after; fi
}
# To LUKS2: the header is a file (-H DIR/hdr) written by libcryptsetup and
# synced before the journal is made, and never written after it; its
# writes are not among the states' (a state that has the journal, or whose
# journal was removed at the end, has the traced run's header; one before
# the journal has none: the power went before the header was made, or the
# command's "exists: remove it" was followed).  A journal with its header
# written and the provider not yet marked: the command removes both and
# starts again; GELI's record gone and the journal not yet: it removes the
# journal (the header names it).
for S in 512 4096; do
	for c in rekey cipher encrypt decrypt luks2; do
		conv "$c" "$S"
		d=$W/$c-$S
		cp "$d/p" "$d/base"
		hopt=()
		[ "$c" = luks2 ] && hopt=(-H "$d/hdr")
		# LeakSanitizer cannot work under ptrace (a sanitized build).
		ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" strace -f -qq -xx -s 300000 -e trace=openat,close,pwrite64,fsync,fdatasync,unlink \
			-o "$d/trace" "$GELI" reencrypt $opts "${hopt[@]}" $Z -F "$d/j" "$d/p" >/dev/null 2>"$d/err"
		check "$c S=$S: the traced conversion ends" test $? = 0 -a ! -s "$d/err"
		check "$c S=$S: and leaves the original plaintext" holds "$d/p" "$d"
		if [ "$c" = encrypt ]; then k=-; else k="-j $T/pass"; fi
		holds_plain "$d/base" "$d/plain" "$S" $k ||
			nok "$c S=$S: the provider before holds the plaintext"
		nev=$(python3 "$PL" "$d/trace" "$d/st" "$NSTATES" "$S" p="$d/base" j=-)
		bad=0 nst=0
		for st in "$d"/st/*/; do
			st=${st%/}
			nst=$((nst + 1))
			hopt=()
			if [ "$c" = luks2 ]; then
				hopt=(-H "$st/hdr")
				{ [ -e "$st/j" ] || [ -e "$st/ended" ]; } && cp "$d/hdr" "$st/hdr"
				# A journal made and never written: the header
				# before it stays, which the command will not
				# overwrite; it says so, and it is removed.
				if [ -e "$st/j" ] && [ -z "$(tr -d '\0' <"$st/j" | head -c 1)" ]; then
					"$GELI" reencrypt $opts "${hopt[@]}" $Z -F "$st/j" "$st/p" >"$st/out" 2>&1 ||
						grep -q "^geli: LUKS2 header $st/hdr exists: remove it" "$st/out" ||
						{ bad=$((bad + 1)); echo "state $(cat "$st/at"): $(tail -1 "$st/out")" | diag; }
					rm -f "$st/hdr"
				fi
			fi
			# Once the journal is removed the conversion has ended:
			# the command again would be a new one.  The end is the
			# traced run's, byte for byte, when the state's journal
			# already held the new record and key (the data path is
			# deterministic); else (a new start) decrypted and checked.
			if { [ ! -e "$st/ended" ] &&
			    ! "$GELI" reencrypt $opts "${hopt[@]}" $Z -F "$st/j" "$st/p" >"$st/out" 2>&1; } ||
			    { ! cmp -s "$st/p" "$d/p" && ! holds "$st/p" "$st"; }; then
				bad=$((bad + 1))
				echo "state $(cat "$st/at"): $(tail -1 "$st/out")" | diag
			fi
		done
		check "$c S=$S: $nst power-loss states of $nev events resumed to the original plaintext" \
			test "$bad" = 0 -a "$nst" -ge "$NSTATES"
		[ "$bad" = 0 ] && rm -rf "$d/st" "$d/trace"
	done
done

# kill -9 at 20 moments of one conversion (6 in a sanitized build) (of 96 MiB in 8 KiB hotzones, a
# second or so), each followed by the same command, which resumes; at the
# end the plaintext.
SIZE=$((96 << 20))
ZK="-B none -z 8192"
for c in rekey encrypt decrypt; do
	conv "$c" 4096
	d=$W/$c-4096
	kills=0 runs=0 st=1
	while [ "$kills" -lt "$NKILLS" ] && [ "$runs" -lt 80 ] && [ "$st" != 0 ]; do
		"$GELI" reencrypt $opts $ZK -F "$d/j" "$d/p" >/dev/null 2>&1 &
		pid=$!
		sleep "$(printf "0.%03d" $((RANDOM % 60)))"
		kill -9 "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		st=$?
		[ "$st" = 137 ] && kills=$((kills + 1))
		runs=$((runs + 1))
	done
	# The last run may have ended it; else the command once more.
	[ "$st" = 0 ] || "$GELI" reencrypt $opts $ZK -F "$d/j" "$d/p" >"$d/out" 2>&1
	check "$c: $kills kill -9 in $runs runs, each followed by the command again: it ends" \
		test $? = 0 -a "$kills" -ge "$NKILLS"
	check "$c: and the provider holds the original plaintext" holds_plain "$d/p" "$d/plain" 4096 $after
	check "$c: no journal is left" test ! -e "$d/j"
done

# EIO: on the provider's writes, then on the journal's syncs.  A clear error,
# the journal kept, and the command again (without the fault) ends well.
SHIM=$FAULTSHIM
if [ -f "$SHIM" ]; then
	conv rekey 512
	d=$W/rekey-512
	run env LD_PRELOAD="$(preload_list "$SHIM")" FAULT_PATH="$d/p" FAULT_WRITE_EIO=$((5 << 20)):4096 \
		"$GELI" reencrypt $opts $Z -F "$d/j" "$d/p"
	check "EIO on the provider: status 1" test "$rc" = 1
	check "EIO on the provider: says where, and how to go on" \
		grep -q "^geli: Cannot convert $d/p at byte [0-9]*: Input/output error. Run 'geli reencrypt $d/p' again to resume.$" "$T/err"
	check "EIO on the provider: the provider is marked, the journal kept" \
		bash -c "'$GELI' dump '$d/p' 2>&1 | grep -q 'being converted' && test -s '$d/j'"
	run env LD_PRELOAD="$(preload_list "$SHIM")" FAULT_PATH="$d/j" FAULT_FSYNC_EIO=1 \
		"$GELI" reencrypt $opts $Z -F "$d/j" "$d/p"
	check "EIO on the journal's sync: status 1 and a clear error" \
		bash -c "test '$rc' = 1 && grep -q '^geli: Cannot .* conversion of $d/p.*: Input/output error' '$T/err'"
	expect_ok "EIO: the command again, without the fault, ends" \
		"$GELI" reencrypt $opts $Z -F "$d/j" "$d/p"
	check "EIO: the provider holds the original plaintext" holds_plain "$d/p" "$d/plain" 512 $after
else
	skip "EIO: the fault shim is not built"
fi
done_testing
