#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The project's one entry point, for a fresh Debian 12 machine as root:
#
#   ./run.sh demo    install what is missing, build, run the main job:
#                    geli bench on in-memory providers (about a minute)
#   ./run.sh test    install what is missing, build (plain and with
#                    AddressSanitizer + UBSan), run every test in the
#                    sanitized build and in the plain one the unit tests
#                    and those the sanitizers cut down ("suite: plain";
#                    the ZFS scenarios on OpenZFS with the plain build, in
#                    the guest lane, GUEST_ZFS),
#                    and the crypto and data-path tests again with the
#                    OpenSSL backend (GELI_CRYPTO=openssl) in a build
#                    without the AES-CBC accelerator (-Daccel=disabled;
#                    the other builds have it where ipsec-mb exists); build the
#                    libFuzzer harnesses (clang, -Dfuzz=true) and run each
#                    for 10 seconds (tests/run-fuzz), and a set of CLI tests
#                    again under valgrind's memcheck; the Debian packages
#                    (as "deb") and t_deb on them; and the
#                    guest lane: OpenZFS on Debian's own kernels, booted
#                    in qemu (tests/vm).  Three lanes on the two cores
#                    (run_tests)
#   ./run.sh build   install what is missing and build
#   ./run.sh deb     install what is missing, build the Debian packages
#                    (debian/, dpkg-buildpackage) into debs/, run lintian
#
# The last line of "test" is "N passed, N failed, N skipped"; its exit status
# is non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")"

BUILD_PKGS=(gcc meson ninja-build pkg-config libgcrypt20-dev libssl-dev libfuse3-dev fuse3
	liburing-dev nbdkit-plugin-dev libsqlite3-dev libarchive-dev libblkid-dev libcryptsetup-dev
	libfdisk-dev)
# The AES-CBC accelerator (lib/accel.h), amd64 only: Intel's ipsec-mb for
# multi-buffer AES-CBC, Nettle for its IVs.
if [ "$(dpkg --print-architecture 2>/dev/null)" = amd64 ]; then
	BUILD_PKGS+=(libipsec-mb-dev nettle-dev)
fi
TEST_PKGS=(python3 openssl util-linux coreutils e2fsprogs mtools grub-common fio strace zfs-fuse systemd tmux valgrind
	nbdkit libnbd-bin python3-libnbd qemu-utils gdisk sqlite3 tar cryptsetup-bin python3-cryptography)
# The guest lane (tests/vm): qemu, busybox for the initramfs, and what
# OpenZFS's modules build with (the kernels' gcc-12, make, pahole of
# dwarves, depmod of kmod); the kernels and OpenZFS come from the archive
# into tests/vm's cache, not installed.
VM_PKGS=(qemu-system-x86 busybox-static gcc-12 make dwarves kmod xz-utils file)
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

# (BUILD_TARGETS: only those of ninja's targets, e.g. the fuzzing build's
# harnesses, not the whole tree again.)
build() {	# build DIR [meson options...]
	local dir=$1; shift
	if [ ! -f "$dir/build.ninja" ]; then
		meson setup "$dir" "$@" >"$dir.setup.log" 2>&1 || { cat "$dir.setup.log" >&2; exit 1; }
		rm -f "$dir.setup.log"
	fi
	# shellcheck disable=SC2086
	ninja -C "$dir" ${BUILD_TARGETS:-} >/dev/null || ninja -C "$dir" ${BUILD_TARGETS:-}
}

