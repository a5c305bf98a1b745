#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Faults under an attached provider, injected by tests/fault/faultshim.so
# (LD_PRELOAD on `geli attach` reaches the daemon it forks): EIO on read and
# on write of chosen ranges, short transfers and EINTR everywhere, fsync
# failing, ENOSPC, the provider file cut short, a provider that is a loop
# device deleted with losetup -d, the -L loop device deleted.  Each with the
# mapped-read path on and off (off: GELI_MMAP=0 for the daemon; skipped
# while the daemon has no such knob).  The user gets an error for the range
# that failed and a line in the daemon's log, never wrong data, and the
# daemon serves the rest.  All of that through the .eli as a FUSE file (-b
# fuse: unaligned requests reach the daemon as they are); then, where the
# kernel has ublk (the guest lane), the faults through a ublk device, with
# direct I/O.
. "$(dirname "$0")/lib.sh"
need_fuse || { done_testing; exit; }

shim=$FAULTSHIM
if [ ! -f "$shim" ]; then
	skip "faultshim.so not built (GELI_BUILD/tests/fault)"
	done_testing
	exit
fi
preload=$(preload_list "$shim")

B=4096					# the GELI sector size of these providers
name=f.img
prov=$T/$name
eli=$GELI_RUNDIR/$name.eli
log=$GELI_RUNDIR/$name.log
flog=$T/fault.log
passfile "$T/pass" "fault test"
mkprov "$prov" 8M
"$GELI" init -B none -i 100 -s $B -J "$T/pass" "$prov" >/dev/null
"$GELI" attach -b fuse -j "$T/pass" "$prov"
elisize=$(stat -c %s "$eli")
head -c "$elisize" /dev/urandom >"$T/golden.plain"
dd if="$T/golden.plain" of="$eli" bs=1M conv=notrunc status=none
"$GELI" detach "$name"
cp "$prov" "$T/golden.img"

# ---- Helpers ------------------------------------------------------------------

# The provider's pages out of the page cache (pages the daemon has mapped
# stay), so that its next read goes to pread, where the faults are.
evict() { sync "$1"; dd if="$1" iflag=nocache count=0 status=none; }


# fresh: the provider as set up (detached), the reference plaintext with it.
fresh() {
	attached "$name" && "$GELI" detach -f "$name" >/dev/null 2>&1
	cp "$T/golden.img" "$prov"
	cp "$T/golden.plain" "$T/ref"
	evict "$prov"
}

# fattach [VAR=VALUE]...: attach $prov with the shim and these faults, in
# the mapped-read mode of $mode; logs (the daemon's and the shim's) emptied.
fattach() {
	: >"$log"
	: >"$flog"
	local nommap=()
	[ "$mode" = off ] && nommap=(GELI_MMAP=0)
	env "${nommap[@]+"${nommap[@]}"}" LD_PRELOAD="$preload" FAULT_PATH="$prov" \
	    FAULT_LOG="$flog" "$@" "$GELI" attach -b "$backend" -j "$T/pass" "$prov" >"$T/aout" 2>"$T/aerr"
}

# mapped PROV: the daemon of $name has PROV mapped.
mapped() { grep -qF " $1" "/proc/$(cat "$GELI_RUNDIR/$name.pid")/maps"; }

# rd OFF LEN [FILE]: LEN bytes of the .eli (or FILE) at OFF on stdout, read
# in one request; status and stderr those of dd.
rd() {
	local fl=skip_bytes
	[ -n "${3:-}" ] || fl=$fl$dio
	dd if="${3:-$eli}" bs="$2" count=1 skip="$1" iflag=$fl status=none
}
# wr OFF LEN SRC: bytes [OFF, OFF+LEN) of SRC (a whole .eli's worth) written
# at OFF of the .eli in one request.
wr() {
	dd if="$3" of="$eli" bs="$2" count=1 skip="$1" seek="$1" \
	    iflag=skip_bytes oflag=seek_bytes$dio conv=notrunc status=none
}
# ref_wr OFF LEN SRC: the same write into the reference plaintext.
ref_wr() {
	dd if="$3" of="$T/ref" bs="$2" count=1 skip="$1" seek="$1" \
	    iflag=skip_bytes oflag=seek_bytes conv=notrunc status=none
}

