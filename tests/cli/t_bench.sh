#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# geli bench: the quick mode runs every configuration, the table and the JSON
# have the documented shape, bad options get a clear error.
. "$(dirname "$0")/lib.sh"

run "$GELI" bench --quick
check "bench --quick succeeds" test "$rc" = 0
check "the table has a raw baseline at 100%" grep -qE '^raw \(no GELI\) +- +- +- +[0-9]+ +[0-9]+ +100% +100%' "$T/out"
for c in "AES-XTS +128" "AES-XTS +256" "AES-CBC +128" "AES-CBC +192" "AES-CBC +256" \
    "CAMELLIA-CBC +128" "CAMELLIA-CBC +256" "Blowfish-CBC \* +128" "Blowfish-CBC \* +448" \
    "3DES-CBC \* +192" "NULL +512"; do
	check "the table has $c" grep -qE "^$c +4096 +- +[0-9]+ +[0-9]+ " "$T/out"
done
check "legacy ciphers are marked" grep -q "^\* legacy" "$T/out"

run "$GELI" bench --quick --json
check "bench --json succeeds" test "$rc" = 0
if command -v python3 >/dev/null; then
	cat >"$T/shape.py" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
m = d["machine"]
for k in ("cpu", "aes", "vaes", "avx2", "kernel", "openssl", "cores"):
    assert k in m, k
assert isinstance(m["aes"], bool) and isinstance(m["cores"], int)
r = d["results"]
assert len(r) == 12, len(r)
need = ("study", "ealgo", "keylen", "sectorsize", "aalgo", "threads", "target",
        "write_MBps", "read_MBps", "cpu_percent", "runs", "min", "median", "max")
for x in r:
    for k in need:
        assert k in x, k
    assert x["aalgo"] is None
    assert x["write_MBps"] > 0 and x["read_MBps"] > 0, x
    assert x["min"]["write_MBps"] <= x["median"]["write_MBps"] <= x["max"]["write_MBps"]
assert r[0]["ealgo"] is None and r[0]["write_percent_of_raw"] == 100.0
assert [x["ealgo"] for x in r if x["legacy"]] == ["Blowfish-CBC", "Blowfish-CBC", "3DES-CBC"]
print("shape ok")
PY
	check "the JSON has the documented shape" bash -c 'python3 "$0" "$1" | grep -qx "shape ok"' "$T/shape.py" "$T/out"
else
	skip "python3 not installed"
fi
run "$GELI" bench --quick --runs 3
check "--runs 3 says so" grep -q "median of 3 runs" "$T/out"
run "$GELI" bench --quick --sectorsize 512 --threads 1
check "--threads is used" grep -q "1 MiB sequential requests, 1 threads" "$T/out"
check "--sectorsize is used" grep -qE "^AES-XTS +128 +512 " "$T/out"

# The integrity study: none and every HMAC x 512, 1024, 2048, 4096.
run "$GELI" bench --quick --integrity
check "--integrity: 4 sector sizes x (none + 6 HMACs) + raw" test "$(grep -cE '^(AES-XTS|raw)' "$T/out")" = 29
for h in HMAC/MD5 HMAC/SHA1 HMAC/RIPEMD160 HMAC/SHA256 HMAC/SHA384 HMAC/SHA512; do
	check "--integrity measures $h at 512 and 4096" bash -c 'grep -qE " 512 $1 " "$2" && grep -qE " 4096 $1 " "$2"' x "$h" "$T/out"
done
check "HMAC/MD5 is marked legacy" grep -qE '^AES-XTS \* +128 +512 HMAC/MD5' "$T/out"

# --sector-sizes, --ealgo, --keylen, --csv.
run "$GELI" bench --quick --csv --sector-sizes 512,2048 --ealgo aes-cbc --keylen 256
check "--csv: a header and raw + 2 rows" test "$(wc -l <"$T/out")" = 4
check "--csv: the header names the columns" grep -q "^study,ealgo,keylen,sectorsize,aalgo,threads,target,legacy,write_MBps,read_MBps," "$T/out"
check "--sector-sizes and filters" bash -c 'grep -q "^sectorsize,AES-CBC,256,512," "$0" && grep -q "^sectorsize,AES-CBC,256,2048," "$0"' "$T/out"
# --no-aesni: the same study in a child with AES-NI masked off, side by side.
run "$GELI" bench --quick --no-aesni --ealgo aes-xts
check "--no-aesni adds the columns" grep -q "noAESNI w MB/s" "$T/out"
check "--no-aesni measures every row" test "$(grep -cE '^(raw|AES-XTS) .* [0-9]+ +[0-9]+ +[0-9.]+x$' "$T/out")" = 3
run "$GELI" bench --quick --no-aesni --ealgo aes-xts --json
check "--no-aesni in JSON" python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"]; assert all(x["no_aesni"]["write_MBps"] > 0 for x in r)' "$T/out"

