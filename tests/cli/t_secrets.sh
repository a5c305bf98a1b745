#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# suite: plain
# Secrets, seen from outside: the attach daemon's memory is locked, it
# dumps no core and is not dumpable (its server and its keeper); after attach neither the passphrase, nor the keyfile's
# bytes, nor the user key are anywhere in its memory, its argv or its
# environment; the Master Key is, until suspend wipes it; backup files are
# 0600.  The keys to look for are computed here, independently (Python's
# hashlib/hmac and openssl), from the provider's metadata.
. "$(dirname "$0")/lib.sh"
MEMSCAN=$(dirname "$0")/memscan.py

if ! command -v openssl >/dev/null || ! command -v python3 >/dev/null; then
	skip "needs python3 and openssl"; done_testing; exit
fi

# ---- Backup files are 0600, even over an existing file ---------------------
passfile "$T/pass" "a passphrase to look for in memory 7f3a"
mkprov "$T/b" 1M
geli init -B "$T/b.init-bk" -i 1000 -J "$T/pass" "$T/b" >/dev/null
check "init -B: the backup is 0600" test "$(stat -c %a "$T/b.init-bk")" = 600
install -m 644 /dev/null "$T/b.bk"
expect_ok "backup over an existing 0644 file" "$GELI" backup "$T/b" "$T/b.bk"
check "backup: the file is 0600 now" test "$(stat -c %a "$T/b.bk")" = 600
install -m 666 /dev/null "$T/b.bk2"
geli init -B "$T/b.bk2" -i 1000 -J "$T/pass" "$T/b" >/dev/null
check "init -B over an existing 0666 file: 0600" test "$(stat -c %a "$T/b.bk2")" = 600

# ---- What the command line leaves behind when it exits ---------------------
# exitscan.so counts, at exit, the patterns still in the process's memory.
scan=${GELI_EXITSCAN:-${GELI_BUILD:-}/tests/fault/exitscan.so}
preload=$(preload_list "$scan")
hex() { od -An -tx1 | tr -d ' \n'; }
# left PATTERNFILE CMD...: CMD under the scan; its counts in $left.
left() {
	local pats=$1; shift
	rm -f "$T/left"
	LD_PRELOAD=$preload EXITSCAN_PATTERNS=$pats EXITSCAN_OUT=$T/left \
		"$@" >/dev/null 2>&1 </dev/null
	left=$(cat "$T/left" 2>/dev/null)
}
if [ -f "$scan" ]; then
	passfile "$T/cpass" "command line secret 91c2"
	passfile "$T/cpass2" "the new one 55e0"
	head -c 64 /dev/urandom >"$T/ckf"
	head -c 64 /dev/urandom >"$T/ckf2"
	{ head -n 1 "$T/cpass" | tr -d '\n' | hex; echo; hex <"$T/ckf"; echo
	  head -n 1 "$T/cpass2" | tr -d '\n' | hex; echo; hex <"$T/ckf2"; echo
	  printf '%s' "$T/c" | hex; echo; } >"$T/cpats"
	mkprov "$T/c" 1M
	left "$T/cpats" "$GELI" init -B none -i 1000 -K "$T/ckf" -J "$T/cpass" "$T/c"
	check "init: the provider's path, from argv, is found (the scan works: $left)" \
		test "$(echo "$left" | awk '{ print $5 }')" -ge 1
	check "init leaves neither the passphrase nor the keyfile in its memory ($left)" \
		test "$(echo "$left" | awk '{ print $1 + $2 }')" = 0
	left "$T/cpats" "$GELI" attach -C -k "$T/ckf" -j "$T/cpass" "$T/c"
	check "attach -C leaves neither in its memory ($left)" \
		test -n "$left" -a "$(echo "$left" | awk '{ print $1 + $2 }')" = 0
	left "$T/cpats" "$GELI" setkey -n 1 -k "$T/ckf" -j "$T/cpass" -K "$T/ckf2" -J "$T/cpass2" "$T/c"
	check "setkey leaves no old or new passphrase or keyfile in its memory ($left)" \
		test -n "$left" -a "$(echo "$left" | awk '{ print $1 + $2 + $3 + $4 }')" = 0
	check "... and the new key opens slot 1" key_opens "$T/c" 1 -k "$T/ckf2" -j "$T/cpass2"
