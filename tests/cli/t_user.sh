#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# suite: plain
# An ordinary user, made by this test, runs geli on files of theirs: init,
# attach (FUSE through fusermount3), list, status, suspend/resume, setkey,
# delkey, configure, detach; their server killed, and replaced.  Their run directory is $GELI_RUNDIR, else
# $XDG_RUNTIME_DIR/geli, else /tmp/geli-UID (0700; refused when it is not
# theirs alone); they do not see root's providers; -L says it needs root;
# without ublk, -b ublk says why and attach -v says why FUSE serves it;
# a small RLIMIT_MEMLOCK is a warning, not a failure.
. "$(dirname "$0")/lib.sh"
if [ "$(id -u)" -ne 0 ] || [ ! -c /dev/fuse ] || ! command -v useradd >/dev/null ||
	! command -v runuser >/dev/null || [ ! -u /usr/bin/fusermount3 ]; then
	skip "needs root, /dev/fuse, useradd, runuser and a setuid fusermount3"
	done_testing
	exit
fi

# The user, their directory, and /dev/fuse open to them as Debian has it.
U=gelit$$
useradd -M -N -d /nonexistent -s /usr/sbin/nologin "$U" || { nok "useradd $U"; done_testing; exit; }
uid=$(id -u "$U")
UD=$(mktemp -d /tmp/geli-user.XXXXXX)
# Their daemons stopped by PID, their directories and the user removed.
on_exit "for p in '$UD'/run/*.pid '$UD'/xdg/geli/*.pid /tmp/geli-$uid/*.pid; do [ -f \"\$p\" ] && kill \"\$(cat \"\$p\")\" 2>/dev/null; done; sleep 0.3; for m in \$(awk 'index(\$2, \"$UD/\") == 1 || index(\$2, \"/tmp/geli-$uid/\") == 1 { print \$2 }' /proc/mounts); do umount -l \"\$m\"; done; rm -rf '$UD' /tmp/geli-$uid; userdel '$U' 2>/dev/null"
fusemode=$(stat -c %a /dev/fuse)
if [ "$fusemode" != 666 ]; then
	chmod 0666 /dev/fuse
	on_exit "chmod $fusemode /dev/fuse"
fi
# Their own geli (the build tree may be out of their reach); under
# GELI_VALGRIND their own memcheck wrapper, its reports in a directory of
# theirs, gathered into $T/vg for the verdict.
if [ -n "${GELI_VALGRIND:-}" ]; then
	mkdir "$UD/vg"
	cp "$GELI_REAL" "$UD/geli.bin"
	cp "$VG_SUPP" "$UD/valgrind.supp"
	vg_wrapper "$UD/geli" "$UD/geli.bin" "$UD/vg" "$UD/valgrind.supp"
else
	cp "$GELI" "$UD/geli"
fi
printf 'user pass\n' >"$UD/pass"
printf 'user new\n' >"$UD/new"
cp "$FIX/fbsd9-v6-aesxts128-4k-bluemoon.img" "$UD/bluemoon.img"
cp "$FIX/fbsd9-v6-aesxts128-4k-bluemoon.pass" "$UD/bluemoon.pass"
cp "$FIX/fbsd9-v6-aesxts128-4k-bluemoon.plain-prefix" "$UD/plain"
chown -R "$U" "$UD"
chmod 0700 "$UD"

# as_user CMD...: in $UD, as the user, with a clean environment (no
# GELI_RUNDIR, no XDG_RUNTIME_DIR) plus what ENV=... words come first.
as_user() {
	local env=()
	while [[ ${1:-} == *=* ]]; do env+=("$1"); shift; done
	(cd "$UD" && runuser -u "$U" -- env -i PATH=/usr/bin:/bin "${env[@]+"${env[@]}"}" "$@")
}
urun() { as_user "$@" >"$T/out" 2>"$T/err" </dev/null; rc=$?; }
uok() {
	local desc=$1; shift
	urun "$@"
	if [ "$rc" -eq 0 ] && [ ! -s "$T/err" ]; then ok "$desc"; else
		nok "$desc"; { echo "status $rc: $*"; cat "$T/err"; } | diag; fi
}
RD=/tmp/geli-$uid

# ---- init, attach, use, detach ------------------------------------------------------

as_user truncate -s 32M u.img
uok "init on a file of theirs" HOME="$UD" ./geli init -i 10 -J pass u.img
check "... its metadata backup in their XDG state directory, mode 0600" \
	test "$(stat -c '%u %a' "$UD/.local/state/geli/u.img.eli" 2>/dev/null)" = "$uid 600"
check "... which init names" grep -q "can be found in $UD/.local/state/geli/u.img.eli" "$T/out"
uok "with XDG_STATE_HOME set, the backup goes there" \
	XDG_STATE_HOME="$UD/state" ./geli init -i 10 -J pass u.img