# reads_ok DESC OFF LEN: those bytes read back as the reference says.
reads_ok() {
	local desc=$1
	if cmp -s <(rd "$2" "$3" 2>"$T/rerr") <(rd "$2" "$3" "$T/ref"); then ok "$desc"
	else nok "$desc"; cat "$T/rerr" | diag; fi
}
# reads_eio DESC OFF LEN: the read fails with EIO and returns nothing.
reads_eio() {
	local desc=$1
	rd "$2" "$3" >"$T/got" 2>"$T/rerr"
	if [ $? -ne 0 ] && grep -q "Input/output error" "$T/rerr" && [ ! -s "$T/got" ]; then
		ok "$desc"
	else
		nok "$desc"; { echo "status and output of the read:"; cat "$T/rerr"; stat -c 'got %s bytes' "$T/got"; } | diag
	fi
}
# writes_fail DESC ERRTEXT OFF LEN SRC: the write fails with that error.
writes_fail() {
	local desc=$1 want=$2
	wr "$3" "$4" "$5" 2>"$T/werr"
	if [ $? -ne 0 ] && grep -q "$want" "$T/werr"; then ok "$desc"
	else nok "$desc"; cat "$T/werr" | diag; fi
}

# blocks_old_or_new DESC OFF LEN OLD NEW: every B-byte block of the .eli in
# [OFF, OFF+LEN) is the one of OLD or of NEW (files of the whole .eli):
# after a failed write, what landed and what did not, but nothing else.
blocks_old_or_new() {
	local desc=$1 off=$2 len=$3 old=$4 new=$5
	# The range in B-byte requests, as one reader; a block that does not
	# read is zeros (and so, unless old or new is zeros there, neither).
	dd if="$eli" of="$T/bon.cur" bs=$B skip=$((off / B)) count=$((len / B)) \
	    conv=noerror,sync status=none 2>/dev/null
	python3 - "$T/bon.cur" "$old" "$new" "$off" "$len" "$B" >"$T/bon" <<'PY'
import sys
path, old, new = sys.argv[1:4]
off, length, B = map(int, sys.argv[4:7])
cur = open(path, "rb").read().ljust(length, b"\0")
def part(p):
    with open(p, "rb") as f:
        f.seek(off)
        return f.read(length)
o, n = part(old), part(new)
for i in range(0, length, B):
    if cur[i:i + B] not in (o[i:i + B], n[i:i + B]):
        print("block at %d is neither" % (off + i))
PY
	if [ ! -s "$T/bon" ]; then ok "$desc"; else nok "$desc"; diag <"$T/bon"; fi
}

