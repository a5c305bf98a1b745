#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# geli-boot and its systemd generator (contrib/geli-boot, geli-generator): the
# units it writes for configurations of /etc/default/geli, systemd-analyze
# verify on them, and their commands run as the units run them (no terminal),
# which attach, mark for detach at the last close and detach the providers.
# The boot itself, under a systemd of the test's own: t_boot_zfs.
. "$(dirname "$0")/lib.sh"
need_fuse || { done_testing; exit; }

TOP=$(cd "$GELI_TESTS/.." && pwd)
BOOT=$TOP/contrib/geli-boot
export PATH="$(dirname "$GELI"):$PATH"
export GELI_BOOT_CONF=$T/geli.conf
G=$T/gen
# gen: the generator's units for $GELI_BOOT_CONF, in $G.
gen() { rm -rf "$G" && mkdir "$G" && sh "$BOOT" generate "$G" "$G.early" "$G.late"; }
# unit_cmd UNIT KEY: the command line of KEY= (ExecStart, ExecStop) of UNIT.
unit_cmd() { sed -n "s/^$2=//p" "$G/$1"; }
# as_unit UNIT KEY: run it as systemd would, with no terminal.
as_unit() { run setsid -w bash -c "$(unit_cmd "$1" "$2")"; }
has() { grep -Fqx -- "$2" "$G/$1"; }

dd if=/dev/urandom of="$T/k" bs=64 count=1 status=none
dd if=/dev/urandom of="$T/gk" bs=64 count=1 status=none
for p in a b c d; do mkprov "$T/$p.img" 4M; done
geli init -P -K "$T/k" -B none "$T/a.img" "$T/b.img" >/dev/null
geli init -P -K "$T/gk" -B none "$T/c.img" "$T/d.img" >/dev/null
passfile "$T/pass" "boot passphrase"
mkprov "$T/p.img" 4M
geli init -i 1000 -J "$T/pass" -B none "$T/p.img" >/dev/null

# ---- The units ----------------------------------------------------------------
cat >"$GELI_BOOT_CONF" <<EOF
geli_devices="sdb disk/by-partlabel/tank0 $T/a.img"
geli_default_flags="-p -k $T/k"
geli_sdb_device_timeout="30"
geli_groups="store"
geli_store_devices="$T/c.img $T/d.img sdb"
geli_store_flags="-p -k $T/gk"
geli_disk_by_partlabel_tank0_autodetach="NO"
EOF
run gen
check "generate: exit 0, nothing said" test "$rc" = 0 -a ! -s "$T/err"
ca=$(systemd-escape --path "$T/c.img") da=$(systemd-escape --path "$T/d.img")
aa=$(systemd-escape --path "$T/a.img")
check "one unit per provider, each once (sdb is in geli_devices and the group)" \
	test "$(cd "$G" && ls geli@*.service | sort)" = "$(printf 'geli@%s.service\n' "$aa" "$ca" "$da" \
	'dev-disk-by\x2dpartlabel-tank0' dev-sdb | sort)"
check "each is wanted by local-fs.target" \
	test "$(ls "$G/local-fs.target.wants" | wc -l)" = 5
check "a disk's unit binds to its device and is wanted by it (attached when it appears)" \
	eval 'has geli@dev-sdb.service BindsTo=dev-sdb.device && has geli@dev-sdb.service After=dev-sdb.device &&
	test -L "$G/dev-sdb.device.wants/geli@dev-sdb.service" &&
	test -L "$G/dev-disk-by\\x2dpartlabel-tank0.device.wants/geli@dev-disk-by\\x2dpartlabel-tank0.service"'
check "an image's unit waits for its file system, not a device" \
	eval "has 'geli@$aa.service' 'RequiresMountsFor=\"$T/a.img\"' && ! grep -q BindsTo '$G/geli@$aa.service'"
check "geli_sdb_device_timeout: the device waits 30 s, the others systemd's default" \
	eval 'test "$(cat "$G/dev-sdb.device.d/50-geli-device-timeout.conf")" = "$(printf "[Unit]\nJobRunningTimeoutSec=30")" &&
	test "$(ls -d "$G"/*.device.d | wc -l)" = 1'
check "ordered before ZFS imports and local file systems, stopped before umount" \
	has geli@dev-sdb.service "Before=zfs-import-cache.service zfs-import-scan.service zfs-fuse.service local-fs.target"
check "... the group's second provider after its first (its passphrase typed once)" \
	eval "has 'geli@$da.service' 'After=geli@$ca.service' && ! grep -q 'After=geli@' '$G/geli@$ca.service'"
