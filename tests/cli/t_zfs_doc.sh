#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# suite: zfs
# docs/zfs-on-geli.md, run: every command block of the document is
# read out of it and run, in order, with this test's paths in place of the
# system's: under OpenZFS in the guest lane (as written: -L, /dev/NAME.eli),
# else with zfs-fuse (the .eli files, as the document says); the outcome of
# each is checked, and every block is tagged and run.  Its boot part is
# docs/boot.md's (t_boot_zfs).
. "$(dirname "$0")/lib.sh"
need_fuse || { done_testing; exit; }
need_zfs || { done_testing; exit; }

TOP=$(cd "$GELI_TESTS/.." && pwd)
DOC=$TOP/docs/zfs-on-geli.md
ROOT=$T/root                    # stands for /
ALT=$T/alt                      # pools mount under it
mkdir -p "$ROOT/root" "$ROOT/dev" "$ROOT/etc/default" "$ROOT/etc/zfs" "$ROOT/var/backups" \
	"$ROOT/etc/systemd/system" "$ROOT/usr/local/sbin" "$ALT"
export GELI_BOOT_CONF=$ROOT/etc/default/geli
export PATH="$(dirname "$GELI"):$ROOT/usr/local/sbin:$PATH"

for d in b c d e f g h i j k; do mkprov "$ROOT/dev/sd$d" 96M; done
passfile "$ROOT/root/tank.pass" "tank passphrase"

# The document's paths, made this test's: /dev/NAME.eli as $ZDIR's (zfs-fuse:
# the files in the run directory, attached without -L; zpool import looks
# there), /dev/sdX, /root, /etc, /usr/local
# under $ROOT, /run/geli as $GELI_RUNDIR, systemctl on $ROOT, pools mounted
# under $ALT (zpool create -m; zfs-fuse's -R mounts every pool on the altroot
# itself), geli init's metadata backups (by default in /var/backups) under
# $ROOT, and a short PBKDF2 for geli init with a passphrase (its default
# calibration costs seconds per provider).
kind=()
[ "$ZFS_KIND" = openzfs ] || kind=(-e "s#geli attach -L #geli attach #")
localize() {
	sed -e "s#/dev/\([a-z0-9\$]*\)\.eli#$ZDIR/\1.eli#g" "${kind[@]}" \
		-e "s#zpool import #zpool import -d $ZDIR #" \
		-e "s#\(^\|[ =>\"']\)/\(root/\|etc/\|usr/local/\|dev/sd\)#\1$ROOT/\2#g" \
		-e "s#/run/geli#$GELI_RUNDIR#g" \
		-e "s#systemctl #systemctl --root=$ROOT #" \
		-e "s#zpool create \(\(-O [^ ]* \)*\)\([a-z]*\) #zpool create \1-m $ALT/\3 \3 #" \
		-e "/ -P /!s#geli init #geli init -i 1000 #" \
		-e "s#geli init #geli init -B $ROOT/var/backups/PROV.eli #"
}
block() { doc_block "$DOC" "$1"; }
RAN=()
# doc NAME: run the block; its stdout in $T/out, stderr in $T/err, status in rc.
doc() {
	block "$1" | localize >"$T/block.sh"
	if [ ! -s "$T/block.sh" ]; then nok "block '$1' is in the document"; return; fi
	(cd "$TOP" && . "$T/block.sh") >"$T/out" 2>"$T/err" </dev/null
	rc=$?
	RAN+=("$1")
}
say() { { echo "block $1 (status $rc):"; cat "$T/block.sh" "$T/err"; } | diag; }
state() { zpool status "$1" 2>/dev/null | sed -n 's/^ *state: //p'; }
scrub_clean() {
	zpool_scrubbed "$1"
	zpool status "$1" | grep -q "with 0 errors" && return
	zpool status "$1" | diag
	return 1
}
head -c 5000000 /dev/urandom >"$T/data"
sum=$(md5sum <"$T/data")
data_ok() { [ "$(md5sum <"$ALT/$1/data" 2>/dev/null)" = "$sum" ]; }
online() { [ "$(state "$1")" = ONLINE ]; }
online_with_data() { online "$1" && data_ok "$1"; }
# made POOL BLOCK: the block made POOL (which then gets the data), or a failure.
made() {
	if online "$1"; then cp "$T/data" "$ALT/$1/data" && sync; return; fi
	nok "$2: pool $1"
	say "$2"
	return 1
}
# eli NAME... / no_eli NAME...: these providers are (not) attached.
eli() { local n; for n; do [ -e "$GELI_RUNDIR/$n.eli" ] || return 1; done; }
no_eli() { local n; for n; do [ ! -e "$GELI_RUNDIR/$n.eli" ] || return 1; done; }

