#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# kill and configure of detached providers (kill_test.sh, configure_test.sh).
. "$(dirname "$0")/lib.sh"

prov=$T/prov
passfile "$T/pass" "kill me"

mkprov "$prov"
"$GELI" init -B none -i 10 -J "$T/pass" "$prov" >/dev/null
head -c 1048064 "$prov" | md5sum >"$T/data.md5"
expect_ok "kill" "$GELI" kill "$prov"
expect_err "after kill there is no metadata" \
	"Cannot read metadata from $prov: Invalid argument."$'\n'"geli: Not fully done." -- "$GELI" dump "$prov"
check "kill touches only the last sector" bash -c 'head -c 1048064 "$0" | md5sum | cmp -s - "$1"' "$prov" "$T/data.md5"
mkprov "$T/other"
expect_ok "kill does not check for GELI metadata" "$GELI" kill "$T/other"
check "... and overwrites the last sector anyway" fails cmp -s <(tail -c 512 "$T/other") <(head -c 512 /dev/zero)
expect_err "kill with nothing" "geli: Too few arguments." -- "$GELI" kill
expect_ok "kill -a with nothing attached" "$GELI" kill -a
expect_err "kill of a missing provider" "geli: Cannot open provider $T/missing: No such file or directory." -- \
	"$GELI" kill "$T/missing"

# configure
mkprov "$prov"
"$GELI" init -B none -i 10 -J "$T/pass" "$prov" >/dev/null
for c in "b 0x202" "g 0x282" "d 0x382" "T 0x3c2" "R 0x1c2" "B 0x1c0" "G 0x140" "D 0x40" "t 0x0" "r 0x200"; do
	set -- $c
	run "$GELI" configure -$1 "$prov"
	check "configure -$1 -> flags $2" test $rc -eq 0 -a "$(dumpfield "$prov" flags)" = "$2"
done
check "configure keeps the key" key_opens "$prov" 0 -j "$T/pass"
before=$(stat -c %Y.%s "$prov"; md5sum <"$prov")
sleep 0.01
run "$GELI" configure -v -r "$prov"
check "configure -v -r when already set says so" grep -qx "AUTORESIZE flag already configured for $prov." "$T/out"
check "... and ends with Done." test "$(tail -n1 "$T/out")" = Done.
check "... and writes nothing" test "$(stat -c %Y.%s "$prov"; md5sum <"$prov")" = "$before"
run "$GELI" configure -v -B -t "$prov"
check "configure -v -B says not configured" grep -qx "BOOT flag not configured for $prov." "$T/out"
check "configure -v -t says TRIM disable flag not configured" grep -qx "TRIM disable flag not configured for $prov." "$T/out"
for pair in bB dD gG rR tT; do
	a=${pair:0:1} b=${pair:1:1}
	expect_err "configure -$a -$b" "geli: Options -$a and -$b are mutually exclusive." --same "$prov" -- \
		"$GELI" configure -$a -$b "$prov"
done
expect_err "configure without an option" "geli: No option given." -- "$GELI" configure "$prov"
expect_err "configure without a provider" "geli: Too few arguments." -- "$GELI" configure -b
mkprov "$T/a"; mkprov "$T/b"
"$GELI" init -B none -i 10 -J "$T/pass" "$T/a" "$T/b" >/dev/null
expect_ok "configure of several providers" "$GELI" configure -g "$T/a" "$T/b"
check "both changed" test "$(dumpfield "$T/a" flags)" = 0x280 -a "$(dumpfield "$T/b" flags)" = 0x280

done_testing
