#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Edges where FreeBSD's sources and its own test suite say what geli does:
# detach -l only marks a provider; a name that is both a provider and a
# device picks the newest device (the one stacked on top); a provider
# stacked on an attached .eli takes the lower volume's sector size; an
# attached provider is not rewritten under its daemon (FreeBSD's exclusive
# open); a provider that is no file or disk fails at once; and an attached
# kill that cannot overwrite the metadata says so.
. "$(dirname "$0")/lib.sh"

passfile "$T/pass" "edges"

# ---- Not a provider: refused at once -------------------------------------
# (The timeouts are a hang's bound, never a verdict's: what fails at once
# may take seconds on a loaded machine under the sanitizers or valgrind.)
mkfifo "$T/fifo"
run timeout 60 "$GELI" dump "$T/fifo"
check "dump of a FIFO fails at once (exit 1, no hang)" test "$rc" = 1
check "... saying it is not a block device" \
	test "$(cat "$T/err")" = "Cannot read metadata from $T/fifo: Block device required."$'\n'"geli: Not fully done."
run timeout 60 "$GELI" init -B none -i 10 -J "$T/pass" "$T/fifo"
check "init of a FIFO fails at once" test "$rc" = 1
run timeout 60 "$GELI" attach -j "$T/pass" "$T/fifo"
check "attach of a FIFO fails at once" test "$rc" = 1
run timeout 60 "$GELI" dump /dev/null
check "dump of a character device fails at once" test "$rc" = 1

need_fuse || { done_testing; exit; }

# ---- detach -l marks; the next last close detaches ------------------------
mkprov "$T/a" 4M
geli init -B none -i 10 -J "$T/pass" "$T/a" >/dev/null
expect_ok "attach a" "$GELI" attach -j "$T/pass" "$T/a"
expect_ok "detach -l of a provider nobody has open" "$GELI" detach -l a.eli
check "it stays attached" attached a
check "... marked RW-DETACH" bash -c '"$0" list a.eli | grep -q "^Flags: .*RW-DETACH"' "$GELI"
head -c 4096 "$GELI_RUNDIR/a.eli" >/dev/null
check "the next last close detaches it" wait_for fails attached a

# ---- An attached provider is not rewritten under its daemon ---------------
expect_ok "attach a again" "$GELI" attach -j "$T/pass" "$T/a"
cp "$T/a" "$T/a.copy"
"$GELI" backup "$T/a" "$T/a.bk"
expect_err "init on an attached provider is refused" \
	"geli: Cannot store metadata on $T/a: Operation not permitted."$'\n'"geli: There was an error with at least one provider." \
	--same "$T/a" -- "$GELI" init -B none -i 10 -J "$T/pass" "$T/a"
expect_err "clear on an attached provider is refused" \
	"Cannot clear metadata on $T/a: Operation not permitted."$'\n'"geli: Not fully done." \
	--same "$T/a" -- "$GELI" clear "$T/a"
expect_err "restore on an attached provider is refused" \
	"geli: Cannot get informations about $T/a: Operation not permitted." \
	--same "$T/a" -- "$GELI" restore "$T/a.bk" "$T/a"
expect_err "resize on an attached provider is refused" \
	"geli: Cannot open $T/a: Operation not permitted." \
	--same "$T/a" -- "$GELI" resize -s 4194304 "$T/a"
expect_ok "reading it (dump) still works" "$GELI" dump "$T/a"
expect_ok "setkey goes through the daemon" "$GELI" setkey -n 1 -J "$T/pass" "$T/a"
expect_ok "detach a" "$GELI" detach a.eli
expect_ok "init once detached" "$GELI" init -B none -i 10 -J "$T/pass" "$T/a"

# ---- Stacked on an attached .eli ------------------------------------------
mkprov "$T/b" 8M
geli init -B none -a HMAC/SHA256 -s 2048 -i 10 -J "$T/pass" "$T/b" >/dev/null
expect_ok "attach b (HMAC/SHA256, 2048-byte sectors)" "$GELI" attach -j "$T/pass" "$T/b"
upper=$GELI_RUNDIR/b.eli
check "b.eli says its sector size" \
	test "$(python3 -c 'import os, sys; print(os.getxattr(sys.argv[1], "user.geli.sectorsize").decode())' "$upper" 2>/dev/null)" = 2048
