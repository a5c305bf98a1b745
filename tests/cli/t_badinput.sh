#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Bad input: each case gets one clear error, exit 1, and nothing written.
. "$(dirname "$0")/lib.sh"

AT=$'\n'"geli: There was an error with at least one provider."
passfile "$T/pass" "bad input"
good=$T/good
mkprov "$good"
"$GELI" init -B none -i 10 -J "$T/pass" "$good" >/dev/null

# A file smaller than a sector.
head -c 100 /dev/urandom >"$T/tiny"
expect_err "dump of a 100-byte file" \
	"Cannot read metadata from $T/tiny: Provider smaller than one sector."$'\n'"geli: Not fully done." \
	--same "$T/tiny" -- "$GELI" dump "$T/tiny"
expect_err "setkey of a 100-byte file" "geli: Cannot read metadata from $T/tiny: Provider smaller than one sector." \
	--same "$T/tiny" -- "$GELI" setkey -j "$T/pass" -J "$T/pass" "$T/tiny"
expect_err "init of a 100-byte file" "geli: Provider $T/tiny is too small: 100 bytes.$AT" \
	--same "$T/tiny" -- "$GELI" init -B none -i 10 -J "$T/pass" "$T/tiny"
head -c 512 /dev/urandom >"$T/onesector"
expect_err "init of a one-sector file" "geli: Provider $T/onesector is too small: 512 bytes.$AT" \
	--same "$T/onesector" -- "$GELI" init -B none -i 10 -J "$T/pass" "$T/onesector"
head -c 8192 /dev/urandom >"$T/eightk"
expect_err "init -s 8192 of an 8 KiB file" "warning: Using sectorsize bigger than the page size!"$'\n'"geli: Provider $T/eightk is too small: 8192 bytes.$AT" \
	--same "$T/eightk" -- "$GELI" init -B none -s 8192 -i 10 -J "$T/pass" "$T/eightk"
: >"$T/empty"
expect_err "setkey of an empty file" "geli: Cannot read metadata from $T/empty: Provider smaller than one sector." \
	--same "$T/empty" -- "$GELI" setkey -j "$T/pass" -J "$T/pass" "$T/empty"

# Random bytes.
head -c 1048576 /dev/urandom >"$T/random"
for verb in "setkey -j $T/pass -J $T/pass" "delkey -n 0" "configure -b"; do
	expect_err "${verb%% *} of random bytes" "geli: Cannot read metadata from $T/random: Invalid argument." \
		--same "$T/random" -- "$GELI" $verb "$T/random"
done
expect_err "backup of random bytes" "geli: Unable to read metadata from $T/random: Invalid argument." \
	--same "$T/random" -- "$GELI" backup "$T/random" "$T/random.bk"
expect_err "clear of random bytes" "Cannot clear metadata on $T/random: Invalid argument."$'\n'"geli: Not fully done." \
	--same "$T/random" -- "$GELI" clear "$T/random"

# Damaged metadata: magic, checksum, version, truncation.
corrupt() {	# corrupt FILE OFFSET [COUNT]: invert bytes of the last sector
	python3 - "$1" "$2" "${3:-1}" <<'PY'
import sys
f = open(sys.argv[1], 'r+b'); f.seek(-512, 2); s = bytearray(f.read(512))
for i in range(int(sys.argv[2]), int(sys.argv[2]) + int(sys.argv[3])):
    s[i] ^= 0xff
f.seek(-512, 2); f.write(s); f.close()
PY
}
cp "$good" "$T/badmagic"; corrupt "$T/badmagic" 0
expect_err "bad magic" "geli: Cannot read metadata from $T/badmagic: Invalid argument." \
	--same "$T/badmagic" -- "$GELI" setkey -j "$T/pass" -J "$T/pass" "$T/badmagic"
cp "$good" "$T/badsum"; corrupt "$T/badsum" 60
expect_err "bad checksum" "geli: Inconsistent provider's $T/badsum metadata." \
	--same "$T/badsum" -- "$GELI" setkey -j "$T/pass" -J "$T/pass" "$T/badsum"