# scan DESC [BADOFF BADLEN]: the whole .eli read sector by sector; every
# sector that reads is the reference's; the ones that fail are all in the
# bad range, and with the mapping off all of the bad range fails.
scan() {
	local desc=$1 lo=${2:-0} len=${3:-0} fails wrong
	# (status=none would keep the errors of conv=noerror quiet too)
	dd if="$eli" of="$T/scan" bs=$B conv=noerror,sync 2>"$T/scan.err"
	fails=$(grep -c "Input/output error" "$T/scan.err")
	# Sectors that differ from the reference: failed (zeros) or wrong.
	wrong=$(cmp -l "$T/scan" "$T/ref" 2>/dev/null | awk -v B=$B -v lo=$lo -v len=$len '
		{ s = int(($1 - 1) / B) * B; if (s < lo || s >= lo + len) out[s] = 1 }
		END { for (s in out) print s }' | wc -l)
	if [ "$wrong" = 0 ] && [ "$(stat -c %s "$T/scan")" = "$elisize" ] &&
	    { [ "$mode" = on ] || [ "$fails" = $((len / B)) ]; }; then
		ok "$desc"
	else
		nok "$desc"; echo "$fails failed, $wrong sectors outside the bad range wrong" | diag
	fi
}

# The daemon's log line for a failed request, FreeBSD's G_ELI_LOGREQ in
# g_eli_read_done()/g_eli_write_done():
#   GEOM_ELI: g_eli_read_done() failed (error=5) f.img.eli[READ(offset=O, length=L)]
# expect_io_log DESC READ|WRITE ERRNO LO LEN: such a line, for a request
# [O, O+L) that overlaps [LO, LO+LEN).  These need the daemon to log I/O
# errors (src/attach/serve.c be_read/be_write).
expect_io_log() {
	local desc=$1 cmd=$2 err=$3 lo=$4 len=$5 fn o l hit=0
	case $cmd in READ) fn=g_eli_read_done ;; WRITE) fn=g_eli_write_done ;; esac
	while read -r o l; do
		[ "$o" -lt $((lo + len)) ] && [ $((o + l)) -gt "$lo" ] && hit=1
	done < <(sed -nE "s/.* GEOM_ELI: $fn\(\) failed \(error=$err\) ${name//./\\.}\.eli\[$cmd\(offset=([0-9]+), length=([0-9]+)\)\]$/\1 \2/p" "$log")
	if [ $hit = 1 ]; then ok "$desc"; else nok "$desc"; diag <"$log"; fi
}
# expect_flush_log DESC ERRNO: a line for a failed flush, ending in
#   failed (error=5) f.img.eli[FLUSH]
# (FreeBSD passes BIO_FLUSH down without a line of its own; this is the
# same shape, g_print_bio's "name[FLUSH]").  Needs the daemon (be_flush).
expect_flush_log() {
	check "$1" grep -qE " GEOM_ELI: .*failed \(error=$2\) ${name//./\\.}\.eli\[FLUSH\]$" "$log"
}

# injected WHAT: the shim's log says it injected WHAT (so a case that
# passes was not passing by missing its fault).
injected() { grep -q "$1" "$flog"; }

# ---- The cases, with the mapped-read path on and off --------------------------

M=$((1 << 20))
bad=$M					# EIO on read: sectors 256 and 257
badlen=$((2 * B))
wbad=$((2 * M))				# EIO on write: sector 512
nospc=$((4 * M))			# ENOSPC from 4 MiB on
head -c "$elisize" /dev/urandom >"$T/new"

