#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# suite: plain
# nbdkit-geli-filter and geli serve, with real NBD clients: nbdinfo,
# nbdcopy, nbdsh, qemu-img and qemu-io, over a Unix socket and over
# 127.0.0.1.  What goes in through NBD comes out through geli attach and
# the other way round; FreeBSD's volumes read through it; every cipher,
# sector size, version and integrity mode; integrity failures are EIO;
# two clients writing parts of the same GELI sectors at once both land;
# trim frees the provider's blocks unless NODELETE; wrong keys refuse to
# start.  Every server is started here and stopped by its PID.
. "$(dirname "$0")/lib.sh"

F=${GELI_NBDKIT_FILTER:-}
if [ -z "$F" ] || [ ! -f "$F" ]; then
	skip "no nbdkit-geli-filter.so in this build"; done_testing; exit
fi
if [ -n "${GELI_SANITIZED:-}" ]; then
	skip "nbdkit cannot load a module built with the sanitizers"; done_testing; exit
fi
for p in nbdkit nbdinfo nbdcopy nbdsh qemu-img qemu-io; do
	command -v $p >/dev/null || { skip "needs $p"; done_testing; exit; }
done
# nbdsh runs "python3 -m nbd": Debian's python3, which has the module.
# Its snippets take one argument, in $ARG (nbdsh takes none of its own).
nbdsh() { PATH=/usr/bin:$PATH command nbdsh "$@"; }
nbdpy() { ARG=$1 nbdsh -u "$URI" -c "import os, sys, errno; arg = os.environ['ARG']
$2"; }
fails() { ! "$@"; }

SOCK=$T/sock
URI="nbd+unix:///?socket=$SOCK"
passfile "$T/pass" "nbd secret, long enough to outlast malloc's free-list words 7f3a"
passfile "$T/wrong" "not it"

# serve PROV [nbdkit options...] -- [filter/plugin parameters...]: nbdkit
# in the background on $SOCK (or the -p given), $srv its PID; 0 once it
# answers, 1 if it stopped first (its stderr in $T/srv.err).  It is given
# 60 s to answer: a hang's bound, not a verdict's.
srv=
serve() {
	local prov=$1 opts=() params=(); shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do opts+=("$1"); shift; done
	[ "${1:-}" = -- ] && shift
	params=("$@")
	rm -f "$SOCK"
	case " ${opts[*]-} " in
	*" -p "*) ;;
	*) opts+=(-U "$SOCK") ;;
	esac
	nbdkit -f "${opts[@]}" --filter="$F" file file="$prov" "${params[@]}" \
		</dev/null >/dev/null 2>"$T/srv.err" &
	srv=$!
	for _ in $(seq 1 1200); do
		if ! kill -0 "$srv" 2>/dev/null; then wait "$srv"; srv=; return 1; fi
		if nbdinfo --size "${SRV_URI:-$URI}" >/dev/null 2>&1; then return 0; fi
		sleep 0.05
	done
	return 1
}
unserve() {
	[ -n "$srv" ] || return 0
	kill "$srv" 2>/dev/null
	wait "$srv" 2>/dev/null
	srv=
	rm -f "$SOCK"
}
on_exit unserve

# A new volume: init -B none -i 1000 -J pass with the given options.
newvol() {
	local prov=$1 size=$2; shift 2
	mkprov "$prov" "$size"
	"$GELI" init -B none -i 1000 -J "$T/pass" "$@" "$prov" >/dev/null
}
elisize() { echo $(( $1 - $2 )); }

# ---- Keys ----------------------------------------------------------------

newvol "$T/p" 16M -s 4096
check "a wrong passphrase: nbdkit does not start" \
	fails serve "$T/p" -- password=+"$T/wrong"
check "... and says FreeBSD's \"Wrong key for PROV.\"" \
	grep -qx "nbdkit: error: Wrong key for $T/p." "$T/srv.err"
check "no passphrase for a volume that has one: a clear error" \
	fails serve "$T/p" --
check "... naming the parameter" grep -q "needs a passphrase: give password=" "$T/srv.err"
check "password=+FILE opens it" serve "$T/p" -- password=+"$T/pass"
unserve
exec 7<"$T/pass"
check "password=-FD opens it" serve "$T/p" -- password=-7
exec 7<&-
unserve

