#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# suite: plain
# geli reencrypt (docs/reencrypt.md), offline: plain to GELI (-E) after
# libblkid has looked, a new Master Key with the same passphrase, Blowfish
# to AES-XTS with a new one, GELI to plain (-D); FreeBSD's volumes converted
# and read back; GRUB reads converted volumes; the refusals, each with
# nothing changed; an interrupted conversion: marked, shown by dump, refused
# by attach -r, resumed only with its own parameters and journal; blkid -p never
# sees a file system on a half-converted provider.  The crashes are
# t_reencrypt_crash's.
. "$(dirname "$0")/lib.sh"

passfile "$T/pass" "reencrypt"
passfile "$T/pass2" "another key"
passfile "$T/wrong" "not the key"
Z="-B none"
mkdir -p "$T/src/dir"
echo "hello from a converted provider" >"$T/src/hello.txt"
head -c 3000000 /dev/urandom >"$T/src/dir/random.bin"

# ext2 IMG SIZE FSSIZE: a plain provider of SIZE with an ext2 of FSSIZE.
ext2() { mkprov "$1" "$2"; mke2fs -q -F -t ext2 -d "$T/src" "$1" "$3"; }
# files_ok FS: the ext2 (a file) checks clean and holds $T/src's files.
files_ok() {
	e2fsck -fn "$1" >/dev/null 2>&1 || return 1
	local f
	for f in hello.txt dir/random.bin; do
		rm -f "$T/got"
		debugfs -R "dump /$f $T/got" "$1" >/dev/null 2>&1
		cmp -s "$T/got" "$T/src/$f" || return 1
	done
}
# eli_files_ok PROV KEYOPTS...: attached, its .eli holds the files.
eli_files_ok() {
	local prov=$1 name; shift
	name=$(basename "$prov")
	"$GELI" attach "$@" "$prov" || return 1
	files_ok "$GELI_RUNDIR/$name.eli"
	local r=$?
	"$GELI" detach "$name"
	return $r
}
grub_reads() {
	command -v grub-fstest >/dev/null || return 0
	rm -f "$T/got"
	printf '%s' "$2" | grub-fstest -C "$1" cp "(crypto0)/dir/random.bin" "$T/got" >/dev/null 2>&1
	cmp -s "$T/got" "$T/src/dir/random.bin"
}

need_fuse || { done_testing; exit; }

# ---- Plain to GELI -----------------------------------------------------------
ext2 "$T/a.img" 16M 15M
expect_ok "-E: an ext2 that leaves the end free becomes a GELI provider" \
	"$GELI" reencrypt -E -J "$T/pass" -i 1000 $Z "$T/a.img"
check "-E: the record is an ordinary one (version 7, AES-XTS 128)" \
	test "$(dumpfield "$T/a.img" version)/$(dumpfield "$T/a.img" ealgo)/$(dumpfield "$T/a.img" keylen)" = 7/AES-XTS/128
check "-E: attached, the .eli is the file system, clean, with its files" eli_files_ok "$T/a.img" -j "$T/pass"
check "-E: GRUB's reader opens it and reads a file" grub_reads "$T/a.img" reencrypt
check "-E: no journal is left" test -z "$(ls "$T/state/reencrypt" 2>/dev/null)"
ext2 "$T/e4k.img" 16M 15M
expect_ok "-E -s 4096 -e camellia-cbc: the same with 4096-byte sectors" \
	"$GELI" reencrypt -E -s 4096 -e camellia-cbc -J "$T/pass" -i 1000 $Z "$T/e4k.img"
check "-E -s 4096: clean, with its files" eli_files_ok "$T/e4k.img" -j "$T/pass"
mkprov "$T/zero.img" 4M
expect_ok "-E: an all-zero provider" "$GELI" reencrypt -E -P -K "$T/pass" $Z "$T/zero.img"

ext2 "$T/full.img" 16M 16M
expect_err "-E: an ext2 that fills the provider is refused, nothing changed" \
	"geli: The ext2 on $T/full.img uses its last 512 bytes, which the conversion needs: shrink it to 16776704 bytes first." \
	--same "$T/full.img" -- "$GELI" reencrypt -E -J "$T/pass" $Z "$T/full.img"