faults() {
	# EIO on read of one range.
	fresh
	fattach FAULT_READ_EIO=$bad:$badlen
	check "[$mode] attach with the shim" test -e "$eli"
	if [ "$mode" = on ]; then
		check "[on] the daemon reads through a mapping of the provider" mapped "$prov"
	fi
	reads_eio "[$mode] read EIO: the first bad sector fails with EIO" $bad $B
	check "[$mode] ... the shim injected it" injected "pread off=$bad len=.*: EIO"
	reads_eio "[$mode] read EIO: the second bad sector fails" $((bad + B)) $B
	reads_eio "[$mode] read EIO: both in one request fail" $bad $badlen
	evict "$prov"
	reads_eio "[$mode] read EIO: 200 unaligned bytes across the start fail" $((bad - 100)) 200
	evict "$prov"
	reads_eio "[$mode] read EIO: 20 unaligned bytes across the end fail" $((bad + badlen - 10)) 20
	evict "$prov"
	reads_eio "[$mode] read EIO: a 1 MiB request over the range fails" $((bad - M / 2)) $M
	reads_ok "[$mode] read EIO: the sector before reads right" $((bad - B)) $B
	reads_ok "[$mode] read EIO: the sector after reads right" $((bad + badlen)) $B
	reads_ok "[$mode] read EIO: 300 unaligned bytes up to the range read right" $((bad - 300)) 300
	reads_ok "[$mode] read EIO: 300 unaligned bytes from its end read right" $((bad + badlen)) 300
	evict "$prov"
	scan "[$mode] read EIO: a scan: every sector outside the range right, never wrong data" $bad $badlen
	check "[$mode] read EIO: the daemon still serves (status)" attached "$name"
	expect_io_log "[$mode] read EIO: the daemon logs the failed read" READ 5 $bad $badlen
	# Provider pages in the page cache: the mapping serves them (the data
	# is right); without it, pread still fails.
	cat "$prov" >/dev/null
	if [ "$mode" = on ]; then
		reads_ok "[on] a bad sector whose page is cached reads right, from the mapping" $bad $B
	else
		reads_eio "[off] a bad sector whose page is cached still fails (pread)" $bad $B
	fi
	"$GELI" detach "$name"

	# Short transfers and EINTR on every read and write.
	fresh
	fattach FAULT_SHORT_READ=1 FAULT_SHORT_WRITE=1 FAULT_EINTR=1
	check "[$mode] short: the whole provider reads right" cmp -s "$eli" "$T/ref"
	check "[$mode] short: ... the shim shortened reads" injected "pread .*short"
	wr 777 $((M + 123)) "$T/new" && ref_wr 777 $((M + 123)) "$T/new"
	wr $((3 * M)) $M "$T/new" && ref_wr $((3 * M)) $M "$T/new"
	check "[$mode] short: ... and the shim shortened writes" injected "pwrite .*short"
	evict "$prov"
	check "[$mode] short: after unaligned and aligned writes, all reads right" cmp -s "$eli" "$T/ref"
	"$GELI" detach "$name"
	"$GELI" attach -b fuse -j "$T/pass" "$prov"
	check "[$mode] short: attached again without faults, all is right" cmp -s "$eli" "$T/ref"
	"$GELI" detach "$name"

	# EIO on write of one range.
	fresh
	fattach FAULT_WRITE_EIO=$wbad:$B
	cp "$T/ref" "$T/old"
	writes_fail "[$mode] write EIO: a write of the bad sector fails with EIO" "Input/output error" $wbad $B "$T/new"
	check "[$mode] ... the shim injected it" injected "pwrite off=$wbad len=.*: EIO"
	writes_fail "[$mode] write EIO: 100 unaligned bytes inside it fail" "Input/output error" $((wbad + 1000)) 100 "$T/new"
	writes_fail "[$mode] write EIO: unaligned bytes across its start fail" "Input/output error" $((wbad - 50)) 100 "$T/new"
	check "[$mode] write EIO: the sector before it takes a write" wr $((wbad - B)) $B "$T/new"
	ref_wr $((wbad - B)) $B "$T/new"
	check "[$mode] write EIO: the sector after it takes a write" wr $((wbad + B)) $B "$T/new"
	ref_wr $((wbad + B)) $B "$T/new"
	reads_ok "[$mode] write EIO: the writes that landed read back" $((wbad - B)) $B
	reads_ok "[$mode] write EIO: ... both" $((wbad + B)) $B
	reads_ok "[$mode] write EIO: the bad sector keeps its old data" $wbad $B
	writes_fail "[$mode] write EIO: a 64 KiB request over it fails" "Input/output error" $((wbad - 8 * B)) $((16 * B)) "$T/new"
	blocks_old_or_new "[$mode] write EIO: after it every sector is old or new data" $((wbad - 8 * B)) $((16 * B)) "$T/ref" "$T/new"
	reads_ok "[$mode] write EIO: the bad sector still has its old data" $wbad $B
	check "[$mode] write EIO: the daemon still serves (status)" attached "$name"
	expect_io_log "[$mode] write EIO: the daemon logs the failed write" WRITE 5 $wbad $B
	"$GELI" detach "$name"

	# fsync fails.
	fresh
	fattach FAULT_FSYNC_EIO=1
	dd if="$T/new" of="$eli" bs=$B count=4 conv=notrunc,fsync status=none 2>"$T/serr"
	check "[$mode] fsync EIO: fsync of the .eli fails with EIO" grep -q "Input/output error" "$T/serr"
	check "[$mode] ... the shim injected it" injected "fsync: EIO"
	dd if="$T/new" of="$eli" bs=$B count=4 conv=notrunc,fdatasync status=none 2>"$T/serr"
	check "[$mode] fsync EIO: fdatasync fails too" grep -q "Input/output error" "$T/serr"
	ref_wr 0 $((4 * B)) "$T/new"
	reads_ok "[$mode] fsync EIO: the data written reads back" 0 $((4 * B))
	check "[$mode] fsync EIO: the daemon still serves (status)" attached "$name"
	expect_flush_log "[$mode] fsync EIO: the daemon logs the failed flush" 5
	"$GELI" detach "$name"

	# ENOSPC from one offset on.
	fresh
	fattach FAULT_WRITE_ENOSPC=$nospc
	cp "$T/ref" "$T/old"
	check "[$mode] ENOSPC: a write before the full offset lands" wr $M $M "$T/new"
	ref_wr $M $M "$T/new"
	writes_fail "[$mode] ENOSPC: a write across it fails with ENOSPC" "No space left on device" $((nospc - M / 2)) $M "$T/new"
	check "[$mode] ... the shim injected it" injected "pwrite off=.*: ENOSPC"
	writes_fail "[$mode] ENOSPC: a write past it fails" "No space left on device" $((nospc + M)) $B "$T/new"
	reads_ok "[$mode] ENOSPC: the earlier write is intact" $M $M
	reads_ok "[$mode] ENOSPC: data never written over is intact" 0 $M
	blocks_old_or_new "[$mode] ENOSPC: the failed request left old or new data" $((nospc - M / 2)) $M "$T/old" "$T/new"
	reads_ok "[$mode] ENOSPC: past the offset the old data" $nospc $M
	check "[$mode] ENOSPC: the daemon still serves (status)" attached "$name"
	expect_io_log "[$mode] ENOSPC: the daemon logs the failed write" WRITE 28 $((nospc - M / 2)) $M
	"$GELI" detach "$name"

	# The provider file cut short while attached.
	fresh
	fattach
	cut=$((3 * M))
	dd if="$eli" of=/dev/null bs=1M status=none	# pages cached and mapped
	truncate -s $cut "$prov"
	reads_eio "[$mode] cut: a read past the cut fails with EIO" $((cut + M)) $B
	reads_eio "[$mode] cut: a read across the cut fails" $((cut - B)) $((2 * B))
	reads_eio "[$mode] cut: unaligned bytes across the cut fail" $((cut - 10)) 20
	reads_ok "[$mode] cut: the sector before the cut reads right" $((cut - B)) $B
	reads_ok "[$mode] cut: the first MiB reads right" 0 $M
	check "[$mode] cut: the daemon still serves (status)" attached "$name"
	expect_io_log "[$mode] cut: the daemon logs the failed read" READ 5 $cut $((elisize - cut))
	"$GELI" detach -f "$name"

	# A provider that is a loop device: EIO on it, then losetup -d while
	# attached with -L (deferred by the kernel while the daemon holds it).
	rm -f "$T/lp.img"
	truncate -s 8M "$T/lp.img"
	lp=$(losetup -f --show "$T/lp.img")
	on_exit "drop_loop $lp $T/lp.img"
	"$GELI" init -B none -i 100 -s $B -J "$T/pass" "$lp" >/dev/null
	lname=$(basename "$lp")
	: >"$GELI_RUNDIR/$lname.log"
	local nommap=()
	[ "$mode" = off ] && nommap=(GELI_MMAP=0)
	env "${nommap[@]+"${nommap[@]}"}" LD_PRELOAD="$preload" FAULT_PATH="$lp" \
	    FAULT_LOG="$flog" FAULT_READ_EIO=$bad:$B "$GELI" attach -b fuse -L -j "$T/pass" "$lp" >"$T/aout"
	eloop=$(cat "$T/aout")
	check "[$mode] loop provider: attach -L gives a loop device" test -b "$eloop"
	dd if="$T/new" of="$eloop" bs=1M count=2 oflag=direct status=none
	evict "$lp"
	run dd if="$eloop" of=/dev/null bs=$B skip=$((bad / B)) count=1 iflag=direct
	check "[$mode] loop provider: the bad sector fails with EIO through the loop device" grep -q "Input/output error" "$T/err"
	check "[$mode] loop provider: the rest reads right" cmp -s <(dd if="$eloop" bs=$B count=8 iflag=direct status=none) <(head -c $((8 * B)) "$T/new")
	run losetup -d "$lp"
	check "[$mode] loop provider: losetup -d of the provider while attached" test "$rc" = 0
	check "[$mode] loop provider: ... the daemon still serves" attached "$lname"
	check "[$mode] loop provider: ... reads still right" cmp -s <(dd if="$eloop" bs=$B skip=8 count=8 iflag=direct status=none) <(dd if="$T/new" bs=$B skip=8 count=8 status=none)
	dd if="$T/new" of="$eloop" bs=$B count=4 seek=16 oflag=direct status=none
	check "[$mode] loop provider: ... and writes land" cmp -s <(dd if="$eloop" bs=$B skip=16 count=4 iflag=direct status=none) <(head -c $((4 * B)) "$T/new")
	expect_ok "[$mode] loop provider: detach" "$GELI" detach "$lname"
	# (asked anew each time: cleared once the daemon and udev let go)
	check "[$mode] loop provider: then the provider's loop device is gone" wait_for eval 'test -z "$(losetup -j "$T/lp.img")"'
	check "[$mode] loop provider: and the -L loop device" wait_for fails test -e "/sys/block/$(basename "$eloop")/loop/backing_file"
}

