#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# suite: plain
# The AES-CBC accelerator (lib/accel.h) through geli attach: for each key
# length and sector size, two copies of one provider are attached, one with
# the accelerator and one without (GELI_ACCEL=none), and the same writes go
# to both, aligned and not (read-modify-write of partial sectors), from one
# sector to runs longer than a batch; the providers' bytes must be the same,
# and each reads back what was written.  The log names the accelerator.
. "$(dirname "$0")/lib.sh"
need_fuse || { done_testing; exit; }
if [ -z "$("$GELI" bench --cipher-only --quick --json --ealgo AES-CBC --keylen 128 --sector-sizes 4096 2>/dev/null |
	sed -n 's/.*"crypto_accel": "\([^"]*\)".*/\1/p')" ]; then
	skip "no AES-CBC accelerator in this build or on this CPU"; done_testing; exit
fi

passfile "$T/pass" "accel secret"
sizes="512 4096 65536"
[ -n "${GELI_SANITIZED:-}" ] && sizes=4096
head -c 3000000 /dev/urandom >"$T/data"
# The writes: offset and length in bytes (seek/count of dd with bs=1 is slow:
# iflag/oflag *_bytes).
writes="0:512 1000:100 4096:1048576 777:1500000 2097152:3000000 65535:2"
for l in 128 192 256; do
	for s in $sizes; do
		mkprov "$T/a.img" 8M
		"$GELI" init -B none -i 50 -J "$T/pass" -e AES-CBC -l $l -s $s "$T/a.img" >/dev/null
		cp "$T/a.img" "$T/b.img"
		GELI_ACCEL=none "$GELI" attach -j "$T/pass" "$T/b.img"
		"$GELI" attach -j "$T/pass" "$T/a.img"
		ok_all=1
		for w in $writes; do
			o=${w%:*} len=${w#*:}
			for p in a b; do
				dd if="$T/data" of="$GELI_RUNDIR/$p.img.eli" bs=64k count="$len" seek="$o" \
					iflag=count_bytes oflag=seek_bytes conv=notrunc 2>/dev/null || ok_all=0
			done
		done
		check "AES-CBC-$l S=$s: the attached provider reads back the same through both" \
			cmp -s "$GELI_RUNDIR/a.img.eli" "$GELI_RUNDIR/b.img.eli"
		if [ $l = 128 ] && [ $s = 4096 ]; then
			check "the log names the accelerator, the other's does not" \
				eval "grep -Eq 'runs of sectors: ipsec-mb [0-9.]+ \\([a-z0-9]+, encryption( and decryption)?\\)' '$GELI_RUNDIR/a.img.log' &&
					! grep -q 'ipsec-mb' '$GELI_RUNDIR/b.img.log'"
		fi
		"$GELI" detach a.img b.img
		check "AES-CBC-$l S=$s: the same bytes on both providers after writes of 2 bytes to 3 MB, aligned or not" \
			eval '[ $ok_all = 1 ] && cmp -s "$T/a.img" "$T/b.img"'
	done
done
done_testing
