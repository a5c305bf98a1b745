#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# geli reencrypt -t luks2 (docs/reencrypt.md, "To LUKS2"), offline, proven
# with what no one here wrote: cryptsetup (luksDump, and
# --dump-volume-key with the carried or new key material) reads each
# header, and Python's cryptography, an AES-XTS of its own, decrypts the
# converted provider with that key and dm-crypt's plain64 tweak (the 512-
# byte sector number): the .eli's bytes at the same offsets, zeros past
# them.  GELI providers of each cipher the project reads (made by -E from
# random bytes, and FreeBSD's own), sector sizes 512 to 8192 (as 4096-byte
# LUKS2 sectors), passphrase, keyfile, two keyfiles joined, new key
# material, a hole, argon2id and PBKDF2 keyslots, the header's backup
# (-B), both GELI key slots carried (-X) or one said not to be; a conversion killed
# halfway and resumed; the refusals, nothing changed.  (Online conversion:
# t_luks2_online; dm-crypt itself: the guest lane.)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/luks2_lib.sh"
need_luks2_tools || { done_testing; exit; }
passfile "$T/pass" "luks2 test"
passfile "$T/pass2" "another one"
head -c 64 /dev/urandom >"$T/key1"
head -c 100 /dev/urandom >"$T/key2"


# mkgeli NAME MiB S INIT-OPTIONS...: a GELI provider made by -E from random
# bytes; its .eli's bytes in NAME.ref.
mkgeli() {
	local name=$1 mib=$2 S=$3
	shift 3
	head -c $((mib << 20)) /dev/urandom >"$T/$name.img"
	head -c $(((mib << 20) - S)) "$T/$name.img" >"$T/$name.ref"
	"$GELI" reencrypt -E -f -B none -s "$S" "$@" "$T/$name.img" >/dev/null 2>"$T/mk.err" ||
		{ echo "mkgeli $name:"; cat "$T/mk.err"; } | diag
}
# ---- Conversions ------------------------------------------------------------------
mkgeli a 8 4096 -i 1000 -J "$T/pass"
# Listed for geli-boot, with flags of its own, beside another provider.
printf 'geli_devices="%s sdx"\ngeli_%s_flags="-j /etc/p"\ngeli_tries=2\n' "$T/a.img" \
	"$(printf %s "$T/a.img" | tr -c 'A-Za-z0-9_' _)" >"$GELI_BOOT_CONF"
