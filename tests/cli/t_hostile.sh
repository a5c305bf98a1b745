#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Hostile metadata with a correct MD5: what FreeBSD refuses is refused at
# once (before a PBKDF2 of 10^9 iterations could start), with FreeBSD's
# words, exit 1 and nothing changed; what FreeBSD accepts is accepted, and
# a long key derivation says so first.  Every command runs under a timeout,
# so that a regression fails instead of hanging.
. "$(dirname "$0")/lib.sh"

# The timeouts' bound: a hang's, never a verdict's.  What is refused at once
# takes well under a second (on a loaded machine under the sanitizers or
# valgrind, seconds); a PBKDF2 of 10^9 iterations started by mistake takes
# minutes even on a fast idle machine, so it still runs into it.
HANG=60

AT=$'\n'"geli: There was an error with at least one provider."
BIG=1000000000
NOTICE="geli: Deriving the key from the passphrase ($BIG iterations); this may take a while."
passfile "$T/pass" "hostile"
passfile "$T/pass2" "hostile too"
good=$T/good
mkprov "$good"
"$GELI" init -B none -i 10 -J "$T/pass" "$good" >/dev/null

# craft SRC DST FIELD=VALUE...: DST is SRC with fields of its last sector's
# record changed and the MD5 made right again.
craft() {
	local src=$1 dst=$2; shift 2
	cp "$src" "$dst"
	python3 - "$dst" "$@" <<'PY'
import hashlib, struct, sys
fields = {'flags': (20, '<I'), 'ealgo': (24, '<H'), 'keylen': (26, '<H'),
          'aalgo': (28, '<H'), 'provsize': (30, '<Q'),
          'sectorsize': (38, '<I'), 'keys': (42, '<B'),
          'iterations': (43, '<i')}
f = open(sys.argv[1], 'r+b'); f.seek(-512, 2); s = bytearray(f.read(512))
for a in sys.argv[2:]:
    k, v = a.split('=')
    off, fmt = fields[k]
    struct.pack_into(fmt, s, off, int(v, 0))
s[495:511] = hashlib.md5(bytes(s[:495])).digest()
f.seek(-512, 2); f.write(s); f.close()
PY
}

# Each case: NAME, the fields, attach's words, setkey's words (empty: FreeBSD's
# setkey does not look at that field, and neither does ours).
H=$T/h
cases=(
	"ealgo 99|ealgo=99|Invalid or unsupported algorithms.|Cannot decrypt Master Key: Invalid argument."
	"keylen 7|keylen=7|Cannot decrypt Master Key for $H (error=22).|Cannot decrypt Master Key: Invalid argument."
	"keylen 0 for AES-XTS|keylen=0|Cannot decrypt Master Key for $H (error=22).|Cannot decrypt Master Key: Invalid argument."
	"AUTH with aalgo 0|flags=0x210 aalgo=0|Invalid or unsupported algorithms.|"
	"AUTH with aalgo 99|flags=0x210 aalgo=99|Invalid or unsupported algorithms.|"
	"sectorsize 0|sectorsize=0|Invalid sector size.|"
	"sectorsize 1000|sectorsize=1000|Invalid sector size.|"
	"sectorsize 2^31|sectorsize=0x80000000|Invalid sector size.|"
	"sectorsize 256|sectorsize=256|Invalid sector size.|"
	"provsize 0|provsize=0|Provider size mismatch.|"
	"provsize above the file's size|provsize=0x200000|Provider size mismatch.|"
	"no keys|keys=0|No valid keys on $H.|No valid keys on $H."
)
for c in "${cases[@]}"; do
	IFS='|' read -r what fields amsg smsg <<<"$c"
	# 10^9 iterations each: a PBKDF2 started by mistake runs into the timeout.
	craft "$good" "$H" $fields iterations=$BIG
	expect_err "attach, $what: refused at once" "geli: $amsg$AT" --same "$H" \
		-- timeout $HANG "$GELI" attach -j "$T/pass" "$H"
	if [ -n "$smsg" ]; then
		expect_err "setkey, $what: refused at once" "geli: $smsg" --same "$H" \
			-- timeout $HANG "$GELI" setkey -j "$T/pass" -J "$T/pass2" "$H"
	fi
	run timeout $HANG "$GELI" dump "$H"
	check "dump, $what: printed all the same" test $rc = 0 -a -s "$T/out" -a ! -s "$T/err"
done
check "dump prints an unknown cipher as FreeBSD does" bash -c \
	'"$0" dump "$1" | grep -qx "     ealgo: unknown"' "$GELI" "$(craft "$good" "$H" ealgo=99; echo "$H")"