mkprov "$T/gpt.img" 16M; sgdisk -o -n 1:2048:+4M "$T/gpt.img" >/dev/null 2>&1
expect_err "-E: a GPT disk is refused" \
	"geli: $T/gpt.img holds a GPT partition table, whose backup is in its last sector: encrypt its partitions instead." \
	--same "$T/gpt.img" -- "$GELI" reencrypt -E -J "$T/pass" $Z "$T/gpt.img"
head -c 4M /dev/urandom >"$T/rnd.img"
expect_err "-E: unknown data at the end is refused" \
	"geli: Unknown data in the last 512 bytes of $T/rnd.img, which the conversion needs: -f if they are not in use." \
	--same "$T/rnd.img" -- "$GELI" reencrypt -E -J "$T/pass" $Z "$T/rnd.img"
head -c $((4 * 1048576 - 512)) "$T/rnd.img" | sha256sum >"$T/rnd.sum"
expect_ok "-E -f: taken, the last sector given up" \
	"$GELI" reencrypt -E -f -J "$T/pass" -i 1000 $Z "$T/rnd.img"
"$GELI" attach -j "$T/pass" "$T/rnd.img"
check "-E -f: the data area reads as before" \
	test "$(sha256sum <"$GELI_RUNDIR/rnd.img.eli")" = "$(cat "$T/rnd.sum")"
"$GELI" detach rnd.img
expect_err "-E of a GELI provider is refused" \
	"geli: Provider $T/a.img is already a GELI provider." \
	--same "$T/a.img" -- "$GELI" reencrypt -E -J "$T/pass" $Z "$T/a.img"

# ---- A new Master Key ---------------------------------------------------------
"$GELI" backup "$T/a.img" "$T/a.old" >/dev/null
expect_ok "rekey: the same passphrase, a new Master Key" \
	"$GELI" reencrypt -j "$T/pass" $Z "$T/a.img"
check "rekey: the passphrase still opens it, the files intact" eli_files_ok "$T/a.img" -j "$T/pass"
cp "$T/a.img" "$T/a.copy"
"$GELI" restore -f "$T/a.old" "$T/a.copy"
"$GELI" attach -j "$T/pass" "$T/a.copy"
check "rekey: the old Master Key (the old record restored) no longer reads the data" \
	fails files_ok "$GELI_RUNDIR/a.copy.eli"
"$GELI" detach a.copy
expect_err "rekey: a wrong key is refused, nothing changed" \
	"geli: Wrong key for $T/a.img." --same "$T/a.img" -- \
	"$GELI" reencrypt -j "$T/wrong" $Z "$T/a.img"

mkprov "$T/b.img" 16M
"$GELI" init -B none -e blowfish -l 128 -i 1000 -J "$T/pass" "$T/b.img" 2>/dev/null
"$GELI" attach -j "$T/pass" "$T/b.img"
mke2fs -q -F -t ext2 -d "$T/src" "$GELI_RUNDIR/b.img.eli"
"$GELI" detach b.img
expect_ok "Blowfish to AES-XTS 256 with a new passphrase" \
	"$GELI" reencrypt -j "$T/pass" -e aes-xts -l 256 -J "$T/pass2" -i 1000 $Z "$T/b.img"
check "Blowfish to AES-XTS: the record is one FreeBSD 13 attaches (v7, AES-XTS 256, no HMAC)" \
	test "$(dumpfield "$T/b.img" version)/$(dumpfield "$T/b.img" ealgo)/$(dumpfield "$T/b.img" keylen)/$(dumpfield "$T/b.img" flags)" = 7/AES-XTS/256/0x200
check "Blowfish to AES-XTS: the new passphrase opens it, the files intact" eli_files_ok "$T/b.img" -j "$T/pass2"
run "$GELI" attach -j "$T/pass" "$T/b.img"
check "Blowfish to AES-XTS: the old passphrase no longer opens it" \
	eval 'test $rc = 1 && test "$(head -1 "$T/err")" = "geli: Wrong key for $T/b.img."' 
