# SPDX-License-Identifier: BSD-2-Clause
# Sourced by the benchmark scripts of src/bench that time whole commands.

# secs CMD...: the wall-clock seconds CMD took; the script ends if it fails.
secs() {
	local t0 t1
	t0=$(date +%s.%N)
	"$@" >/dev/null || { echo "${0##*/}: $* failed" >&2; exit 1; }
	t1=$(date +%s.%N)
	echo "$t1 - $t0" | bc -l
}
# median FILE: the median of FILE's numbers, one a line (the upper one of
# an even count).
median() { sort -g "$1" | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
# bench_provider FILE MiB [S]: a GELI provider of MiB MiB (AES-XTS 128,
# S-byte sectors, 512 by default) of random data, made by reencrypt -E with
# the keyfile $T/key (made here when it is not there) and $geli.
bench_provider() {
	local s=${3:-512}
	[ -e "$T/key" ] || head -c 64 /dev/urandom >"$T/key"
	head -c $(( ($2 << 20) - s )) /dev/urandom >"$1"
	truncate -s "${2}M" "$1"
	"$geli" reencrypt -E -P -K "$T/key" -s "$s" -B none "$1" >/dev/null || exit 1
}