check "... $UD/state/geli/u.img.eli" test -f "$UD/state/geli/u.img.eli"
uok "attach (no GELI_RUNDIR, no XDG_RUNTIME_DIR)" ./geli attach -j pass u.img
check "their run directory is $RD, theirs, mode 0700" \
	test "$(stat -c '%u %a' "$RD" 2>/dev/null)" = "$uid 700"
# Their FUSE mount is theirs alone (no allow_other): even root cannot
# look inside it, so what reads it runs as the user.
check "the .eli is in it" as_user test -f "$RD/u.img.eli"
pid=$(cat "$RD/u.img.pid" 2>/dev/null)
check "the daemon runs as the user" test "$(stat -c %u "/proc/$pid" 2>/dev/null)" = "$uid"
# AddressSanitizer's mlock does nothing (and reports success).
if [ -n "${GELI_SANITIZED:-}" ]; then
	skip "VmLck: AddressSanitizer makes mlock a no-op"
else
	check "... with its secrets locked (VmLck > 0)" \
		test "$(awk '/^VmLck/ { print $2 }' "/proc/$pid/status" 2>/dev/null)" -gt 0
fi
check "... through a FUSE mount of theirs" \
	grep -q " $RD/u.img.eli fuse.geli .*user_id=$uid" /proc/mounts
head -c 4M /dev/urandom >"$T/data"
cp "$T/data" "$UD/data"
chown "$U" "$UD/data"
uok "they write the .eli" dd if=data of="$RD/u.img.eli" bs=1M conv=notrunc,fsync status=none
urun ./geli list
check "list shows their provider" grep -q "^Geom name: u.img.eli" "$T/out"
urun ./geli status u.img
check "status shows it" test $rc = 0 -a "$(awk 'NR == 2 { print $1 }' "$T/out")" = u.img.eli
uok "suspend" ./geli suspend u.img
uok "resume" ./geli resume -j pass u.img
uok "setkey on the attached provider (slot 1)" ./geli setkey -n 1 -i 10 -J new u.img
uok "... the new key opens slot 1" ./geli attach -C -n 1 -j new u.img
uok "delkey on the attached provider" ./geli delkey -n 1 u.img
uok "configure -T on the attached provider" ./geli configure -T u.img
uok "detach" ./geli detach u.img
check "... its files are gone (the log stays)" \
	bash -c '! ls "$0"/u.img.{eli,ctl,pid} 2>/dev/null | grep -q .' "$RD"
uok "attach again" ./geli attach -j pass u.img
check "what they wrote reads back" as_user cmp -s -n 4194304 "$RD/u.img.eli" data
# Their server killed (-9, by them): their keeper starts another, which
# serves the same mount (src/attach/keeper.h; kernels without
# FUSE_NOTIFY_RESEND end the provider instead, and this is skipped).
if grep -q "is started again if it dies" "$RD/u.img.log"; then
	ulisted() { as_user ./geli list u.img | sed -n "s/^   $1: //p"; }
	pid=$(cat "$RD/u.img.pid")
	as_user kill -9 "$pid"
	urestarted() { [ "$(cat "$RD/u.img.pid")" != "$pid" ] && [ "$(ulisted Restarts)" = 1 ]; }
	check "their server killed: another serves (geli list: Restarts: 1), theirs" \
		eval 'wait_for urestarted && test "$(stat -c %u "/proc/$(cat "$RD/u.img.pid")")" = "$uid"'
	check "... what they wrote reads back through the same mount" \
		as_user cmp -s -n 4194304 "$RD/u.img.eli" data
else
	skip "this kernel cannot give a dead server's requests to another: a death ends the provider"
fi
uok "detach" ./geli detach u.img

# ---- Other run directories -----------------------------------------------------------

as_user mkdir -p xdg
uok "attach with XDG_RUNTIME_DIR set" XDG_RUNTIME_DIR="$UD/xdg" ./geli attach -j pass u.img
check "... the run directory is \$XDG_RUNTIME_DIR/geli" test -S "$UD/xdg/geli/u.img.ctl"
uok "... detach there" XDG_RUNTIME_DIR="$UD/xdg" ./geli detach u.img
uok "attach with GELI_RUNDIR set" GELI_RUNDIR="$UD/run" ./geli attach -j pass u.img
check "... the run directory is \$GELI_RUNDIR" test -S "$UD/run/u.img.ctl"
uok "... detach there" GELI_RUNDIR="$UD/run" ./geli detach u.img

# ---- What they cannot do ---------------------------------------------------------------

urun ./geli attach -L -j pass u.img
check "-L: needs root, said clearly" test $rc = 1 -a \
	"$(head -n1 "$T/err")" = "geli: Cannot create a loop device: -L needs root."
urun ./geli list
check "... and nothing was attached" test $rc = 0 -a ! -s "$T/out"
# ublk for them where the kernel has it and makes devices for users
# (tests/vm/t_ublk.sh); here, without it:
if [ -e /dev/ublk-control ]; then
	skip "this kernel has ublk: tests/vm/t_ublk.sh"
