#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The Debian packages of ./run.sh deb (in $GELI_DEBS, default debs/),
# unpacked into a temporary root: their files are where Debian wants them,
# the paths their generator and units name are in them, systemd accepts the
# units, and the packaged geli, library and nbdkit filter open FreeBSD's
# volume.  Then installed on the machine with dpkg (unless a geli package is
# installed already: not the test's to remove) and purged at the end: geli,
# its completion and its generator run from their installed places.
# lintian: no errors, and no warning that debian/ does not explain.
. "$(dirname "$0")/lib.sh"

DEBS=${GELI_DEBS:-$(dirname "$0")/../../debs}
if ! ls "$DEBS"/geli_*.deb >/dev/null 2>&1; then
	skip "no packages in $DEBS (./run.sh deb)"; done_testing; exit
fi
R=$T/root
for d in "$DEBS"/*.deb; do
	case $d in *-dbgsym_*) continue ;; esac
	dpkg-deb -x "$d" "$R"
done
multi=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
GEN=usr/lib/systemd/system-generators/geli-generator
for f in usr/sbin/geli usr/sbin/geli-truenas usr/sbin/geli-boot "$GEN" \
	usr/share/man/man8/geli.8.gz usr/share/man/man8/geli-truenas.8.gz usr/share/man/man8/geli-boot.8.gz \
	usr/share/bash-completion/completions/geli usr/lib/udev/rules.d/61-geli-ublk.rules \
	usr/lib/udev/rules.d/61-geli-dm.rules \
	usr/lib/udev/geli-ublk-owner \
	usr/include/geli.h "usr/lib/$multi/pkgconfig/libgeli.pc" \
	"usr/lib/$multi/nbdkit/filters/nbdkit-geli-filter.so" \
	usr/share/man/man1/nbdkit-geli-filter.1.gz; do
	check "packaged: /$f" test -e "$R/$f"
done
check "the udev rule runs the packaged helper" \
	grep -q 'IMPORT{program}="/usr/lib/udev/geli-ublk-owner %k"' "$R/usr/lib/udev/rules.d/61-geli-ublk.rules"
check "libgeli0 ships the soname libgeli.so.0" test -e "$R/usr/lib/$multi/libgeli.so.0"
check "... and libgeli-dev the link to it" test -L "$R/usr/lib/$multi/libgeli.so"
check "the soname is libgeli.so.0" bash -c \
	'objdump -p "$0" | grep -q "SONAME *libgeli.so.0$"' "$R/usr/lib/$multi/libgeli.so.0"


# The generator, its units and the commands they name.
exe=$(sed -n 's/^exec "\([^"]*\)".*/\1/p' "$R/$GEN")
check "the packaged generator runs a packaged script ($exe)" test -n "$exe" -a -x "$R$exe"
mkprov "$T/a.img" 1M
printf 'geli_devices="sdb %s"\ngeli_sdb_device_timeout="30"\n' "$T/a.img" >"$T/geli.conf"
mkdir -p "$T/gen" "$R/etc/systemd/system"
run env GELI_BOOT_CONF="$T/geli.conf" sh "$R$exe" generate "$T/gen"
check "the packaged script generates a unit per provider" \
	test "$rc" = 0 -a -s "$T/gen/geli@dev-sdb.service" -a "$(ls "$T/gen" | grep -c '^geli@.*\.service$')" = 2