check "its commands are geli-boot start/stop of the provider" \
	eval "has geli@dev-sdb.service 'ExecStart=\"$BOOT\" start \"/dev/sdb\"' && has geli@dev-sdb.service 'ExecStop=\"$BOOT\" stop \"/dev/sdb\"'"
check "autodetach (default YES): geli-autodetach.service, wanted by multi-user.target" \
	test -s "$G/geli-autodetach.service" -a -L "$G/multi-user.target.wants/geli-autodetach.service"
# A root holding the units and the script at the path they name.
V=$T/vroot
mkdir -p "$V/etc/systemd" "$V$(dirname "$BOOT")"
cp -a "$G" "$V/etc/systemd/system"
cp "$BOOT" "$V$BOOT"
# shellcheck disable=SC2086
run systemd-analyze verify --root="$V" --man=no $(cd "$G" && ls *.service)
check "systemd-analyze verify accepts every unit" test "$rc" = 0 -a ! -s "$T/err"
[ "$rc" = 0 ] || diag <"$T/err"
rm "$V$BOOT"
run systemd-analyze verify --root="$V" --man=no geli@dev-sdb.service
check "... and it sees a command that is not there" \
	grep -q "$BOOT is not executable" "$T/err"

printf 'geli_devices="sdb"\ngeli_autodetach="NO"\n' >"$GELI_BOOT_CONF"
gen
check "geli_autodetach=NO everywhere: no autodetach unit" test ! -e "$G/geli-autodetach.service"
printf 'geli_devices=""\n' >"$GELI_BOOT_CONF"
run gen
check "nothing configured: no unit, exit 0" \
	eval '[ $rc = 0 ] && [ -z "$(ls "$G")" ]'
run sh "$BOOT" generate "$T/nowhere"
check "generate into a directory that does not exist: exit 1, said" \
	eval "[ \$rc = 1 ] && grep -q \"no directory '$T/nowhere'\" '$T/err'"

# ---- Their commands, as the units run them ----------------------------------------
cat >"$GELI_BOOT_CONF" <<EOF
geli_devices="$T/a.img $T/b.img"
geli_default_flags="-p -k $T/k"
geli_$(printf %s "$T/b.img" | tr -c 'A-Za-z0-9_' _)_autodetach="NO"
geli_groups="store"
geli_store_devices="$T/c.img $T/d.img"
geli_store_flags="-p -k $T/gk"
EOF
gen
ba=$(systemd-escape --path "$T/b.img")
ok=1
for u in "$aa" "$ba" "$ca" "$da"; do
	as_unit "geli@$u.service" ExecStart
	[ "$rc" = 0 ] || { ok=; diag <"$T/err"; }
done
check "each unit's ExecStart attaches its provider (keyfiles; the group's flags for the group)" \
	eval '[ -n "$ok" ] && attached a.img && attached b.img && attached c.img && attached d.img'
as_unit "geli@$aa.service" ExecStart
check "a second ExecStart leaves an attached provider alone" \
	eval '[ $rc = 0 ] && attached a.img'
as_unit geli-autodetach.service ExecStart
check "geli-autodetach's ExecStart: exit 0" test "$rc" = 0
check "... marks the providers RW-DETACH, but not geli_<b>_autodetach=NO's" \
	eval 'geli list a.img | grep -q "^Flags:.*RW-DETACH" && geli list d.img | grep -q "^Flags:.*RW-DETACH" &&
	! geli list b.img | grep -q "^Flags:.*RW-DETACH"'
head -c 4096 "$GELI_RUNDIR/a.img.eli" >/dev/null
check "... which detach at their last close" wait_for fails attached a.img
run sh "$BOOT" status
check "geli-boot status: exit 3 with one of four not attached" \
	eval '[ $rc = 3 ] && [ "$(grep -c ": attached as" "$T/out")" = 3 ] && grep -qx "$T/a.img: not attached" "$T/out"'
as_unit "geli@$aa.service" ExecStop
check "ExecStop of a provider detached already: exit 0" test "$rc" = 0
ok=1
for u in "$ba" "$ca" "$da"; do
	as_unit "geli@$u.service" ExecStop
	[ "$rc" = 0 ] || ok=
done
check "each unit's ExecStop detaches its provider" \
	eval '[ -n "$ok" ] && ! attached b.img && ! attached c.img && ! attached d.img'