doc_all_tagged "$DOC"

doc create
made tank create && check "create: a compressed raidz of 4 attached providers" \
	bash -c "zpool status tank | grep -q raidz1 && [ \$(zfs get -H -o value compression tank) = on ]"

check "create: geli init made a metadata backup of each provider (here under the test's /var/backups)" \
	test "$(ls "$ROOT/var/backups" | grep -c '_dev_sd[b-f]\.eli$')" = 5

doc log
check "log: a GELI provider as the log device" \
	bash -c "zpool status tank | grep -A1 '^	logs' | grep -q 'sdf\.eli'"

doc keyfile
made backup keyfile && check "keyfile: providers without a passphrase carry a mirror" \
	bash -c "[ \"\$($GELI dump $ROOT/dev/sdg | sed -n 's/^ *iterations: //p')\" = -1 ] && zpool status backup | grep -q mirror"

doc integrity
if made safe integrity; then
	check "integrity: dd stops at the end of the provider with the message the document gives" \
		grep -q "No space left on device" "$T/err"
	zpool scrub safe
	check "integrity: a raidz on HMAC/SHA256 providers, written and scrubbed clean" \
		eval 'scrub_clean safe && data_ok safe'
fi

doc reimport
check "reimport: export, detach, attach, import: ONLINE, data equal" \
	online_with_data tank

doc busy
check "busy: detach of a pool member refused with FreeBSD's message, exit 1" \
	bash -c "[ $rc = 1 ] && [ \"\$(cat $T/err)\" = 'geli: Cannot destroy device sdb.eli (error=16).' ]"

doc missing
check "missing: sde not attached at import: DEGRADED" test "$(state tank)" = DEGRADED
check "missing: the document's zpool status shows it" grep -q "state: DEGRADED" "$T/out"
check "missing: the data reads back correct" data_ok tank

doc online
check "online: attach and zpool online: ONLINE" wait_for online tank
check "online: the scrub ends with no errors" scrub_clean tank
check "online: data still equal" data_ok tank

zpool export backup
geli detach sdg sdh

# Moving FreeBSD's disks: three providers FreeBSD's geli init made (v3 AES-CBC
# from 6.2 and 7.0, v7 AES-XTS from 11.0, one passphrase) as sdb3, sdc3, sdd3.
# "On FreeBSD": a raidz on them, exported, detached.  Then the document's steps.
zpool export tank
geli detach sdb sdc sdd sde sdf >/dev/null 2>&1
passfile "$ROOT/root/tank.pass" openwall123
i=0
for f in fbsd62-v3-aescbc128-openwall123 fbsd70-v3-aescbc128-openwall123 fbsd11-v7-aesxts128-openwall123; do
	i=$((i + 1))
	p=$ROOT/dev/sd$(echo bcd | cut -c$i)3
	mkprov "$p" 1G
	dd if="$FIX/$f.raw" of="$p" bs=8192 seek=$(((1073741824 - 8192) / 8192)) conv=notrunc status=none
done
if zfs_attach -j "$ROOT/root/tank.pass" "$ROOT"/dev/sd[bcd]3 &&
	zpool create -m "$ALT/tank" tank raidz $(zdev sdb3 sdc3 sdd3) >"$T/zc.log" 2>&1; then
	cp "$T/data" "$ALT/tank/data" && sync
	zpool export tank
	geli detach sdb3 sdc3 sdd3
	doc freebsd
	check "freebsd: geli dump shows FreeBSD's metadata (version 3, AES-CBC)" \
		bash -c "grep -q '^   version: 3$' $T/out && grep -q '^     ealgo: AES-CBC$' $T/out"
	check "freebsd: FreeBSD's providers attach with their passphrase; the raidz imports ONLINE, data equal" \
		online_with_data tank
	zpool export tank
	geli detach sdb3 sdc3 sdd3
else
	nok "freebsd: a raidz on FreeBSD's providers"; diag <"$T/zc.log"
fi
for p in $(zpool list -H -o name 2>/dev/null); do zpool export -f "$p"; done

# Every tagged block was run above.
missing=""
for tag in $(sed -n 's/^<!-- run: \([a-z-]*\) -->$/\1/p' "$DOC"); do
	case " ${RAN[*]} " in *" $tag "*) ;; *) missing="$missing $tag" ;; esac
done
check "every tagged block was run${missing:+ (not run:$missing)}" test -z "$missing"
done_testing