backend=fuse dio=
# On tmpfs (the guest's, under its overlay) the provider's pages never
# leave the page cache: the mapping serves every read, and pread's faults
# never come.
head -c 1M /dev/urandom >"$T/ev"
evict "$T/ev"
stays=$(fincore -n -b -o RES "$T/ev" 2>/dev/null | tr -d " ")
for mode in on off; do
	if [ $mode = on ] && [ "${stays:-0}" != 0 ]; then
		skip "[on] the provider's file system keeps its pages in memory (tmpfs): the mapping always finds them (the host runs these)"
		continue
	fi
	if [ $mode = off ]; then
		# The knob: GELI_MMAP=0 in the environment of attach.
		fresh
		fattach
		if mapped "$prov"; then
			"$GELI" detach "$name"
			skip "[off] the daemon has no GELI_MMAP=0 knob: it maps the provider regardless"
			continue
		fi
		"$GELI" detach "$name"
	fi
	faults
done

# The -L loop device deleted under the daemon, and its number taken by a
# loop device of ours (what any other user may do): detach ends the daemon
# and leaves the other loop device alone.
fresh
"$GELI" attach -b fuse -L -j "$T/pass" "$prov" >"$T/aout"
eloop=$(cat "$T/aout")
pid=$(cat "$GELI_RUNDIR/$name.pid")
run losetup -d "$eloop"
check "-L device deleted: losetup -d succeeds" test "$rc" = 0
check "-L device deleted: the daemon still serves" attached "$name"
reads_ok "-L device deleted: the .eli file still reads right" 0 $M
truncate -s 1M "$T/other.img"
if losetup "$eloop" "$T/other.img" 2>/dev/null; then
	on_exit "drop_loop $eloop $T/other.img"
	expect_ok "-L device deleted: detach" "$GELI" detach "$name"
	check "-L device deleted: the daemon is gone" wait_for fails alive "$pid"
	check "-L device deleted: detach leaves the loop device now on that number alone" \
		test "$(cat "/sys/block/$(basename "$eloop")/loop/backing_file" 2>/dev/null)" = "$T/other.img"
	drop_loop "$eloop" "$T/other.img"
