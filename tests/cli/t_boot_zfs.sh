#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# suite: zfs
# docs/boot.md's raidz that boots with a disk missing, run: a systemd of the
# test's own boots as PID 1 of a PID namespace (its own mounts, /run and
# cgroup), runs geli-generator on the document's /etc/default/geli, and its
# units attach two of three loop devices (the passphrase typed once, through
# an agent of the test's own), wait 10 s for the third and fail; ZFS
# imports the raidz DEGRADED: OpenZFS's module in the guest lane (the
# providers attached with -L, as the document says; a zfs-import-scan.service
# of the test's), else zfs-fuse (the document's -L left out, the pool on the
# .eli files; a zfs-fuse.service of the test's).  Then the third disk
# appears, systemd attaches it, zpool online: ONLINE, the data unchanged.
# Poweroff detaches all.
# The test writes udev's database entries for the disks that are there
# (what systemd reads to know a device; no udev runs on these machines) and
# "plugs" the late one with an entry and a daemon-reload.
. "$(dirname "$0")/lib.sh"
need_fuse || { done_testing; exit; }
if have_openzfs; then
	KIND=openzfs ZUNIT=zfs-import-scan.service ZD=$GELI_DEVDIR
else
	KIND=zfs-fuse ZUNIT=zfs-fuse.service ZD=/run/geli
	command -v zfs-fuse >/dev/null || { skip "needs OpenZFS's module or zfs-fuse"; done_testing; exit; }
fi
if [ ! -x /lib/systemd/systemd ] || ! command -v nsenter >/dev/null; then
	skip "needs systemd and nsenter"; done_testing; exit
fi
if [ -d /sys/fs/cgroup/unified ] && [ -d /sys/fs/cgroup/systemd ]; then
	CG="/sys/fs/cgroup/systemd /sys/fs/cgroup/unified"
elif [ -e /sys/fs/cgroup/cgroup.controllers ]; then
	CG=/sys/fs/cgroup
else
	skip "no cgroup hierarchy this test knows"; done_testing; exit
fi

TOP=$(cd "$GELI_TESTS/.." && pwd)
DOC=$TOP/docs/boot.md
GEN=$GELI_BUILD/geli-generator
doc_all_tagged "$DOC"

# ---- Before: three disks, one passphrase, a raidz with a file on it ----------------
passfile "$T/pass" "tank passphrase"
DISKS=()
for d in sdb sdc sdd; do
	mkprov "$T/$d.img" 128M
	DISKS+=("$(losetup -f --show "$T/$d.img")") || { nok "losetup"; done_testing; exit; }
done
names=$(printf '%s\n' "${DISKS[@]}" | xargs -n1 basename | tr '\n' ' ')
set -- $names
L1=$1 L2=$2 L3=$3
geli init -s 4096 -i 1000 -J "$T/pass" -B none "${DISKS[@]}" >/dev/null
head -c 3000000 /dev/urandom >"$T/data"
sum=$(sha256sum <"$T/data")
# Made as on the system that boots: with its paths (/run/geli, a directory
# of the test's mounted there in a mount namespace of its own, with the
# zfs-fuse daemon it runs there; OpenZFS: the stable names in $GELI_DEVDIR),
# as ZFS records them in the pool.
mkdir -p "$T/rg" "$T/zroot"
attach_L=
[ $KIND = openzfs ] && attach_L=-L
cat >"$T/before.sh" <<EOF
mount -t tmpfs -o mode=755 tmpfs /run
mkdir -p /run/geli /run/zfs && mkdir -m 1777 /run/lock && mount --bind "$T/rg" /run/geli || exit 1
export GELI_RUNDIR=/run/geli
zp=
trap '[ -n "\$zp" ] && kill \$zp && wait \$zp; for d in $L1 $L2 $L3; do "$GELI" detach -f \$d 2>/dev/null; done' EXIT
if [ $KIND = zfs-fuse ]; then
	zfs-fuse --no-daemon --no-kstat-mount & zp=\$!
	# (60 s: a hang's bound, not a verdict's)
	for i in \$(seq 600); do zpool list >/dev/null 2>&1 && break; sleep 0.1; done