expect_err "dump of a bad checksum" "Inconsistent provider's $T/badsum metadata."$'\n'"geli: Not fully done." \
	--same "$T/badsum" -- "$GELI" dump "$T/badsum"
cp "$good" "$T/badhash"; corrupt "$T/badhash" 500 4
expect_err "bad MD5 field" "geli: Inconsistent provider's $T/badhash metadata." \
	--same "$T/badhash" -- "$GELI" configure -b "$T/badhash"
# Version 8 with a correct MD5: too new.
cp "$good" "$T/v8"
python3 - "$T/v8" <<'PY'
import hashlib, sys
f = open(sys.argv[1], 'r+b'); f.seek(-512, 2); s = bytearray(f.read(512))
s[16] = 8; s[495:511] = hashlib.md5(bytes(s[:495])).digest()
f.seek(-512, 2); f.write(s); f.close()
PY
expect_err "unknown version" "geli: Provider's $T/v8 metadata version 8 is too new."$'\n'"geli: The highest supported version is 7." \
	--same "$T/v8" -- "$GELI" setkey -j "$T/pass" -J "$T/pass" "$T/v8"
run "$GELI" version "$T/v8"
check "version still reports the raw version 8" test "$(cat "$T/out")" = "$T/v8: 8"
# A backup file cut short.
"$GELI" backup "$good" "$T/full.bk"
head -c 300 "$T/full.bk" >"$T/short.bk"
expect_err "a truncated backup file" "geli: Cannot read metadata from $T/short.bk: File too short." \
	--same "$good" -- "$GELI" restore "$T/short.bk" "$good"

# A provider whose size does not match.
mkprov "$T/bigger" 2M
expect_err "restore onto a provider of another size" "geli: Provider size mismatch: wrong backup file?" \
	--same "$T/bigger" -- "$GELI" restore "$T/full.bk" "$T/bigger"

# Conflicting or invalid options: nothing written.
mkprov "$T/p"
bad_init() {	# bad_init DESC MESSAGE OPTIONS...
	local desc=$1 msg=$2; shift 2
	expect_err "$desc" "$msg" --same "$T/p" -- "$GELI" init -B none -J "$T/pass" "$@" "$T/p"
}
bad_init "-i with -P" "geli: Options -i and -P are mutually exclusive." -i 10 -P
bad_init "-V 8" "geli: Invalid version specified should be between 0 and 7." -V 8
bad_init "-V -2" "geli: Invalid version specified should be between 0 and 7." -V -2
bad_init "-V 4 -e aes-xts" "geli: AES-XTS algorithm is supported starting from version 5." -V 4 -e aes-xts
bad_init "-V 3 -e camellia" "geli: Camellia-CBC algorithm is supported starting from version 4." -V 3 -e camellia
bad_init "-V 0 -a hmac/sha256" "geli: Data authentication is supported starting from version 1." -V 0 -a hmac/sha256
bad_init "-e rot13" "geli: Invalid encryption algorithm." -e rot13
bad_init "-a hmac/crc32" "geli: Invalid authentication algorithm." -a hmac/crc32
bad_init "-e aes-xts -l 192" "geli: Invalid key length." -e aes-xts -l 192
bad_init "-e blowfish -l 100" "geli: Invalid key length." -e blowfish -l 100
bad_init "-e 3des -l 128" "geli: Invalid key length." -e 3des -l 128
bad_init "-s 1000" "geli: Invalid sector size.$AT" -s 1000
bad_init "-s 256" "geli: Invalid sector size.$AT" -s 256
bad_init "-s 1536" "geli: Invalid sector size.$AT" -s 1536
bad_init "-e twice" "geli: Option 'e' specified twice." -e aes -e aes-cbc
bad_init "-i abc" "geli: Invalid value for 'i' argument: Invalid argument" -i abc
expect_err "init without a provider" "geli: Too few arguments." -- "$GELI" init -B none -J "$T/pass"
expect_err "init of a missing provider" "geli: Cannot get information about $T/missing: No such file or directory.$AT" \
	-- "$GELI" init -B none -i 10 -J "$T/pass" "$T/missing"
