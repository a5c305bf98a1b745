#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Block devices as providers: size from BLKGETSIZE64, sector size from the
# device (a loop device with 512- and 4096-byte logical sectors).
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" -ne 0 ] || ! command -v losetup >/dev/null || ! losetup -f >/dev/null 2>&1; then
	skip "needs root and a free loop device"; done_testing; exit
fi
passfile "$T/pass" "block device"
for lbs in 512 4096; do
	truncate -s 8M "$T/back$lbs"
	dev=$(losetup -f --show -b $lbs "$T/back$lbs") || { nok "losetup -b $lbs"; continue; }
	on_exit "drop_loop '$dev' '$T/back$lbs' 2>/dev/null"
	expect_ok "init on $dev ($lbs-byte sectors)" "$GELI" init -B "$T/bk$lbs" -i 10 -J "$T/pass" "$dev"
	check "$lbs: default GELI sector size is the device's" test "$(dumpfield "$dev" sectorsize)" = $lbs
	check "$lbs: provsize from the device" test "$(dumpfield "$dev" provsize)" = 8388608
	check "$lbs: the metadata is in the last $lbs-byte sector" \
		bash -c 'tail -c '$lbs' "$0" | head -c 9 | grep -q "GEOM::ELI"' "$T/back$lbs"
	check "$lbs: the backup is one whole sector" test "$(stat -c %s "$T/bk$lbs")" = $lbs
	check "$lbs: the key opens" key_opens "$dev" 0 -j "$T/pass"
	run "$GELI" dump "$(basename "$dev")"
	check "$lbs: a name without /dev/ is found in /dev" test $rc = 0 -a "$(head -n1 "$T/out")" = "Metadata on $(basename "$dev"):"
	if [ $lbs = 4096 ]; then
		expect_err "$lbs: -s 512 is smaller than the device's sectors" \
			"geli: Invalid sector size."$'\n'"geli: There was an error with at least one provider." \
			--same "$T/back$lbs" -- "$GELI" init -B none -s 512 -i 10 -J "$T/pass" "$dev"
		run "$GELI" init -B none -s 8192 -i 10 -J "$T/pass" "$dev"
		check "$lbs: -s 8192 is a multiple (with the page-size warning)" test $rc = 0 -a \
			"$(cat "$T/err")" = "warning: Using sectorsize bigger than the page size!"
	fi
	expect_ok "$lbs: clear" "$GELI" clear "$dev"
	check "$lbs: cleared" fails "$GELI" dump "$dev"
	expect_ok "$lbs: restore" "$GELI" restore "$T/bk$lbs" "$dev"
	check "$lbs: restored" key_opens "$dev" 0 -j "$T/pass"
	losetup -d "$dev"
done
# udev holds a shared lock on a disk while it probes it, after every
# writer's close (systemd's block device locking): attach, which locks its
# provider exclusively, waits that out; a lock that stays refuses it.
if [ -c /dev/fuse ] && command -v flock >/dev/null; then
	truncate -s 8M "$T/backl"
	dev=$(losetup -f --show "$T/backl")
	on_exit "drop_loop '$dev' '$T/backl' 2>/dev/null"
	"$GELI" init -B none -i 10 -J "$T/pass" "$dev" >/dev/null
	# hold DEV SECONDS: a shared lock on DEV in a process of its own ($!).
	hold() { (exec 9<"$1" && flock -s 9 && exec sleep "$2") & }
	# locked DEV: somebody holds a lock on DEV (a lock of ours, had at once,
	# is let go at once).
	locked() { fails flock -n -x "$1" true; }
	# (One second from when it has the lock: attach tries for 3 s at least,
	# longer on a slow machine, so it outlasts it.)
	hold "$dev" 1
	wait_for locked "$dev"
	expect_ok "attach waits out a shared lock held for a moment (udev probing the disk)" \
		"$GELI" attach -j "$T/pass" "$dev"
	wait
	"$GELI" detach "$(basename "$dev")"
	# (Held until the test lets go: one that ended by a timer could end
	# while a slow attach still tried.)
	hold "$dev" inf
	holder=$!
	wait_for locked "$dev"
	expect_err "... and is refused by one that stays" \
		"geli: Cannot open $dev: Operation not permitted."$'\n'"geli: There was an error with at least one provider." \
		-- "$GELI" attach -j "$T/pass" "$dev"
	kill $holder
	wait
fi
done_testing
