#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The project's one entry point, for a fresh Debian 12 machine as root:
#
#   ./run.sh demo    install what is missing, build, run the main job:
#                    geli bench on in-memory providers (about a minute)
#   ./run.sh test    install what is missing, build (plain and with
#                    AddressSanitizer + UBSan), run every test in both,
#                    and the crypto and data-path tests again with the
#                    OpenSSL backend (GELI_CRYPTO=openssl); then build the
#                    libFuzzer harnesses (clang, -Dfuzz=true) and run each
#                    for a minute (tests/run-fuzz), while a set of CLI tests
#                    runs again under valgrind's memcheck; the Debian
#                    packages are built first (as "deb"), for t_deb
#   ./run.sh build   install what is missing and build
#   ./run.sh deb     install what is missing, build the Debian packages
#                    (debian/, dpkg-buildpackage) into debs/, run lintian
#
# The last line of "test" is "N passed, N failed, N skipped"; its exit status
# is non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")"

BUILD_PKGS=(gcc meson ninja-build pkg-config libgcrypt20-dev libssl-dev libfuse3-dev fuse3
	nbdkit-plugin-dev)
TEST_PKGS=(python3 openssl util-linux coreutils e2fsprogs mtools grub-common fio strace zfs-fuse systemd valgrind
	nbdkit libnbd-bin python3-libnbd qemu-utils)
# The Debian packages: dpkg-buildpackage (debian/), checked by lintian.
DEB_PKGS=(debhelper dpkg-dev lintian)
# The fuzzers: clang (CC=clang) and its runtimes (libclang_rt.fuzzer).
FUZZ_PKGS=(clang clang-14 libclang-rt-14-dev)

install_missing() {
	local missing=() p
	for p in "$@"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
			missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	echo "run.sh: installing ${missing[*]}"
	if [ "$(id -u)" -ne 0 ]; then
		echo "run.sh: these Debian packages are missing; run as root: ${missing[*]}" >&2
		exit 1
	fi
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

build() {	# build DIR [meson options...]
	local dir=$1; shift
	if [ ! -f "$dir/build.ninja" ]; then
		meson setup "$dir" "$@" >"$dir.setup.log" 2>&1 || { cat "$dir.setup.log" >&2; exit 1; }
		rm -f "$dir.setup.log"
	fi
	ninja -C "$dir" >/dev/null || ninja -C "$dir"
}

# The .deb packages into debs/ (from a copy of the tree, so that the build
# dirs and debian/'s own output stay out of the source), then lintian.
build_debs() {
	local tmp
	tmp=$(mktemp -d)
	mkdir "$tmp/geli"
	git ls-files -z | tar --null -T - -cf - | tar -xf - -C "$tmp/geli"
	(cd "$tmp/geli" && dpkg-buildpackage -b -uc -us >"$tmp/build.log" 2>&1) ||
		{ tail -n 40 "$tmp/build.log" >&2; rm -rf "$tmp"; exit 1; }
	mkdir -p debs
	rm -f debs/*.deb
	mv "$tmp"/*.deb debs/
	rm -rf "$tmp"
	ls debs/*.deb
	lintian --fail-on error debs/*.deb
}

demo() {
	build/src/geli/geli bench
}

# The tests that run a second time with the other crypto backend: the unit
# tests (known answers, the data path, the backends against each other) and
# the CLI tests of the data path and of FreeBSD's volumes.
OPENSSL_PASS=(test_admin test_backends test_crypto test_metadata test_mkey
	test_volume test_workers t_secrets t_crypto t_matrix t_attach t_compat t_fixtures t_fio t_oracle
	t_nbd)

# The CLI tests run again with every geli under valgrind's memcheck
# (GELI_VALGRIND=1), beside the fuzzers; docs/testing.md has the run over
# all of them.
VALGRIND_PASS=(t_backup t_setkey_delkey t_kill_configure t_resize t_edges t_badinput)

# The closing "N passed, N failed, N skipped" of a log into the totals (a
# log without one is a failure).
add_counts() {
	local line
	line=$(tail -n 1 "$1" | grep -E '^[0-9]+ passed, [0-9]+ failed' ||
		echo "0 passed, 1 failed, 0 skipped")
	total_p=$((total_p + $(echo "$line" | awk '{print $1}')))
	total_f=$((total_f + $(echo "$line" | awk '{print $3}')))
	total_s=$((total_s + $(echo "$line" | awk '{print $5}')))
}

run_tests() {
	local total_p=0 total_f=0 total_s=0 pass b log vg
	for pass in build build-asan "build openssl"; do
		b=${pass% *}
		log=$b/suite.log
		if [ "$pass" = "build openssl" ]; then
			echo "== tests in $b with GELI_CRYPTO=openssl"
			log=$b/suite-openssl.log
			GELI_CRYPTO=openssl GELI_SUITE_TAG=openssl \
				tests/run-suite "$b" "${OPENSSL_PASS[@]}" | tee "$log" || true
		elif [ "$b" = build-asan ]; then
			# valgrind cannot run sanitized binaries (t_leaks), and
			# the sanitizers keep freed memory in quarantine and
			# reserve terabytes of shadow, which the memory scans
			# (t_secrets) are not about: both are the plain build's.
			echo "== tests in $b"
			tests/run-suite -x t_leaks -x t_secrets "$b" | tee "$log" || true
		else
			echo "== tests in $b"
			tests/run-suite "$b" | tee "$log" || true
		fi
		add_counts "$log"
	done
	# The fuzzers, a minute each (GELI_FUZZ_SECONDS), one at a time; on
	# the other core meanwhile, valgrind's memcheck over VALGRIND_PASS.
	echo "== fuzzers in build-fuzz, valgrind over ${VALGRIND_PASS[*]} in build"
	GELI_VALGRIND=1 GELI_SUITE_TAG=valgrind tests/run-suite build \
		"${VALGRIND_PASS[@]}" >build/suite-valgrind.log 2>&1 &
	vg=$!
	tests/run-fuzz build-fuzz | tee build-fuzz/fuzz.log || true
	add_counts build-fuzz/fuzz.log
	wait "$vg" || true
	cat build/suite-valgrind.log
	add_counts build/suite-valgrind.log
	echo "$total_p passed, $total_f failed, $total_s skipped"
	[ "$total_f" -eq 0 ]
}

case ${1:-} in
demo)
	install_missing "${BUILD_PKGS[@]}"
	build build
	demo
	;;
test)
	install_missing "${BUILD_PKGS[@]}" "${TEST_PKGS[@]}" "${FUZZ_PKGS[@]}" "${DEB_PKGS[@]}"
	build build
	build_debs	# tests/cli/t_deb.sh unpacks them
	build build-asan -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug
	CC=clang build build-fuzz -Dfuzz=true
	export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
	export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
	run_tests
	;;
build)
	install_missing "${BUILD_PKGS[@]}"
	build build
	;;
deb)
	install_missing "${BUILD_PKGS[@]}" "${DEB_PKGS[@]}"
	build_debs
	;;
*)
	echo "usage: ./run.sh demo | test | build | deb" >&2
	exit 2
	;;
esac