check "Blowfish to AES-XTS: GRUB reads it" grub_reads "$T/b.img" "another key"
for e in 3des-cbc:192 aes-cbc:128 camellia-cbc:256; do
	mkprov "$T/c.img" 8M
	"$GELI" init -B none -e "${e%:*}" -l "${e#*:}" -P -K "$T/pass" "$T/c.img" 2>/dev/null
	"$GELI" attach -p -k "$T/pass" "$T/c.img"
	mke2fs -q -F -t ext2 -d "$T/src" "$GELI_RUNDIR/c.img.eli"
	"$GELI" detach c.img
	run "$GELI" reencrypt -p -k "$T/pass" -e aes-xts $Z "$T/c.img"
	check "${e%:*} to AES-XTS: converted, the files intact" \
		eval 'test $rc = 0 && eli_files_ok "$T/c.img" -p -k "$T/pass" && test "$(dumpfield "$T/c.img" ealgo)" = AES-XTS'
done

# ---- GELI to plain ---------------------------------------------------------------
expect_ok "-D: GELI to plain" "$GELI" reencrypt -D -j "$T/pass2" $Z "$T/b.img"
check "-D: the provider is the file system, clean, with its files" files_ok "$T/b.img"
check "-D: its last sector is zeros, and no record is left" \
	eval 'test "$(tail -c 512 "$T/b.img" | tr -d "\0" | wc -c)" = 0 && fails "$GELI" dump "$T/b.img" 2>/dev/null'
expect_err "-D of a plain provider" \
	"geli: Cannot read metadata from $T/b.img: Invalid argument." \
	--same "$T/b.img" -- "$GELI" reencrypt -D -j "$T/pass" $Z "$T/b.img"

# ---- FreeBSD's volumes --------------------------------------------------------------
BM=$FIX/fbsd9-v6-aesxts128-4k-bluemoon
plen=$(stat -c %s "$BM.plain-prefix")
cp "$BM.img" "$T/bm.img"
expect_ok "FreeBSD's bluemoon (v6, 4096-byte sectors): a new Master Key" \
	"$GELI" reencrypt -j "$BM.pass" $Z "$T/bm.img"
"$GELI" attach -r -j "$BM.pass" "$T/bm.img"
check "bluemoon: FreeBSD's plaintext reads back" \
	cmp -s <(head -c "$plen" "$GELI_RUNDIR/bm.img.eli") "$BM.plain-prefix"
"$GELI" detach bm.img
expect_ok "bluemoon: then to plain" "$GELI" reencrypt -D -j "$BM.pass" $Z "$T/bm.img"
check "bluemoon: the raw provider begins with FreeBSD's plaintext" \
	cmp -s <(head -c "$plen" "$T/bm.img") "$BM.plain-prefix"
if command -v mcopy >/dev/null; then
	for pg in pg-aes-xts-256-100 pg-aes-xts-128-0; do
		cp "$FIX/$pg.img" "$T/pg.img"
		printf 'password\n' >"$T/pgpass"
		if [ "$pg" = pg-aes-xts-128-0 ]; then
			run "$GELI" reencrypt -j "$T/pgpass" -e aes-cbc -l 256 $Z "$T/pg.img"
			"$GELI" attach -r -j "$T/pgpass" "$T/pg.img"
			img=$GELI_RUNDIR/pg.img.eli what="to AES-CBC 256"
		else
			run "$GELI" reencrypt -D -j "$T/pgpass" $Z "$T/pg.img"
			img=$T/pg.img what="to plain"
		fi
		rm -f "$T/random" "$T/md5"
		mcopy -i "$img@@4608" ::random "$T/random" 2>/dev/null
		mcopy -i "$img@@4608" ::md5 "$T/md5" 2>/dev/null
		check "FreeBSD's $pg $what: its FAT's random file matches its md5" \
			test "$rc" = 0 -a "$(md5sum <"$T/random" | cut -d' ' -f1)" = "$(cut -c1-32 "$T/md5")"
		[ "$pg" = pg-aes-xts-128-0 ] && "$GELI" detach pg.img
	done
else
	skip "mtools not installed: FreeBSD's pg-* volumes"
fi

# ---- Refusals ---------------------------------------------------------------------
mkprov "$T/i.img" 4M
"$GELI" init -B none -a hmac/sha256 -P -K "$T/pass" "$T/i.img"
expect_err "integrity volumes are refused" \
	"geli: Provider $T/i.img uses integrity (HMAC/SHA256): its sectors cannot be converted in place." \
	--same "$T/i.img" -- "$GELI" reencrypt -p -k "$T/pass" $Z "$T/i.img"
