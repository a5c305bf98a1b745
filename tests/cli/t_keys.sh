#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# suite: plain
# Key components: keyfiles and passfiles in every combination that must work
# or fail (FreeBSD init_test.sh init_J and friends), stdin, the terminal
# prompt, iteration counts and their rules.
. "$(dirname "$0")/lib.sh"

prov=$T/prov
head -c 64 /dev/urandom >"$T/kf0"
head -c 100 /dev/urandom >"$T/kf1"
passfile "$T/pf0" "first part"
passfile "$T/pf1" "second part"
cat "$T/kf0" "$T/kf1" >"$T/kf01"

# -J/-K in order; everything must come back in the same order.
mkprov "$prov"
expect_ok "init with two passfiles and two keyfiles" \
	"$GELI" init -B none -i 100 -J "$T/pf0" -J "$T/pf1" -K "$T/kf0" -K "$T/kf1" "$prov"
check "all four parts open the key" key_opens "$prov" 0 -j "$T/pf0" -j "$T/pf1" -k "$T/kf0" -k "$T/kf1"
check "the keyfiles concatenated are the same key" key_opens "$prov" 0 -j "$T/pf0" -j "$T/pf1" -k "$T/kf01"
check "keyfile from stdin" with_stdin "$T/kf01" key_opens "$prov" 0 -j "$T/pf0" -j "$T/pf1" -k -
passfile "$T/pf01" "first partsecond part"
check "the passfiles' first lines joined are one passphrase" key_opens "$prov" 0 -j "$T/pf01" -k "$T/kf01"
printf 'first partsecond part\nignored second line\n' >"$T/pf2lines"
check "only the first line of a passfile counts" key_opens "$prov" 0 -j "$T/pf2lines" -k "$T/kf01"
check "passfile from stdin" with_stdin "$T/pf01" key_opens "$prov" 0 -j - -k "$T/kf01"
check "keyfiles in the wrong order fail" fails key_opens "$prov" 0 -j "$T/pf01" -k "$T/kf1" -k "$T/kf0"
check "a missing keyfile fails" fails key_opens "$prov" 0 -j "$T/pf01" -k "$T/kf0"
check "a missing passfile part fails" fails key_opens "$prov" 0 -j "$T/pf0" -k "$T/kf01"
check "passfiles in the wrong order fail" fails key_opens "$prov" 0 -j "$T/pf1" -j "$T/pf0" -k "$T/kf01"
check "keyfiles without the passphrase (-p) fail" fails key_opens "$prov" 0 -p -k "$T/kf01"
expect_err "a wrong key says so and changes nothing" "geli: Wrong key for $prov." --same "$prov" -- \
	"$GELI" setkey -j "$T/pf0" -k "$T/kf01" -J "$T/pf0" "$prov"

# Keyfile only (-P): the metadata says -1 and -p is required.
mkprov "$prov"
expect_ok "init -P -K: keyfile only" "$GELI" init -B none -P -K "$T/kf0" "$prov"
check "keyfile-only volume stores iterations -1" test "$(dumpfield "$prov" iterations)" = -1
check "keyfile-only volume opens with -p -k" key_opens "$prov" 0 -p -k "$T/kf0"
expect_err "without -p: Missing -p flag." "geli: Missing -p flag." --same "$prov" -- \
	"$GELI" setkey -k "$T/kf0" -J "$T/pf0" "$prov"

# Passphrase only.
mkprov "$prov"
expect_ok "init -J: passphrase only" "$GELI" init -B none -i 1000 -J "$T/pf0" "$prov"
check "passphrase-only volume opens with -j" key_opens "$prov" 0 -j "$T/pf0"
check "iterations stored as given" test "$(dumpfield "$prov" iterations)" = 1000
check "an extra keyfile fails" fails key_opens "$prov" 0 -j "$T/pf0" -k "$T/kf0"

# -i 0: no PBKDF2, salt || passphrase.
mkprov "$prov"
expect_ok "init -i 0" "$GELI" init -B none -i 0 -J "$T/pf0" "$prov"
check "-i 0 stored" test "$(dumpfield "$prov" iterations)" = 0
check "-i 0 volume opens" key_opens "$prov" 0 -j "$T/pf0"

# Conflicts and missing parts: clear errors, nothing written.
mkprov "$prov"
expect_err "-P with -J" "geli: Options -J and -P are mutually exclusive."$'\n'"geli: There was an error with at least one provider." --same "$prov" -- \
	"$GELI" init -B none -P -K "$T/kf0" -J "$T/pf0" "$prov"
expect_err "-P and no keyfile" "geli: No key components given." --same "$prov" -- \
	"$GELI" init -B none -P "$prov"
expect_err "-i with -P" "geli: Options -i and -P are mutually exclusive." --same "$prov" -- \
	"$GELI" init -B none -i 10 -P -K "$T/kf0" "$prov"
expect_err "a keyfile that does not exist" \
	"geli: Cannot open keyfile $T/nope: No such file or directory." --same "$prov" -- \
	"$GELI" init -B none -K "$T/nope" -J "$T/pf0" "$prov"
expect_err "a passfile that does not exist" \
	"geli: Cannot open passfile $T/nope: No such file or directory."$'\n'"geli: There was an error with at least one provider." --same "$prov" -- \
	"$GELI" init -B none -J "$T/nope" "$prov"
head -c 1030 /dev/zero | tr '\0' x >"$T/long"
expect_err "a passphrase over 1023 bytes" "geli: Passphrase in $T/long too long."$'\n'"geli: There was an error with at least one provider." --same "$prov" -- \
	"$GELI" init -B none -J "$T/long" "$prov"
