#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The Debian packages of ./run.sh deb (in $GELI_DEBS, default debs/),
# unpacked into a temporary root: their files are where Debian wants them,
# and the packaged geli, library and nbdkit filter open FreeBSD's volume.
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
for f in usr/sbin/geli usr/sbin/geli-truenas usr/sbin/geli-boot usr/lib/systemd/system/geli-boot.service \
	usr/share/man/man8/geli.8.gz usr/share/man/man8/geli-truenas.8.gz usr/share/bash-completion/completions/geli \
	usr/include/geli.h "usr/lib/$multi/pkgconfig/libgeli.pc" \
	"usr/lib/$multi/nbdkit/filters/nbdkit-geli-filter.so" \
	usr/share/man/man1/nbdkit-geli-filter.1.gz; do
	check "packaged: /$f" test -e "$R/$f"
done
check "libgeli0 ships the soname libgeli.so.0" test -e "$R/usr/lib/$multi/libgeli.so.0"
check "... and libgeli-dev the link to it" test -L "$R/usr/lib/$multi/libgeli.so"
check "the soname is libgeli.so.0" bash -c \
	'objdump -p "$0" | grep -q "SONAME *libgeli.so.0$"' "$R/usr/lib/$multi/libgeli.so.0"

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
done_testing
