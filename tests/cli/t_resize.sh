#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# resize -s oldsize after a provider grew; restore -f (resize_test.sh, §8.5).
. "$(dirname "$0")/lib.sh"

prov=$T/prov
passfile "$T/pass" "grow"
mkprov "$prov" 10M
"$GELI" init -B none -i 10 -J "$T/pass" "$prov" >/dev/null
"$GELI" backup "$prov" "$T/bk"
truncate -s 20M "$prov"
expect_err "after growing, the metadata is not at the end" \
	"Cannot read metadata from $prov: Invalid argument."$'\n'"geli: Not fully done." -- "$GELI" dump "$prov"
expect_err "resize needs -s" "geli: Option 's' not specified." -- "$GELI" resize "$prov"
expect_err "oldsize out of range" "geli: Invalid oldsize: Out of range." --same "$prov" -- \
	"$GELI" resize -s 30M "$prov"
expect_err "oldsize where there is no metadata" "geli: Inconsistent provider's $prov metadata." --same "$prov" -- \
	"$GELI" resize -s 15M "$prov"
expect_ok "resize -s 10M" "$GELI" resize -s 10M "$prov"
check "provsize is the new size" test "$(dumpfield "$prov" provsize)" = 20971520
check "the old copy was trashed" fails bash -c 'tail -c +$((10485760 - 511)) "$0" | head -c 9 | grep -q GEOM::ELI' "$prov"
check "the key still opens" key_opens "$prov" 0 -j "$T/pass"
expect_err "a second resize with the same oldsize fails" "geli: Inconsistent provider's $prov metadata." \
	--same "$prov" -- "$GELI" resize -s 10M "$prov"
expect_ok "resize with oldsize = size does nothing" "$GELI" resize -s 20M "$prov"

# The other way back: restore -f of the old backup after growing.
mkprov "$T/p2" 10M
"$GELI" init -B none -i 10 -J "$T/pass" "$T/p2" >/dev/null
"$GELI" backup "$T/p2" "$T/bk2"
truncate -s 12M "$T/p2"
expect_err "restore of the old backup needs -f" "geli: Provider size mismatch: wrong backup file?" \
	--same "$T/p2" -- "$GELI" restore "$T/bk2" "$T/p2"
expect_ok "restore -f" "$GELI" restore -f "$T/bk2" "$T/p2"
check "provsize updated" test "$(dumpfield "$T/p2" provsize)" = 12582912

done_testing