fi
for d in ${DISKS[*]}; do "$GELI" attach $attach_L -j "$T/pass" \$d >/dev/null || exit 1; done
zpool create -R "$T/zroot" -m /tank tank raidz $ZD/$L1.eli $ZD/$L2.eli $ZD/$L3.eli &&
	cp "$T/data" "$T/zroot/tank/data" && zpool export tank
EOF
unshare --mount --propagation private bash "$T/before.sh" >"$T/out" 2>&1
check "a raidz of three GELI disks with a file, exported" test $? = 0
diag <"$T/out"

# The document's names, the test's: sdb, sdc, sdd are the loop devices,
# their .eli names in $ZD (zfs-fuse: the files, attached without -L).
nol=()
[ $KIND = openzfs ] || nol=(-e '/_flags="-L"/d')
localize() {
	sed -e "s/\bsdb\b/$L1/g" -e "s/\bsdc\b/$L2/g" -e "s/\bsdd\b/$L3/g" \
		-e "s#/dev/\([a-z0-9]*\)\.eli#$ZD/\1.eli#g" "${nol[@]}"
}
block() { doc_block "$DOC" "$1" | localize; }

# ---- The system that boots ------------------------------------------------------------
S=$T/sys                        # its /run/systemd/system, /etc/default, /usr/local/sbin
# Its generator and units read /etc/default/geli, a mount of the test's:
# not the configuration lib.sh names for the test's other commands.
unset GELI_BOOT_CONF
mkdir -p "$S/etc" "$S/sbin" "$S/system/geli@.service.d" "$S/gen"
block config | sed -n '/^cat >/,/^EOF$/p' | sed "s#/etc/default/geli#$S/etc/geli#" >"$T/config.sh"
bash "$T/config.sh"
check "the document's configuration: the group of the three disks" \
	grep -qx "geli_tank_devices=\"$L1 $L2 $L3\"" "$S/etc/geli"
ln -s "$GELI" "$S/sbin/geli"
ln -s "$TOP/contrib/geli-boot" "$S/sbin/geli-boot"
install -m 755 "$GEN" "$S/gen/geli-generator"
KN=geli-test-$$
on_exit "python3 -c 'import ctypes,sys; c=ctypes.CDLL(None); i=c.syscall(250, 10, -4, b\"user\", sys.argv[1].encode(), 0); i > 0 and c.syscall(250, 21, i)' $KN"
# Only for the test: the units' output in a file (no journald), and a key
# name of the test's own in root's keyring.
# On a real system geli-boot and its configuration are on the root file
# system; here they are mounts of the test's, kept until the units stop.
cat >"$S/system/geli@.service.d/test.conf" <<EOF
[Unit]
RequiresMountsFor=/usr/local/sbin /etc/default /run/geli
[Service]
Environment=GELI_ASKPASS_KEYNAME=$KN GELI_DEVDIR=$GELI_DEVDIR
StandardOutput=append:$T/units.log
StandardError=append:$T/units.log
EOF
# geli-test.target stands for multi-user.target; the test's $ZUNIT
# (in /run, so it comes before the host's) for ZFS's import at boot: for
# OpenZFS the import from the stable names (Debian's zfs-import-scan.service
# scans /dev), for zfs-fuse the daemon, then the import, after
# local-fs.target as Debian's unit.  The
# generated geli-autodetach.service is ordered after it, as after ZFS's units
# on a real system: a detach -l before the import would end at the import's
# first close.  zfs-fuse runs in the foreground: a daemon whose parent is
# PID 1 takes itself for one already and stops.
cat >"$S/system/geli-test.target" <<EOF
[Unit]
Description=The test's boot
Wants=local-fs.target $ZUNIT geli-autodetach.service
EOF
if [ $KIND = openzfs ]; then
	service="Type=oneshot
ExecStart=/usr/sbin/zpool import -d $ZD -o cachefile=none -R $T/zroot tank"
else
	# (the daemon awaited up to 60 s and the start up to 120 s: a hang's
	# bounds, not a verdict's)
	service="Type=simple