expect_err "a change of sector size is refused" \
	"geli: Provider $T/a.img has 512-byte sectors: the sector size cannot change in place." \
	--same "$T/a.img" -- "$GELI" reencrypt -j "$T/pass" -s 4096 $Z "$T/a.img"
"$GELI" attach -r -j "$T/pass" "$T/a.img"
expect_err "a provider attached read-only is refused" \
	"geli: Provider $T/a.img is attached read-only: it cannot be converted." \
	--same "$T/a.img" -- "$GELI" reencrypt -j "$T/pass" $Z "$T/a.img"
"$GELI" detach a.img
if ro=$(losetup -r -f --show "$T/a.img" 2>/dev/null); then
	on_exit "drop_loop $ro $T/a.img 2>/dev/null"
	expect_err "a read-only provider is refused" \
		"geli: Cannot open $ro: Read-only file system." \
		--same "$T/a.img" -- "$GELI" reencrypt -j "$T/pass" $Z "$ro"
	losetup -d "$ro"
else
	skip "no loop device for the read-only provider"
fi

# ---- Interrupted: marked, shown, refused, resumed -------------------------------------
# In a directory of /dev/shm of this test's own (removed at the end): the
# conversions of 64 MiB sync often, and 4 KiB hotzones make them last long
# enough to be interrupted.
W=$(mktemp -d /dev/shm/geli-test.reencrypt.XXXXXX)
on_exit "rm -rf '$W'"
export GELI_STATE_DIR=$W/state
# interrupt PROV CMD...: CMD in the background, SIGINT once PROV is marked
# (however long its start takes); its status in $rc, its stderr in
# $T/int.err.
marked() { "$GELI" dump "$1" 2>/dev/null | grep -q 'being converted'; }
interrupt() {
	local prov=$1 pid; shift
	"$@" 2>"$T/int.err" &
	pid=$!
	wait_for marked "$prov"
	kill -INT "$pid"; wait "$pid"; rc=$?
}
ext2 "$W/s.img" 64M 60M
"$GELI" reencrypt -E -J "$T/pass" -i 1000 $Z "$W/s.img"
interrupt "$W/s.img" "$GELI" reencrypt -j "$T/pass" -z 4096 $Z "$W/s.img"
check "SIGINT: status 1, and how to go on" \
	eval 'test $rc = 1 && grep -q "^geli: Conversion of $W/s.img stopped at [0-9.]*%: run .geli reencrypt $W/s.img. again to resume.$" "$T/int.err"'
check "dump: the record is marked, with the journal's progress" \
	eval '"$GELI" dump "$W/s.img" | grep -q "^   version: 7 (being converted)$" && "$GELI" dump "$W/s.img" | grep -Eq "^  progress: a new Master Key, [0-9]+ of 16384 hotzones done"'
check "the version on disk is one FreeBSD and GRUB refuse (above 7)" \
	test "$(od -An -tu4 -j $((64 * 1048576 - 512 + 16)) -N4 "$W/s.img" | tr -d ' ')" -gt 7
# Read-write, attach goes on with it (t_reencrypt_online); read-only, no.
run "$GELI" attach -r -j "$T/pass" "$W/s.img"
check "attach -r refuses a provider being converted" \
	eval 'test $rc = 1 && test "$(head -1 "$T/err")" = "geli: Provider $W/s.img is being converted: run '"'"'geli reencrypt $W/s.img'"'"' to finish."' 