run "$GELI" reencrypt -t luks2 -B "$T/a.backup" -j "$T/pass" "$T/a.img"
hdr=$(ls "$T"/state/luks2/*.header 2>/dev/null | head -n 1)
check "AES-XTS 128, 4096: converted; the header in the state directory, named by its UUID" \
	test "$rc" = 0 -a -n "$hdr" -a "$(basename "$hdr" .header)" = "$(cryptsetup luksUUID "$hdr" 2>/dev/null)"
check "... argon2id keyslots by default" grep -q 'PBKDF:[[:space:]]*argon2id' <(cryptsetup luksDump "$hdr")
check "... blkid calls the header crypto_LUKS" test "$(blkid -p -o value -s TYPE "$hdr")" = crypto_LUKS
check "... the output has crypttab's line, with header=" \
	grep -qx "/etc/crypttab: a.img.eli $T/a.img none luks,header=$hdr" "$T/out"
check "... no journal is left" test -z "$(ls "$T/state/reencrypt" 2>/dev/null)"
check "... taken out of geli-boot's configuration, said" \
	grep -qx "$T/a.img is out of $GELI_BOOT_CONF (geli_devices): the next boot opens it through /etc/crypttab." "$T/out"
check "... which lists the other provider alone, its flags gone" \
	test "$(cat "$GELI_BOOT_CONF")" = "$(printf 'geli_devices="sdx"\ngeli_tries=2')"
check "... a backup of the header (-B), said, LUKS2 of the same UUID" bash -c \
	'grep -qx "LUKS2 header backup for provider $1 can be found in $2" "$3" &&
	 [ "$(cryptsetup luksUUID "$2")" = "$(cryptsetup luksUUID "$4")" ]' _ "$T/a.img" "$T/a.backup" "$T/out" "$hdr"
converted a "$hdr" "$(nonl "$T/pass")" 4096 "AES-XTS 128/4096, passphrase"

mkgeli b 4 512 -e blowfish-cbc -l 448 -P -K "$T/key1"
expect_ok "Blowfish 448, 512, a keyfile: converted (-H, PBKDF2 -i 1000)" \
	"$GELI" reencrypt -t luks2 -B none -H "$T/b.hdr" -i 1000 -p -k "$T/key1" "$T/b.img"
check "... PBKDF2 of 1000 iterations" grep -q 'Iterations:[[:space:]]*1000$' <(cryptsetup luksDump "$T/b.hdr")
converted b "$T/b.hdr" "$T/key1" 512 "Blowfish 448/512, keyfile"

mkgeli c 4 8192 -e 3des-cbc -l 192 -P -K "$T/key1" -K "$T/key2"
run "$GELI" reencrypt -t luks2 -B none -H "$T/c.hdr" -i 1000 -p -k "$T/key1" -k "$T/key2" "$T/c.img"
check "3DES, 8192-byte sectors, two keyfiles: converted, the joining said" \
	bash -c '[ "$1" = 0 ] && grep -q "takes the 2 keyfiles joined" "$2"' _ "$rc" "$T/out"
cat "$T/key1" "$T/key2" >"$T/key12"
converted c "$T/c.hdr" "$T/key12" 4096 "3DES/8192 as 4096, keyfiles joined"

mkgeli d 4 4096 -e camellia-cbc -l 256 -i 1000 -J "$T/pass"
expect_ok "Camellia 256, 4096, a new passphrase (-J): converted" \
	"$GELI" reencrypt -t luks2 -B none -H "$T/d.hdr" -i 1000 -j "$T/pass" -J "$T/pass2" "$T/d.img"
check "... the old passphrase opens no keyslot" test -z "$(volume_key "$T/d.hdr" "$(nonl "$T/pass")")"
converted d "$T/d.hdr" "$(nonl "$T/pass2")" 4096 "Camellia 256/4096, new passphrase"

# A hole: a sector stored as zeros, which the .eli reads as zeros.
mkgeli e 4 512 -e aes-cbc -l 128 -i 1000 -J "$T/pass"
dd if=/dev/zero of="$T/e.img" bs=512 seek=100 count=3 conv=notrunc status=none
dd if=/dev/zero of="$T/e.ref" bs=512 seek=100 count=3 conv=notrunc status=none
expect_ok "AES-CBC 128, 512, three sectors stored as zeros: converted" \
	"$GELI" reencrypt -t luks2 -B none -H "$T/e.hdr" -i 1000 -j "$T/pass" "$T/e.img"
converted e "$T/e.hdr" "$(nonl "$T/pass")" 512 "AES-CBC 128/512 with a hole"

# FreeBSD's own: version 6, AES-XTS 128, 4096-byte sectors.
BM=$FIX/fbsd9-v6-aesxts128-4k-bluemoon
cp "$BM.img" "$T/bm.img"
"$GELI" attach -r -j "$BM.pass" "$T/bm.img" 2>/dev/null && cp "$GELI_RUNDIR/bm.img.eli" "$T/bm.ref" &&
	"$GELI" detach bm.img
expect_ok "FreeBSD's bluemoon (v6, AES-XTS 128, 4096): converted" \
	"$GELI" reencrypt -t luks2 -B none -H "$T/bm.hdr" -i 1000 -j "$BM.pass" "$T/bm.img"
converted bm "$T/bm.hdr" "$(nonl "$BM.pass")" 4096 "FreeBSD's bluemoon"
check "FreeBSD's bluemoon: its plaintext prefix" cmp -s <(head -c "$(stat -c %s "$BM.plain-prefix")" "$T/bm.got") "$BM.plain-prefix"

# Both GELI key slots (a TrueNAS pool key and its recovery key): -X (or
# -x) carries the other slot's key, checked against it.
mkgeli t 4 4096 -P -K "$T/key1"
"$GELI" setkey -n 1 -p -k "$T/key1" -P -K "$T/key2" "$T/t.img" >/dev/null
expect_err "the other slot's key (-X) that does not open it: refused" "geli: Wrong key for $T/t.img." \
	--same "$T/t.img" -- "$GELI" reencrypt -t luks2 -B none -H "$T/t.hdr" -i 1000 -p -k "$T/key1" -X "$T/key12" "$T/t.img"
check "... and no header is left" test ! -e "$T/t.hdr"
expect_err "-x and -X together: refused" \
	"geli: Key slot 1 of $T/t.img would open with a keyfile and a passphrase together, which a LUKS2 keyslot cannot take." \
	--same "$T/t.img" -- "$GELI" reencrypt -t luks2 -B none -H "$T/t.hdr" -i 1000 -p -k "$T/key1" -x "$T/pass" -X "$T/key2" "$T/t.img"
run "$GELI" reencrypt -t luks2 -B none -H "$T/t.hdr" -i 1000 -p -k "$T/key1" -X "$T/key2" "$T/t.img"
check "two key slots, -X for the other: converted, said" bash -c '[ "$1" = 0 ] && [ ! -s "$3" ] &&
	grep -qx "The key of GELI'"'"'s key slot 1 opens it too, in a keyslot of its own." "$2"' _ "$rc" "$T/out" "$T/err"
check "... the recovery key's keyslot gives the pool key's volume key" \
	test "$(volume_key "$T/t.hdr" "$T/key2")" = "$(volume_key "$T/t.hdr" "$T/key1")"
converted t "$T/t.hdr" "$T/key2" 4096 "two key slots, by the recovery key"
mkgeli u 4 512 -i 1000 -J "$T/pass"
"$GELI" setkey -n 1 -j "$T/pass" -P -K "$T/key1" "$T/u.img" >/dev/null
run "$GELI" reencrypt -t luks2 -B none -H "$T/u.hdr" -i 1000 -p -k "$T/key1" "$T/u.img"
check "slot 1's keyfile given, not slot 0's passphrase: converted, saying slot 0 is not carried" \
	bash -c '[ "$1" = 0 ] && grep -qx "geli: Key slot 0 of $3 is not carried to LUKS2: give its key with -x or -X, or add it later with cryptsetup luksAddKey." "$2"' \
	_ "$rc" "$T/err" "$T/u.img"
check "... slot 0's passphrase opens no keyslot" test -z "$(volume_key "$T/u.hdr" "$(nonl "$T/pass")")"
converted u "$T/u.hdr" "$T/key1" 512 "slot 1 alone"

# ---- Killed halfway, resumed --------------------------------------------------------
SHIM=$FAULTSHIM
mkgeli k 32 4096 -i 1000 -J "$T/pass"
ksum=$(md5sum <"$T/k.img")
if [ -f "$SHIM" ]; then
	# Each write 2 ms long: the conversion lasts seconds, the kill lands in it.
	env LD_PRELOAD="$(preload_list "$SHIM")" FAULT_PATH="$T/k.img" FAULT_WRITE_DELAY_US=2000 \
		"$GELI" reencrypt -t luks2 -B none -H "$T/k.hdr" -i 1000 -j "$T/pass" -z 65536 "$T/k.img" >/dev/null 2>&1 &
	kpid=$!
	check "killed: the conversion was under way" wait_for \
		bash -c '"$1" dump "$2" 2>/dev/null | grep -qE "progress: conversion to LUKS2, [1-9][0-9]* of"' _ "$GELI" "$T/k.img"
	kill -9 "$kpid"
	wait "$kpid" 2>/dev/null
	check "killed: GELI's record marked, the header there" \
		bash -c '"$1" dump "$2" 2>/dev/null | grep -q "journal:" && [ -s "$3" ]' _ "$GELI" "$T/k.img" "$T/k.hdr"
	expect_err "killed: a resume with another header is refused, nothing changed" \
		"geli: The LUKS2 header $T/b.hdr is not the one of the conversion of $T/k.img: GELI's record stays. Name the header with -H." \
		--same "$T/k.img" -- "$GELI" reencrypt -H "$T/b.hdr" -j "$T/pass" "$T/k.img"
	expect_ok "killed: the same command resumes" "$GELI" reencrypt -t luks2 -B none -H "$T/k.hdr" -i 1000 -j "$T/pass" "$T/k.img"
	converted k "$T/k.hdr" "$(nonl "$T/pass")" 4096 "killed and resumed"
else
	skip "killed halfway: faultshim.so not built"
fi

# ---- Refusals, nothing changed --------------------------------------------------------
mkgeli r 4 4096 -i 1000 -J "$T/pass"
expect_err "a wrong passphrase" "geli: Wrong key for $T/r.img." \
	--same "$T/r.img" -- "$GELI" reencrypt -t luks2 -B none -H "$T/r.hdr" -i 1000 -j "$T/pass2" "$T/r.img"
check "... and no header is left" test ! -e "$T/r.hdr"
: >"$T/exists.hdr"
expect_err "a header file that exists" \
	"geli: LUKS2 header $T/exists.hdr exists: remove it, or name another with -H." \
	--same "$T/r.img" -- "$GELI" reencrypt -t luks2 -B none -H "$T/exists.hdr" -i 1000 -j "$T/pass" "$T/r.img"
mkgeli kp 4 4096 -i 1000 -J "$T/pass" -K "$T/key1"
expect_err "a keyfile and a passphrase together, without new key material" \
	"geli: Provider $T/kp.img opens with a keyfile and a passphrase together, which a LUKS2 keyslot cannot take: give new key material with -J or -K." \
	--same "$T/kp.img" -- "$GELI" reencrypt -t luks2 -B none -H "$T/kp.hdr" -j "$T/pass" -k "$T/key1" "$T/kp.img"
expect_ok "... with -K: converted" \
	"$GELI" reencrypt -t luks2 -B none -H "$T/kp.hdr" -i 1000 -j "$T/pass" -k "$T/key1" -P -K "$T/key2" "$T/kp.img"
converted kp "$T/kp.hdr" "$T/key2" 4096 "keyfile and passphrase, new keyfile"
head -c $((4 << 20)) /dev/urandom >"$T/auth.img"
"$GELI" init -B none -a hmac/sha256 -i 1000 -J "$T/pass" "$T/auth.img" >/dev/null 2>&1
expect_err "an integrity provider" \
	"geli: Provider $T/auth.img uses integrity (HMAC/SHA256): its sectors cannot be converted in place." \
	--same "$T/auth.img" -- "$GELI" reencrypt -t luks2 -B none -H "$T/auth.hdr" -j "$T/pass" "$T/auth.img"
expect_err "an unknown target" "geli: Invalid target: luks1 (geli or luks2)." \
	--same "$T/r.img" -- "$GELI" reencrypt -t luks1 -j "$T/pass" "$T/r.img"
expect_err "-t luks2 with a cipher" \
	"geli: Option -t luks2 takes none of -D, -E, -a, -e, -l and -s: LUKS2's cipher is aes-xts-plain64 with a 512-bit key, its sectors GELI's." \
	--same "$T/r.img" -- "$GELI" reencrypt -t luks2 -B none -e aes-cbc -j "$T/pass" "$T/r.img"
expect_err "-H without -t luks2" "geli: Option -H needs -t luks2." \
	--same "$T/r.img" -- "$GELI" reencrypt -H "$T/x.hdr" -j "$T/pass" "$T/r.img"
expect_err "-x where the other slot is not set" \
	"geli: Key slot 1 of $T/r.img is not set: -x and -X give the key of its other slot." \
	--same "$T/r.img" -- "$GELI" reencrypt -t luks2 -B none -H "$T/r.hdr" -i 1000 -j "$T/pass" -x "$T/pass2" "$T/r.img"
expect_err "-x with new key material" \
	"geli: Options -x and -X carry a key slot's key; with -J or -K nothing is carried." \
	--same "$T/r.img" -- "$GELI" reencrypt -t luks2 -B none -H "$T/r.hdr" -i 1000 -j "$T/pass" -J "$T/pass2" -x "$T/pass" "$T/r.img"
expect_err "PBKDF2 below LUKS2's least count" "geli: LUKS2 takes PBKDF2 of 1000 iterations or more (-i)." \
	--same "$T/r.img" -- "$GELI" reencrypt -t luks2 -B none -H "$T/r.hdr" -i 999 -j "$T/pass" "$T/r.img"
# Another kind of conversion under way: a resume takes its parameters.
mkgeli m 16 4096 -i 1000 -J "$T/pass"
if [ -f "$SHIM" ]; then
	env LD_PRELOAD="$(preload_list "$SHIM")" FAULT_PATH="$T/m.img" FAULT_WRITE_DELAY_US=2000 \
		"$GELI" reencrypt -j "$T/pass" -z 65536 "$T/m.img" >/dev/null 2>&1 &
	mpid=$!
	wait_for bash -c '"$1" dump "$2" 2>/dev/null | grep -q "journal:"' _ "$GELI" "$T/m.img"
	kill -9 "$mpid"
	wait "$mpid" 2>/dev/null
	expect_err "a provider under another conversion" \
		"geli: Provider $T/m.img is being converted to AES-XTS 128 (a new Master Key): a resume takes the same parameters." \
		--same "$T/m.img" -- "$GELI" reencrypt -t luks2 -B none -H "$T/m.hdr" -j "$T/pass" "$T/m.img"
fi
done_testing