# --baselines: the data path beside its library alone and openssl speed.
run "$GELI" bench --quick --cipher-only --baselines --ealgo aes-xts --keylen 256 --threads 1
check "--baselines with --cipher-only: the cipher, its backend alone and openssl speed" \
	bash -c 'grep -qE "^AES-XTS +256 +4096 +- +[0-9]+ +[0-9]+ " "$0" &&
	    grep -qE "^ backend alone +256 +4096 +- +[0-9]+ +[0-9]+ " "$0" &&
	    grep -qE "^ openssl speed +256 +4096 +- +[0-9]+ +[0-9]+ " "$0"' "$T/out"
run "$GELI" bench --quick --cipher-only --baselines --ealgo blowfish --json
check "--baselines in JSON: each row says what it is, openssl speed needs no backend" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["results"]
assert [(x["ealgo"], x["keylen"], x["baseline"]) for x in r] == [
    (None, None, None), ("Blowfish-CBC", 128, None), ("Blowfish-CBC", 128, "backend"),
    ("Blowfish-CBC", 128, "openssl-speed"), ("Blowfish-CBC", 448, None),
    ("Blowfish-CBC", 448, "backend"), ("Blowfish-CBC", 448, "openssl-speed")], r
assert [x["crypto"] is None for x in r] == [True, False, False, True, False, False, True]
assert all(x["write_MBps"] > 0 and x["read_MBps"] > 0 for x in r)
assert r[3]["target"] == "openssl" and r[2]["target"] == "cipher"
' "$T/out"
run "$GELI" bench --quick --cipher-only --baselines --ealgo null
check "--baselines: NULL has none" test "$(grep -cE '^ (backend alone|openssl speed) ' "$T/out")" = 0
# AES-CBC with its accelerator in use: the data path without it too, also in
# --no-aesni's child (the same rows); none with GELI_ACCEL=none.
run "$GELI" bench --quick --cipher-only --baselines --no-aesni --ealgo aes-cbc --keylen 128 --threads 1
if grep -q "AES-CBC runs through" "$T/out"; then
	check "--baselines on AES-CBC: a row without the accelerator, measured with and without AES-NI" \
		grep -qE "^ no accelerator +128 +4096 +- +[0-9]+ +[0-9]+ .* [0-9.]+x$" "$T/out"
	GELI_ACCEL=none run "$GELI" bench --quick --cipher-only --baselines --ealgo aes-cbc --keylen 128 --threads 1
	check "... none with GELI_ACCEL=none" \
		eval 'test $rc = 0 && ! grep -q "^ no accelerator" "$T/out"'
else
	check "--baselines on AES-CBC without an accelerator: no row for it" \
		eval 'test $rc = 0 && ! grep -q "^ no accelerator" "$T/out"'
fi
expect_err "--baselines without --cipher-only or --attached" \
	"geli: --baselines goes with --cipher-only or --attached." -- "$GELI" bench --baselines

# --svg: a well-formed chart with labels, units and the raw baseline marked.
run "$GELI" bench --quick --svg "$T/chart.svg"
check "--svg writes a well-formed SVG with labels, units and the baseline" python3 -c '
import sys, xml.etree.ElementTree as E
root = E.parse(sys.argv[1]).getroot()
assert root.tag.endswith("svg")
texts = [t.text or "" for t in root.iter() if t.tag.endswith("text")]
assert "raw (no GELI)" in texts
assert any("AES-XTS 128" in t for t in texts) and any("3DES-CBC 192 (legacy)" in t for t in texts)
assert any(t.endswith("MB/s") for t in texts)
assert any(l.get("stroke-dasharray") for l in root.iter() if l.tag.endswith("line"))
' "$T/chart.svg"
expect_err "--svg into a missing directory" "geli: Cannot write $T/nodir/c.svg: No such file or directory." \
	-- "$GELI" bench --quick --svg "$T/nodir/c.svg"

# --target: real I/O on a file (a device works the same way).
truncate -s 64M "$T/target.img"
run "$GELI" bench --quick --target "$T/target.img" --bs 256k --ealgo aes-cbc --keylen 128 --json
check "--target measures on the file and says so" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["results"]
assert [x["target"] for x in r] == [sys.argv[2]] * 2, r
assert all(x["write_MBps"] > 0 and x["read_MBps"] > 0 for x in r)
' "$T/out" "$T/target.img"
check "--target wrote to the file" test "$(head -c 1048576 "$T/target.img" | tr -d '\0' | wc -c)" -gt 0
expect_err "--target that does not exist" "geli: Cannot open $T/nope: No such file or directory." \
	-- "$GELI" bench --target "$T/nope"