else
	# Somebody else's now: no detach that could take it with it.
	kill_daemon "$pid"
	skip "-L device deleted: its number was taken before ours could be"
fi

# The .eli file lazily unmounted under a -L daemon (a cleanup's umount -l):
# the loop device still reads through it, and detach still takes it away
# (it is known by the file it was set up on, not by the path).
fresh
"$GELI" attach -b fuse -L -j "$T/pass" "$prov" >"$T/aout"
eloop=$(cat "$T/aout")
pid=$(cat "$GELI_RUNDIR/$name.pid")
umount -l "$GELI_RUNDIR/$name.eli"
check ".eli unmounted under -L: the loop device still reads" \
	dd if="$eloop" of=/dev/null bs=4096 count=16 status=none
expect_ok ".eli unmounted under -L: detach" "$GELI" detach "$name"
check ".eli unmounted under -L: the daemon is gone" wait_for fails alive "$pid"
check ".eli unmounted under -L: and the loop device with it" \
	wait_for fails test -e "/sys/block/$(basename "$eloop")/loop/backing_file"


# ---- Through ublk, with direct I/O ---------------------------------------------

if [ ! -c /dev/ublk-control ]; then
	skip "ublk: the kernel has none (the guest lane's backports has)"
	done_testing
	exit
fi
backend=ublk dio=,direct mode=off
fresh
fattach FAULT_READ_EIO=$bad:$badlen FAULT_WRITE_EIO=$wbad:$B
check "[ublk] attached through ublk with the shim" test "$(backend_of "$name")" = ublk -a -b "$eli"
reads_eio "[ublk] read EIO: the bad sector fails with EIO" $bad $B
check "[ublk] ... the shim injected it" injected "pread off=$bad len=.*: EIO"
reads_eio "[ublk] read EIO: a 1 MiB request over the range fails" $((bad - M / 2)) $M
reads_ok "[ublk] read EIO: the sector before reads right" $((bad - B)) $B
reads_ok "[ublk] read EIO: the sector after reads right" $((bad + badlen)) $B
expect_io_log "[ublk] read EIO: the daemon logs the failed read" READ 5 $bad $badlen
writes_fail "[ublk] write EIO: a write of the bad sector fails with EIO" "Input/output error" $wbad $B "$T/new"
check "[ublk] write EIO: the sector after it takes a write" wr $((wbad + B)) $B "$T/new"
ref_wr $((wbad + B)) $B "$T/new"
reads_ok "[ublk] write EIO: it reads back" $((wbad + B)) $B
reads_ok "[ublk] write EIO: the bad sector keeps its old data" $wbad $B
expect_io_log "[ublk] write EIO: the daemon logs the failed write" WRITE 5 $wbad $B
check "[ublk] the daemon still serves (status)" attached "$name"
"$GELI" detach "$name"

fresh
fattach FAULT_WRITE_ENOSPC=$nospc FAULT_FSYNC_EIO=1
check "[ublk] ENOSPC: a write before the full offset lands" wr $M $M "$T/new"
ref_wr $M $M "$T/new"
writes_fail "[ublk] ENOSPC: a write across it fails with ENOSPC" "No space left on device" $((nospc - M / 2)) $M "$T/new"
reads_ok "[ublk] ENOSPC: the earlier write is intact" $M $M
reads_ok "[ublk] ENOSPC: past the offset the old data" $nospc $M
dd if="$T/new" of="$eli" bs=$B count=4 conv=notrunc,fsync status=none 2>"$T/serr"
check "[ublk] fsync EIO: fsync of the device fails with EIO" grep -q "Input/output error" "$T/serr"
expect_flush_log "[ublk] fsync EIO: the daemon logs the failed flush" 5
check "[ublk] the daemon still serves (status)" attached "$name"
"$GELI" detach -f "$name"

done_testing