head -c 1023 /dev/zero | tr '\0' y >"$T/max"
expect_ok "a passphrase of 1023 bytes is fine" "$GELI" init -B none -i 10 -J "$T/max" "$prov"
check "... and opens" key_opens "$prov" 0 -j "$T/max"
expect_err "-p with -j" "geli: Options -j and -p are mutually exclusive." --same "$prov" -- \
	"$GELI" setkey -p -k "$T/kf0" -j "$T/pf0" -J "$T/pf0" "$prov"
mkprov "$prov"
expect_err "no passfile and no terminal" "geli: Cannot read passphrase: No such device or address."$'\n'"geli: There was an error with at least one provider." \
	--same "$prov" -- setsid -w "$GELI" init -B none -i 10 "$prov"

# The terminal prompt (a pty): asked twice for a new passphrase, again on a
# mismatch; once for an old one.
if python3 -c 'import pty' 2>/dev/null; then
	cat >"$T/ttydrive.py" <<'PY'
import os, pty, sys, time
answers = sys.argv[1].split(',')
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
out = b''
def readsome():
    global out
    try:
        data = os.read(fd, 1024)
    except OSError:
        return False
    if not data:
        return False
    out += data
    return True
for a in answers:
    while not out.rstrip().endswith(b':'):
        if not readsome():
            break
    os.write(fd, a.encode() + b'\n')
    time.sleep(0.05)
    out = out.replace(b':', b';')   # wait for the next prompt
while readsome():
    pass
_, status = os.waitpid(pid, 0)
sys.stdout.write(out.decode(errors='replace').replace(';', ':'))
sys.exit(os.waitstatus_to_exitcode(status))
PY
	mkprov "$prov"
	python3 "$T/ttydrive.py" "tty secret,tty secreX,tty secret,tty secret" "$GELI" init -B none -i 10 "$prov" >"$T/pty.out" 2>&1
	rc=$?
	if [ $rc -eq 0 ] && grep -q "Enter new passphrase:" "$T/pty.out" && grep -q "Reenter new passphrase:" "$T/pty.out" &&
	    grep -q "They didn't match." "$T/pty.out" && ! grep -q "tty secre" "$T/pty.out"; then
		ok "terminal prompt: asked twice, again after a mismatch, no echo"
	else
		nok "terminal prompt"; diag <"$T/pty.out"
	fi
	passfile "$T/ttypass" "tty secret"
	check "the typed passphrase is the key" key_opens "$prov" 0 -j "$T/ttypass"
	python3 "$T/ttydrive.py" "tty secret" "$GELI" setkey -v -P -K /dev/null -n 1 "$prov" >"$T/pty.out" 2>&1
	if grep -q "Enter passphrase:" "$T/pty.out" && grep -q "Decrypted Master Key 0." "$T/pty.out"; then
		ok "terminal prompt for the old key"
	else
		nok "terminal prompt for the old key"; diag <"$T/pty.out"
	fi
	# While it waits for the passphrase: no core dumps, memory locked.
	cat >"$T/ttyprobe.py" <<'PY'
import os, pty, sys, time
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
out = b''
while b'passphrase:' not in out:
    out += os.read(fd, 1024)
limits = open('/proc/%d/limits' % pid).read()
status = open('/proc/%d/status' % pid).read()
core = [l for l in limits.splitlines() if l.startswith('Max core file size')][0].split()
lck = [l for l in status.splitlines() if l.startswith('VmLck:')][0].split()[1]
print('core', core[4], core[5])
print('vmlck', lck)
os.kill(pid, 15)
os.waitpid(pid, 0)
PY
	mkprov "$prov"
	"$GELI" init -B none -i 10 -J "$T/ttypass" "$prov" >/dev/null
	python3 "$T/ttyprobe.py" "$GELI" setkey -P -K /dev/null "$prov" >"$T/probe" 2>&1
	check "core dumps are off before the passphrase is read" grep -qx "core 0 0" "$T/probe"
	if [ "$(id -u)" -eq 0 ] && [ -z "${GELI_SANITIZED:-}" ]; then
		check "memory is locked before the passphrase is read (root)" \
			test "$(sed -n 's/^vmlck //p' "$T/probe")" -gt 1000
	else
		skip "mlockall only as root and without AddressSanitizer"
	fi
else
	skip "python3 pty not available"
fi

# Iterations chosen for us: about 2 s of CPU, with -v messages.
mkprov "$prov"
run "$GELI" init -v -B none -J "$T/pf0" "$prov"
it=$(dumpfield "$prov" iterations)
if [ $rc -eq 0 ] && grep -qx "Calculating number of iterations..." "$T/out" &&
    grep -qx "Done, using $it iterations." "$T/out" && [ "$it" -gt 1000 ]; then
	ok "iterations calibrated ($it)"
else
	nok "iterations calibrated"; diag <"$T/out"
fi
check "calibrated volume opens" key_opens "$prov" 0 -j "$T/pf0"

# One passphrase for several providers (asked once, here read once from stdin).
mkprov "$T/p1"; mkprov "$T/p2"
run bash -c 'printf "shared pass\n" | "$0" init -B none -i 10 -J - "$1" "$2"' "$GELI" "$T/p1" "$T/p2"
passfile "$T/shared" "shared pass"
check "provider 1 of one init opens with the shared passphrase" key_opens "$T/p1" 0 -j "$T/shared"
check "provider 2 of one init opens with the shared passphrase" key_opens "$T/p2" 0 -j "$T/shared"
check "... with different salts" test "$(dumpfield "$T/p1" Salt)" != "$(dumpfield "$T/p2" Salt)"

done_testing