J=$(ls "$W"/state/reencrypt/*.journal)
expect_err "a resume with another cipher is refused, nothing changed" \
	"geli: Provider $W/s.img is being converted to AES-XTS 128 (a new Master Key): a resume takes the same parameters." \
	--same "$W/s.img" --same "$J" -- "$GELI" reencrypt -j "$T/pass" -e camellia-cbc $Z "$W/s.img"
expect_err "a resume as -D is refused" \
	"geli: Provider $W/s.img is being converted to AES-XTS 128 (a new Master Key): a resume takes the same parameters." \
	--same "$W/s.img" --same "$J" -- "$GELI" reencrypt -D -j "$T/pass" $Z "$W/s.img"
ext2 "$W/q.img" 64M 60M
"$GELI" reencrypt -E -J "$T/pass" -i 1000 $Z "$W/q.img"
interrupt "$W/q.img" "$GELI" reencrypt -j "$T/pass" -J "$T/pass2" -i 1000 -z 4096 $Z -F "$W/q.journal" "$W/q.img"
expect_err "a resume with another new passphrase is refused" \
	"geli: Provider $W/q.img is being converted to AES-XTS 128 (a new Master Key): a resume takes the same parameters." \
	-- "$GELI" reencrypt -j "$T/pass" -J "$T/wrong" $Z -F "$W/q.journal" "$W/q.img"
expect_ok "a resume with the same new passphrase ends" \
	"$GELI" reencrypt -j "$T/pass" -J "$T/pass2" $Z -F "$W/q.journal" "$W/q.img"
check "and the new passphrase opens it, the files intact" eli_files_ok "$W/q.img" -j "$T/pass2"
cp "$J" "$T/j.good"
flip_byte "$J" 1300
expect_err "a tampered journal is refused, nothing changed" \
	"geli: Cannot resume the conversion of $W/s.img with $J: Journal fails authentication." \
	--same "$W/s.img" -- "$GELI" reencrypt -j "$T/pass" $Z "$W/s.img"
mv "$J" "$T/j.moved"
expect_err "a lost journal is reported with what to do" \
	"geli: The journal of the conversion of $W/s.img is missing ($J): only it says how far the conversion went (and holds a new Master Key), and without it the conversion can neither go on nor be undone. Name it with -F if it is elsewhere." \
	--same "$W/s.img" -- "$GELI" reencrypt -j "$T/pass" $Z "$W/s.img"
ext2 "$W/o.img" 64M 60M
interrupt "$W/o.img" "$GELI" reencrypt -E -J "$T/pass" -i 1000 -z 4096 $Z -F "$W/o.journal" "$W/o.img"
expect_err "another provider's journal is refused" \
	"geli: Cannot use the journal $W/o.journal of $W/s.img: Not the journal of this provider." \
	--same "$W/s.img" -- "$GELI" reencrypt -j "$T/pass" -F "$W/o.journal" $Z "$W/s.img"
mv "$T/j.good" "$J"
expect_ok "the same command resumes and ends" "$GELI" reencrypt -j "$T/pass" $Z "$W/s.img"
check "resumed: the files intact" eli_files_ok "$W/s.img" -j "$T/pass"
check "resumed: the journal is gone" test ! -e "$J"

# ---- What a scanner sees half-way (edges last when decrypting, first when
# encrypting) --------------------------------------------------------------------------
# 12 interruptions; 4 in a sanitized build (the plain pass has the 12).
seen=0 stops=0 rounds="1 2 3 4 5 6" least=3
[ -n "${GELI_SANITIZED:-}" ] && rounds="1 2" least=1
progressed() { "$GELI" dump "$W/s.img" 2>/dev/null | grep -Eq "progress: .*, [1-9][0-9]* of"; }
for i in $rounds; do
	for mode in "-D -j $T/pass" "-E -J $T/pass -i 1000"; do
		"$GELI" reencrypt $mode -z 16384 $Z "$W/s.img" 2>/dev/null &
		pid=$!
		sleep "0.$((RANDOM % 4))$((RANDOM % 10))"
		# Not before its first hotzone is done (or it ended): a start that
		# a loaded machine makes longer than the delay must not lose the stop.
		wait_for eval '! alive "$pid" || progressed'
		kill -INT "$pid" 2>/dev/null; wait "$pid"
		if progressed; then
			stops=$((stops + 1))
			blkid -p "$W/s.img" 2>/dev/null | grep -q 'TYPE=' && seen=$((seen + 1))
		fi
		"$GELI" reencrypt $mode $Z "$W/s.img" >/dev/null 2>&1
	done
done
check "half-way ($stops stops of $(( $(echo $rounds | wc -w) * 2 ))): blkid -p never finds a file system on the raw provider" \
	test "$seen" = 0 -a "$stops" -ge "$least"
check "and the file system is intact after all that" eli_files_ok "$W/s.img" -j "$T/pass"
done_testing
