#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# geli reencrypt -t luks2 against geli reencrypt to a GELI AES-XTS of the
# same key length (256: LUKS2's aes-xts-plain64 takes a 512-bit key), on
# copies of the same memory-backed provider: an AES-XTS-128 provider of
# random data, converted offline in the default journal mode (the journal
# and the LUKS2 header in memory too).  The keyslots are PBKDF2 of 1000
# iterations (-i 1000) so that the KDF, which LUKS2 spends on purpose, is
# not timed.  Each round copies the provider twice and times the two
# conversions, their order turned every round; the figure is the median
# over the rounds of GELI seconds / LUKS2 seconds (LUKS2's speed as a share
# of GELI's).
#
#   src/bench/luks2-bench.sh [-s MiB] [-r ROUNDS] [-S SECTORSIZE] [-g GELI]
#
#   -s MiB          provider size (default 1024)
#   -r ROUNDS       (default 7)
#   -S SECTORSIZE   the provider's GELI sector size (default 4096)
#   -g GELI         the geli binary (default build/src/geli/geli)
#
# Everything lives in a fresh directory of /dev/shm and goes at the end.
set -u
. "$(dirname "$0")/benchlib.sh"
mib=1024 rounds=7 ss=4096 geli=build/src/geli/geli
while getopts "s:r:S:g:" o; do
	case $o in
	s) mib=$OPTARG ;;
	r) rounds=$OPTARG ;;
	S) ss=$OPTARG ;;
	g) geli=$OPTARG ;;
	*) sed -n '14,19p' "$0" >&2; exit 2 ;;
	esac
done
geli=$(realpath "$geli")
[ -x "$geli" ] || { echo "luks2-bench: no geli at $geli" >&2; exit 2; }
T=$(mktemp -d /dev/shm/geli-luks2-bench.XXXXXX)
trap 'rm -rf "$T"' EXIT
trap 'exit 143' TERM INT
export GELI_STATE_DIR=$T/state GELI_BOOT_CONF=$T/default-geli

bench_provider "$T/src" "$mib" "$ss"

to_geli() { "$geli" reencrypt -p -k "$T/key" -e AES-XTS -l 256 -B none "$T/g"; }
to_luks2() { "$geli" reencrypt -t luks2 -i 1000 -p -k "$T/key" -H "$T/hdr" -B none "$T/l"; }

printf '%-6s %8s %9s %9s %9s\n' round "GELI s" "LUKS2 s" "GELI MB/s" "LUKS2/GELI"
for r in $(seq 1 "$rounds"); do
	cp "$T/src" "$T/g"; cp "$T/src" "$T/l"; rm -f "$T/hdr"
	if [ $((r % 2)) = 1 ]; then g=$(secs to_geli); l=$(secs to_luks2); else
		l=$(secs to_luks2); g=$(secs to_geli); fi
	ratio=$(echo "$g / $l" | bc -l)
	printf '%-6s %8.3f %9.3f %9.0f %9.3f\n' "$r" "$g" "$l" "$(echo "$mib * 1.048576 / $g" | bc -l)" "$ratio"
	echo "$ratio" >>"$T/ratios"
done
printf 'median LUKS2/GELI conversion speed ratio, %s MiB, S=%s: %.3f\n' "$mib" "$ss" "$(median "$T/ratios")"
