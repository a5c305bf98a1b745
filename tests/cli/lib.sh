# SPDX-License-Identifier: BSD-2-Clause
# Shared helpers for the CLI tests: TAP output, temporary files, and checks
# that a failing command says exactly one thing and changes nothing.
set -u
: "${GELI:?GELI must point at the geli binary}"
: "${GELI_FIXTURES:?}"
FIX=$GELI_FIXTURES
# $GELI_TEST_ID (run-suite's) names what the test leaves on the host.
T=$(mktemp -d "/tmp/geli-test.${GELI_TEST_ID:+$GELI_TEST_ID.}XXXXXX")
export GELI_RUNDIR=$T/run
export GELI_STATE_DIR=$T/state
# geli-boot's configuration, which geli reencrypt -t luks2 edits: the
# test's own (none unless the test writes it), never /etc/default/geli.
export GELI_BOOT_CONF=$T/default-geli
# The stable names of -L's block devices (/dev/NAME.eli for users): the
# test's own, since tests beside it attach providers of the same names.
export GELI_DEVDIR=$T/dev
mkdir -p "$GELI_DEVDIR"
trap 'cleanup_hooks; cleanup_attached; rm -rf "$T"' EXIT
trap 'exit 143' TERM INT
HOOKS=()
cleanup_hooks() { local h; for h in "${HOOKS[@]+"${HOOKS[@]}"}"; do eval "$h"; done; }

