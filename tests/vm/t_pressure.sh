#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Memory pressure (tests/vm/lane boots this guest with 512 MiB, OpenZFS's
# ARC capped at 64 MiB, and three virtio disks): a raidz on GELI providers
# made on the disks themselves, fio writing twice the guest's memory
# through it (1 MiB writes) and verifying every block: no hang, no mismatch, no daemon
# killed for memory, a clean scrub, zdb consistent.
. "$(dirname "$0")/guest.sh"
need_zfs || { done_testing; exit; }

# The guest's memory as tests/vm/run -m gave it (MemTotal, less what the
# kernel keeps, rounded up to 256 MiB).
mem=$(awk '/MemTotal/ { print int(($2 / 1024 + 255) / 256) * 256 }' /proc/meminfo)
disks=(vda vdb vdc)
for d in "${disks[@]}"; do
	"$GELI" init -B none -P -K "$T/key" -s 4096 "/dev/$d" >/dev/null
done
check "three disks attached" "$GELI" attach -p -k "$T/key" -L /dev/vda /dev/vdb /dev/vdc
pids=$(cat "$GELI_RUNDIR"/vd?.pid)
zpool create -O recordsize=128k tank raidz /dev/vda.eli /dev/vdb.eli /dev/vdc.eli >"$T/zc" 2>&1 || diag <"$T/zc"

# fio in rounds over a 192 MiB file, 1 MiB at a time: each round writes
# it, then reads it back and verifies it; as many rounds as make twice the
# guest's memory (every cache the guest has is filled and emptied again;
# four times took 280 s of the lane for nothing more).
want=$((2 * mem))
loops=$(( (want + 191) / 192 ))
fio --name=pressure --directory=/tank --rw=write --bs=1M --size=192M --loops="$loops" \
	--ioengine=psync --verify=crc32c --do_verify=1 --verify_fatal=1 \
	--output-format=json --output="$T/fio.json" >"$T/fio.err" 2>&1
frc=$?
written=$(python3 -c 'import json, sys
print(sum(j["write"]["io_bytes"] for j in json.load(open(sys.argv[1]))["jobs"]) >> 20)' "$T/fio.json" 2>>"$T/fio.err" || echo 0)
check "fio wrote $written MiB (the guest has $mem MiB) and verified every block (status $frc)" \
	test "$frc" = 0 -a "$written" -ge "$want"
[ "$frc" = 0 ] && [ "$written" -gt 0 ] || diag <"$T/fio.err"
check "every daemon still serves" bash -c 'for p; do kill -0 "$p" || exit 1; done' _ $pids
check "nothing was killed for memory" fails grep -qiE "out of memory|oom-kill" <(dmesg)
check "the pool ONLINE" test "$(pool_state tank)" = ONLINE
check "a scrub with 0 errors" scrub_clean tank
zpool export tank
check "zdb finds the pool consistent" zdb_clean tank
"$GELI" detach vda vdb vdc
done_testing
