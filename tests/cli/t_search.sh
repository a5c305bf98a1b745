#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# geli search: providers found inside an image by their metadata alone (a
# 512-byte-sector provider at an unaligned offset, a 4Kn one, the whole
# image), the losetup line it prints opening each with its data, bad
# records rejected (MD5, a size that does not fit), the image unchanged,
# and its errors.
. "$(dirname "$0")/lib.sh"

passfile "$T/pass" "search me"
img=$T/disk.img
truncate -s 48M "$img"

# A: AES-XTS-256, S=4096, 8 MiB at 1 MiB (a partition at LBA 2048).
mkprov "$T/a" 8M
expect_ok "init A" "$GELI" init -B none -i 10 -l 256 -s 4096 -J "$T/pass" "$T/a"
# B: Blowfish-448 with HMAC/SHA1, S=512, 3 MiB at sector 20001 (unaligned).
mkprov "$T/b" 3M
"$GELI" init -B none -i 10 -e blowfish -l 448 -a hmac/sha1 -s 512 -J "$T/pass" "$T/b" 2>/dev/null
check "init B" test "$(dumpfield "$T/b" ealgo)" = Blowfish-CBC
# The providers' data: random bytes written through their .eli files, to
# be read back through the loop devices search points at.
have_fuse=0
if need_fuse 2>/dev/null; then
	have_fuse=1
	for p in a b; do
		"$GELI" attach -j "$T/pass" "$T/$p"
		head -c 1M /dev/urandom >"$T/$p.data"
		dd if="$T/$p.data" of="$T/run/$p.eli" bs=64k conv=notrunc status=none
		"$GELI" detach "$p"
	done
fi
dd if="$T/a" of="$img" bs=1M seek=1 conv=notrunc status=none
dd if="$T/b" of="$img" bs=512 seek=20001 conv=notrunc status=none
# C: a record with a broken MD5 at 30 MiB; D: one whose provider would
# begin before the image (16 MiB ending at 12 MiB) at 12 MiB - 512.
mkprov "$T/c" 1M
"$GELI" init -B none -P -K /dev/null -s 512 "$T/c" 2>/dev/null
tail -c 512 "$T/c" >"$T/c.md"
printf '\xff' | dd of="$T/c.md" bs=1 seek=40 conv=notrunc status=none
dd if="$T/c.md" of="$img" bs=1M seek=30 conv=notrunc status=none
mkprov "$T/d" 16M
"$GELI" init -B none -P -K /dev/null -s 512 "$T/d" 2>/dev/null
tail -c 512 "$T/d" | dd of="$img" bs=512 seek=$(((12 << 11) - 1)) conv=notrunc status=none
sum=$(md5sum <"$img")

run "$GELI" search "$img"
check "search: status 0, nothing on stderr (no terminal: no progress)" \
	test "$rc" = 0 -a ! -s "$T/err"
if command -v script >/dev/null; then
	script -qec "$GELI search $img" /dev/null >"$T/tty.out" 2>&1
	check "on a terminal: the progress, then the providers" \
		bash -c 'grep -q "Searching .*100%" "$1" && [ $(grep -c "GELI provider at offset" "$1") = 2 ]' _ "$T/tty.out"
else
	skip "script(1) is not installed"
fi
grep '^GELI provider at offset' "$T/out" >"$T/found"
check "two providers found, in order" test "$(cat "$T/found")" = \
"GELI provider at offset 1048576 of $img:
GELI provider at offset 10240512 of $img:"
field() { awk -v n="$1" -v k="$2" '/^GELI provider/ { i++ } i == n && $1 == k ":" { $1 = ""; sub(/^ /, ""); print }' "$T/out"; }
check "A: size, cipher, key length, sector size" test \
	"$(field 1 size)|$(field 1 ealgo)|$(field 1 keylen)|$(field 1 sectorsize)" = "8388608|AES-XTS|256|4096"
check "B: size, cipher, authentication, sector size" test \
	"$(field 2 size)|$(field 2 ealgo)|$(field 2 aalgo)|$(field 2 sectorsize)" = "3145728|Blowfish-CBC|HMAC/SHA1|512"
