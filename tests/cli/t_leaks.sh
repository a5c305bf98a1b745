#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# suite: plain
# No memory definitely lost at exit, with either crypto backend: geli init,
# setkey and dump, and the unit tests of the crypto seam and the key slots,
# under valgrind's leak checker (OpenSSL's provider handles were once lost
# in gc_init).  Skipped without valgrind, and in sanitizer builds, whose
# shadow memory valgrind cannot run.
. "$(dirname "$0")/lib.sh"

VG=(valgrind -q --leak-check=full --errors-for-leak-kinds=definite
	--error-exitcode=99)

# leakfree BACKEND DESC CMD...: CMD, with GELI_CRYPTO=BACKEND, exits 0 under
# valgrind with no definite loss.  (Not "valgrind env ...": valgrind would
# check env, not its child.)
leakfree() {
	local be=$1 desc="$1: $2"; shift 2
	GELI_CRYPTO=$be "${VG[@]}" "$@" >"$T/out" 2>"$T/err" </dev/null
	rc=$?
	if [ "$rc" -eq 0 ]; then ok "$desc"; else
		nok "$desc"; { echo "status $rc: $*"; tail -40 "$T/err"; } | diag; fi
}

if ! command -v valgrind >/dev/null 2>&1; then
	skip "valgrind is not installed"
elif [ -n "${GELI_SANITIZED:-}" ]; then
	skip "a sanitizer build: valgrind cannot run it"
else
	passfile "$T/pass" "no leaks"
	passfile "$T/pass2" "second slot"
	head -c 64 /dev/urandom >"$T/kf"
	for be in gcrypt openssl; do
		mkprov "$T/$be.img" 1M
		leakfree $be "geli init (passphrase and keyfile)" \
			"$GELI" init -B none -i 1000 -J "$T/pass" -K "$T/kf" "$T/$be.img"
		leakfree $be "geli setkey -n 1" \
			"$GELI" setkey -n 1 -j "$T/pass" -k "$T/kf" -J "$T/pass2" "$T/$be.img"
		leakfree $be "geli dump" "$GELI" dump "$T/$be.img"
		for t in test_mkey test_crypto; do
			leakfree $be "$t" "$GELI_BUILD/tests/unit/$t" "$GELI_FIXTURES"
		done
	done
fi
done_testing
