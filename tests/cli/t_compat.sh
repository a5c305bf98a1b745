#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Compatibility, as tests: FreeBSD's whole providers
# attach and read back their known plaintext; volumes made here with every
# cipher GRUB reads are read back file for file by GRUB's own reader.
. "$(dirname "$0")/lib.sh"
need_fuse || { done_testing; exit; }

# FreeBSD 9, v6, AES-XTS 128, 4096-byte sectors; the passfile's first line.
cp "$FIX/fbsd9-v6-aesxts128-4k-bluemoon.img" "$T/bluemoon.img"
expect_ok "attach FreeBSD's bluemoon volume with its passfile" \
	"$GELI" attach -r -j "$FIX/fbsd9-v6-aesxts128-4k-bluemoon.pass" "$T/bluemoon.img"
plen=$(stat -c %s "$FIX/fbsd9-v6-aesxts128-4k-bluemoon.plain-prefix")
check "bluemoon decrypts to FreeBSD's plaintext" \
	cmp -s <(head -c "$plen" "$GELI_RUNDIR/bluemoon.img.eli") "$FIX/fbsd9-v6-aesxts128-4k-bluemoon.plain-prefix"
expect_ok "detach it" "$GELI" detach bluemoon.img

# The pg-* providers: an MBR and a FAT file system with random and md5.
printf 'password\n' >"$T/pgpass"
if command -v mcopy >/dev/null; then
	for img in "$FIX"/pg-*.img; do
		b=$(basename "$img" .img)
		cp "$img" "$T/$b.img"
		run "$GELI" attach -r -j "$T/pgpass" "$T/$b.img"
		check "$b: the file random matches the md5 list in the volume" \
			pg_fat_ok "$GELI_RUNDIR/$b.img.eli"
		"$GELI" detach "$b.img"
		check "$b: attaching read-only changed nothing" \
			test "$(md5sum <"$T/$b.img" | cut -d' ' -f1)" = "$(cut -d' ' -f1 "$FIX/$b.md5")"
	done
else
	skip "mtools not installed"
fi

# GRUB's independent reader: an ext2 written through attach, read back by
# grub-fstest with the passphrase on stdin (512-byte sectors, passphrase only).
if command -v grub-fstest >/dev/null && command -v mke2fs >/dev/null; then
	mkdir -p "$T/src/dir"
	echo "hello from geli for Linux" >"$T/src/hello.txt"
	head -c 300000 /dev/urandom >"$T/src/dir/random.bin"
	printf 'grub secret\n' >"$T/gpass"
	while read -r v e l; do
		desc="v$v $e $l"
		mkprov "$T/g.img" 16M
		"$GELI" init -B none -V "$v" -i 1000 -J "$T/gpass" -e "$e" -l "$l" "$T/g.img" >/dev/null 2>&1
		if ! "$GELI" attach -j "$T/gpass" "$T/g.img" ||
		    ! mke2fs -q -F -t ext2 -d "$T/src" "$GELI_RUNDIR/g.img.eli" ||
		    ! "$GELI" detach g.img; then
			nok "$desc: writing an ext2 through attach"; continue
		fi
		bad=""
		for f in hello.txt dir/random.bin; do
			rm -f "$T/out"
			printf 'grub secret' | grub-fstest -C "$T/g.img" cp "(crypto0)/$f" "$T/out" >"$T/grub.log" 2>&1
			grep -q 'error:' "$T/grub.log" && bad="$bad grub-error"
			cmp -s "$T/out" "$T/src/$f" || bad="$bad $f"
		done
		if [ -z "$bad" ]; then ok "$desc: GRUB reads every file back"; else
			nok "$desc: GRUB:$bad"; diag <"$T/grub.log"; fi
	done <<'LIST'
7 aes-xts 128
7 aes-xts 256
7 aes-cbc 128
7 aes-cbc 256
7 camellia-cbc 128
7 camellia-cbc 256
7 blowfish-cbc 128
7 blowfish-cbc 448
7 3des-cbc 192
6 aes-xts 128
5 aes-xts 256
4 camellia-cbc 192
3 aes-cbc 128
1 blowfish-cbc 256
LIST
	# And GRUB refuses a wrong passphrase.
	printf 'not it' | grub-fstest -C "$T/g.img" cp "(crypto0)/hello.txt" "$T/out2" >"$T/grub.log" 2>&1
	check "GRUB refuses another passphrase" grep -q 'error:' "$T/grub.log"
else
	skip "grub-fstest (grub-common) or mke2fs not installed"
fi
done_testing