check "B: its start in 512-byte sectors" test "$(field 2 start)" = "10240512 (sector 20001 of 512 bytes)"
check "the losetup lines" test "$(grep '^open with:' "$T/out")" = \
"open with: losetup --find --show --read-only --offset 1048576 --sizelimit 8388608 $img
open with: losetup --find --show --read-only --offset 10240512 --sizelimit 3145728 $img"
check "the image is unchanged" test "$(md5sum <"$img")" = "$sum"

run "$GELI" search -v "$img"
check "-v: the bad MD5 and the provider that does not fit, rejected" test \
	"$(grep '^Metadata at offset' "$T/out")" = \
"Metadata at offset 12582400 of $img rejected: the provider it describes does not fit.
Metadata at offset 31457280 of $img rejected: MD5 mismatch."
check "-v: the count" grep -qx "2 GELI providers found on $img." "$T/out"

# The losetup lines open the providers: the key works, the data is there.
if [ "$(id -u)" -eq 0 ] && losetup -f >/dev/null 2>&1; then
	for k in 1 2; do
		line=$(grep '^open with:' "$T/out" | sed -n "${k}p" | sed 's/^open with: //')
		dev=$($line) || { nok "provider $k: $line"; continue; }
		on_exit "drop_loop '$dev' '$img' 2>/dev/null"
		check "provider $k: the loop device's metadata is the provider's" test \
			"$(dumpfield "$dev" provsize)" = "$(field $k size)"
		check "provider $k: the key opens it" key_opens "$dev" 0 -j "$T/pass"
		if [ $have_fuse = 1 ]; then
			p=$([ $k = 1 ] && echo a || echo b)
			"$GELI" attach -r -j "$T/pass" "$dev"
			check "provider $k: its data read through the loop device" \
				cmp -n 1048576 "$T/$p.data" "$T/run/$(basename "$dev").eli"
			"$GELI" detach "$(basename "$dev")"
		fi
		losetup -d "$dev"
	done
	# A 4Kn provider (made on a loop device of 4096-byte sectors) at 40 MiB.
	truncate -s 4M "$T/k"
	dev=$(losetup -f --show -b 4096 "$T/k")
	"$GELI" init -B none -i 10 -s 4096 -J "$T/pass" "$dev"
	losetup -d "$dev"
	dd if="$T/k" of="$img" bs=1M seek=40 conv=notrunc status=none
	run "$GELI" search "$img"
	check "4Kn: found at 40 MiB in 4096-byte sectors" grep -qx \
		"     start: 41943040 (sector 10240 of 4096 bytes)" "$T/out"
	line=$(grep -- '--sector-size 4096' "$T/out" | sed 's/^open with: //')
	check "4Kn: its losetup line has --sector-size 4096" test \
		"$line" = "losetup --find --show --read-only --offset 41943040 --sizelimit 4194304 --sector-size 4096 $img"
	dev=$($line) && on_exit "drop_loop '$dev' '$img' 2>/dev/null"
	check "4Kn: the key opens the loop device it makes" key_opens "$dev" 0 -j "$T/pass"
	losetup -d "$dev"
	# On a device of 4096-byte sectors, the same image: the 4Kn one alone.
	dev=$(losetup -f --show -r -b 4096 "$img")
	on_exit "drop_loop '$dev' '$img' 2>/dev/null"
	run "$GELI" search "$dev"
	check "a device of 4096-byte sectors: the 4Kn provider only" test \
		"$(grep -c '^GELI provider' "$T/out")|$(grep '^     start' "$T/out")" = \
		"1|     start: 41943040 (sector 10240 of 4096 bytes)"
	losetup -d "$dev"
else
	skip "the losetup lines: needs root and a free loop device"
fi

# Errors.
truncate -s 1M "$T/empty"
expect_err "an image with no provider" \
	"geli: No GELI provider found on $T/empty."$'\n'"geli: Not fully done." \
	--same "$T/empty" -- "$GELI" search "$T/empty"
expect_err "a file that is not there" \
	"geli: Cannot open $T/none: No such file or directory."$'\n'"geli: Not fully done." \
	-- "$GELI" search "$T/none"
run "$GELI" search "$T/none" "$img"
check "several: the others are still searched" test "$rc" = 1 -a \
	"$(grep -c '^GELI provider' "$T/out")" -ge 2
expect_err "no operand" "geli: Too few arguments." -- "$GELI" search
done_testing