# ---- geli-boot's errors ---------------------------------------------------------------
printf 'geli_devices="%s"\ngeli_tries=2\ngeli_default_flags="-p -k %s"\n' \
	"$T/none.img $T/a.img" "$T/gk" >"$GELI_BOOT_CONF"
run setsid -w sh "$BOOT" start
check "a missing provider and a wrong key: exit 1, both said; without a terminal one attempt" \
	bash -c "[ $rc = 1 ] && grep -q 'none.img does not exist' $T/err && grep -qx 'Attach failed; attempt 1 of 1.' $T/out && [ ! -e $GELI_RUNDIR/a.img.eli ]"
if script -qec true /dev/null >/dev/null 2>&1; then
	run script -qec "sh $BOOT start $T/a.img" /dev/null
	check "... at a terminal, geli_tries attempts (FreeBSD's rc.d loop)" \
		eval '[ $rc = 1 ] && [ "$(grep -c "Attach failed; attempt [12] of 2" "$T/out")" = 2 ]'
else
	skip "script(1) cannot make a terminal here"
fi
printf 'geli_devices="%s"\ngeli_%s_flags="-p -k %s"\ngeli_default_flags="-p -k %s"\n' "$T/a.img" \
	"$(printf %s "$T/a.img" | tr -c 'A-Za-z0-9_' _)" "$T/k" "$T/gk" >"$GELI_BOOT_CONF"
run sh "$BOOT" start
check "per-provider flags win over the default flags" eval '[ $rc = 0 ] && attached a.img'
run sh "$BOOT" stop "$T/b.img"
check "a provider not in the configuration: exit 1, said, nothing detached" \
	eval "[ \$rc = 1 ] && grep -qx 'geli-boot: $T/b.img is not listed in $GELI_BOOT_CONF' '$T/err' && attached a.img"
sh "$BOOT" stop
printf 'geli_groups="empty"\ngeli_tries=x\n' >"$GELI_BOOT_CONF"
run sh "$BOOT" start
check "geli_tries not a number: exit 1, said" \
	eval "[ \$rc = 1 ] && grep -q \"geli_tries must be a positive number, not 'x'\" '$T/err'"
printf 'geli_groups="empty"\n' >"$GELI_BOOT_CONF"
run sh "$BOOT" start
check "a group without devices is said, as FreeBSD does" \
	eval "[ \$rc = 0 ] && grep -q 'no devices listed in geli group empty' '$T/err'"
run sh "$BOOT" restart
check "an unknown verb gets the usage, exit 2" \
	bash -c "[ $rc = 2 ] && grep -q '^usage: geli-boot start|stop|status|autodetach' $T/err"

# ---- A passphrase at boot: through the agents, geli_tries questions -----------------
# A password agent of the test's own answers each question of this test
# (its Id names our provider) from a list: wrong, then right.
KN=geli-test-$$
on_exit "python3 -c 'import ctypes,sys; c=ctypes.CDLL(None); i=c.syscall(250, 10, -4, b\"user\", sys.argv[1].encode(), 0); i > 0 and c.syscall(250, 21, i)' $KN"
printf 'geli_devices="%s"\ngeli_tries=2\n' "$T/p.img" >"$GELI_BOOT_CONF"
printf 'wrong\nboot passphrase\n' >"$T/answers"
agent() {
	local q s n=0 answered=' '
	while [ -e "$T/answers" ]; do
		for q in /run/systemd/ask-password/ask.*; do
			grep -q "^Id=geli:$T/p.img$" "$q" 2>/dev/null || continue
			# (each question once: its file stays until the asker has
			# the answer, which a slow machine makes late)
			case $answered in *" $q "*) continue ;; esac
			answered="$answered$q "
			s=$(sed -n 's/^Socket=//p' "$q")
			n=$((n + 1))
			sed -n "${n}p" "$T/answers" | tr -d '\n' |
				/lib/systemd/systemd-reply-password 1 "$s"
			echo "$n" >"$T/asked"
		done
		sleep 0.1
	done
}
agent &
apid=$!
on_exit "kill $apid 2>/dev/null"
gen
run env GELI_ASKPASS_KEYNAME="$KN" setsid -w bash -c "$(unit_cmd "geli@$(systemd-escape --path "$T/p.img").service" ExecStart)"
rm -f "$T/answers"
wait "$apid" 2>/dev/null
check "no terminal: asked through the agents, wrong then right: attached after 2 questions" \
	eval '[ $rc = 0 ] && attached p.img && [ "$(cat "$T/asked")" = 2 ]'
sh "$BOOT" stop
done_testing
