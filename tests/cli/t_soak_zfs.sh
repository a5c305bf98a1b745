#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# suite: zfs
# The soak of src/bench/soak.sh, short, its second part: fio verify with
# four jobs (random, unaligned 3000-byte, mixed unaligned sequential, 1 MiB;
# some fsync) for 15 s over a zfs-fuse raidz of attached providers: no
# mismatch, a clean scrub.
. "$(dirname "$0")/lib.sh"

need_fuse || { done_testing; exit; }
command -v fio >/dev/null || { skip "fio is not installed"; done_testing; exit; }
run "$GELI_TESTS/../src/bench/soak.sh" -t 15 -z -g "$GELI"
if grep -q '^soak zfs: skipped' "$T/out"; then
	skip "zfs part: $(sed -n 's/^soak zfs: skipped //p' "$T/out")"
else
	check "the soak ends with status 0" test "$rc" = 0
	check "zfs raidz: no mismatch" grep -qE '^soak zfs raidz: .* 0 mismatches$' "$T/out"
	check "zfs raidz: something was written and verified" \
		grep -qE '^soak zfs raidz: .*written [1-9][0-9]* MiB, verified [1-9][0-9]* MiB' "$T/out"
	check "zfs raidz: the scrub is clean" bash -c '! grep -q "scrub found errors" "$0"' "$T/out"
fi
sed 's/^/# /' "$T/out"
done_testing