# Whatever a test left: mounts under $T, attach daemons (asked to detach,
# then stopped by the PID in their pid file), loop devices on its files.
# The .eli mounts go last: unmounted lazily under a -L daemon, they would
# leave its loop device on a file with no name.
cleanup_attached() {
	local m p pid i
	for m in $(awk -v t="$T" -v r="$GELI_RUNDIR/" \
	    'index($2, t) == 1 && index($2, r) != 1 { print $2 }' /proc/mounts | sort -r); do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
	done
	for p in "$GELI_RUNDIR"/*.pid; do
		[ -f "$p" ] || continue
		pid=$(cat "$p")
		"$GELI" detach -f "$(basename "$p" .pid)" >/dev/null 2>&1
		for i in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
		kill "$pid" 2>/dev/null
	done
	for m in $(losetup -n -O NAME,BACK-FILE 2>/dev/null | awk -v t="$T" 'index($2, t) == 1 { print $1 }'); do
		losetup -d "$m" 2>/dev/null
	done
	for m in $(awk -v t="$T" 'index($2, t) == 1 { print $2 }' /proc/mounts | sort -r); do
		umount -l "$m" 2>/dev/null
	done
}
on_exit() { HOOKS+=("$1"); }

n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
nok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
skip() { n=$((n + 1)); echo "ok $n # SKIP $*"; }
diag() { sed 's/^/#   /'; }
done_testing() { valgrind_verdict; echo "1..$n"; [ "$failed" -eq 0 ]; }

# GELI_VALGRIND=1: every geli this test runs runs under valgrind's memcheck
# (its reports in $T/vg, not on stderr, so that messages compare as they
# are); the test ends with one more result: no errors, no definite leaks.
# fuse-compatible: the attach daemon stats its own FUSE mount, and valgrind
# must let the thread that serves it run meanwhile.  tests/valgrind.supp:
# other projects' findings, each with its reason.
# vg_wrapper OUT BINARY LOGDIR SUPPRESSIONS: OUT runs BINARY so.
vg_wrapper() {
	cat >"$1" <<EOF
#!/bin/sh
exec valgrind -q --sim-hints=fuse-compatible --leak-check=full \\
	--suppressions="$4" --errors-for-leak-kinds=definite \\
	--show-leak-kinds=definite --log-file="$3/%p.log" "$2" "\$@"
EOF
	chmod +x "$1"
}
VG_SUPP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/valgrind.supp
GELI_REAL=$GELI
if [ -n "${GELI_VALGRIND:-}" ]; then
	mkdir -p "$T/vg"
	vg_wrapper "$T/geli-vg" "$GELI" "$T/vg" "$VG_SUPP"
	GELI=$T/geli-vg
fi
# A report is any line of a log but valgrind's notes that it has no wrapper
# for an ioctl (the loop device's newer ones) or for memfd_secret (447:
# valgrind answers ENOSYS and the keeper takes locked memory, as on a kernel
# without secretmem), which are no finding.  Another syscall's warning stays.
vg_report() {
	grep -v -e 'Warning: noted but unhandled ioctl' \
		-e 'This could cause spurious value errors' \
		-e 'README_MISSING_SYSCALL_OR_IOCTL' -e '^==[0-9]*== *$' \
		-e 'WARNING: unhandled amd64-linux syscall: 447$' \
		-e 'You may be able to write your own handler\.$' \
		-e 'Nevertheless we consider this a bug\.  Please report$' \
		-e 'it at http://valgrind.org/support/bug_reports\.html\.$' "$1"
}
valgrind_verdict() {
	[ -n "${GELI_VALGRIND:-}" ] || return 0
	local runs=0 bad=() f
	for f in "$T"/vg/*.log; do
		[ -e "$f" ] || continue
		runs=$((runs + 1))
		vg_report "$f" >/dev/null && bad+=("$f")
	done
	if [ "$runs" -gt 0 ] && [ ${#bad[@]} -eq 0 ]; then
		ok "valgrind: $runs runs of geli, no errors, no definite leaks"
	else
		nok "valgrind: ${#bad[@]} of $runs runs of geli reported errors or leaks"
		for f in "${bad[@]:0:3}"; do vg_report "$f"; done | head -n 40 | diag
	fi
}

# check DESC CMD...: ok when CMD succeeds.
check() {
	local desc=$1; shift
	if "$@"; then ok "$desc"; else nok "$desc"; fi
}

# run CMD...: stdout in $T/out, stderr in $T/err, status in $rc.
run() { "$@" >"$T/out" 2>"$T/err" </dev/null; rc=$?; }

geli() { "$GELI" "$@"; }

# expect_ok DESC CMD...: status 0 and nothing on stderr.
expect_ok() {
	local desc=$1; shift
	run "$@"
	if [ "$rc" -eq 0 ] && [ ! -s "$T/err" ]; then ok "$desc"; else
		nok "$desc"; { echo "status $rc: $*"; cat "$T/err"; } | diag; fi
}

# A checksum of a file's contents.  Large sparse providers (the 1 GiB
# fixtures) are summed by size, allocated blocks and their last MiB, where
# geli writes; smaller files completely.
fsum() {
	local size
	size=$(stat -c %s "$1")
	if [ "$size" -gt $((64 << 20)) ]; then
		echo "$size $(stat -c %b "$1") $(tail -c 1048576 "$1" | md5sum)"
	else
		md5sum <"$1"
	fi
}

# expect_err DESC 'geli: message' CMD...: status 1, exactly that stderr,
# and no file given with -f FILE... (before CMD) changed.
#   expect_err DESC MSG [--same FILE]... -- CMD...
expect_err() {
	local desc=$1 want=$2; shift 2
	local files=() sums=() i
	while [ "$1" = --same ]; do files+=("$2"); shift 2; done
	[ "$1" = -- ] && shift
	for i in "${files[@]+"${files[@]}"}"; do sums+=("$(fsum "$i")"); done
	run "$@"
	local good=1
	[ "$rc" -eq 1 ] || good=0
	[ "$(cat "$T/err")" = "$want" ] || good=0
	i=0
	for f in "${files[@]+"${files[@]}"}"; do
		[ "$(fsum "$f")" = "${sums[$i]}" ] || { good=0; echo "changed: $f" >>"$T/err"; }
		i=$((i + 1))
	done
	if [ $good = 1 ]; then ok "$desc"; else
		nok "$desc"; { echo "status $rc: $*"; echo "want: $want"; echo "got:"; cat "$T/err"; } | diag; fi
}

# pg_fat_ok DECRYPTED: the FAT file system inside one of the pg-* fixtures,
# decrypted (fixtures README), holds a file random whose MD5 is the one its
# file md5 lists.
pg_fat_ok() {
	local want
	rm -f "$T/random" "$T/md5"
	mcopy -i "$1@@4608" ::random "$T/random" 2>/dev/null
	mcopy -i "$1@@4608" ::md5 "$T/md5" 2>/dev/null
	want=$(cut -d' ' -f1 "$T/md5" 2>/dev/null)
	test -n "$want" -a "$(md5sum <"$T/random" | cut -d' ' -f1)" = "$want"
}

# A sparse provider file of SIZE bytes.
mkprov() { rm -f "$1"; truncate -s "${2:-1M}" "$1"; }

# flip_byte FILE OFFSET: the byte at OFFSET inverted (every bit), so it
# changes whatever it held (a fixed byte written over random data is the
# same byte once in 256).
flip_byte() {
	local b
	b=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
	printf "\\$(printf '%03o' $((255 - b)))" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

# The value of one `geli dump` field.
dumpfield() { "$GELI" dump "$1" 2>/dev/null | sed -n "s/^ *$2: //p"; }

# key_opens PROV SLOT OLDKEYOPTS...: the key opens slot SLOT.  Works on a
# copy of the metadata (a backup file), so PROV is never changed.
key_opens() {
	local prov=$1 slot=$2; shift 2
	rm -f "$T/ko.bk"
	"$GELI" backup "$prov" "$T/ko.bk" || return 1
	"$GELI" setkey -v "$@" -P -K /dev/null "$T/ko.bk" >"$T/ko.out" 2>"$T/ko.err" ||
		{ cat "$T/ko.err" >&2; return 1; }
	grep -qx "Decrypted Master Key $slot." "$T/ko.out"
}

# key_opens_with BACKEND PROV SLOT OLDKEYOPTS...: key_opens with that crypto
# backend (GELI_CRYPTO).
key_opens_with() { local be=$1; shift; GELI_CRYPTO=$be key_opens "$@"; }

# fails CMD...: CMD fails.  with_stdin FILE CMD...: CMD reads FILE.
fails() { ! "$@"; }
with_stdin() { local f=$1; shift; "$@" <"$f"; }

# backend_of NAME: what serves the attached NAME (geli list's Backend:,
# fuse or ublk).  eli_size ELI: the size of an .eli, a FUSE file or the
# ublk device it leads to.  blkdev_gone DEV: DEV (a loop or ublk device of
# -L) is no longer a provider's: the loop device cleared, the ublk device
# deleted.
backend_of() { "$GELI" list "$1" 2>/dev/null | sed -n 's/^   Backend: //p'; }
eli_size() { if [ -b "$1" ]; then blockdev --getsize64 "$1"; else stat -c %s "$1"; fi; }
blkdev_gone() {
	case $1 in
	/dev/loop*) fails test -e "/sys/block/${1#/dev/}/loop/backing_file" ;;
	*) fails test -e "/sys/block/${1#/dev/}" ;;
	esac
}

# need_fuse: attach needs root and /dev/fuse; otherwise the test skips.
need_fuse() {
	if [ "$(id -u)" -ne 0 ] || [ ! -c /dev/fuse ]; then
		skip "attach needs root and /dev/fuse"
		return 1
	fi
}

# need_zfs_fuse: a zfs-fuse daemon of this test's own, started here with a
# pid file and stopped by that PID at exit after its pools are exported.  One
# that is already running belongs to somebody else: skip rather than touch it.
# zfs-fuse imports at its start the pools its cache lists (the host's
# /var/lib/zfs/zpool.cache): the test's pools stay out of it (a zpool first
# in PATH adds -o cachefile=none to every create and import, the documents'
# commands included), so that a run killed halfway leaves no pool for a later
# start to bring back; pools that it brings all the same are somebody
# else's: the test stops its daemon without exporting them, and skips.
need_zfs_fuse() {
	local zpool
	if ! command -v zfs-fuse >/dev/null || ! zpool=$(command -v zpool); then
		skip "zfs-fuse not installed"
		return 1
	fi
	if zpool list >/dev/null 2>&1; then
		skip "a zfs-fuse daemon that is not ours is running"
		return 1
	fi
	mkdir -p "$T/zbin"
	cat >"$T/zbin/zpool" <<EOF
#!/bin/sh
case "\$*" in
create*cachefile=* | import*cachefile=*) ;;
create* | import*) sub=\$1; shift; exec $zpool "\$sub" -o cachefile=none "\$@" ;;
esac
exec $zpool "\$@"
EOF
	chmod +x "$T/zbin/zpool"
	PATH=$T/zbin:$PATH
	zfs-fuse --pidfile "$T/zfs.pid" --no-kstat-mount >/dev/null 2>&1
	zpid=$(cat "$T/zfs.pid" 2>/dev/null)
	zfs_theirs=
	# (its end awaited up to a hang's bound: one still there is a change of
	# the host, which the suite checks)
	on_exit 'for p in $(zpool list -H -o name 2>/dev/null); do case " $zfs_theirs " in *" $p "*) ;; *) zpool export -f "$p" 2>/dev/null ;; esac; done; [ -n "$zpid" ] && kill "$zpid" 2>/dev/null && wait_for fails alive "$zpid"'
	check "zfs-fuse answers" wait_for zpool list
	zfs_theirs=$(zpool list -H -o name 2>/dev/null | tr '\n' ' ')
	if [ -n "$zfs_theirs" ]; then
		skip "zfs-fuse's cache (/var/lib/zfs/zpool.cache) brought pools that are not this test's: $zfs_theirs"
		return 1
	fi
}

# in_guest: this runs in a guest of the lane (tests/vm/run), which is there
# for what the guest's kernel and OpenZFS change; a part of a test that
# does not depend on them is the host's passes' to prove, and skipped here.
in_guest() { [ "$(hostname)" = geli-vm ]; }

# have_openzfs: OpenZFS's kernel module is loaded (in a guest of tests/vm/run).
have_openzfs() { [ -c /dev/zfs ] && [ -e /sys/module/zfs/version ]; }

# openzfs_21: the guest's OpenZFS is Debian 12's own, 2.1 (the lane's
# bookworm), where a scenario that runs in full on 2.3 (backports) runs only
# what 2.1 and that kernel change.
openzfs_21() { have_openzfs && case $(cat /sys/module/zfs/version) in 2.1.*) ;; *) false ;; esac; }

# need_zfs: a ZFS for the test's pools: OpenZFS's kernel module where it
# is loaded (in a guest of tests/vm/run), else a zfs-fuse daemon of the
# test's own (need_zfs_fuse).  Then ZFS_KIND is openzfs or zfs-fuse, and
# the providers under a pool are, for OpenZFS, block devices by their
# stable names (attached with $ZATTACH, -L; in $ZDIR, $GELI_DEVDIR), for
# zfs-fuse their .eli files (in $ZDIR, the run directory): zdev NAME...
# gives their paths.  OpenZFS's pools are exported at the end.
need_zfs() {
	if have_openzfs; then
		ZFS_KIND=openzfs ZATTACH=-L ZDIR=$GELI_DEVDIR
		on_exit 'for p in $(zpool list -H -o name 2>/dev/null); do zpool export -f "$p" 2>/dev/null; done'
		check "OpenZFS $(cat /sys/module/zfs/version) answers" eval 'zpool list >/dev/null'
		return
	fi
	ZFS_KIND=zfs-fuse ZATTACH= ZDIR=$GELI_RUNDIR
	need_zfs_fuse
}
zdev() { local n; for n; do echo "$ZDIR/$n.eli"; done; }
# zfs_attach GELI-ATTACH-ARGS...: geli attach as the pool's ZFS wants it
# (the loop devices -L prints, not wanted).
zfs_attach() { "$GELI" attach $ZATTACH "$@" >/dev/null; }

# zpool_scrubbed POOL: POOL's scrub ended (waits up to 300 s, a hang's
# bound): zfs-fuse says "scrub completed", OpenZFS "scrub repaired".
zpool_scrubbed() {
	local i
	for i in $(seq 3000); do
		zpool status "$1" 2>/dev/null | grep -qE 'scrub (completed|repaired)' && return 0
		sleep 0.1
	done
	return 1
}

# drop_loop DEV FILE: DEV detached if it is still the loop device of FILE
# (a number freed may be somebody else's by now: a test beside this one
# takes the lowest free number).  An exit hook detaches a test's loop
# device with it, never by its number alone.
drop_loop() {
	[ "$(cat "/sys/block/$(basename "$1")/loop/backing_file" 2>/dev/null)" = "$2" ] &&
		losetup -d "$1"
}

# attached NAME: the daemon of NAME answers.
attached() { "$GELI" status "$1" >/dev/null 2>&1; }
# state_of NAME: the state `geli status -s` gives NAME ("ACTIVE", "ACTIVE,
# converting 12.5%", ...); converting NAME: a conversion under way;
# waiting NAME: one to LUKS2 whose daemon converted every sector and waits
# for its command's end; journals: how many journals the state directory
# holds.
state_of() { "$GELI" status -s "$1" 2>/dev/null | sed 's/^ *[^ ]*  *//; s/  *[^ ]*$//'; }
converting() { case "$(state_of "$1")" in *converting*) return 0 ;; esac; return 1; }
waiting() { [ "$(state_of "$1")" = "ACTIVE, every sector converted, the end to come" ]; }
journals() { ls "$GELI_STATE_DIR"/reencrypt/*.journal 2>/dev/null | wc -l; }
# begun NAME PID: NAME's conversion is under way, or the command PID ended.
begun() { converting "$1" || ! kill -0 "$2" 2>/dev/null; }
# alive PID: running (a zombie, which may stay a while as nobody's child,
# has let go of its files and locks already).
alive() { [ -e "/proc/$1" ] && [ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" != Z ]; }
# keeper_of PID: the keeper of the server PID (src/attach/keeper.h), its
# parent while it lives; nothing once it died.
keeper_of() {
	local k
	k=$(awk '{ print $4 }' "/proc/$1/stat" 2>/dev/null)
	[ -n "$k" ] && [ "$k" != 1 ] && [ "$(cat "/proc/$k/comm" 2>/dev/null)" = "$(cat "/proc/$1/comm" 2>/dev/null)" ] &&
		echo "$k"
}
# waits_for_server NAME: NAME's ublk device waits for a server when its
# daemon dies whole (USER_RECOVERY: root's, 6.1 and later), as the log
# says; its I/O then waits for the next attach, which takes it back.
waits_for_server() {
	[ "$(backend_of "$1")" = ublk ] && grep -q "is started again if it dies" "$GELI_RUNDIR/$1.log"
}
# kill_daemon PID: the server PID and its keeper killed with -9, the keeper
# first (else it starts another server), and both gone: a provider's daemon
# dead as a whole, as one process was before keepers.  False when PID was
# not running.
kill_daemon() {
	local k
	k=$(keeper_of "$1")
	[ -n "$k" ] && kill -9 "$k" 2>/dev/null
	kill -9 "$1" 2>/dev/null || return 1
	# (gone, not only deaf: a control socket may close before the provider
	# its server holds locked)
	[ -z "$k" ] || wait_for fails alive "$k"
	wait_for fails alive "$1"
}

# wait_for CMD...: CMD succeeds, asked every 0.1 s.  The bound, 60 s, is a
# hang's, never a verdict's: a check may wait for an event this way, never
# that something does not happen (a loaded CI machine, the sanitizers or
# valgrind make the events late, never absent).
wait_for() {
	local i
	for i in $(seq 600); do "$@" && return 0; sleep 0.1; done
	return 1
}

# The kernel's log from a point on, by its records' sequence numbers (which
# the ring's turning leaves as they are, where dmesg's lines scroll out):
# kmsg_seq prints the last record's number, kmsg_since SEQ the messages
# of the records after it.
kmsg_read() { dd if=/dev/kmsg iflag=nonblock bs=8192 status=none 2>/dev/null; }
kmsg_seq() { kmsg_read | awk -F '[,;]' '/^[0-9]/ { s = $2 } END { print s + 0 }'; }
kmsg_since() {
	kmsg_read | awk -v s="$1" '/^[0-9]/ {
		split($0, f, ","); p = f[2] + 0 > s + 0; sub(/^[^;]*;/, ""); if (p) print }'
}

# The fault shim (tests/fault), where it was built.
FAULTSHIM=${GELI_FAULTSHIM:-${GELI_BUILD:-}/tests/fault/faultshim.so}
# slowed PATH CMD...: CMD with each of its writes to PATH 2 ms long (the
# fault shim): a conversion of tens of MiB lasts seconds, and what a test
# does to it (a kill, a detach) lands in it however fast the machine runs.
# (In the foreground: in the background $! would be this function's
# subshell, not CMD.)
slowed() {
	local path=$1
	shift
	env LD_PRELOAD="$(preload_list "$FAULTSHIM")" FAULT_PATH="$path" FAULT_WRITE_DELAY_US=2000 "$@"
}

# preload_list SHIM: LD_PRELOAD for a test shim (not instrumented).  Under
# ASan its runtime must come first in the list; the shim, after it, reaches
# ASan's interceptors as the next definition.
preload_list() {
	local asan=
	[ -n "${GELI_SANITIZED:-}" ] && asan=$(ldd "$GELI" | awk '/libasan/ { print $3 }')
	echo "${asan:+$asan:}$1"
}

# The passphrase in a passfile (no newline needed: -j takes the first line).
passfile() { printf '%s\n' "$2" >"$1"; }

# Documents whose command blocks a test runs (docs/zfs-on-geli.md,
# docs/truenas.md): each ```sh block follows a tag <!-- run: NAME -->.
# doc_block DOC NAME: the lines of NAME's block.
doc_block() {
	awk -v tag="<!-- run: $2 -->" '
		$0 == tag { want = 1; next }
		want && /^```sh$/ { inside = 1; next }
		inside && /^```$/ { exit }
		inside { print }' "$1"
}
# doc_run DOC TAG: DOC's block TAG through the test's own localize (its
# paths made the test's), traced: its output in $T/out, the trace and
# errors in $T/err, its status in $rc (said when not 0).
doc_run() {
	doc_block "$1" "$2" | localize >"$T/block.sh"
	(set -x; . "$T/block.sh") >"$T/out" 2>"$T/err" </dev/null
	rc=$?
	[ $rc = 0 ] || { echo "block $2: status $rc"; cat "$T/err"; } | diag
}
# doc_all_tagged DOC: the check that every command block of DOC is tagged.
doc_all_tagged() {
	local blocks tags
	blocks=$(grep -c '^```sh$' "$1")
	tags=$(grep -c '^<!-- run: [a-z0-9-]* -->$' "$1")
	check "every command block of $(basename "$1") is tagged for this test ($blocks)" \
		test "$blocks" -gt 0 -a "$blocks" = "$tags"
}