run "$GELI" init -B none -Z "$T/p"
check "an unknown option prints the usage" test $rc = 1 -a "$(head -n2 "$T/err" | tail -n1 | cut -c1-17)" = "usage: geli init "

# Several providers, one bad: the others are done, exit 1.
mkprov "$T/ok1"; mkprov "$T/ok2"
expect_err "one bad provider among good ones" "geli: Provider $T/tiny is too small: 100 bytes.$AT" \
	-- "$GELI" init -B none -i 10 -J "$T/pass" "$T/ok1" "$T/tiny" "$T/ok2"
check "... the good ones were initialised" test "$(dumpfield "$T/ok1" version)" = 7 -a "$(dumpfield "$T/ok2" version)" = 7

# Accepted with a warning: -a naming a cipher (old syntax), legacy ciphers.
mkprov "$T/w"
run "$GELI" init -B none -i 10 -J "$T/pass" -a aes-cbc "$T/w"
check "-a aes-cbc: the old syntax works with FreeBSD's warning" test $rc = 0 -a \
	"$(cat "$T/err")" = "warning: The -e option, not the -a option is now used to specify encryption algorithm to use." -a \
	"$(dumpfield "$T/w" ealgo)" = AES-CBC
run "$GELI" init -B none -i 10 -J "$T/pass" -e blowfish -a hmac/md5 "$T/w"
check "legacy algorithms: accepted, with a warning each" test $rc = 0 -a "$(grep -c '^warning: The .* is deprecated; current FreeBSD cannot attach this provider.$' "$T/err")" = 2

# A full disk: metadata that cannot be stored is an error, and a failed
# backup leaves the provider alone.
if mkdir -p "$T/mnt" && mount -t tmpfs -o size=64k tmpfs "$T/mnt" 2>/dev/null; then
	on_exit "umount '$T/mnt' 2>/dev/null"
	truncate -s 1M "$T/mnt/sparse"
	dd if=/dev/zero of="$T/mnt/fill" bs=4k status=none 2>/dev/null
	expect_err "init on a full file system" \
		"geli: Cannot store metadata on $T/mnt/sparse: No space left on device.$AT" \
		-- "$GELI" init -B none -i 10 -J "$T/pass" "$T/mnt/sparse"
	check "... and nothing was written" cmp -s <(tail -c 512 "$T/mnt/sparse") <(head -c 512 /dev/zero)
	mkprov "$T/p"
	expect_err "a backup that does not fit: the provider stays as it was" \
		"geli: Unable to write to $T/mnt/bk: No space left on device.$AT" --same "$T/p" \
		-- "$GELI" init -B "$T/mnt/bk" -i 10 -J "$T/pass" "$T/p"
	check "... and no partial backup is left" test ! -e "$T/mnt/bk"
	umount "$T/mnt"
else
	skip "cannot mount a tmpfs here (not root?)"
	skip "cannot mount a tmpfs here"
	skip "cannot mount a tmpfs here"
	skip "cannot mount a tmpfs here"
fi

# geli bench's option values: no number wraps into range (found by
# fuzz/fuzz_opts.c; the seeds fuzz/corpus/opts/regress-*).
expect_err "bench --size 2^44+4 MiB is not 4 MiB" \
	"geli: Invalid value for --size: 17592186044420 (4 to 65536 MiB)." \
	-- "$GELI" bench --size 17592186044420
expect_err "bench --bs 2^54+4 KiB is not 4 KiB" \
	"geli: Invalid value for --bs: 18014398509481988k." \
	-- "$GELI" bench --bs 18014398509481988k
expect_err "bench --pool 65536xstripe:65536 (a product past int)" \
	"geli: Invalid pool layout: 65536xstripe:65536 (NxKIND[:WIDTH], KIND one of stripe, mirror, raidz, raidz2, raidz3)." \
	-- "$GELI" bench --pool 65536xstripe:65536

done_testing
