#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# init over the matrix cipher x key length x sector size x HMAC (as FreeBSD's
# conf.sh, plus the legacy ciphers and HMAC/MD5): the metadata says what was
# asked, the passphrase opens slot 0, another one does not and changes nothing.
. "$(dirname "$0")/lib.sh"

passfile "$T/pass" "matrix secret"
passfile "$T/wrong" "matrix secreT"
prov=$T/prov
ciphers="aes-xts:128 aes-xts:256 aes-cbc:128 aes-cbc:192 aes-cbc:256
camellia-cbc:128 camellia-cbc:192 camellia-cbc:256 blowfish-cbc:128
blowfish-cbc:288 blowfish-cbc:448 3des-cbc:192 null:512"
names="aes-xts=AES-XTS aes-cbc=AES-CBC camellia-cbc=CAMELLIA-CBC blowfish-cbc=Blowfish-CBC 3des-cbc=3DES-CBC null=NULL"
name_of() { local p; for p in $names; do [ "${p%%=*}" = "$1" ] && echo "${p#*=}"; done; }

for c in $ciphers; do
	e=${c%:*} l=${c#*:}
	for s in 512 1024 4096; do
		for a in none hmac/md5 hmac/sha1 hmac/ripemd160 hmac/sha256 hmac/sha384 hmac/sha512; do
			desc="$e $l S=$s $a"
			aopt=()
			[ $a != none ] && aopt=(-a $a)
			mkprov "$prov" 2M
			if ! "$GELI" init -B none -i 50 -J "$T/pass" -e $e -l $l -s $s "${aopt[@]}" "$prov" \
			    >"$T/init.out" 2>"$T/init.err"; then
				nok "$desc: init"; diag <"$T/init.err"; continue
			fi
			"$GELI" dump "$prov" >"$T/dump" 2>&1
			want_flags=0x200 want_a=""
			[ $a != none ] && want_flags=0x210 want_a=$(echo "$a" | tr a-z A-Z | sed 's/HMAC\//HMAC\//')
			bad=""
			grep -qx "     ealgo: $(name_of $e)" "$T/dump" || bad="$bad ealgo"
			grep -qx "    keylen: $l" "$T/dump" || bad="$bad keylen"
			grep -qx "sectorsize: $s" "$T/dump" || bad="$bad sectorsize"
			grep -qx "     flags: $want_flags" "$T/dump" || bad="$bad flags"
			grep -qx "  provsize: 2097152" "$T/dump" || bad="$bad provsize"
			grep -qx "iterations: 50" "$T/dump" || bad="$bad iterations"
			if [ $a = none ]; then
				grep -q "aalgo" "$T/dump" && bad="$bad aalgo"
			else
				grep -qx "     aalgo: $want_a" "$T/dump" || bad="$bad aalgo"
			fi
			key_opens "$prov" 0 -j "$T/pass" 2>/dev/null || bad="$bad key"
			before=$(md5sum <"$prov")
			key_opens "$prov" 0 -j "$T/wrong" 2>/dev/null && bad="$bad wrong-key-accepted"
			grep -qx "geli: Wrong key for $T/ko.bk." "$T/ko.err" || bad="$bad wrong-key-message"
			[ "$(md5sum <"$prov")" = "$before" ] || bad="$bad changed"
			if [ -z "$bad" ]; then ok "$desc"; else nok "$desc:$bad"; diag <"$T/dump"; fi
		done
	done
done
done_testing