expect_err "init -s 1024 on b.eli: smaller than its 2048-byte sectors" \
	"geli: Invalid sector size."$'\n'"geli: There was an error with at least one provider." \
	-- "$GELI" init -B none -s 1024 -i 10 -J "$T/pass" "$upper"
expect_ok "init on b.eli" "$GELI" init -B none -i 10 -J "$T/pass" "$upper"
check "... takes b's GELI sector size" test "$(dumpfield "$upper" sectorsize)" = 2048
check "... with the metadata in the last 2048 bytes" \
	bash -c 'tail -c 2048 "$0" | head -c 9 | grep -q "GEOM::ELI"' "$upper"
expect_ok "attach b.eli on top" "$GELI" attach -j "$T/pass" "$upper"
check "the upper device is b.eli.eli" test -e "$GELI_RUNDIR/b.eli.eli"
run "$GELI" list b.eli.eli
check "the upper device's consumer has 2048-byte sectors" \
	bash -c 'sed -n "/^Consumers:/,\$p" "$0" | grep -q "Sectorsize: 2048"' "$T/out"
dd if=/dev/urandom of="$T/data" bs=2048 count=64 2>/dev/null
dd if="$T/data" of="$GELI_RUNDIR/b.eli.eli" bs=2048 conv=notrunc,fsync 2>/dev/null
check "data through both layers reads back" \
	cmp -n $((2048 * 64)) "$T/data" "$GELI_RUNDIR/b.eli.eli"
expect_ok "detach b.eli picks the newest device (the upper one)" "$GELI" detach b.eli
check "the upper device is gone" wait_for fails attached b.eli.eli
check "the lower one is still attached" attached b
expect_ok "detach b.eli again: now the lower one" "$GELI" detach b.eli
check "the lower device is gone" wait_for fails attached b

# ---- A provider cut short while attached ------------------------------------
mkprov "$T/c" 8M
geli init -B none -s 4096 -i 10 -J "$T/pass" "$T/c" >/dev/null
expect_ok "attach c" "$GELI" attach -j "$T/pass" "$T/c"
head -c $((6 << 20)) /dev/urandom >"$T/cdata"
dd if="$T/cdata" of="$GELI_RUNDIR/c.eli" bs=1M conv=notrunc 2>/dev/null
truncate -s 4M "$T/c"
run dd if=/dev/zero of="$GELI_RUNDIR/c.eli" bs=4096 count=1 seek=1280 conv=notrunc
check "a write past the cut fails" test "$rc" != 0
check "... with an I/O error" grep -q "Input/output error" "$T/err"
check "... and does not grow the provider back" test "$(stat -c %s "$T/c")" = 4194304
run dd if="$GELI_RUNDIR/c.eli" of=/dev/null bs=4096 count=1 skip=1100
check "a read past the cut fails, no data" test "$rc" != 0
check "what is before the cut reads back" cmp -n $((4 << 20 - 4096)) "$T/cdata" "$GELI_RUNDIR/c.eli"
expect_ok "detach c" "$GELI" detach -f c.eli

# ---- An attached kill that cannot overwrite says so -----------------------
if [ "$(id -u)" -eq 0 ] && command -v losetup >/dev/null && losetup -f >/dev/null 2>&1; then
	truncate -s 8M "$T/kback"
	dev=$(losetup -f --show "$T/kback")
	on_exit "blockdev --setrw '$dev' 2>/dev/null; drop_loop '$dev' '$T/kback' 2>/dev/null"
	name=$(basename "$dev")
	geli init -B none -i 10 -J "$T/pass" "$dev" >/dev/null
	expect_ok "attach $name" "$GELI" attach -j "$T/pass" "$dev"
	blockdev --setro "$dev"
	run "$GELI" kill "$dev"
	check "kill whose overwrites fail exits 1" test "$rc" = 1
	check "... with the daemon's error" \
		test "$(cat "$T/err")" = "geli: Cannot kill $name: Operation not permitted."
	check "... and the device is destroyed all the same" wait_for fails attached "$name"
	blockdev --setrw "$dev"
	check "... its metadata is still there" bash -c '"$0" dump "$1" >/dev/null' "$GELI" "$dev"
	losetup -d "$dev"
else
	skip "kill of a read-only loop device: needs root and a free loop device"
fi
done_testing
