#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Reads of an attached provider while its daemon converts it, against the
# same reads when it is idle: a memory-backed AES-XTS-128 provider of random
# data, attached; each round reads a quarter of the .eli idle (dd, 1 MiB
# blocks, from the middle; after one read of it that is not counted), then starts `geli reencrypt` (a new Master Key,
# online), reads the same quarter while the conversion runs, waits for its
# end and attaches the provider again.  The figures are the medians over the rounds of the MB/s
# read during the conversion / the MB/s read idle, and how far the
# conversion had gone when the read ended (it must still have been running).
#
#   src/bench/reencrypt-online-bench.sh [-s MiB] [-r ROUNDS] [-g GELI]
#
#   -s MiB          provider size (default 1024)
#   -r ROUNDS       (default 5)
#   -g GELI         the geli binary (default build/src/geli/geli)
#
# Everything lives in a fresh directory of /dev/shm and goes at the end.
set -u
. "$(dirname "$0")/benchlib.sh"
mib=1024 rounds=5 geli=build/src/geli/geli
while getopts "s:r:g:" o; do
	case $o in
	s) mib=$OPTARG ;;
	r) rounds=$OPTARG ;;
	g) geli=$OPTARG ;;
	*) sed -n '12,16p' "$0" >&2; exit 2 ;;
	esac
done
geli=$(realpath "$geli")
[ -x "$geli" ] || { echo "reencrypt-online-bench: no geli at $geli" >&2; exit 2; }
T=$(mktemp -d /dev/shm/geli-reencrypt-online-bench.XXXXXX)
export GELI_STATE_DIR=$T/state GELI_RUNDIR=$T/run
cleanup() { "$geli" detach -f prov >/dev/null 2>&1; rm -rf "$T"; }
trap cleanup EXIT
trap 'exit 143' TERM INT

bench_provider "$T/prov" "$mib"
"$geli" attach -p -k "$T/key" "$T/prov" || exit 1

# rate: MB/s of one dd read of a quarter of the .eli.
rate() {
	local t0 t1
	t0=$(date +%s.%N)
	dd if="$T/run/prov.eli" of=/dev/null bs=1M skip=$((mib * 3 / 8)) \
		count=$((mib / 4)) status=none || exit 1
	t1=$(date +%s.%N)
	echo "$mib / 4 * 1.048576 / ($t1 - $t0)" | bc -l
}
progress() { "$geli" status -s prov | grep -o '[0-9.]*%' || echo "100%"; }

printf '%-6s %10s %12s %7s %10s\n' round "idle MB/s" "during MB/s" ratio "at end"
for r in $(seq 1 "$rounds"); do
	rate >/dev/null		# a new daemon's first read maps the pages
	idle=$(rate)
	"$geli" reencrypt -p -k "$T/key" -B none "$T/prov" 2>/dev/null &
	pid=$!
	until "$geli" status -s prov | grep -q converting; do sleep 0.01; done
	during=$(rate)
	at=$(progress)
	wait "$pid" || { echo "reencrypt-online-bench: the conversion failed" >&2; exit 1; }
	"$geli" detach prov && "$geli" attach -p -k "$T/key" "$T/prov" || exit 1
	ratio=$(echo "$during / $idle" | bc -l)
	printf '%-6s %10.0f %12.0f %7.3f %10s\n' "$r" "$idle" "$during" "$ratio" "$at"
	echo "$ratio" >>"$T/ratio"
done
printf 'median online read ratio, %s MiB, AES-XTS-128 to a new Master Key: %.3f of the idle rate\n' \
	"$mib" "$(median "$T/ratio")"