head -c 100 /dev/urandom >"$T/kf"
mkprov "$T/k" 8M
"$GELI" init -B none -P -K "$T/kf" "$T/k" >/dev/null
check "a keyfile alone opens a volume made without a passphrase" serve "$T/k" -- keyfile="$T/kf"
unserve
"$GELI" setkey -n 1 -j "$T/pass" -J "$T/wrong" "$T/p" >/dev/null
check "keyno=1 with slot 1's passphrase opens it" serve "$T/p" -- keyno=1 password=+"$T/wrong"
unserve
check "keyno=0 with slot 1's passphrase is a wrong key" \
	fails serve "$T/p" -- keyno=0 password=+"$T/wrong"

# nbdkit forks its server after reading the parameters, in the background
# (no -f) and with --run: the passphrase must reach the server.
check "nbdkit --run (a forked server) opens it" bash -c \
	'timeout 60 nbdkit -U - --filter="$0" file file="$1" password=+"$2" \
	--run "nbdinfo --size \"\$uri\"" </dev/null | grep -qx "$3"' \
	"$F" "$T/p" "$T/pass" $(( (16 << 20) - 4096 ))
rm -f "$SOCK" "$T/nbdkit.pid"
nbdkit -P "$T/nbdkit.pid" -U "$SOCK" --filter="$F" file file="$T/p" \
	password=+"$T/pass" </dev/null >/dev/null 2>&1
# (up to 60 s: a hang's bound)
for _ in $(seq 1 1200); do [ -s "$T/nbdkit.pid" ] && nbdinfo --size "$URI" >/dev/null 2>&1 && break; sleep 0.05; done
check "nbdkit in the background (forked, -P pidfile) serves it" \
	test "$(nbdinfo --size "$URI" 2>/dev/null)" = $(( (16 << 20) - 4096 ))
[ -s "$T/nbdkit.pid" ] && kill "$(cat "$T/nbdkit.pid")"
rm -f "$SOCK"

# ---- What the export is --------------------------------------------------

serve "$T/p" -- password=+"$T/pass"
check "nbdkit holds the keys in locked memory (VmLck > 0)" \
	test "$(awk '/^VmLck:/ { print $2 }' "/proc/$srv/status")" -gt 0
# Its tail: a freed copy loses its first bytes to the allocator.
passhex=$(printf "free-list words 7f3a" | od -An -tx1 | tr -d ' \n')
check "no passphrase left in nbdkit's memory once it serves" \
	test "$(python3 "$(dirname "$0")/memscan.py" "$srv" "$passhex")" = 0