truncate -s 1M "$T/small.img"
expect_err "--target too small" "geli: $T/small.img is too small for a benchmark." -- "$GELI" bench --target "$T/small.img"
expect_err "--bs 1000" "geli: Invalid value for --bs: 1000." -- "$GELI" bench --bs 1000

# --attached: end to end through geli attach's file; nothing left behind.
if [ "$(id -u)" -eq 0 ] && [ -c /dev/fuse ] && [ -w /dev/shm ]; then
	before=$(ls /dev/shm | grep -c geli-bench)
	run "$GELI" bench --quick --attached --ealgo aes-xts --keylen 128 --json
	check "--attached measures through the attach path" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["results"]
assert [x["target"] for x in r] == ["memory", "attached"], r
assert r[1]["write_MBps"] > 0 and r[1]["read_MBps"] > 0 and r[1]["cpu_percent"] > 0
' "$T/out"
	check "--attached cleans up its providers" test "$(ls /dev/shm | grep -c geli-bench)" = "$before"
	run "$GELI" bench --quick --attached --baselines --ealgo aes-xts --keylen 128 --json
	check "--attached --baselines: raw, a plain FUSE passthrough, then GELI" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["results"]
assert [(x["target"], x["baseline"]) for x in r] == [("memory", None),
    ("fuse", "fuse-passthrough"), ("attached", None)], r
assert r[1]["write_MBps"] > 0 and r[1]["read_MBps"] > 0 and r[1]["crypto"] is None
' "$T/out"
	check "... and leaves no mount or file behind" bash -c \
		'! grep -q /dev/shm/geli-bench /proc/mounts && test "$(ls /dev/shm | grep -c geli-bench)" = "$0"' "$before"
	expect_err "--attached with --target" "geli: --attached needs root, /dev/fuse and /dev/shm, and no --target." \
		-- "$GELI" bench --attached --target "$T/target.img"
else
	skip "--attached needs root, /dev/fuse and /dev/shm"
fi

# --disk: diskinfo -t / -c style rates, read-only.
truncate -s 512M "$T/disk.img"
sum=$(stat -c %s.%Y "$T/disk.img")
run "$GELI" bench --disk "$T/disk.img" --seconds 0.1
check "--disk reports outside, middle and inside rates" bash -c 'for w in outside middle inside; do grep -qE "^\s+$w +[0-9]+ kbytes in" "$0" || exit 1; done' "$T/out"
check "--disk reports the command overhead" grep -q "usec/command beyond the transfer" "$T/out"
check "--disk only reads" test "$(stat -c %s.%Y "$T/disk.img")" = "$sum"
run "$GELI" bench --disk "$T/disk.img" --seconds 0.1 --json
check "--disk --json" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["results"]
assert [x["where"] for x in r] == ["outside", "middle", "inside", "command"]
assert all(x["study"] == "disk" for x in r) and r[3]["reads"] > 0
' "$T/out"

expect_err "--pool with a bad layout" \
	"geli: Invalid pool layout: 3xfoo (NxKIND[:WIDTH], KIND one of stripe, mirror, raidz, raidz2, raidz3)." \
	-- "$GELI" bench --pool 3xfoo

expect_err "--json and --csv" "geli: Options --json and --csv are mutually exclusive." -- "$GELI" bench --json --csv
expect_err "--ealgo rot13" "geli: Invalid encryption algorithm." -- "$GELI" bench --ealgo rot13
expect_err "no cipher matches" "geli: No cipher matches --ealgo and --keylen." -- "$GELI" bench --ealgo aes-xts --keylen 192
expect_err "--sector-sizes 512,1000" "geli: Invalid sector size: 1000." -- "$GELI" bench --sector-sizes 512,1000

expect_err "--runs 0" "geli: Invalid value for --runs: 0 (1 to 15)." -- "$GELI" bench --runs 0
expect_err "--sectorsize 1000" "geli: Invalid sector size: 1000." -- "$GELI" bench --sectorsize 1000
expect_err "--threads x" "geli: Invalid value for --threads: x." -- "$GELI" bench --threads x
run "$GELI" bench --frobnicate
check "an unknown option prints the usage and fails" test $rc = 1 -a -n "$(grep 'usage: geli bench' "$T/err")"
done_testing
