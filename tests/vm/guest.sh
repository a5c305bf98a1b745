# SPDX-License-Identifier: BSD-2-Clause
# Sourced by the guest lane's own tests (tests/vm/t_*.sh, listed in
# tests/vm/lane), which run inside a guest of tests/vm/run: lib.sh's
# helpers, and the stable names in the guest's own /dev, as a user has them.
. "$(dirname "${BASH_SOURCE[0]}")/../cli/lib.sh"
if [ "$(hostname)" != geli-vm ]; then
	echo "1..0 # SKIP runs in a guest of tests/vm/run (tests/run-suite --vm)"
	exit 0
fi
export GELI_DEVDIR=/dev

# Providers opened by one keyfile, 4096-byte sectors: mkprovs SIZE
# [INIT-OPTIONS...] -- NAME...: $T/NAME, each initialized.
head -c 64 /dev/urandom >"$T/key"
mkprovs() {
	local size=$1 opts=() n
	shift
	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	for n; do
		mkprov "$T/$n" "$size"
		"$GELI" init -B none -P -K "$T/key" -s 4096 "${opts[@]}" "$T/$n" >/dev/null 2>&1 ||
			{ nok "geli init ${opts[*]} $n"; return 1; }
	done
}
# attach_keyed NAME...: attached with -L (their stable names /dev/NAME.eli).
attach_keyed() { local n a=(); for n; do a+=("$T/$n"); done; "$GELI" attach -p -k "$T/key" -L "${a[@]}" >/dev/null; }

# put_files DIR N: N files of random data (1 MiB each) in DIR, their sums
# kept; files_ok DIR: every one of them reads back as written.
put_files() {
	local i
	for i in $(seq "$2"); do head -c 1048576 /dev/urandom >"$1/f$i"; done
	sync
	(cd "$1" && md5sum f*) >"$T/sums"
}
files_ok() { (cd "$1" && md5sum --quiet -c "$T/sums") >/dev/null 2>&1; }

# fio_start NAME SIZE: fio writing and verifying files of SIZE in /tank
# (two jobs, 4 KiB to 128 KiB, crc32c), round after round in the
# background until fio_stop, which sets $runs and $bad (rounds that
# failed, their log in $T/fio.log); fio_start returns once the first round
# has begun.
fio_start() {
	rm -f "$T/stop"
	( runs=0 bad=0
	  while [ ! -e "$T/stop" ]; do
		fio --name="$1" --directory=/tank --ioengine=psync --rw=randwrite --bsrange=4k-128k \
			--numjobs=2 --size="$2" --verify=crc32c --verify_backlog=16 --do_verify=1 \
			--verify_fatal=1 --fsync=32 >>"$T/fio.log" 2>&1 || bad=$((bad + 1))
		runs=$((runs + 1))
	  done
	  echo "$runs $bad" >"$T/fio.result" ) &
	fio_pid=$!
	# (fio's first round begun, however late on a loaded machine)
	wait_for test -e "$T/fio.log"
}
fio_stop() {
	touch "$T/stop"
	wait "$fio_pid"
	read -r runs bad <"$T/fio.result"
	[ "$bad" = 0 ] || tail -n 30 "$T/fio.log" | diag
}

pool_state() { zpool status "$1" 2>/dev/null | sed -n 's/^ *state: //p'; }
# scrub_clean POOL: a scrub (waited for) ends "with 0 errors" and the pool
# is healthy.  A member brought back may count checksum errors that the
# scrub repaired (OpenZFS does, on plain loop devices too; docs/testing.md):
# then the counts are cleared and a second scrub must find nothing.  A
# resilver under way (a member just brought online, or one that zpool clear
# started) is waited for first: a scrub cannot start beside it.  On a
# failure each scrub's status is shown.
scrub_clean() {
	local i
	rm -f "$T/scrub.1" "$T/scrub.2"
	for i in 1 2; do
		zpool wait -t resilver "$1"
		zpool scrub -w "$1" >"$T/scrub.$i" 2>&1 || { zpool status "$1" >>"$T/scrub.$i"; break; }
		zpool status "$1" >"$T/scrub.$i"
		grep -q "with 0 errors" "$T/scrub.$i" || break
		zpool status -x "$1" >>"$T/scrub.$i"
		grep -q "is healthy" "$T/scrub.$i" && return 0
		zpool clear "$1"
	done
	for i in 1 2; do [ -f "$T/scrub.$i" ] && { echo "scrub $i:"; cat "$T/scrub.$i"; }; done | diag
	return 1
}
# zdb_clean POOL: OpenZFS's zdb reads every block of the exported pool
# and finds the space maps as the blocks say.
zdb_clean() {
	zdb -e -p /dev -bc "$1" >"$T/zdb.log" 2>&1
	grep -q "No leaks" "$T/zdb.log" && return
	tail -n 20 "$T/zdb.log" | diag
	return 1
}
# loop_of NAME: the loop device /dev/NAME.eli leads to.
loop_of() { readlink "/dev/$1.eli"; }