nbdinfo --json "$URI" >"$T/info.json" 2>&1
info() { python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["exports"][0]; print(e[sys.argv[2]])' "$T/info.json" "$1"; }
check "size: the decrypted size (16 MiB less the last GELI sector)" \
	test "$(info export-size)" = "$(elisize $((16 << 20)) 4096)"
check "block sizes: minimum 1, preferred the GELI sector size" \
	test "$(info block_size_minimum)" = 1 -a "$(info block_size_preferred)" = 4096
check "writable, flush, FUA, trim, zero, multi-conn" \
	test "$(info is_read_only)/$(info can_flush)/$(info can_fua)/$(info can_trim)/$(info can_zero)/$(info can_multi_conn)" = "False/True/True/True/True/True"

# ---- Data through every client -------------------------------------------

size=$(elisize $((16 << 20)) 4096)
head -c "$size" /dev/urandom >"$T/data"
check "nbdcopy writes the volume" nbdcopy "$T/data" "$URI"
check "nbdcopy reads it back" nbdcopy "$URI" "$T/back"
check "... the same bytes" cmp -s "$T/data" "$T/back"
cp "$T/data" "$T/want"
check "nbdsh: writes at unaligned offsets, within and across GELI sectors" nbdpy "$T/want" '
want = open(arg, "r+b")
for off, n in [(1, 3), (4095, 2), (5000, 10000), (4096 * 7 + 511, 4096 * 3 + 1), (12345678, 77)]:
    b = bytes((off + i) % 251 for i in range(n))
    h.pwrite(b, off)
    want.seek(off); want.write(b)
want.close()
'
check "... read back through nbdsh as written" nbdpy "$T/want" '
want = open(arg, "rb").read()
for off, n in [(0, 8), (4090, 20), (4999, 10002), (28671, 12290), (12345670, 100)]:
    assert h.pread(n, off) == want[off:off + n], off
'
check "FUA writes, zero and flush" nbdsh -u "$URI" -c '
h.pwrite(b"x" * 4096, 8192, nbd.CMD_FLAG_FUA)
h.zero(10000, 3 * 4096 + 17)
assert h.pread(10000, 3 * 4096 + 17) == bytes(10000)
h.flush()
'
python3 - "$T/want" <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(8192); f.write(b"x" * 4096)
    f.seek(3 * 4096 + 17); f.write(bytes(10000))
PY
check "qemu-img compare: the export equals what was written" \
	qemu-img compare -q -f raw -F raw "$URI" "$T/want"
check "qemu-img convert reads it" qemu-img convert -f raw -O raw "$URI" "$T/conv"
check "... the same bytes" cmp -s "$T/conv" "$T/want"
check "qemu-io writes a pattern and reads it back" \
	bash -c 'qemu-io -f raw -c "write -P 0x5a 1000 70000" -c "read -P 0x5a 1000 70000" "$0" | grep -q "read 70000/70000"' "$URI"
python3 - "$T/want" <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(1000); f.write(b"\x5a" * 70000)
PY
unserve

export GELI_RUNDIR
expect_ok "written through NBD: geli attach" "$GELI" attach -j "$T/pass" "$T/p"
check "... reads what the clients wrote" cmp -s "$GELI_RUNDIR/p.eli" "$T/want"
head -c 300000 /dev/urandom >"$T/chunk"
dd if="$T/chunk" of="$GELI_RUNDIR/p.eli" bs=1000 seek=3001 conv=notrunc,fsync status=none
dd if="$T/chunk" of="$T/want" bs=1000 seek=3001 conv=notrunc status=none
"$GELI" detach p
serve "$T/p" -- password=+"$T/pass"
check "written through attach: read through NBD" \
	qemu-img compare -q -f raw -F raw "$URI" "$T/want"

# ---- Two clients at once ---------------------------------------------------

# Each writes every other 512-byte piece of the same 64 GELI sectors: a
# read-modify-write of one must never undo the other's piece.
two=$(cat <<'PY'
k = int(arg)
for rnd in range(4):
    for i in range(k, 512, 2):
        h.pwrite(bytes([i % 256]) * 512, 1 << 20 | i * 512)
PY
)
nbdpy 0 "$two" & c0=$!
nbdpy 1 "$two" & c1=$!
wait $c0; r0=$?; wait $c1; r1=$?
check "two clients at once both finish" test $r0 = 0 -a $r1 = 0
check "... and every piece of both is there" nbdsh -u "$URI" -c '
got = h.pread(512 * 512, 1 << 20)
for i in range(512):
    assert got[i * 512:(i + 1) * 512] == bytes([i % 256]) * 512, i
'
check "nbdcopy with several connections (multi-conn) reads the same bytes" \
	bash -c 'nbdcopy --connections=4 "$0" "$1" && nbdcopy --connections=1 "$0" "$2" && cmp -s "$1" "$2"' \
	"$URI" "$T/mc4" "$T/mc1"
cp "$T/mc1" "$T/want"	# the two clients' pieces are part of it now
unserve

# ---- Over TCP ---------------------------------------------------------------

port=$((20000 + RANDOM % 20000))
SRV_URI=nbd://127.0.0.1:$port
check "over 127.0.0.1: nbdkit -p $port serves it" serve "$T/p" -p "$port" -i 127.0.0.1 -- password=+"$T/pass"
check "... nbdinfo gives the size" test "$(nbdinfo --size "$SRV_URI")" = "$size"
check "... nbdcopy reads the same bytes" bash -c 'nbdcopy "$0" "$1" && cmp -s "$1" "$2"' "$SRV_URI" "$T/tcp" "$T/want"
unserve
unset SRV_URI

# ---- Read-only ----------------------------------------------------------------

serve "$T/p" -- password=+"$T/pass" readonly=true
check "readonly=true: the export is read-only" \
	bash -c 'nbdinfo --json "$0" | grep -q "\"is_read_only\": true"' "$URI"
check "... a write is refused" nbdsh -u "$URI" -c '
try:
    h.pwrite(b"x", 0)
    sys.exit(1)
except nbd.Error:
    pass
'
unserve

# ---- Integrity -------------------------------------------------------------

newvol "$T/a" 8M -a hmac/sha256 -s 4096
serve "$T/a" -- password=+"$T/pass"
check "integrity: no trim offered" bash -c 'nbdinfo --json "$0" | grep -q "\"can_trim\": false"' "$URI"
asize=$(nbdinfo --size "$URI")
head -c "$asize" /dev/urandom >"$T/adata"
nbdcopy "$T/adata" "$URI"
unserve
# One byte of the provider's data of GELI sector 10, flipped: a GELI sector
# of 4096 bytes takes ceil(4096 / (512 - 32)) physical sectors, each with
# 32 bytes of tag at its head (format.md §7.1).
lsec=$(( (4096 + 479) / 480 ))
off=$((10 * lsec * 512 + 100))
flip_byte "$T/a" "$off"
serve "$T/a" -- password=+"$T/pass"
check "a damaged sector: the read fails with EIO, no data" nbdpy "" '
try:
    h.pread(4096, 10 * 4096)
    sys.exit(1)
except nbd.Error as e:
    assert e.errno == errno.EIO or "Input/output" in str(e), e
'
check "... its neighbours read as written" nbdpy "$T/adata" '
d = open(arg, "rb").read()
assert h.pread(4096 * 10, 0) == d[:4096 * 10]
assert h.pread(4096, 11 * 4096) == d[11 * 4096:12 * 4096]
'
check "... the server logs the failure" grep -q "failed authentication" "$T/srv.err"
unserve

# ---- Trim ------------------------------------------------------------------

newvol "$T/t" 32M
serve "$T/t" -- password=+"$T/pass"
head -c $((16 << 20)) /dev/urandom >"$T/tdata"
nbdcopy "$T/tdata" "$URI"
nbdsh -u "$URI" -c 'h.flush()'
before=$(stat -c %b "$T/t")
check "trim of 8 MiB" nbdsh -u "$URI" -c 'h.trim(8 << 20, 4 << 20)'
after=$(stat -c %b "$T/t")
check "... frees the provider's blocks ($before -> $after blocks of 512)" \
	test $((before - after)) -ge $(((8 << 20) / 512 - 64))
check "... the data around it is intact" nbdpy "$T/tdata" '
d = open(arg, "rb").read()
assert h.pread(4 << 20, 0) == d[:4 << 20]
assert h.pread(4 << 20, 12 << 20) == d[12 << 20:16 << 20]
'
check "a trim of less than a sector frees nothing and succeeds" nbdsh -u "$URI" -c '
h.trim(100, 20 << 20)
'
unserve
newvol "$T/nd" 8M -T
serve "$T/nd" -- password=+"$T/pass"
check "NODELETE (init -T): no trim offered" bash -c 'nbdinfo --json "$0" | grep -q "\"can_trim\": false"' "$URI"
unserve

# ---- FreeBSD's volumes --------------------------------------------------------

cp "$FIX/fbsd9-v6-aesxts128-4k-bluemoon.img" "$T/bluemoon.img"
plen=$(stat -c %s "$FIX/fbsd9-v6-aesxts128-4k-bluemoon.plain-prefix")
check "FreeBSD 9's bluemoon (v6, 4096-byte sectors) serves" \
	serve "$T/bluemoon.img" -- readonly=true password=+"$FIX/fbsd9-v6-aesxts128-4k-bluemoon.pass"
nbdcopy "$URI" "$T/bluemoon.plain"
check "... and decrypts to FreeBSD's plaintext" \
	cmp -s -n "$plen" "$T/bluemoon.plain" "$FIX/fbsd9-v6-aesxts128-4k-bluemoon.plain-prefix"
unserve
printf 'password\n' >"$T/pgpass"
if command -v mcopy >/dev/null; then
	for img in "$FIX"/pg-aes-xts-128-0.img "$FIX"/pg-aes-xts-256-0.img; do
		b=$(basename "$img" .img)
		cp "$img" "$T/$b.img"
		serve "$T/$b.img" -- readonly=true password=+"$T/pgpass"
		nbdcopy "$URI" "$T/$b.plain"
		unserve
		check "$b (FreeBSD's FAT inside): random matches its md5" pg_fat_ok "$T/$b.plain"
	done
else
	skip "mtools not installed"
fi

# ---- Every cipher, key length, sector size, version, integrity -----------------

while read -r opts; do
	[ -n "$opts" ] || continue
	# shellcheck disable=SC2086
	newvol "$T/m" 2M $opts
	if ! serve "$T/m" -- password=+"$T/pass"; then
		nok "$opts: serves"; cat "$T/srv.err" | diag; continue
	fi
	msize=$(nbdinfo --size "$URI")
	head -c "$msize" /dev/urandom >"$T/mdata"
	nbdcopy "$T/mdata" "$URI" && nbdcopy "$URI" "$T/mback"
	unserve
	good=0
	if cmp -s "$T/mdata" "$T/mback" && "$GELI" attach -r -j "$T/pass" "$T/m"; then
		cmp -s "$GELI_RUNDIR/m.eli" "$T/mdata" && good=1
		"$GELI" detach m
	fi
	check "$opts: written through NBD, read back through NBD and geli attach" test $good = 1
done <<'LIST'
-e aes-xts -l 128
-e aes-xts -l 256 -s 4096
-e aes-cbc -l 128
-e aes-cbc -l 192 -s 1024
-e aes-cbc -l 256
-e camellia-cbc -l 128
-e camellia-cbc -l 256 -s 2048
-e blowfish-cbc -l 128
-e blowfish-cbc -l 448
-e 3des-cbc -l 192
-e null
-V 0 -e aes-cbc
-V 3 -e aes-cbc
-V 4
-V 5
-V 6 -s 4096
-a hmac/md5
-a hmac/sha1 -s 4096
-a hmac/ripemd160
-a hmac/sha256 -e aes-cbc
-a hmac/sha384 -s 1024
-a hmac/sha512 -e camellia-cbc
LIST

# ---- geli serve -----------------------------------------------------------------

GS=$T/gs.sock
"$GELI" serve -j "$T/pass" -U "$GS" "$T/p" </dev/null >/dev/null 2>"$T/gs.err" &
gs=$!
# (up to 60 s: a hang's bound)
for _ in $(seq 1 1200); do
	nbdinfo --size "nbd+unix:///?socket=$GS" >/dev/null 2>&1 && break
	kill -0 $gs 2>/dev/null || break
	sleep 0.05
done
check "geli serve -j -U: clients read the volume" \
	qemu-img compare -q -f raw -F raw "nbd+unix:///?socket=$GS" "$T/want"
kid=$(pgrep -P $gs -x nbdkit)
check "... nbdkit's argv holds no passphrase" bash -c '! grep -qa "words 7f3a" "/proc/$0/cmdline"' "$kid"
check "... nor its environment" bash -c '! grep -qa "words 7f3a" "/proc/$0/environ"' "$kid"
expect_err "... while it serves, geli attach is refused" \
	"geli: Cannot open $T/p: Operation not permitted.
geli: There was an error with at least one provider." -- \
	"$GELI" attach -j "$T/pass" "$T/p"
kill -TERM $gs
wait $gs
check "SIGTERM: geli serve stops with status 0" test $? = 0
check "... nbdkit is gone" bash -c '! kill -0 "$0" 2>/dev/null' "$kid"
check "... the socket is removed" test ! -e "$GS"
expect_err "geli serve with a wrong key: nbdkit's message, status 1" \
	"nbdkit: error: Wrong key for $T/p.
geli: nbdkit stopped with status 1." -- \
	"$GELI" serve -j "$T/wrong" -n 0 -U "$GS" "$T/p"
expect_ok "attached read-write" "$GELI" attach -j "$T/pass" "$T/p"
expect_err "geli serve of an attached provider is refused" \
	"geli: Cannot open $T/p: Operation not permitted." -- \
	"$GELI" serve -j "$T/pass" -U "$GS" "$T/p"
"$GELI" detach p
expect_err "-U and -p together" "geli: Options -U and -p are mutually exclusive." -- \
	"$GELI" serve -j "$T/pass" -U "$GS" -p 1234 "$T/p"

done_testing
