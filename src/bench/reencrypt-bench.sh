#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# geli reencrypt against dd, on the same memory-backed provider: an
# AES-XTS-128 provider of random data given a new Master Key (offline, the
# default journal mode, the journal in memory too), and dd copies of it
# (1 MiB blocks, conv=fsync): to a new file, and over a copy already there
# (conv=notrunc: no pages to allocate, the steadier and faster of the two).
# Each round times the three, the order turned every round; the figures are
# the medians over the rounds of dd seconds / reencrypt seconds
# (reencrypt's speed as a share of dd's).
#
#   src/bench/reencrypt-bench.sh [-s MiB] [-r ROUNDS] [-S SECTORSIZE] [-g GELI]
#
#   -s MiB          provider size (default 1024)
#   -r ROUNDS       (default 7)
#   -S SECTORSIZE   the provider's GELI sector size (default 512)
#   -g GELI         the geli binary (default build/src/geli/geli)
#
# Everything lives in a fresh directory of /dev/shm and goes at the end.
set -u
. "$(dirname "$0")/benchlib.sh"
mib=1024 rounds=7 ss=512 geli=build/src/geli/geli
while getopts "s:r:S:g:" o; do
	case $o in
	s) mib=$OPTARG ;;
	r) rounds=$OPTARG ;;
	S) ss=$OPTARG ;;
	g) geli=$OPTARG ;;
	*) sed -n '10,15p' "$0" >&2; exit 2 ;;
	esac
done
geli=$(realpath "$geli")
[ -x "$geli" ] || { echo "reencrypt-bench: no geli at $geli" >&2; exit 2; }
T=$(mktemp -d /dev/shm/geli-reencrypt-bench.XXXXXX)
trap 'rm -rf "$T"' EXIT
trap 'exit 143' TERM INT
export GELI_STATE_DIR=$T/state

bench_provider "$T/prov" "$mib" "$ss"

copy() { rm -f "$T/copy"; dd if="$T/prov" of="$T/copy" bs=1M conv=fsync status=none; }
over() { dd if="$T/prov" of="$T/over" bs=1M conv=fsync,notrunc status=none; }
rekey() { "$geli" reencrypt -p -k "$T/key" -B none "$T/prov"; }
cp "$T/prov" "$T/over"

printf '%-6s %9s %9s %12s %9s %9s\n' round "dd new s" "dd over s" "reencrypt s" "vs new" "vs over"
for r in $(seq 1 "$rounds"); do
	case $((r % 3)) in
	1) d=$(secs copy); o=$(secs over); g=$(secs rekey) ;;
	2) o=$(secs over); g=$(secs rekey); d=$(secs copy) ;;
	0) g=$(secs rekey); d=$(secs copy); o=$(secs over) ;;
	esac
	rm -f "$T/copy"
	rn=$(echo "$d / $g" | bc -l) ro=$(echo "$o / $g" | bc -l)
	printf '%-6s %9.3f %9.3f %12.3f %9.3f %9.3f\n' "$r" "$d" "$o" "$g" "$rn" "$ro"
	echo "$rn" >>"$T/new"; echo "$ro" >>"$T/over.r"
done
printf 'median reencrypt/dd speed ratio, %s MiB, S=%s: %.3f (dd to a new file), %.3f (dd over a copy)\n' \
	"$mib" "$ss" "$(median "$T/new")" "$(median "$T/over.r")"
