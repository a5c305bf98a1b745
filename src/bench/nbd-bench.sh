#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# nbdkit-geli-filter against nbdkit's file plugin alone, with nbdcopy over a
# Unix socket, on the same bytes: a GELI provider (AES-XTS-128, 4096-byte
# sectors) served through the filter, and a plain file of the provider's
# decrypted size served by the file plugin alone.  Each round times a read
# (nbdcopy to null:) and a write (nbdcopy from a file of random bytes) of
# each, in turns, the order swapped every round; the figure is the median
# over the rounds of geli MB/s / plain MB/s.
#
#   src/bench/nbd-bench.sh [-s MiB] [-r ROUNDS] [-w WORKERS] [-g GELI] [-f FILTER]
#
#   -s MiB      provider size (default 1024)
#   -r ROUNDS   (default 7)
#   -w WORKERS  the filter's workers= (default 1)
#   -g GELI     the geli binary (default build/src/geli/geli)
#   -f FILTER   the filter (default build/src/nbdkit/nbdkit-geli-filter.so)
#
# Needs nbdkit and nbdcopy (libnbd-bin).  Everything lives in a fresh
# directory of /dev/shm and goes at the end; the servers it starts are
# stopped by their PIDs.
set -u
mib=1024 rounds=7 workers=1
geli=build/src/geli/geli filter=build/src/nbdkit/nbdkit-geli-filter.so
while getopts "s:r:w:g:f:" o; do
	case $o in
	s) mib=$OPTARG ;;
	r) rounds=$OPTARG ;;
	w) workers=$OPTARG ;;
	g) geli=$OPTARG ;;
	f) filter=$OPTARG ;;
	*) sed -n '11,18p' "$0" >&2; exit 2 ;;
	esac
done
geli=$(realpath "$geli") filter=$(realpath "$filter")
[ -x "$geli" ] || { echo "nbd-bench: no geli at $geli" >&2; exit 2; }
[ -f "$filter" ] || { echo "nbd-bench: no filter at $filter" >&2; exit 2; }
for p in nbdkit nbdcopy; do
	command -v $p >/dev/null || { echo "nbd-bench: $p is not installed" >&2; exit 2; }
done

T=$(mktemp -d /dev/shm/geli-nbd-bench.XXXXXX)
pids=()
cleanup() {
	local p
	for p in "${pids[@]+"${pids[@]}"}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 143' TERM INT

printf 'bench passphrase\n' >"$T/pass"
truncate -s "${mib}M" "$T/prov"
"$geli" init -B none -i 1000 -e aes-xts -l 128 -s 4096 -J "$T/pass" "$T/prov" >/dev/null || exit 1
size=$(( (mib << 20) - 4096 ))
head -c "$size" /dev/urandom >"$T/src"
cp "$T/src" "$T/plain"

# start NAME ARGS...: nbdkit on $T/NAME.sock; its PID is kept.
start() {
	local name=$1; shift
	nbdkit -f -U "$T/$name.sock" "$@" </dev/null >/dev/null 2>"$T/$name.err" &
	pids+=($!)
	for _ in $(seq 1 200); do
		[ -S "$T/$name.sock" ] && return 0
		sleep 0.05
	done
	echo "nbd-bench: nbdkit $name did not start:" >&2
	cat "$T/$name.err" >&2
	exit 1
}
start plain file file="$T/plain"
start geli --filter="$filter" file file="$T/prov" password=+"$T/pass" workers="$workers"
uri() { echo "nbd+unix:///?socket=$T/$1.sock"; }
# Fill the provider: every sector written once, as the plain file is.
nbdcopy "$T/src" "$(uri geli)" || exit 1

now() { date +%s.%N; }
# secs read|write NAME: seconds of one nbdcopy.
secs() {
	local t0 t1
	t0=$(now)
	if [ "$1" = read ]; then
		nbdcopy --no-extents "$(uri "$2")" null: || exit 1
	else
		nbdcopy --no-extents "$T/src" "$(uri "$2")" || exit 1
	fi
	t1=$(now)
	awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }'
}
calc() { awk "BEGIN { print $1 }"; }

echo "nbd-bench: ${mib} MiB, AES-XTS-128, 4096-byte sectors, workers=$workers, $rounds rounds, $(nproc) CPUs"
printf '%-6s %5s %12s %12s %8s\n' op round "plain MB/s" "geli MB/s" ratio
declare -A ratios
for op in read write; do
	ratios[$op]=""
	for r in $(seq 1 "$rounds"); do
		if [ $((r % 2)) = 1 ]; then
			p=$(secs $op plain); g=$(secs $op geli)
		else
			g=$(secs $op geli); p=$(secs $op plain)
		fi
		pm=$(calc "$size / $p / 1000000")
		gm=$(calc "$size / $g / 1000000")
		ratio=$(calc "$p / $g")
		printf '%-6s %5d %12.0f %12.0f %8.3f\n' $op "$r" "$pm" "$gm" "$ratio"
		ratios[$op]+="$ratio "
	done
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
for op in read write; do
	printf 'median %-5s geli/plain: %.3f\n' $op "$(echo "${ratios[$op]}" | median)"
done
