#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# A pool with OpenZFS 2.2's features, as TrueNAS CORE 13.3 made them (zpool
# create -o compatibility=openzfs-2.2-freebsd), on three GELI providers:
# made in a guest with OpenZFS 2.3 (bookworm-backports' kernel), refused by
# OpenZFS 2.1 (Debian 12's own kernel) with the message docs/truenas.md
# explains, read-only there where the features allow it, then imported
# again by 2.3: its files intact, a scrub clean, zdb consistent.  The three
# disks are files of this test's, handed to each guest in turn; this
# script runs on the host (the lane's kernel "host") and runs itself in the
# guests, where it does one step and prints its findings as "= KEY VALUE".
set -u
here=$(cd "$(dirname "$0")" && pwd)

if [ "$(hostname)" = geli-vm ]; then
	# ---- in a guest: one step ------------------------------------------------
	T=$2
	export GELI_DEVDIR=/dev
	attach() {
		local d
		for d in /dev/vda /dev/vdb /dev/vdc; do
			"$GELI" attach -p -k "$T/key" -L "$d" >/dev/null || echo "= attach-failed $d"
		done
	}
	say() { echo "= $1 $2"; }
	case $1 in
	make)
		for d in /dev/vda /dev/vdb /dev/vdc; do
			"$GELI" init -B none -P -K "$T/key" -s 4096 -l 256 "$d" >/dev/null 2>&1 || say init-failed "$d"
		done
		attach
		zpool create -o compatibility=openzfs-2.2-freebsd -O compression=lz4 -m /tank tank \
			raidz /dev/vda.eli /dev/vdb.eli /dev/vdc.eli || say create-failed 1
		cp "$T"/data/f* /tank/
		say features "$(zpool get -H -o property,value all tank | awk '$1 ~ /^feature@/ && $2 == "active" { printf "%s,", substr($1, 9) }')"
		zpool export tank || say export-failed 1
		;;
	old)
		attach
		zpool import tank >"$T/out" 2>&1
		say import-rc $?
		sed 's/^/= msg /' "$T/out"
		if zpool import -o readonly=on tank >"$T/out" 2>&1; then
			say ro-import 0
			(cd /tank && md5sum f*) | sed 's/^/= ro-sum /'
			zpool export tank
		else
			say ro-import 1
			sed 's/^/= ro-msg /' "$T/out"
		fi
		;;
	new)
		attach
		zpool import tank >"$T/out" 2>&1
		say import-rc $?
		say health "$(zpool list -H -o health tank)"
		(cd /tank && md5sum f*) | sed 's/^/= sum /'
		zpool scrub -w tank
		say scrub "$(zpool status tank | sed -n 's/^ *scan: scrub repaired \([^ ]*\) .* with \([0-9]*\) errors.*/\1,\2/p')"
		zpool export tank
		zdb -e -p /dev -bc tank >"$T/zdb" 2>&1
		say zdb "$(grep -c 'No leaks' "$T/zdb")"
		;;
	esac
	exit 0
fi

# ---- on the host: the three guests -----------------------------------------------
. "$here/../cli/lib.sh"
mkdir -p "$T/data"
head -c 64 /dev/urandom >"$T/key"
for i in 1 2 3 4; do head -c $((3 * 1048576)) /dev/urandom >"$T/data/f$i"; done
(cd "$T/data" && md5sum f*) >"$T/want"
for d in 1 2 3; do truncate -s 160M "$T/disk$d"; done
# guest KERNEL STEP: this script's STEP in a guest of KERNEL, on the disks.
guest() {
	"$here/run" -k "$1" -m 1024 -d "$T/disk1" -d "$T/disk2" -d "$T/disk3" \
		bash "$here/t_features.sh" "$2" "$T" >"$T/$2.out" 2>&1
}
# got STEP KEY: what the guest of STEP said of KEY (its console ends lines
# with CR LF).
got() { tr -d '\r' <"$T/$1.out" | sed -n "s/^= $2 //p"; }

guest backports make
check "2.3 made the pool with 2.2's features (active: $(got make features))" test -z "$(grep -E '^= [a-z]+-failed' "$T/make.out")" \
	-a -n "$(got make features)"

guest bookworm old
msg=$(got old msg)
check "2.1 refuses to import it" test "$(got old import-rc)" != 0
check "... saying which features it lacks" eval 'got old msg | grep -q "not supported by this system" &&
	got old msg | grep -qE "^\s+[a-z.]+:[a-z_0-9]+$"'
printf '%s\n' "$msg" | diag
# docs/truenas.md shows the message as 2.1 gives it, and explains it.
doc=$here/../../docs/truenas.md
shown=1
while IFS= read -r line; do grep -qF -- "    $line" "$doc" || shown=0; done <<<"$msg"
check "... the message docs/truenas.md shows and explains" test -n "$msg" -a $shown = 1
if [ "$(got old ro-import)" = 0 ]; then
	check "... and reads it read-only (the features are read-only compatible)" \
		test "$(got old ro-sum)" = "$(cat "$T/want")"
else
	check "... and refuses it read-only too, naming the feature (one 2.1 cannot read)" \
		eval 'got old ro-msg | grep -qE "^\s+[a-z.]+:[a-z_0-9]+$"'
fi

guest backports new
check "2.3 imports it again, ONLINE" test "$(got new import-rc)/$(got new health)" = 0/ONLINE
check "... its files intact" test "$(got new sum)" = "$(cat "$T/want")"
check "... a scrub repairs nothing and finds no errors" test "$(got new scrub)" = 0B,0
check "... zdb finds it consistent" test "$(got new zdb)" = 1
[ "$failed" = 0 ] || for s in make old new; do diag <"$T/$s.out"; done
done_testing
