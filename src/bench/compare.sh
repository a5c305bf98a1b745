#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The data path of two builds of geli, timed in turns by geli bench's own
# core (docs/benchmarks.md):
#
#   src/bench/compare.sh [-r ROUNDS] [-t SECONDS] [-A] OLD_GELI NEW_GELI
#
# Each round runs both programs, the order swapped every other round:
#   geli bench --cipher-only (AES-XTS-128, AES-CBC-128, NULL, and AES-XTS-128
#     with every HMAC; 4096-byte sectors, one thread)
#   geli bench --attached (AES-XTS-128, 4096-byte sectors, 256 MiB: write and
#     read through the .eli file; as root with /dev/fuse, else left out;
#     -A: this one alone)
# and prints, per configuration, the median of the per-round new/old ratios
# (min-max) for writes (encryption) and reads (decryption).  A benchmark,
# not a test: it prints numbers and never fails on them.
set -u
rounds=7 secs=1 attached_only=0
usage() { echo "usage: $0 [-r ROUNDS] [-t SECONDS] [-A] OLD_GELI NEW_GELI" >&2; exit 2; }
while getopts r:t:A o; do
	case $o in
	r) rounds=$OPTARG ;;
	t) secs=$OPTARG ;;
	A) attached_only=1 ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# = 2 ] || usage
old=$1 new=$2
py=python3
[ -x /usr/bin/python3 ] && py=/usr/bin/python3
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

studies=(
	"--cipher-only --ealgo aes-xts --keylen 128 --sector-sizes 4096 --threads 1"
	"--cipher-only --ealgo aes-cbc --keylen 128 --sector-sizes 4096 --threads 1"
	"--cipher-only --ealgo null --sector-sizes 4096 --threads 1"
	"--cipher-only --integrity --ealgo aes-xts --keylen 128 --sector-sizes 4096 --threads 1"
)
if [ "$(id -u)" = 0 ] && [ -c /dev/fuse ] && [ -w /dev/shm ]; then
	studies+=("--attached --ealgo aes-xts --keylen 128 --size 256")
fi
if [ $attached_only = 1 ]; then
	[ "${studies[-1]}" != "${studies[0]}" ] && [[ ${studies[-1]} == --attached* ]] ||
		{ echo "$0: -A: no attached study here (root and /dev/fuse)" >&2; exit 2; }
	studies=("${studies[-1]}")
fi

for r in $(seq "$rounds"); do
	for s in "${!studies[@]}"; do
		order="old new"
		[ $((r % 2)) = 0 ] && order="new old"
		for w in $order; do
			prog=$old
			[ $w = new ] && prog=$new
			# shellcheck disable=SC2086
			"$prog" bench ${studies[$s]} --seconds "$secs" --runs 1 --json \
				>"$out/$w.$s.$r.json" 2>/dev/null ||
				echo "round $r: $w failed: ${studies[$s]}" >&2
		done
	done
done

"$py" - "$out" "$rounds" "${#studies[@]}" <<'PY'
import glob, json, statistics, sys
out, rounds, nst = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])

def rows(path):
    try:
        r = json.load(open(path))["results"]
    except (OSError, ValueError, KeyError):
        return {}
    return {(x["ealgo"], x["keylen"], x["aalgo"] or
             ("no HMAC" if x["study"] == "integrity" else None), x["target"]): x
            for x in r if x["ealgo"] is not None}

print("| configuration | write new/old, median (min-max) | read new/old, median (min-max) |")
print("|---|---|---|")
for s in range(nst):
    ratios = {}
    for r in range(1, rounds + 1):
        a, b = rows("%s/old.%d.%d.json" % (out, s, r)), rows("%s/new.%d.%d.json" % (out, s, r))
        for k in a.keys() & b.keys():
            ratios.setdefault(k, ([], []))
            for i, f in enumerate(("write_MBps", "read_MBps")):
                if a[k][f] > 0:
                    ratios[k][i].append(b[k][f] / a[k][f])
    for k in sorted(ratios, key=str):
        e, l, h, t = k
        name = "%s-%s%s, %s" % (e, l, " + " + h if h else "", "attached" if t == "attached" else "transform")
        cells = []
        for v in ratios[k]:
            cells.append("%.2f (%.2f-%.2f)" % (statistics.median(v), min(v), max(v)) if v else "-")
        print("| %s | %s | %s |" % (name, cells[0], cells[1]))
PY
