#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# OpenZFS on GELI providers in the studies' layouts, on the providers'
# stable names: a raidz2 of five with 4096-byte sectors across ciphers and
# key lengths, with a log and a cache.  Written, scrubbed, exported, found
# consistent by zdb, its providers detached and attached again in another
# order (other loop devices), imported by its names alone, read back.
# (Four mirrors of two with compression, a raidz: t_zfs on the lane's
# backports; what this kernel changes, FUSE files on loop devices and
# OpenZFS 2.1, the layout here proves.  Until 2026-12-07 the ciphers made a
# raidz of their own and the raidz2 of four had AES-XTS members: two
# rounds for what one proves.)
. "$(dirname "$0")/guest.sh"
need_zfs || { done_testing; exit; }

mkprovs 80M -- p5 p6
i=0
for c in aes-xts:128 aes-xts:256 aes-cbc:192 camellia-cbc:256 blowfish-cbc:448; do
	i=$((i + 1))
	mkprovs 80M -e "${c%:*}" -l "${c#*:}" -- "c$i"
done
all=(c1 c2 c3 c4 c5 p5 p6)
check "7 providers attached with -L" attach_keyed "${all[@]}"
check "each has its stable name" bash -c 'for n; do [ -b "/dev/$n.eli" ] || exit 1; done' _ "${all[@]}"

# cycle POOL MEMBER...: the round every layout goes through.  Its members
# are attached again from the one on the highest-numbered device down:
# each takes the lowest free one, so the first takes another device.
cycle() {
	local pool=$1 before bad="" order
	shift
	put_files "/$pool" 6
	scrub_clean "$pool" || bad="$bad scrub"
	zpool export "$pool" || bad="$bad export"
	zdb_clean "$pool" || bad="$bad zdb"
	order=($(for n; do echo "$(loop_of "$n" | tr -dc 0-9) $n"; done | sort -rn | cut -d' ' -f2))
	before=$(loop_of "${order[0]}")
	"$GELI" detach "$@" || bad="$bad detach"
	attach_keyed "${order[@]}" || bad="$bad attach"
	[ "$(loop_of "${order[0]}")" != "$before" ] || bad="$bad same-loop"
	zpool import "$pool" >"$T/imp" 2>&1 || { bad="$bad import"; diag <"$T/imp"; }
	[ "$(pool_state "$pool")" = ONLINE ] || bad="$bad state"
	files_ok "/$pool" || bad="$bad data"
	zpool status -P "$pool" | sed '/^	cache/,$d' | grep -q ' /dev/loop' && bad="$bad names"
	if [ -z "$bad" ]; then ok "$pool: write, scrub, export, zdb, attach anew, import by name, verify"; else
		nok "$pool:$bad"; zpool status "$pool" 2>&1 | diag; fi
}


zpool create double raidz2 /dev/c1.eli /dev/c2.eli /dev/c3.eli /dev/c4.eli /dev/c5.eli \
	log /dev/p5.eli cache /dev/p6.eli >"$T/zc" 2>&1 || diag <"$T/zc"
check "a raidz2 of five across AES-XTS 128/256, AES-CBC 192, Camellia 256, Blowfish 448, 4096-byte blocks (ashift 12)" \
	bash -c '[ "$(zpool status double | grep -cE "c[1-5].eli +ONLINE")" = 5 ] && zdb -C double | grep -q "ashift: 12"'
check "... with a log and a cache on GELI providers" bash -c \
	'zpool status double | awk "/raidz2-0/ { r = 1 } /^	logs/ { s = 1 } /^	cache/ { s = 2 }
		s == 1 && /p5.eli +ONLINE/ { l = 1 } s == 2 && /p6.eli +ONLINE/ { c = 1 } END { exit !(r && l && c) }"'
cycle double c1 c2 c3 c4 c5 p5 p6
# OpenZFS 2.1 names a cache device by the device it found at import (the
# loop device), 2.3 by the name it was given: the same device either way.
check "double: the log came back by its name, the cache ONLINE on p6's device" bash -c \
	'zpool status double | grep -qE "p5.eli +ONLINE" &&
		zpool status double | grep -qE "(p6.eli|$(basename "$(readlink /dev/p6.eli)")) +ONLINE"'
zpool destroy double
"$GELI" detach "${all[@]}"
done_testing