else
	skip "no exitscan.so (build the tests)"
fi

need_fuse || { done_testing; exit; }

# The user key and the Master Key of slot 0 (AES-XTS-128: the slot is
# AES-128-CBC under HMAC-SHA512(UK, 0x01)), and memory scans of a process.
cat >"$T/keys.py" <<'PY'
import hashlib, hmac, struct, subprocess, sys
prov, passfile, keyfile = sys.argv[1:4]
with open(prov, 'rb') as f:
    f.seek(-512, 2)
    s = f.read(512)
iters = struct.unpack_from('<i', s, 43)[0]
salt, slot0 = s[47:111], s[111:303]
kf = open(keyfile, 'rb').read()
pw = open(passfile, 'rb').read().split(b'\n')[0]
ukey = hmac.new(b'', kf + hashlib.pbkdf2_hmac('sha512', pw, salt, iters),
                hashlib.sha512).digest()
ek = hmac.new(ukey, b'\x01', hashlib.sha512).digest()
plain = subprocess.run(['openssl', 'enc', '-d', '-aes-128-cbc', '-nopad', '-K',
                        ek[:16].hex(), '-iv', '00' * 16], input=slot0,
                       capture_output=True, check=True).stdout
print(ukey.hex(), plain[:128].hex())
PY

head -c 77 /dev/urandom >"$T/kf"
mkprov "$T/p" 4M
geli init -B none -i 1000 -K "$T/kf" -J "$T/pass" "$T/p" >/dev/null
read -r ukey mkey <<<"$(python3 "$T/keys.py" "$T/p" "$T/pass" "$T/kf")"
passhex=$(head -n 1 "$T/pass" | tr -d '\n' | od -An -tx1 | tr -d ' \n')
kfhex=$(od -An -tx1 "$T/kf" | tr -d ' \n')
expect_ok "attach with a keyfile and a passphrase" \
	"$GELI" attach -k "$T/kf" -j "$T/pass" "$T/p"
pid=$(cat "$GELI_RUNDIR/p.pid")
check "the daemon's memory is locked (VmLck > 0)" \
	test "$(awk '/^VmLck:/ { print $2 }' "/proc/$pid/status")" -gt 0
check "it dumps no core (core size limit 0)" \
	bash -c 'grep -E "^Max core file size +0 +0 " "/proc/$0/limits" >/dev/null' "$pid"
read -r n_pass n_kf n_uk n_mk <<<"$(python3 "$MEMSCAN" "$pid" "$passhex" "$kfhex" "$ukey" "$mkey")"
check "the scanner finds the Master Key the daemon holds (the scan works)" test "$n_mk" -ge 1
check "no passphrase in the daemon's memory" test "$n_pass" = 0
check "no keyfile contents in the daemon's memory" test "$n_kf" = 0
check "no user key in the daemon's memory" test "$n_uk" = 0
check "no passphrase in its argv" bash -c '! grep -qa "memory 7f3a" "/proc/$0/cmdline"' "$pid"
check "no passphrase in its environment" bash -c '! grep -qa "memory 7f3a" "/proc/$0/environ"' "$pid"
# The keeper (src/attach/keeper.h) holds the Master Key for a new server.
kpid=$(keeper_of "$pid")
check "the daemon's server has a keeper" test -n "$kpid"
check "the keeper's memory is locked (VmLck > 0)" \
	test "$(awk '/^VmLck:/ { print $2 }' "/proc/$kpid/status")" -gt 0
check "the keeper dumps no core" \
	bash -c 'grep -E "^Max core file size +0 +0 " "/proc/$0/limits" >/dev/null' "$kpid"
read -r n_pass n_kf n_uk n_mk <<<"$(python3 "$MEMSCAN" "$kpid" "$passhex" "$kfhex" "$ukey" "$mkey")"
check "no passphrase, keyfile contents or user key in the keeper's memory" \
	test "$n_pass" = 0 -a "$n_kf" = 0 -a "$n_uk" = 0