cmds=$(sed -n 's/^Exec[A-Za-z]*="\{0,1\}\([^" ]*\).*/\1/p' "$T/gen"/*.service | sort -u)
check "their commands are the packaged script's installed path (/usr/sbin/geli-boot)" \
	test "$cmds" = "$R$exe"
# As installed: the units name /usr/sbin/geli-boot, which the root holds.
for u in "$T/gen"/*.service; do sed "s#$R/usr/sbin/#/usr/sbin/#g" "$u" >"$R/etc/systemd/system/$(basename "$u")"; done
cp -r "$T/gen"/*.d "$R/etc/systemd/system/" 2>/dev/null
if command -v systemd-analyze >/dev/null; then
	run systemd-analyze verify --root="$R" --man=no "geli@dev-sdb.service" geli-autodetach.service
	check "systemd-analyze verify accepts the units in the unpacked packages" test "$rc" = 0
	[ "$rc" = 0 ] || diag <"$T/err"
else
	skip "systemd-analyze not installed"
fi

PG=$R/usr/sbin/geli
cp "$FIX/fbsd9-v6-aesxts128-4k-bluemoon.img" "$T/bluemoon.img"
check "the packaged geli dumps FreeBSD's volume as the built one does" \
	bash -c 'cmp -s <("$0" dump "$2") <("$1" dump "$2")' "$PG" "$GELI" "$T/bluemoon.img"
plen=$(stat -c %s "$FIX/fbsd9-v6-aesxts128-4k-bluemoon.plain-prefix")
if need_fuse; then
	expect_ok "the packaged geli attaches it" \
		"$PG" attach -r -j "$FIX/fbsd9-v6-aesxts128-4k-bluemoon.pass" "$T/bluemoon.img"
	check "... and it decrypts to FreeBSD's plaintext" \
		cmp -s -n "$plen" "$GELI_RUNDIR/bluemoon.img.eli" "$FIX/fbsd9-v6-aesxts128-4k-bluemoon.plain-prefix"
	expect_ok "... detach" "$PG" detach bluemoon.img
fi
if command -v nbdkit >/dev/null && command -v nbdcopy >/dev/null && [ -z "${GELI_SANITIZED:-}" ]; then
	export LD_LIBRARY_PATH=$R/usr/lib/$multi
	expect_ok "the packaged filter serves it (nbdkit with the packaged library)" \
		timeout 120 nbdkit -U - --filter="$R/usr/lib/$multi/nbdkit/filters/nbdkit-geli-filter.so" \
		file file="$T/bluemoon.img" readonly=true \
		password=+"$FIX/fbsd9-v6-aesxts128-4k-bluemoon.pass" \
		--run "nbdcopy \"\$uri\" '$T/bm.plain'"
	unset LD_LIBRARY_PATH
	check "... the same plaintext" \
		cmp -s -n "$plen" "$T/bm.plain" "$FIX/fbsd9-v6-aesxts128-4k-bluemoon.plain-prefix"
fi

# Installed with dpkg, used from where they are installed, purged.
PKGS="geli libgeli0 libgeli-dev nbdkit-geli-filter"
if dpkg-query -W -f '${Status}\n' $PKGS 2>/dev/null | grep -q ' installed$'; then
	skip "a geli package is installed on this machine: not installing over it"
else
	debs=()
	for p in $PKGS; do debs+=("$(ls "$DEBS/${p}"_*.deb)"); done
	on_exit "dpkg -P $PKGS >/dev/null 2>&1"
	run dpkg -i "${debs[@]}"
	check "dpkg -i installs the four packages" test "$rc" = 0
	[ "$rc" = 0 ] || diag <"$T/err"
	check "the installed geli runs: geli version says what the built one says" \
		eval 'v=$(/usr/sbin/geli version) && [ -n "$v" ] && [ "$v" = "$("$GELI" version)" ]'
	run bash -c '. /usr/share/bash-completion/completions/geli; COMP_WORDS=(geli att); COMP_CWORD=1; _geli; echo "${COMPREPLY[*]}"'
	check "the installed completion completes 'geli att' to attach" test "$(cat "$T/out")" = attach
	rm -rf "$T/gen2" && mkdir "$T/gen2"
	run env GELI_BOOT_CONF="$T/geli.conf" /$GEN "$T/gen2" "$T/gen2" "$T/gen2"
	check "the installed generator writes the units, naming /usr/sbin/geli-boot" \
		eval '[ $rc = 0 ] && grep -qx "ExecStart=\"/usr/sbin/geli-boot\" start \"/dev/sdb\"" "$T/gen2/geli@dev-sdb.service"'
	run dpkg -P $PKGS
	check "dpkg -P removes them, and their files" test "$rc" = 0 -a ! -e /usr/sbin/geli -a ! -e "/$GEN"
fi

# lintian: no error; each warning overridden in debian/, with the reason.
if command -v lintian >/dev/null; then
	lintian --fail-on none "$DEBS"/*.deb >"$T/lintian" 2>/dev/null
	check "lintian: no errors, no warnings (those explained in debian/*.lintian-overrides)" \
		fails grep -q '^[EW]:' "$T/lintian"
	grep '^[EW]:' "$T/lintian" | diag
else
	skip "lintian not installed"
fi
done_testing