TimeoutStartSec=120
ExecStart=/usr/sbin/zfs-fuse --no-daemon --no-kstat-mount
ExecStartPost=/bin/sh -c 'for i in \$(seq 600); do zpool list >/dev/null 2>&1 && break; sleep 0.1; done; zpool import -d /run/geli -o cachefile=none -R $T/zroot tank'"
fi
cat >"$S/system/$ZUNIT" <<EOF
[Unit]
DefaultDependencies=no
After=local-fs.target
Conflicts=shutdown.target
Before=shutdown.target
[Service]
$service
ExecStop=/usr/sbin/zpool export tank
RemainAfterExit=yes
StandardOutput=append:$T/units.log
StandardError=append:$T/units.log
EOF
# udev's database: the devices that are there.
plug() { local mm; mm=$(cat "/sys/class/block/$1/dev"); printf 'I:1\nG:systemd\nQ:systemd\nV:1\n' >"/run/udev/data/b$mm"; : >"/run/udev/tags/systemd/b$mm"; }
cat >"$T/inner.sh" <<EOF
set -e
mount -t tmpfs -o mode=755 tmpfs /run
mkdir -p /run/systemd/system /run/systemd/system-generators /run/udev/data /run/udev/tags/systemd /run/geli /run/zfs
mkdir -m 1777 /run/lock
cp -a "$S/system/." /run/systemd/system/
cp -a "$S/gen/." /run/systemd/system-generators/
mount --bind "$T/rg" /run/geli
mount --bind "$S/etc" /etc/default
mount --bind "$S/sbin" /usr/local/sbin
$(declare -f plug)
plug $L1
plug $L2
mount -t proc proc /proc
mount -t tmpfs -o mode=755 tmpfs /sys/fs/cgroup
if [ -n "$(echo "$CG" | grep unified)" ]; then
	mkdir /sys/fs/cgroup/systemd /sys/fs/cgroup/unified
	mount -t cgroup -o none,name=systemd cgroup /sys/fs/cgroup/systemd
	mount -t cgroup2 cgroup2 /sys/fs/cgroup/unified
else
	# (under the tmpfs, the hierarchy as the host mounted it, if it did:
	# the namespace's own mounted instead)
	while mountpoint -q /sys/fs/cgroup; do umount /sys/fs/cgroup || break; done
	mount -t cgroup2 cgroup2 /sys/fs/cgroup
fi
export container=geli-test
exec /lib/systemd/systemd --system --unit=geli-test.target --log-target=null
EOF
# A cgroup of its own under each hierarchy.  At the end (or on a failure):
# the namespace's PID 1 killed if it still runs, and every process left in
# its cgroups, then the cgroups removed.
for c in $CG; do mkdir "$c/geli-test-$$"; done
SP='' upid=
ns_down() {
	local c p i
	[ -n "$SP" ] && kill -9 "$SP" 2>/dev/null
	for i in $(seq 100); do
		p=$(for c in $CG; do find "$c/geli-test-$$" -name cgroup.procs -exec cat {} +; done 2>/dev/null)
		[ -z "$p" ] && break
		kill -9 $p 2>/dev/null
		sleep 0.1
	done
	[ -n "$p" ] && echo "# still running after 10 s: $p"
	for c in $CG; do find "$c/geli-test-$$" -depth -type d -exec rmdir {} + 2>/dev/null; done
}
on_exit ns_down
(
	for c in $CG; do echo $BASHPID >"$c/geli-test-$$/cgroup.procs"; done
	exec setsid unshare --pid --fork --mount --propagation private --cgroup --uts --ipc sh "$T/inner.sh"
) >"$T/boot.log" 2>&1 &
upid=$!
wait_for eval 'SP=$(pgrep -P "$upid" 2>/dev/null)'
inside() { nsenter -t "$SP" -m -p -- env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root "$@"; }

# The agent: answers every question with the passphrase, counting them.
cat >"$T/agent.sh" <<EOF
n=0
while [ -e "$T/agent.on" ]; do
	for q in /run/systemd/ask-password/ask.*; do
		[ -f "\$q" ] || continue
		# (each question once: its file stays until the asker has the
		# answer, which a slow machine makes late)
		grep -qxF "\$q" "$T/answered" && continue
		echo "\$q" >>"$T/answered"
		s=\$(sed -n 's/^Socket=//p' "\$q")
		n=\$((n + 1))
		sed -n 's/^Message=//p' "\$q" >>"$T/questions"
		tr -d '\n' <"$T/pass" | /lib/systemd/systemd-reply-password 1 "\$s"
	done
	sleep 0.1