else
	urun ./geli attach -b ublk -j pass u.img
	check "-b ublk without ublk: the reason" eval 'test $rc = 1 &&
		grep -qxF "geli: Cannot create a ublk device for u.img: no /dev/ublk-control: ublk_drv is not loaded." "$T/err"'
	urun ./geli attach -v -j pass u.img
	check "... by default, FUSE, and -v says why" eval 'test $rc = 0 &&
		grep -qxF "geli: u.img.eli: not through ublk (no /dev/ublk-control: ublk_drv is not loaded): through FUSE." "$T/err"'
	uok "... detach" ./geli detach u.img
fi
# Root's provider, in root's run directory: theirs to see and control only.
mkprov "$T/r.img" 4M
"$GELI" init -B none -i 10 -J "$UD/pass" "$T/r.img" >/dev/null
"$GELI" attach -j "$UD/pass" "$T/r.img"
urun ./geli list
check "root's providers are not in their list" test $rc = 0 -a ! -s "$T/out"
urun ./geli detach r.img
check "... nor theirs to detach" test $rc = 1 -a "$(head -n1 "$T/err")" = "geli: No such device: r.img."
check "... it stays attached" attached r.img
"$GELI" detach r.img
# A provider they may only read.
cp "$FIX/fbsd9-v6-aesxts128-4k-bluemoon.img" "$T/ro.img"
chmod 0644 "$T/ro.img"
chmod 0711 "$T"
urun ./geli attach -j bluemoon.pass "$T/ro.img"
check "a provider they cannot write: attach fails with the reason" \
	test $rc = 1 -a "$(head -n1 "$T/err")" = "geli: Cannot open $T/ro.img: Permission denied."
uok "... attach -r works" ./geli attach -r -j bluemoon.pass "$T/ro.img"
check "... and FreeBSD's plaintext reads" \
	as_user cmp -s -n "$(stat -c %s "$UD/plain")" "$RD/ro.img.eli" plain
uok "... detach" ./geli detach ro.img
chmod 0700 "$T"
uok "FreeBSD's volume, copied to them, attaches read-write" ./geli attach -j bluemoon.pass bluemoon.img
check "... and reads its plaintext" \
	as_user cmp -s -n "$(stat -c %s "$UD/plain")" "$RD/bluemoon.img.eli" plain
uok "... detach" ./geli detach bluemoon.img

# ---- A small RLIMIT_MEMLOCK ------------------------------------------------------------

urun bash -c 'ulimit -l 0 && exec ./geli attach -j pass u.img'
check "RLIMIT_MEMLOCK 0: attach still works" test $rc = 0
pid=$(cat "$RD/u.img.pid" 2>/dev/null)
if [ -n "${GELI_SANITIZED:-}" ]; then
	skip "the warning: AddressSanitizer makes mlock a no-op that succeeds"
else
	check "... with a warning" test "$(cat "$T/err")" = \
		"geli: warning: Cannot lock memory (RLIMIT_MEMLOCK is 0 KiB): keys may be written to swap."
	check "... the daemon has nothing locked" \
		test "$(awk '/^VmLck/ { print $2 }' "/proc/$pid/status" 2>/dev/null)" = 0
	check "... and says so in its log" \
		grep -q "u.img.eli: Cannot lock memory: keys may be written to swap." "$RD/u.img.log"
fi
check "... the data reads" as_user cmp -s -n 4194304 "$RD/u.img.eli" data
uok "... detach" ./geli detach u.img

# ---- A run directory that is not theirs alone ------------------------------------------

chmod 0777 "$RD"
urun ./geli attach -j pass u.img
check "$RD writable by others: attach refused" test $rc = 1 -a "$(head -n1 "$T/err")" = \
	"geli: Cannot use $RD: the run directory is not a directory of yours that only you can write."
check "... nothing made in it" bash -c '! ls "$0"/u.img.{eli,ctl,pid} 2>/dev/null | grep -q .' "$RD"
urun ./geli list
check "... and list says why it lists nothing" test $rc = 1 -a "$(cat "$T/err")" = \
	"geli: Cannot use $RD: the run directory is not a directory of yours that only you can write."
rm -rf "$RD"
mkdir -m 0700 "$UD/elsewhere"
chown "$U" "$UD/elsewhere"
ln -s "$UD/elsewhere" "$RD"
urun ./geli attach -j pass u.img
check "$RD a symbolic link (even to a directory of theirs): attach refused" test $rc = 1
rm -f "$RD"
mkdir -m 0700 "$RD"
urun ./geli attach -j pass u.img
check "$RD made by someone else (root): attach refused" test $rc = 1
rm -rf "$RD"
[ -z "${GELI_VALGRIND:-}" ] || cp "$UD"/vg/*.log "$T/vg/" 2>/dev/null
done_testing