# A backup file is the same record.
craft "$good" "$H" ealgo=99 iterations=$BIG
"$GELI" backup "$H" "$T/h.bk"
expect_err "setkey of a backup file with ealgo 99: refused at once" \
	"geli: Cannot decrypt Master Key: Invalid argument." --same "$T/h.bk" \
	-- timeout $HANG "$GELI" setkey -j "$T/pass" -J "$T/pass2" "$T/h.bk"

# No room for a GELI sector beside the metadata (md_provsize is right).
mkprov "$T/small" 4096
tail -c 512 "$good" | dd of="$T/small" bs=512 seek=7 conv=notrunc status=none
craft "$T/small" "$H" provsize=4096 sectorsize=4096 iterations=$BIG
expect_err "attach of a provider with no room for one sector" \
	"geli: Provider $H is too small.$AT" --same "$H" \
	-- timeout $HANG "$GELI" attach -j "$T/pass" "$H"

# What FreeBSD's setkey accepts: the sector size, the HMAC and md_provsize
# play no part in changing a key.
for fields in "sectorsize=0" "flags=0x210 aalgo=0" "provsize=0"; do
	craft "$good" "$H" $fields
	run timeout $HANG "$GELI" setkey -j "$T/pass" -J "$T/pass2" "$H"
	check "setkey with $fields: done, as in FreeBSD" test $rc = 0
	check "... the new key opens the slot" key_opens "$H" 0 -j "$T/pass2"
done

# onetime: a sector larger than FreeBSD's MAXPHYS.
mkprov "$T/ot" 8M
expect_err "onetime -s 2 MiB" "warning: Using sectorsize bigger than the page size!"$'\n'"geli: Invalid sector size." \
	--same "$T/ot" -- timeout $HANG "$GELI" onetime -s 2097152 "$T/ot"

# 10^9 iterations and nothing else wrong: accepted, and the tool says it is
# working.  Killed two seconds after it said so: it must still be deriving.
# (The notice is awaited, not given a fixed time: a slow start is no
# failure, and a slow machine only makes the derivation longer.)
# still_deriving CMD...: as run, rc 124 when CMD still ran when stopped.
still_deriving() {
	local p
	"$@" >"$T/out" 2>"$T/err" </dev/null &
	p=$!
	wait_for grep -qxF "$NOTICE" "$T/err"
	sleep 2
	if alive "$p"; then
		rc=124
		kill "$p"
		wait "$p" 2>/dev/null
	else
		wait "$p"
		rc=$?
	fi
}
craft "$good" "$H" iterations=$BIG
still_deriving "$GELI" attach -C -j "$T/pass" "$H"
check "attach with 10^9 iterations: not refused, still working after 2 s" test $rc = 124
check "... after saying what it is doing" test "$(cat "$T/err")" = "$NOTICE"
still_deriving "$GELI" setkey -j "$T/pass" -J "$T/pass2" "$H"
check "setkey with 10^9 iterations: not refused, still working after 2 s" test $rc = 124
check "... after saying what it is doing" test "$(cat "$T/err")" = "$NOTICE"
run "$GELI" attach -C -j "$T/pass" "$good"
check "an ordinary count: no notice" test $rc = 0 -a ! -s "$T/err"

# resume of a suspended provider whose record was changed underneath: the
# kernel looks at md_keys and the slots' cipher (and userland at
# md_provsize); the device keeps everything else it was attached with.
if need_fuse; then
	r=$T/res.img
	mkprov "$r" 4M
	"$GELI" init -B none -i 10 -J "$T/pass" "$r" >/dev/null
	cp "$r" "$T/res.orig"
	"$GELI" attach -j "$T/pass" "$r"
	"$GELI" suspend res.img
	restore_md() { tail -c 512 "$T/res.orig" | dd of="$r" bs=512 seek=$((8191)) conv=notrunc status=none; }
	for c in "ealgo=99|Cannot decrypt Master Key for $r (error=22)." \
	    "keylen=7|Cannot decrypt Master Key for $r (error=22)." \
	    "keys=0|No valid keys on $r." \
	    "provsize=0|Provider size mismatch."; do
		IFS='|' read -r fields msg <<<"$c"
		craft "$T/res.orig" "$T/res.h" $fields iterations=$BIG
		tail -c 512 "$T/res.h" | dd of="$r" bs=512 seek=8191 conv=notrunc status=none
		expect_err "resume, $fields: refused at once" "geli: $msg" --same "$r" \
			-- timeout $HANG "$GELI" resume -j "$T/pass" "$r"
	done
	craft "$T/res.orig" "$T/res.h" sectorsize=0
	tail -c 512 "$T/res.h" | dd of="$r" bs=512 seek=8191 conv=notrunc status=none
	expect_ok "resume with sectorsize 0 on disk: done, as in FreeBSD" \
		timeout $HANG "$GELI" resume -j "$T/pass" "$r"
	restore_md
	"$GELI" detach res.img
fi

done_testing