done
EOF
: >"$T/agent.on"
: >"$T/questions"
: >"$T/answered"
on_exit "rm -f $T/agent.on"
inside sh "$T/agent.sh" &
agent=$!
check "systemd boots in its namespace" eval '[ -n "$SP" ] && wait_for inside test -S /run/systemd/private'
[ -n "$SP" ] && kill -0 "$SP" 2>/dev/null || { diag <"$T/boot.log"; done_testing; exit; }
# (300 s: a hang's bound, not a verdict's; the boot waits its 10 s for the
# third disk besides)
timeout 300 nsenter -t "$SP" -m -p systemctl is-system-running --wait >"$T/state" 2>&1
check "... and finishes starting" grep -qx running "$T/state"
inside systemctl status --no-pager --full 'geli*' $ZUNIT 2>&1 | diag

# ---- At boot -------------------------------------------------------------------------------
run inside sh -c "$(block degraded)"
check "degraded: two disks attached, the third's unit inactive" \
	test "$(head -3 "$T/out" | tr '\n' ' ')" = "active active inactive "
check "... the pool is DEGRADED" grep -q "state: DEGRADED" "$T/out"
check "the passphrase was asked once, for the group's first disk" \
	test "$(cat "$T/questions")" = "Enter passphrase for /dev/$L1:"
[ "$(cat "$T/questions")" = "Enter passphrase for /dev/$L1:" ] || diag <"$T/questions"
check "the data reads back right from the degraded pool" \
	test "$(inside sh -c "sha256sum <$T/zroot/tank/data")" = "$sum"
check "geli-autodetach marked the attached disks RW-DETACH" \
	eval "inside geli list $L1 | grep -q '^Flags:.*RW-DETACH'"
check "the units said what FreeBSD's rc.d says" \
	grep -qx "Configuring Disk Encryption for $L1." "$T/units.log"

# ---- The disk appears --------------------------------------------------------------------
inside sh -c "$(declare -f plug); plug $L3; systemctl daemon-reload"
check "the third disk appears: systemd starts its unit, which attaches it" \
	wait_for inside systemctl is-active -q "geli@dev-$L3.service"
run inside sh -c "$(block appeared)"
check "appeared: its unit active, zpool online, scrub: exit 0" test "$rc" = 0
[ "$rc" = 0 ] || diag <"$T/err"
state() { inside zpool status tank 2>/dev/null | sed -n 's/^ *state: //p'; }
scrubbed() { inside zpool status tank | grep -qE "scrub (completed|repaired) .* with 0 errors"; }
# (up to 300 s, as zpool_scrubbed: a hang's bound)
for i in $(seq 1000); do scrubbed && break; sleep 0.3; done
check "the pool is ONLINE, the scrub ends with 0 errors" \
	eval '[ "$(state)" = ONLINE ] && scrubbed' || inside zpool status tank | diag
check "the data unchanged" \
	test "$(inside sh -c "sha256sum <$T/zroot/tank/data")" = "$sum"

# ---- Shutdown ---------------------------------------------------------------------------------
rm -f "$T/agent.on"
wait "$agent"
kill -s RTMIN+4 "$SP"
# (up to 300 s: a hang's bound)
for i in $(seq 3000); do kill -0 "$SP" 2>/dev/null || break; sleep 0.1; done
check "poweroff: systemd ends" fails kill -0 "$SP"
kill -0 "$SP" 2>/dev/null && nsenter -t "$SP" -m -p ps -e -o pid,ppid,stat,wchan:30,cmd | diag
check "... each disk was detached (at its last close, once ZFS let go, or by its unit)" \
	eval "grep -q 'Device $L1.eli destroyed' '$T/rg/$L1.log' && grep -q 'Device $L2.eli destroyed' '$T/rg/$L2.log' &&
	grep -q 'Device $L3.eli destroyed' '$T/rg/$L3.log'"
done_testing
