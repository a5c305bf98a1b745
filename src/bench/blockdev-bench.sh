#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The same encrypted disk through each block-device path Linux offers, side
# by side (docs/benchmarks.md, "Block devices"):
#
#   src/bench/blockdev-bench.sh [-s MiB] [-t SECONDS] [-l 128|256] [-c] [-g GELI]
#
# One memory-backed disk (a file in /dev/shm behind a loop device with
# direct I/O) serves, in turn:
#   ublk       geli attach -b ublk      (GELI AES-XTS of -l BITS, default
#              128, 4096-byte sectors)
#   fuse+loop  geli attach -b fuse -L   (the same provider)
#   dm-crypt   cryptsetup open --type plain --cipher aes-xts-plain64
#              --key-size 2*BITS --sector-size 4096 (the same cipher and
#              key length: XTS with two AES keys of BITS)
#   dm-crypt-nowq  the same with --perf-no_read_workqueue
#              --perf-no_write_workqueue
# and with -c, the same provider converted to LUKS2 (geli reencrypt -t
# luks2, its header a file; aes-xts-plain64 with a 512-bit key, so that
# -l 256 compares like with like) and opened by cryptsetup:
#   luks2, luks2-nowq  as the two dm-crypt rows above
# and fio measures each with direct I/O: sequential 1 MiB reads and writes
# (queue depth 8), random 4 KiB reads and writes (queue depth 32), each for
# SECONDS (default 10) on a disk of MiB (default 1024).  The table gives MB/s
# and each path's ratio to dm-crypt.  As root, on a kernel with ublk and
# dm-crypt (a path the kernel lacks is left out, and said so).  A benchmark,
# not a test: it prints numbers and never fails on them; under emulation
# (the guest lane) the figures only rank the paths.
set -u
size=1024 secs=10 bits=128 convert=0 geli=${GELI:-geli}
usage() { echo "usage: $0 [-s MiB] [-t SECONDS] [-l 128|256] [-c] [-g GELI]" >&2; exit 2; }
while getopts s:t:l:cg: o; do
	case $o in
	s) size=$OPTARG ;;
	t) secs=$OPTARG ;;
	l) bits=$OPTARG ;;
	c) convert=1 ;;
	g) geli=$OPTARG ;;
	*) usage ;;
	esac
done
[ "$(id -u)" = 0 ] || { echo "$0: needs root (loop, ublk and dm devices)" >&2; exit 2; }
for p in fio losetup python3; do
	command -v "$p" >/dev/null || { echo "$0: needs $p" >&2; exit 2; }
done

w=$(mktemp -d /dev/shm/geli-blockdev-bench.XXXXXX)
disk="" mapped="" name=""
export GELI_RUNDIR=$w/run GELI_DEVDIR=$w/dev GELI_STATE_DIR=$w/state GELI_BOOT_CONF=$w/default-geli
mkdir -p "$GELI_RUNDIR" "$GELI_DEVDIR"
cleanup() {
	[ -n "$name" ] && "$geli" detach -f "$name" >/dev/null 2>&1
	[ -n "$mapped" ] && cryptsetup close "$mapped" 2>/dev/null
	[ -n "$disk" ] && losetup -d "$disk" 2>/dev/null
	rm -rf "$w"
}
trap cleanup EXIT
truncate -s "${size}M" "$w/disk.img"
# (written once, so that every path reads allocated memory)
dd if=/dev/zero of="$w/disk.img" bs=1M count="$size" conv=notrunc status=none
disk=$(losetup -f --show --direct-io=on "$w/disk.img") || exit 1
head -c 64 /dev/urandom >"$w/key"

# measure PATH DEVICE: one line of MB/s, the four workloads in order.
jobs=(
	"seq-read --rw=read --bs=1M --iodepth=8"
	"seq-write --rw=write --bs=1M --iodepth=8"
	"rand-read --rw=randread --bs=4k --iodepth=32"
	"rand-write --rw=randwrite --bs=4k --iodepth=32"
)
measure() {
	local line="$1" j name
	for j in "${jobs[@]}"; do
		name=${j%% *}
		# shellcheck disable=SC2086
		fio --name="$name" --filename="$2" ${j#* } --direct=1 --ioengine=libaio \
			--time_based --runtime="$secs" --size=$((size / 2))M --eta=never \
			--output-format=json --output="$w/$name.json" >/dev/null 2>&1 || {
			line="$line -"; continue; }
		line="$line $(python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
print("%.0f" % ((j["read"]["bw_bytes"] + j["write"]["bw_bytes"]) / 1e6))' "$w/$name.json")"
	done
	echo "$line" >>"$w/results"
}

: >"$w/results"
"$geli" init -B none -P -K "$w/key" -e aes-xts -l "$bits" -s 4096 "$disk" >/dev/null || exit 1
name=$(basename "$disk")
if [ -c /dev/ublk-control ] || modprobe -q ublk_drv 2>/dev/null; then
	dev=$("$geli" attach -b ublk -p -k "$w/key" -L "$disk") && measure ublk "$dev"
	"$geli" detach "$name" 2>/dev/null
else
	echo "(ublk: this kernel has none)"
fi
dev=$("$geli" attach -b fuse -p -k "$w/key" -L "$disk") && measure fuse+loop "$dev"
"$geli" detach "$name" 2>/dev/null
if command -v cryptsetup >/dev/null && modprobe -q dm_crypt 2>/dev/null; then
	# dm_crypt ROW OPEN-OPTIONS...: ROW and ROW-nowq, the disk opened so.
	dm_crypt() {
		local row=$1 perf
		shift
		for perf in "" "--perf-no_read_workqueue --perf-no_write_workqueue"; do
			mapped=geli-bench-$$
			# shellcheck disable=SC2086
			cryptsetup open "$@" --key-file "$w/key" $perf "$disk" "$mapped" ||
				{ mapped=""; continue; }
			measure "$row${perf:+-nowq}" "/dev/mapper/$mapped"
			cryptsetup close "$mapped"
			mapped=""
		done
	}
	dm_crypt dm-crypt --type plain --cipher aes-xts-plain64 --key-size $((2 * bits)) --sector-size 4096
	if [ "$convert" = 1 ]; then
		"$geli" reencrypt -t luks2 -B none -i 1000 -p -k "$w/key" -H "$w/hdr" "$disk" >/dev/null &&
			dm_crypt luks2 --header "$w/hdr"
	fi
else
	echo "(dm-crypt: no cryptsetup or no dm_crypt module)"
fi

echo "$(nproc) CPUs, $(uname -r), ${size} MiB disk in memory, AES-XTS of $bits-bit keys, ${secs} s per workload; MB/s (x dm-crypt)"
python3 - "$w/results" <<'EOF'
import sys
rows = [l.split() for l in open(sys.argv[1])]
base = next((r for r in rows if r[0] == "dm-crypt"), None)
print("%-14s %16s %16s %16s %16s" % ("path", "seq read 1M", "seq write 1M",
      "rand read 4k", "rand write 4k"))
for r in rows:
    cells = []
    for i, v in enumerate(r[1:], 1):
        if v == "-":
            cells.append("-")
        elif base is not None and base[i] not in ("-", "0"):
            cells.append("%s (%.2fx)" % (v, float(v) / float(base[i])))
        else:
            cells.append(v)
    print("%-14s %16s %16s %16s %16s" % tuple([r[0]] + cells))
EOF
