#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Metadata backups: init's default and -B files, backup, restore (-f), and
# the verbs on a backup file (FreeBSD init_test.sh, §8.6, §9.10).
. "$(dirname "$0")/lib.sh"

passfile "$T/pass" "backup test"
mkdir -p "$T/sub"
prov=$T/sub/disk.img
mkprov "$prov" 4M

# Default: /var/backups/<prov>.eli with / -> _.
auto=/var/backups/$(echo "$prov" | tr / _).eli
on_exit "rm -f '$auto'"
run "$GELI" init -i 10 -J "$T/pass" "$prov"
want=$(printf '\nMetadata backup for provider %s can be found in %s\nand can be restored with the following command:\n\n\t# geli restore %s %s\n' \
	"$prov" "$auto" "$auto" "$prov")
if [ $rc -eq 0 ] && [ "$(cat "$T/out")" = "$want" ]; then ok "init reports the default backup"; else
	nok "init reports the default backup"; diag <"$T/out"; fi
check "the default backup exists" test -f "$auto"
check "the backup is mode 0600" test "$(stat -c %a "$auto")" = 600
check "the backup is the last sector" cmp -s "$auto" <(tail -c 512 "$prov")
check "dump reads a backup file" test "$(dumpfield "$auto" provsize)" = 4194304
rm -f "$auto"

# -B file and -B none.
mkprov "$prov" 4M
expect_ok "init -B none" "$GELI" init -B none -i 10 -J "$T/pass" "$prov"
check "-B none writes no backup" test ! -e "$auto"
mkprov "$prov" 4M
run "$GELI" init -B "$T/my.bk" -i 10 -J "$T/pass" "$prov"
check "-B file" cmp -s "$T/my.bk" <(tail -c 512 "$prov")
check "-B file is reported" grep -q "can be found in $T/my.bk" "$T/out"

# Several providers: PROV replaced, or -<prov> appended.
mkprov "$T/a.img"; mkprov "$T/b.img"
expect_ok "init of two providers with -B .../PROV.bk" \
	"$GELI" init -B "$T/bk-PROV.bk" -i 10 -J "$T/pass" "$T/a.img" "$T/b.img"
u=$(echo "$T" | tr / _)
check "PROV replaced by each provider, / as _" test -f "$T/bk-${u}_a.img.bk" -a -f "$T/bk-${u}_b.img.bk"
mkdir -p "$T/x"
mkprov "$T/x/c"; mkprov "$T/x/d"
( cd "$T/x" && "$GELI" init -B "$T/multi-PROV.bk" -i 10 -J "$T/pass" c d >/dev/null 2>&1 )
check "relative names make PROV files" test -f "$T/multi-c.bk" -a -f "$T/multi-d.bk"
( cd "$T/x" && "$GELI" init -B "$T/plain.bk" -i 10 -J "$T/pass" c d >/dev/null 2>&1 )
check "no PROV: -<prov> appended" test -f "$T/plain.bk-c" -a -f "$T/plain.bk-d"

# backup and restore.
mkprov "$prov" 4M
"$GELI" init -B none -i 10 -J "$T/pass" "$prov" >/dev/null
expect_ok "backup" "$GELI" backup "$prov" "$T/b1"
check "backup is the last sector" cmp -s "$T/b1" <(tail -c 512 "$prov")
before=$(md5sum <"$prov")
expect_ok "clear" "$GELI" clear "$prov"
check "cleared: no metadata" fails "$GELI" dump "$prov"
expect_ok "restore" "$GELI" restore "$T/b1" "$prov"
check "restore brings back the same bytes" test "$(md5sum <"$prov")" = "$before"
check "restored provider opens" key_opens "$prov" 0 -j "$T/pass"

# restore onto a provider of another size: refused unless -f.
mkprov "$T/big" 8M
expect_err "restore onto another size" "geli: Provider size mismatch: wrong backup file?" \
	--same "$T/big" -- "$GELI" restore "$T/b1" "$T/big"
expect_ok "restore -f" "$GELI" restore -f "$T/b1" "$T/big"
check "restore -f rewrites provsize" test "$(dumpfield "$T/big" provsize)" = 8388608
check "restore -f keeps the key" key_opens "$T/big" 0 -j "$T/pass"

# The verbs on a backup file change the file, not a provider.
cp "$T/b1" "$T/b2"
passfile "$T/new" "new pass"
expect_ok "setkey on a backup file" "$GELI" setkey -j "$T/pass" -J "$T/new" -n 1 "$T/b2" 
check "the backup file's slot 1 opens with the new key" \
	bash -c 'test "$("$0" dump "$1" | sed -n "s/ *keys: //p")" = 0x03' "$GELI" "$T/b2"
expect_ok "delkey on a backup file" "$GELI" delkey -n 1 "$T/b2"
expect_ok "configure on a backup file" "$GELI" configure -b "$T/b2"
check "flags of the backup file" test "$(dumpfield "$T/b2" flags)" = 0x202
check "the backup file keeps its length" test "$(stat -c %s "$T/b2")" = 512

# Errors.
mkprov "$T/plain" 1M
expect_err "backup of something that is not GELI" \
	"geli: Unable to read metadata from $T/plain: Invalid argument." -- "$GELI" backup "$T/plain" "$T/b3"
check "no backup file left behind" test ! -e "$T/b3"
expect_err "backup with one argument" "geli: Invalid number of arguments." -- "$GELI" backup "$prov"
expect_err "restore from a missing file" \
	"geli: Cannot read metadata from $T/missing: No such file or directory." --same "$prov" -- \
	"$GELI" restore "$T/missing" "$prov"
mkprov "$prov" 4M
expect_err "init refuses a backup it cannot write, and writes nothing" \
	"geli: Unable to open $T/nodir/x.bk: No such file or directory."$'\n'"geli: There was an error with at least one provider." \
	--same "$prov" -- "$GELI" init -B "$T/nodir/x.bk" -i 10 -J "$T/pass" "$prov"

done_testing