# The .deb packages into debs/ (from a copy of the tree, so that the build
# dirs and debian/'s own output stay out of the source).  lintian: after
# "deb" here, and in tests/cli/t_deb.sh for "test".
# With "nocheck" (run.sh test's, whose passes ran the unit tests in two
# builds already) the package build does not run them again.
build_debs() {
	local tmp opts=${DEB_BUILD_OPTIONS:-}
	[ "${1:-}" = nocheck ] && opts="${opts:+$opts }nocheck"
	tmp=$(mktemp -d)
	mkdir "$tmp/geli"
	git ls-files -z | tar --null -T - -cf - | tar -xf - -C "$tmp/geli"
	(cd "$tmp/geli" && DEB_BUILD_OPTIONS=$opts dpkg-buildpackage -b -uc -us >"$tmp/build.log" 2>&1) ||
		{ tail -n 40 "$tmp/build.log" >&2; rm -rf "$tmp"; exit 1; }
	mkdir -p debs
	rm -f debs/*.deb
	mv "$tmp"/*.deb debs/
	rm -rf "$tmp"
	ls debs/*.deb
}

demo() {
	build/src/geli/geli bench
}

# The tests that run a second time with the other crypto backend: the unit
# tests (known answers, the data path, the backends against each other) and
# the CLI tests of the ciphers and of FreeBSD's volumes; in build-noaccel.
# (Not the front ends, t_attach, t_fio and t_nbd: what they add to these,
# FUSE, fio's patterns and NBD, is the same whichever library encrypts.)
OPENSSL_PASS=(test_admin test_backends test_crypto test_metadata test_mkey test_privacy test_accel
	test_volume test_volume_ops test_workers t_secrets t_crypto t_matrix t_compat t_fixtures t_oracle)

# The ZFS scenarios the guest lane runs on OpenZFS with the plain build
# (tests/vm/lane), and the host's passes leave to it: zfs-fuse would run
# the same checks again, on a ZFS no one runs.  t_truenas and t_boot_zfs
# run in the lane and on the host too, in the sanitized pass on zfs-fuse:
# geli-truenas and the generator run under a pool nowhere else sanitized
# (docs/testing.md lists where each check runs).
GUEST_ZFS=(t_zfs t_zfs_doc t_reencrypt_zfs t_bench_pool)

# The CLI tests run again with every geli under valgrind's memcheck
# (GELI_VALGRIND=1), beside the fuzzers; docs/testing.md has the run over
# all of them.
VALGRIND_PASS=(t_kill_configure t_resize t_edges t_badinput)

# add_counts PASS LOG FAILED: the closing "N passed, N failed, N skipped" of
# LOG into the totals (a log without one is a failure), and the pass's
# failed checks (FAILED, as tests/run-suite and tests/run-fuzz write them)
# into the list the run ends with; failures that name no check (a build that
# failed, a pass that ended without its totals) are listed by their log.
add_counts() {
	local line f named=0
	line=$(tail -n 1 "$2" | grep -E '^[0-9]+ passed, [0-9]+ failed' ||
		echo "0 passed, 1 failed, 0 skipped")
	f=$(echo "$line" | awk '{print $3}')
	total_p=$((total_p + $(echo "$line" | awk '{print $1}')))
	total_f=$((total_f + f))
	total_s=$((total_s + $(echo "$line" | awk '{print $5}')))
	[ "$f" -gt 0 ] || return 0
	if [ -s "$3" ]; then
		named=$(wc -l <"$3")
		sed "s/^/$1: /" "$3" >>"$failed_list"
	fi
	[ "$named" -ge "$f" ] ||
		echo "$1: $((f - named)) failure(s) that name no check (log: $2)" >>"$failed_list"
}

# spent LABEL SECONDS: a line for the record: LABEL took SECONDS, and the
# processes this shell has waited for took so many CPU seconds (user and
# system; docs/testing.md has the run's lanes so measured).  (times runs in
# this shell: in a command substitution it would count a subshell's.)
spent() {
	local t
	t=$(mktemp)
	times >"$t"
	echo "== $1: $2 s, $(tail -n 1 "$t" | awk '{ n = 0
		for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); n += a[1] * 60 + a[2] }
		printf "%d", n }') CPU s"
	rm -f "$t"
}

# The guest lane runs before the host's lanes on the CPUs: it is the run's
# critical path, and a guest's virtual CPUs made to wait for the host's
# tests spin on the locks each other holds (under emulation a scenario took
# 3.5 times as long beside the host's passes as alone).  The host's tests
# fill the time the guests leave.  The host's lanes run at nice HOST_NICE;
# where the kernel groups the processes of a session (autogroup, as on
# these machines, which makes nice count only inside a session; the attach
# daemons start sessions of their own), the guest lane's commands run in a
# session of theirs whose group runs at nice -10 (boosted).
HOST_NICE=10
boosted() {	# CMD...
	local pid i
	setsid "$@" &
	pid=$!
	# (once it leads a session of its own, its group is its own)
	for i in $(seq 500); do
		[ "$(awk '{ print $6 }' "/proc/$pid/stat" 2>/dev/null)" = "$pid" ] && break
		sleep 0.01
	done
	echo -10 >"/proc/$pid/autogroup" 2>/dev/null || true
	wait "$pid"
}

# The side lane, beside the main lane's passes: the sanitized build (the
# main lane waits for it after its plain pass), the Debian packages and
# t_deb, the fuzzing build and the fuzzers, 10 seconds each
# (GELI_FUZZ_SECONDS), then the OpenSSL pass and valgrind's memcheck over
# VALGRIND_PASS, as side runs of run-suite (their
# tests held to what carries their names, GELI_SUITE_SIDE).  Each step
# logs where run_tests counts it; a build that fails is a failure there.
side_lane() {
	local marks=$1 start=$SECONDS

	renice -n "$HOST_NICE" -p "$BASHPID" >/dev/null
	if (build build-asan -Db_sanitize=address,undefined -Db_lundef=false \
	    -Dbuildtype=debug) >"$marks/asan.log" 2>&1; then
		: >"$marks/asan"
	else
		: >"$marks/asan-failed"
	fi
	# The packages (dpkg-buildpackage builds the tree again, -O2 and
	# hardened, and runs the unit tests there), then t_deb on them: off the
	# main lane, whose passes do not need them.
	if (build_debs nocheck) >"$marks/debs.log" 2>&1; then
		GELI_SUITE_SIDE=1 GELI_SUITE_TAG=deb \
			tests/run-suite build t_deb >build/suite-deb.log 2>&1 || true
	else
		cat "$marks/debs.log" >build/suite-deb.log
	fi
	mkdir -p build-fuzz
	# (the harnesses alone: 29 CPU s instead of 65 for the whole tree)
	if (CC=clang BUILD_TARGETS=$(cd fuzz && ls fuzz_*.c | sed 's,^,fuzz/,; s,[.]c$,,') \
	    build build-fuzz -Dfuzz=true) >"$marks/fuzz.log" 2>&1; then
		tests/run-fuzz build-fuzz >build-fuzz/fuzz.log 2>&1 || true
	else
		cat "$marks/fuzz.log" >build-fuzz/fuzz.log
	fi
	if (build build-noaccel -Daccel=disabled) >"$marks/noaccel.log" 2>&1; then
		GELI_SUITE_SIDE=1 GELI_CRYPTO=openssl GELI_SUITE_TAG=openssl \
			tests/run-suite build-noaccel "${OPENSSL_PASS[@]}" >build/suite-openssl.log 2>&1 || true
	else
		cat "$marks/noaccel.log" >build/suite-openssl.log
	fi
	GELI_SUITE_SIDE=1 GELI_VALGRIND=1 GELI_SUITE_TAG=valgrind \
		tests/run-suite build "${VALGRIND_PASS[@]}" >build/suite-valgrind.log 2>&1 || true
	spent "the side lane" $((SECONDS - start)) >"$marks/side.spent"
}

# The guest lane (tests/vm/lane, docs/testing.md): the cache's kernels made
# or found (tests/vm/prepare; from nothing several minutes each, most of it
# building OpenZFS), backports' first, whose boots come first; the others
# are made while those run (a boot of theirs waits for its kernel, which
# prepare's lock holds), then the lane's boots one at a time as a side run
# (two guests at once, each spinning while the other holds the CPUs, made
# a 6.12 guest panic in io_uring and t_pressure's Python fail to start:
# docs/testing.md).  A kernel that cannot be prepared fails its boots'
# tests there.
vm_lane() {
	local k prep start=$SECONDS
	echo "== tests/vm/prepare -k backports"
	boosted tests/vm/prepare -k backports 2>&1 | tail -n 3 || true
	# The other kernels' entries (from nothing, bookworm's OpenZFS build)
	# are not boosted: they are needed only by the fourth boot, and a
	# build at the guests' priority took the CPUs from them, whose virtual
	# CPUs then spun (from nothing on cbb73a8 the pools boot's t_zfs took
	# 562 s beside it, 234 s warm).  A boot whose entry is not ready waits
	# for it (tests/vm/prepare's lock).
	for k in bookworm trixie; do
		echo "== tests/vm/prepare -k $k"
		tests/vm/prepare -k "$k" 2>&1 | tail -n 3 || true
	done >build/vm-prepare.log &
	prep=$!
	GELI_SUITE_SIDE=1 GELI_SUITE_TAG=vm boosted tests/run-suite --vm build >build/vm-suite.log 2>&1 ||
		true	# (its failures are counted from its log)
	wait "$prep"
	spent "the guest lane" $((SECONDS - start)) >build/vm-lane.spent
	cat build/vm-prepare.log build/vm-suite.log
}

# clear_stale: what an earlier run left when it ended before its tests
# could clean up (a machine restarted under it, a run killed): the mounts,
# loop devices and processes of tests' temporary directories
# (/tmp/geli-test.*) and of the soak's and the benchmarks' (/dev/shm/geli-*),
# which this run's checks of the host would otherwise blame on its own tests
# of the same names.  Each is said, then removed (processes by their PID).
clear_stale() {
	local m pid stale='^/(tmp/geli-test[.]|dev/shm/geli-)'
	for pid in $(ps -e -o pid=,args= | awk -v re=" ${stale#^}" '$2 !~ /^(awk|ps)$/ && $0 ~ re { print $1 }'); do
		echo "run.sh: an earlier run's process, stopped: $(ps -o args= -p "$pid" | cut -c1-120)"
		kill -9 "$pid" 2>/dev/null || true
	done
	for m in $(awk -v re="$stale" '$2 ~ re { print $2 }' /proc/mounts | sort -r); do
		echo "run.sh: an earlier run's mount, unmounted: $m"
		umount -l "$m" || true
	done
	for m in $(losetup -n -O NAME,BACK-FILE 2>/dev/null | awk -v re="$stale" '$2 ~ re { print $1 }'); do
		echo "run.sh: an earlier run's loop device, detached: $m"
		losetup -d "$m" || true
	done
	rm -rf /tmp/geli-test.* /dev/shm/geli-*
}

# Three lanes for the two cores: the main lane runs the plain and the
# sanitized passes, two tests at a time: the plain pass the unit tests and
# the CLI tests whose plain run proves more than their sanitized one does
# ("suite: plain": checks the sanitizers skip, kill cycles and sizes they
# cut down; tests/run-suite), the sanitized pass, once the side lane has
# built it, every test (the same checks, and memory errors and undefined
# behaviour on the way); the plain build runs the rest of its tests in the
# guest lane, the OpenSSL and valgrind passes and the packages' t_deb.
# The side lane, side_lane above; the guest lane, vm_lane.
run_tests() {
	local total_p=0 total_f=0 total_s=0 marks side vm log failed_list start=$SECONDS
	marks=$(mktemp -d)
	failed_list=$marks/failed
	: >"$failed_list"
	# (each pass writes its own list anew; none is left of an earlier run)
	rm -f build*/test-logs*/failed-checks build-fuzz/fuzz-logs/failed-checks
	rm -f build/vm-lane.spent
	vm_lane >build/suite-vm.log 2>&1 &
	vm=$!
	side_lane "$marks" &
	side=$!
	echo "== the unit tests and \"suite: plain\" in build (beside them: the sanitized and fuzzing builds, the fuzzers)"
	nice -n "$HOST_NICE" tests/run-suite -j 2 build unit plain |
		tee build/suite.log || true
	spent "the plain pass" $((SECONDS - start))
	add_counts plain build/suite.log build/test-logs/failed-checks
	while [ ! -e "$marks/asan" ] && [ ! -e "$marks/asan-failed" ]; do sleep 1; done
	echo "== tests in build-asan (beside them: the OpenSSL and valgrind passes)"
	log=build-asan/suite.log
	if [ -e "$marks/asan" ]; then
		# valgrind cannot run sanitized binaries (t_leaks), and
		# the sanitizers keep freed memory in quarantine and
		# reserve terabytes of shadow, which the memory scans
		# (t_secrets) are not about: both are the plain build's.
		nice -n "$HOST_NICE" tests/run-suite -j 2 -x t_leaks -x t_secrets -x t_deb \
			$(printf -- '-x %s ' "${GUEST_ZFS[@]}") build-asan | tee "$log" || true
	else
		mkdir -p build-asan
		cat "$marks/asan.log" | tee "$log"
	fi
	add_counts sanitized "$log" build-asan/test-logs/failed-checks
	spent "the plain and sanitized passes" $((SECONDS - start))
	wait "$side" || true
	cat "$marks/side.spent" 2>/dev/null || true
	echo "== fuzzers in build-fuzz"
	cat build-fuzz/fuzz.log
	add_counts fuzzers build-fuzz/fuzz.log build-fuzz/fuzz-logs/failed-checks
	echo "== the Debian packages (debs/) and t_deb"
	cat build/suite-deb.log
	add_counts packages build/suite-deb.log build/test-logs-deb/failed-checks
	echo "== tests in build-noaccel (no AES-CBC accelerator) with GELI_CRYPTO=openssl"
	cat build/suite-openssl.log
	add_counts openssl build/suite-openssl.log build-noaccel/test-logs-openssl/failed-checks
	echo "== valgrind over ${VALGRIND_PASS[*]} in build"
	cat build/suite-valgrind.log
	add_counts valgrind build/suite-valgrind.log build/test-logs-valgrind/failed-checks
	wait "$vm" || true
	echo "== the guest lane (tests/vm/lane)"
	cat build/vm-lane.spent 2>/dev/null || true
	cat build/suite-vm.log
	add_counts guest build/suite-vm.log build/test-logs-vm/failed-checks
	if [ -s "$failed_list" ]; then
		echo "== failed checks (pass: test #check text (log: the test's log))"
		cat "$failed_list"
	fi
	rm -rf "$marks"
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
	install_missing "${BUILD_PKGS[@]}" "${TEST_PKGS[@]}" "${FUZZ_PKGS[@]}" "${DEB_PKGS[@]}" "${VM_PKGS[@]}"
	build build
	clear_stale
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
	lintian --fail-on error debs/*.deb
	;;
*)
	echo "usage: ./run.sh demo | test | build | deb" >&2
	exit 2
	;;
esac
