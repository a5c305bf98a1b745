#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# dump (exactly as FreeBSD prints it), clear and version.
. "$(dirname "$0")/lib.sh"

for img in "$FIX"/pg-*.img; do
	b=$(basename "$img" .img)
	cp "$img" "$T/$b.img"
	"$GELI" dump "$T/$b.img" | tail -n +2 >"$T/dump"
	check "dump of FreeBSD's $b equals FreeBSD's output" cmp -s "$T/dump" <(tail -n +2 "$FIX/$b.dump")
done
run "$GELI" dump "$T/pg-aes-xts-128-0.img" "$T/pg-aes-xts-256-0.img"
check "dump of two providers" test "$(grep -c '^Metadata on ' "$T/out")" = 2
mkprov "$T/plain"
run "$GELI" dump "$T/pg-aes-xts-128-0.img" "$T/plain" "$T/pg-aes-xts-256-0.img"
check "one bad provider: the others are still dumped, exit 1" \
	test $rc = 1 -a "$(grep -c '^Metadata on ' "$T/out")" = 2
check "... with FreeBSD's messages" test "$(cat "$T/err")" = \
	"Cannot read metadata from $T/plain: Invalid argument."$'\n'"geli: Not fully done."
expect_err "dump without a provider" "geli: Too few arguments." -- "$GELI" dump

# Every version FreeBSD can write, with -V.
passfile "$T/pass" "versions"
for v in 0 1 2 3 4 5 6 7; do
	mkprov "$T/v"
	"$GELI" init -B none -V $v -i 10 -J "$T/pass" "$T/v" >/dev/null 2>&1
	want=AES-CBC; [ $v -ge 5 ] && want=AES-XTS
	check "init -V $v: version $v, default cipher $want" \
		test "$(dumpfield "$T/v" version)" = $v -a "$(dumpfield "$T/v" ealgo)" = $want
	check "init -V $v: the key opens" key_opens "$T/v" 0 -j "$T/pass"
	run "$GELI" version "$T/v"
	check "version of a v$v provider" test "$(cat "$T/out")" = "$T/v: $v"
done
mkprov "$T/v"
"$GELI" init -B none -V 3 -a hmac/sha1 -i 10 -J "$T/pass" "$T/v" >/dev/null 2>&1
check "v3 with HMAC/SHA1" test "$(dumpfield "$T/v" aalgo)" = HMAC/SHA1 -a "$(dumpfield "$T/v" version)" = 3
mkprov "$T/v"
"$GELI" init -B none -V 4 -e camellia -i 10 -J "$T/pass" "$T/v" >/dev/null 2>&1
check "v4 with Camellia" test "$(dumpfield "$T/v" ealgo)" = CAMELLIA-CBC

mkprov "$T/f"
"$GELI" init -B none -b -d -g -T -R -i 10 -J "$T/pass" "$T/f" >/dev/null
check "init -b -d -g -T -R: flags 0x1c2" test "$(dumpfield "$T/f" flags)" = 0x1c2
mkprov "$T/f"
"$GELI" init -B none -a hmac/sha256 -i 10 -J "$T/pass" "$T/f" >/dev/null
check "init -a: flags 0x210" test "$(dumpfield "$T/f" flags)" = 0x210

run "$GELI" version
check "version" test "$(cat "$T/out")" = $'kernel: 7\nuserland: 7'
expect_err "version of a provider without GELI" \
	"geli: $T/plain: Unable to read metadata: Invalid argument."$'\n'"geli: Not fully done." -- "$GELI" version "$T/plain"

# clear
mkprov "$T/c"
"$GELI" init -B none -i 10 -J "$T/pass" "$T/c" >/dev/null
run "$GELI" clear -v "$T/c"
check "clear -v" test "$rc" = 0 -a "$(cat "$T/out")" = "Metadata cleared on $T/c."$'\n'"Done."
check "clear zeroes the whole last sector" cmp -s <(tail -c 512 "$T/c") <(head -c 512 /dev/zero)
expect_err "clear of a provider without GELI" \
	"Cannot clear metadata on $T/c: Invalid argument."$'\n'"geli: Not fully done." --same "$T/c" -- "$GELI" clear "$T/c"
expect_err "clear without a provider" "geli: Too few arguments." -- "$GELI" clear

# help / usage
run "$GELI" help
check "help prints the usage and exits 1, as geom(8)" test $rc = 1 -a "$(head -c 17 "$T/err")" = "usage: geli init "
for verb in init label configure setkey delkey kill backup restore resize version clear dump; do
	grep -q "geli $verb " "$T/err" || nok "usage lists $verb"
done
ok "usage lists every verb"
run "$GELI" frobnicate
check "unknown command" test $rc = 1 -a "$(head -n1 "$T/err")" = "geli: Unknown command: frobnicate."

done_testing
