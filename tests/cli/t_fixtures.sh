#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# FreeBSD's own volumes (tests/fixtures): every metadata
# tail decodes, its passphrase opens it (setkey -n 1 on a copy, after which
# the new key opens slot 1), any other is refused with nothing changed; the
# pg-* images keep their MD5 through backup + restore and setkey -i 0.
. "$(dirname "$0")/lib.sh"

passfile "$T/new" "a new key"
head -c 64 /dev/urandom >"$T/newkf"

# A full-size provider from a tail: sparse file of md_provsize bytes with
# the 8192 bytes at its end (fixtures README).
full_provider() {
	local tail=$1 out=$2 size
	size=$("$GELI" dump "$tail" | sed -n 's/^ *provsize: //p')
	rm -f "$out"
	truncate -s "$size" "$out"
	dd if="$tail" of="$out" bs=8192 seek=$((size / 8192 - 1)) conv=notrunc status=none
}

while read -r file pass; do
	[ -n "$file" ] || continue
	prov=$T/$file
	full_provider "$FIX/$file" "$prov"
	printf '%s\n' "$pass" >"$T/pass"
	printf '%s\n' "${pass}x" >"$T/wrong"
	check "$file: metadata decodes at the end of a full-size provider" \
		test "$(dumpfield "$prov" provsize)" = "$(stat -c %s "$prov")"
	expect_err "$file: another passphrase is a wrong key, nothing changes" \
		"geli: Wrong key for $prov." --same "$prov" -- \
		"$GELI" setkey -n 1 -j "$T/wrong" -J "$T/new" "$prov"
	# The new key is a keyfile, so that checking it costs no PBKDF2 run
	# (two of these volumes use a million iterations).
	run "$GELI" setkey -v -n 1 -j "$T/pass" -P -K "$T/newkf" "$prov"
	check "$file: its passphrase opens slot 0 (setkey -n 1)" \
		test $rc = 0 -a "$(head -n1 "$T/out")" = "Decrypted Master Key 0."
	check "$file: keys is now 0x03" test "$(dumpfield "$prov" keys)" = 0x03
	check "$file: the new key opens slot 1" key_opens "$prov" 1 -p -k "$T/newkf"
done <<'LIST'
fbsd11-v7-aesxts128-openwall.raw openwall
fbsd11-v7-aesxts128-openwall123.raw openwall123
fbsd11-v7-aesxts128-openwall12345-fast.raw openwall12345
fbsd11-v7-aesxts128-spade-fast.raw ♠
fbsd60-v0-aescbc128-openwall12345.raw openwall12345
fbsd62-v3-aescbc128-openwall123.raw openwall123
fbsd70-v3-aescbc128-openwall123.raw openwall123
fbsd93-v6-aesxts128-openwall.raw openwall
LIST

# The 4k-sector FreeBSD 9 provider with its passfile (first line only).
cp "$FIX/fbsd9-v6-aesxts128-4k-bluemoon.img" "$T/bluemoon.img"
check "bluemoon: v6, 4096-byte sectors" \
	test "$(dumpfield "$T/bluemoon.img" version)" = 6 -a "$(dumpfield "$T/bluemoon.img" sectorsize)" = 4096
check "bluemoon: its passfile opens it" key_opens "$T/bluemoon.img" 0 -j "$FIX/fbsd9-v6-aesxts128-4k-bluemoon.pass"

# pg-*: byte-exact round trips.
printf 'password\n' >"$T/pgpass"
for img in "$FIX"/pg-*.img; do
	b=$(basename "$img" .img)
	want=$(cut -d' ' -f1 "$FIX/$b.md5")
	cp "$img" "$T/$b.img"
	"$GELI" backup "$T/$b.img" "$T/$b.bk" && "$GELI" restore "$T/$b.bk" "$T/$b.img"
	check "$b: backup + restore keeps the MD5" test "$(md5sum <"$T/$b.img" | cut -d' ' -f1)" = "$want"
	"$GELI" setkey -i 0 -j "$T/pgpass" -J "$T/pgpass" "$T/$b.img" >/dev/null
	check "$b: setkey with the same passphrase and -i 0 keeps the MD5" \
		test "$(md5sum <"$T/$b.img" | cut -d' ' -f1)" = "$want"
	expect_err "$b: a wrong passphrase is refused" "geli: Wrong key for $T/$b.img." --same "$T/$b.img" -- \
		"$GELI" setkey -j "$T/new" -J "$T/new" "$T/$b.img"
done

done_testing
