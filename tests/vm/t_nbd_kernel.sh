#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The kernel's own NBD client on geli serve: nbd-client (Debian's) connects
# /dev/nbd0 to geli serve's socket; ext4 made on it, written, checked by
# fsck; a pool on a second one, scrubbed; disconnected, the server stopped
# by its PID, and what went in through the kernel reads back through geli
# attach.  In a guest of tests/vm/run (the lane).
. "$(dirname "$0")/guest.sh"
if [ -z "${GELI_NBDKIT_FILTER:-}" ] || [ ! -f "$GELI_NBDKIT_FILTER" ] || [ -n "${GELI_SANITIZED:-}" ]; then
	skip "no nbdkit-geli-filter.so (or a sanitized build, which nbdkit cannot load)"; done_testing; exit
fi

passfile "$T/pass" "nbd in the kernel"
mkprov "$T/fs" 96M
mkprov "$T/pool" 96M
"$GELI" init -B none -i 1000 -s 4096 -J "$T/pass" "$T/fs" >/dev/null
"$GELI" init -B none -i 1000 -s 4096 -e camellia-cbc -a hmac/sha256 -J "$T/pass" "$T/pool" >/dev/null

# serve NAME: geli serve of $T/NAME on $T/NAME.sock, its PID in SRV[NAME],
# then nbd-client connects DEV to it.
declare -A SRV
serve() {
	"$GELI" serve -j "$T/pass" -U "$T/$1.sock" "$T/$1" </dev/null >/dev/null 2>"$T/$1.err" &
	SRV[$1]=$!
	on_exit "kill ${SRV[$1]} 2>/dev/null"
	wait_for test -S "$T/$1.sock"
	nbd-client -unix "$T/$1.sock" "$2" -b 4096 >"$T/$1.nbd" 2>&1
}
stop() {
	nbd-client -d "$2" >/dev/null 2>&1
	kill -TERM "${SRV[$1]}"
	wait "${SRV[$1]}"
}

serve fs /dev/nbd0
check "nbd-client connects /dev/nbd0 to geli serve" test "$(blockdev --getsize64 /dev/nbd0 2>/dev/null)" = \
	$((96 * 1048576 - 4096))
check "... with GELI's 4096-byte sectors" test "$(blockdev --getss /dev/nbd0)" = 4096
mkfs.ext4 -q -F /dev/nbd0
mkdir -p "$T/mnt"
mount /dev/nbd0 "$T/mnt"
put_files "$T/mnt" 24
cp "$T/sums" "$T/fs.sums"
umount "$T/mnt"
check "ext4 on /dev/nbd0: written, fsck finds it clean" fsck.ext4 -fn /dev/nbd0
stop fs /dev/nbd0
check "disconnected, geli serve stops with status 0" test $? = 0 -a ! -e "$T/fs.sock"

serve pool /dev/nbd1
# (integrity: every sector written once before ZFS reads any, as geli(8)
# says; dd ends at the end of the device)
dd if=/dev/zero of=/dev/nbd1 bs=1M oflag=direct status=none 2>/dev/null
zpool create -O compression=off nbdpool /dev/nbd1
put_files /nbdpool 16
check "a pool on /dev/nbd1 (Camellia-CBC, HMAC/SHA256): written, scrubbed clean" scrub_clean nbdpool
zpool export nbdpool
check "... zdb finds it consistent" zdb_clean nbdpool
stop pool /dev/nbd1

# What went in through the kernel's client, out through geli attach.
"$GELI" attach -r -j "$T/pass" -L "$T/fs" >/dev/null
mount -o ro /dev/fs.eli "$T/mnt"
cp "$T/fs.sums" "$T/sums"
check "attached: the files written through /dev/nbd0 read back" files_ok "$T/mnt"
umount "$T/mnt"
"$GELI" detach fs
done_testing
