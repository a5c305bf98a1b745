#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# A soak: fio writes and verifies (crc32c) with several jobs, mixed and
# unaligned sizes, some with fsync, for a while over
#   1. an attached GELI provider (AES-XTS-128, 4096-byte sectors), and
#   2. a zfs-fuse raidz of three attached GELI providers,
# and says how much was written and verified and how many mismatches fio
# found (any is a failure: exit 1).
#
#   src/bench/soak.sh [-t SECONDS] [-g GELI] [-n | -z]
#
#   -t SECONDS  of each part (default 600)
#   -g GELI     the geli binary (default build/src/geli/geli)
#   -n          no zfs part
#   -z          the zfs part only
#
# As root, with fio and zfs-fuse installed.  Everything lives in a fresh
# directory of /dev/shm and goes at the end: the daemons and zfs-fuse it
# starts are stopped by their PIDs.
set -u
secs=600 geli=build/src/geli/geli zfs=1 attached=1
while getopts "t:g:nz" o; do
	case $o in
	t) secs=$OPTARG ;;
	g) geli=$OPTARG ;;
	n) zfs=0 ;;
	z) attached=0 ;;
	*) sed -n '10,16p' "$0" >&2; exit 2 ;;
	esac
done
geli=$(realpath "$geli")
[ -x "$geli" ] || { echo "soak: no geli at $geli" >&2; exit 2; }
command -v fio >/dev/null || { echo "soak: fio is not installed" >&2; exit 2; }

T=$(mktemp -d /dev/shm/geli-soak.XXXXXX)
export GELI_RUNDIR=$T/run
zpid= created=
cleanup() {
	local p
	if [ -n "$zpid" ]; then
		[ -n "$created" ] && zpool export -f soak 2>/dev/null
		kill "$zpid" 2>/dev/null
		# (up to 60 s, a hang's bound: it must be gone before the soak is)
		for _ in $(seq 600); do kill -0 "$zpid" 2>/dev/null || break; sleep 0.1; done
	fi
	for p in "$GELI_RUNDIR"/*.pid; do
		[ -f "$p" ] || continue
		"$geli" detach -f "$(basename "$p" .pid).eli" 2>/dev/null ||
			kill "$(cat "$p")" 2>/dev/null
	done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 143' TERM INT
printf 'soak passphrase\n' >"$T/pass"
failed=0

# jobfile filename=FILE|directory=DIR MiB-PER-JOB: four jobs, each in its
# own region of FILE, or its own file in DIR (fio's verify needs blocks that
# no other job overwrites).
jobfile() {
	local target=$1 mib=$2 step
	case $target in filename=*) step=$((mib + 1)) ;; *) step=0 ;; esac
	cat <<EOF
[global]
$target
ioengine=psync
verify=crc32c
verify_fatal=1
verify_backlog=64
verify_state_save=0
time_based
runtime=$secs
size=${mib}M
[aligned4k]
rw=randwrite
bs=4k
offset=0
fsync=32
[unaligned3000]
rw=randwrite
bs=3000
offset=$((step))M
[mixedseq]
rw=write
bsrange=512-256k
bs_unaligned=1
offset=$((2 * step))M
fsync=16
[big1m]
rw=randwrite
bs=1m
offset=$((3 * step))M
EOF
}

# report NAME JSON: one line from fio's JSON; fails on any job error.
report() {
	python3 - "$1" "$2" <<'PY' || failed=1
import json, sys
name, path = sys.argv[1], sys.argv[2]
d = json.load(open(path))
jobs = d['jobs']
errs = sum(1 for j in jobs if j['error'] != 0)
w = sum(j['write']['io_bytes'] for j in jobs) / 2**20
r = sum(j['read']['io_bytes'] for j in jobs) / 2**20
secs = max(j['job_runtime'] for j in jobs) / 1000
print('soak %s: %.0f s, %d jobs, written %.0f MiB, verified %.0f MiB, %d mismatches'
      % (name, secs, len(jobs), w, r, errs))
sys.exit(1 if errs else 0)
PY
}

attach_one() {	# attach_one FILE MiB: init and attach; the .eli path
	truncate -s "$2M" "$1"
	"$geli" init -B none -s 4096 -i 1000 -J "$T/pass" "$1" >/dev/null &&
		"$geli" attach -j "$T/pass" "$1" || exit 1
	echo "$GELI_RUNDIR/$(basename "$1").eli"
}

# ---- 1. An attached provider ----------------------------------------------
if [ "$attached" = 1 ]; then
	eli=$(attach_one "$T/prov" 256)
	jobfile "filename=$eli" 60 >"$T/attached.fio"
	fio --output-format=json --output="$T/attached.json" "$T/attached.fio" ||
		failed=1
	report attached "$T/attached.json"
	"$geli" detach "$eli" || failed=1
fi

# ---- 2. A zfs-fuse raidz on three attached providers -------------------------
if [ "$zfs" = 1 ]; then
	if ! command -v zfs-fuse >/dev/null || zpool list >/dev/null 2>&1; then
		echo "soak zfs: skipped (no zfs-fuse, or one that is not ours runs)"
	else
		zfs-fuse --pidfile "$T/zfs.pid" --no-kstat-mount >/dev/null 2>&1
		# (up to 60 s, a hang's bound: a loaded machine starts it late)
		for _ in $(seq 600); do zpool list >/dev/null 2>&1 && break; sleep 0.1; done
		zpid=$(cat "$T/zfs.pid")
		# Pools it imported from its cache (the host's zpool.cache) are
		# somebody else's: left alone.  The soak's stays out of it.
		theirs=$(zpool list -H -o name 2>/dev/null | tr '\n' ' ')
		if [ -n "$theirs" ]; then
			echo "soak zfs: skipped (zfs-fuse's cache brought pools: $theirs)"
			exit $failed
		fi
		devs=()
		for i in 1 2 3; do devs+=("$(attach_one "$T/z$i" 320)"); done
		zpool create -f -o cachefile=none -m "$T/pool" soak raidz "${devs[@]}" ||
			exit 1
		created=1
		jobfile "directory=$T/pool" 100 >"$T/zfs.fio"
		fio --output-format=json --output="$T/zfs.json" "$T/zfs.fio" ||
			failed=1
		report "zfs raidz" "$T/zfs.json"
		zpool scrub soak
		# (up to 300 s, a hang's bound)
		for _ in $(seq 3000); do
			zpool status soak | grep -q 'scrub completed' && break
			sleep 0.1
		done
		zpool status soak | grep -qE 'scrub completed.* with 0 errors' ||
			{ echo "soak zfs: the scrub found errors"; failed=1; }
		echo "soak zfs: $(zpool status soak | sed -n 's/^ *\(scan\|scrub\): //p')"
	fi
fi
exit $failed
