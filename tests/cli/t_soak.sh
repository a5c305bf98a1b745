#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The soak of src/bench/soak.sh, short, its first part: fio verify with four
# jobs (random, unaligned 3000-byte, mixed unaligned sequential, 1 MiB; some
# fsync) for 15 s over an attached provider: no mismatch.  (t_soak_zfs has
# its second part; the long runs are in docs/benchmarks.md.)
. "$(dirname "$0")/lib.sh"

need_fuse || { done_testing; exit; }
command -v fio >/dev/null || { skip "fio is not installed"; done_testing; exit; }
run "$GELI_TESTS/../src/bench/soak.sh" -t 15 -n -g "$GELI"
check "the soak ends with status 0" test "$rc" = 0
check "attached: no mismatch" grep -qE '^soak attached: .* 0 mismatches$' "$T/out"
check "attached: something was written and verified" \
	grep -qE '^soak attached: .*written [1-9][0-9]* MiB, verified [1-9][0-9]* MiB' "$T/out"
sed 's/^/# /' "$T/out"
done_testing
