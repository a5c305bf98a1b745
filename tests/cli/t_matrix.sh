#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# suite: plain
# init over the matrix cipher x key length x sector size x HMAC (as FreeBSD's
# conf.sh, plus the legacy ciphers and HMAC/MD5): the metadata says what was
# asked, the passphrase opens slot 0 (attach -C -n 0), another one does not
# and changes nothing.  The seven HMAC choices of a cipher, key length and
# sector size are dumped and tried in one geli command each (the verbs take
# several providers): one verdict per provider all the same.
. "$(dirname "$0")/lib.sh"

passfile "$T/pass" "matrix secret"
passfile "$T/wrong" "matrix secreT"
ciphers="aes-xts:128 aes-xts:256 aes-cbc:128 aes-cbc:192 aes-cbc:256
camellia-cbc:128 camellia-cbc:192 camellia-cbc:256 blowfish-cbc:128
blowfish-cbc:288 blowfish-cbc:448 3des-cbc:192 null:512"
hmacs="none hmac/md5 hmac/sha1 hmac/ripemd160 hmac/sha256 hmac/sha384 hmac/sha512"
names="aes-xts=AES-XTS aes-cbc=AES-CBC camellia-cbc=CAMELLIA-CBC blowfish-cbc=Blowfish-CBC 3des-cbc=3DES-CBC null=NULL"
name_of() { local p; for p in $names; do [ "${p%%=*}" = "$1" ] && echo "${p#*=}"; done; }
# The provider of HMAC a.
prov_of() { echo "$T/p-${1#hmac/}"; }

# Every sector size; one in a sanitized build, whose pass is for memory
# errors on the way (the same code for each size: the plain pass has all).
sizes="512 1024 4096"
[ -n "${GELI_SANITIZED:-}" ] && sizes=4096
for c in $ciphers; do
	e=${c%:*} l=${c#*:}
	for s in $sizes; do
		provs=() made=()
		for a in $hmacs; do
			p=$(prov_of $a)
			aopt=()
			[ $a != none ] && aopt=(-a $a)
			mkprov "$p" 2M
			provs+=("$p")
			if "$GELI" init -B none -i 50 -J "$T/pass" -e $e -l $l -s $s "${aopt[@]}" "$p" \
			    >"$T/init.out" 2>"$T/init.err"; then
				made+=("$p")
			else
				nok "$e $l S=$s $a: init"; diag <"$T/init.err"
			fi
		done
		[ ${#made[@]} -gt 0 ] || continue
		"$GELI" dump "${made[@]}" >"$T/dump" 2>&1
		# attach -C -n 0: slot 0 opens, nothing is attached.
		"$GELI" attach -C -n 0 -j "$T/pass" "${made[@]}" >/dev/null 2>"$T/right.err"
		before=$(md5sum "${made[@]}")
		"$GELI" attach -C -j "$T/wrong" "${made[@]}" >/dev/null 2>"$T/wrong.err"
		wrong_rc=$?
		after=$(md5sum "${made[@]}")
		# Each provider's dump fields and sums, read once (no process
		# per check).
		declare -A F=() B=() A=()
		cur=""
		while IFS= read -r line; do
			case $line in
			"Metadata on "*:) cur=${line#Metadata on }; cur=${cur%:} ;;
			*:*) k=${line%%:*}; F[$cur/${k// /}]=${line#*: } ;;
			esac
		done <"$T/dump"
		while read -r sum f; do B[$f]=$sum; done <<<"$before"
		while read -r sum f; do A[$f]=$sum; done <<<"$after"
		right=$(<"$T/right.err") wrong=$(<"$T/wrong.err")
		for a in $hmacs; do
			p=$(prov_of $a)
			desc="$e $l S=$s $a"
			case " ${made[*]} " in *" $p "*) ;; *) continue ;; esac
			want_flags=0x200 want_a=""
			[ $a != none ] && want_flags=0x210 want_a=${a^^}
			bad=""
			[ "${F[$p/ealgo]}" = "$(name_of $e)" ] || bad="$bad ealgo"
			[ "${F[$p/keylen]}" = "$l" ] || bad="$bad keylen"
			[ "${F[$p/sectorsize]}" = "$s" ] || bad="$bad sectorsize"
			[ "${F[$p/flags]}" = "$want_flags" ] || bad="$bad flags"
			[ "${F[$p/provsize]}" = 2097152 ] || bad="$bad provsize"
			[ "${F[$p/iterations]}" = 50 ] || bad="$bad iterations"
			[ "${F[$p/aalgo]-}" = "$want_a" ] || bad="$bad aalgo"
			case $right in *"$p:"* | *"$p."*) bad="$bad key" ;; esac
			[ $wrong_rc = 0 ] && bad="$bad wrong-key-accepted"
			case $'\n'$wrong$'\n' in
			*$'\n'"geli: Wrong key for $p."$'\n'*) ;;
			*) bad="$bad wrong-key-message" ;;
			esac
			[ -n "${B[$p]}" ] && [ "${A[$p]}" = "${B[$p]}" ] || bad="$bad changed"
			if [ -z "$bad" ]; then
				ok "$desc"
			else
				nok "$desc:$bad"
				awk -v want="Metadata on $p:" '$0 == want { on = 1; next }
					/^Metadata on / { on = 0 } on' "$T/dump" | diag
			fi
		done
		unset F B A
	done
done
check "attach -C attached nothing" test -z "$(ls -A "$GELI_RUNDIR" 2>/dev/null)"
done_testing