if grep -q "the key waits in secret memory" "$GELI_RUNDIR/p.log"; then
	check "the keeper's Master Key is in memfd_secret memory, which not even root reads (/proc/PID/mem)" \
		test "$n_mk" = 0
	check "... (the keeper maps it)" grep -q secretmem "/proc/$kpid/maps"
else
	check "the keeper holds the Master Key in locked memory (no memfd_secret here)" test "$n_mk" -ge 1
fi
check "no passphrase in the keeper's argv or environment" \
	bash -c '! grep -qa "memory 7f3a" "/proc/$0/cmdline" "/proc/$0/environ"' "$kpid"
expect_ok "suspend" "$GELI" suspend p
read -r n_pass n_kf n_uk n_mk <<<"$(python3 "$MEMSCAN" "$kpid" "$passhex" "$kfhex" "$ukey" "$mkey")"
check "after suspend, no Master Key in the keeper's readable memory either" test "$n_mk" = 0
read -r n_pass n_kf n_uk n_mk <<<"$(python3 "$MEMSCAN" "$pid" "$passhex" "$kfhex" "$ukey" "$mkey")"
check "after suspend, no Master Key in the daemon's memory" test "$n_mk" = 0
ivk=${mkey:0:128} dk=${mkey:128:128}
read -r n_ivk n_dk <<<"$(python3 "$MEMSCAN" "$pid" "$ivk" "$dk")"
# Under valgrind the guest's registers are memory of the process (the
# vector registers that last copied a key half among them): not the
# daemon's to wipe.
if [ -n "${GELI_VALGRIND:-}" ]; then
	skip "under valgrind the CPU's registers are in the scanned memory"
else
	check "... nor its IV Key or Data Key half" test "$n_ivk" = 0 -a "$n_dk" = 0
fi
printf '%s\n' "a passphrase to look for in memory 7f3a" >"$T/pass2"
expect_ok "resume" "$GELI" resume -k "$T/kf" -j "$T/pass2" "$T/p"
read -r n_pass n_kf n_uk n_mk <<<"$(python3 "$MEMSCAN" "$pid" "$passhex" "$kfhex" "$ukey" "$mkey")"
check "after resume: the Master Key is back, the user key is not kept" \
	test "$n_mk" -ge 1 -a "$n_uk" = 0 -a "$n_pass" = 0
expect_ok "detach" "$GELI" detach p.eli
# Not dumpable.  As root the kernel tells that apart only for a process
# without CAP_SYS_PTRACE: it may open /proc/PID/mem of a dumpable process
# with no more capabilities than its own, never of one that is not dumpable
# (ptrace_may_access).  So the daemon here is started without that
# capability, and so are the probe and a dumpable control process.
noptrace=(setpriv --inh-caps=-sys_ptrace --bounding-set=-sys_ptrace)
opens_mem() {
	"${noptrace[@]}" python3 -c 'import sys; open("/proc/%s/mem" % sys.argv[1], "rb")' "$1" 2>/dev/null
}
mem_refused() { ! opens_mem "$1"; }
mkprov "$T/d" 1M
geli init -B none -P -K "$T/kf" "$T/d" >/dev/null
expect_ok "attach by a process without CAP_SYS_PTRACE" "${noptrace[@]}" "$GELI" attach -p -k "$T/kf" "$T/d"
"${noptrace[@]}" sleep 60 </dev/null >/dev/null 2>&1 &
ctl=$!
# (probed once it is sleep: before, it may still be this shell's fork, with
# CAP_SYS_PTRACE, for as long as a slow machine makes it)
wait_for grep -qx sleep "/proc/$ctl/comm"
check "the probe opens a dumpable process's /proc/PID/mem (the probe works)" opens_mem "$ctl"
kill "$ctl"
check "the daemon is not dumpable: the probe cannot open its /proc/PID/mem" \
	mem_refused "$(cat "$GELI_RUNDIR/d.pid")"
check "... nor its keeper's" mem_refused "$(keeper_of "$(cat "$GELI_RUNDIR/d.pid")")"
expect_ok "detach" "$GELI" detach d.eli
done_testing
