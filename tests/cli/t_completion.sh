#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# contrib/geli.bash-completion, sourced and asked, as bash asks it, for
# the completions of a few command lines.
. "$(dirname "$0")/lib.sh"

# shellcheck source=/dev/null
. "$(dirname "$0")/../../contrib/geli.bash-completion"
# complete LINE: COMPREPLY for the last word of LINE (empty if it ends in a
# space), sorted, on one line.
complete_line() {
	read -r -a COMP_WORDS <<<"$1"
	COMP_WORDS[0]=$GELI
	case $1 in *" ") COMP_WORDS+=("") ;; esac
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	_geli
	printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ' | sed 's/ $//'
}
is() {	# is LINE WANT
	local got
	got=$(complete_line "$1")
	if [ "$got" = "$2" ]; then ok "'$1' completes to '$2'"; else
		nok "'$1' completes to '$2'"; echo "got: '$got'" | diag; fi
}
has() {	# has LINE WORD...: each WORD among the completions
	local got w miss=
	got=" $(complete_line "$1") "
	for w in "${@:2}"; do [[ $got == *" $w "* ]] || miss="$miss $w"; done
	if [ -z "$miss" ]; then ok "'$1' offers ${*:2}"; else
		nok "'$1' offers ${*:2}"; echo "missing:$miss; got:$got" | diag; fi
}

check "complete -F _geli geli is set" bash -c ". '$(dirname "$0")/../../contrib/geli.bash-completion'; complete -p geli | grep -q _geli"
is "geli at" "attach"
is "geli s" "search serve setkey status stop suspend"
has "geli " init label attach detach onetime configure setkey delkey suspend \
	resume kill backup restore resize version clear dump list status serve bench help
is "geli attach -" "-C -L -b -d -j -k -n -p -r -v"
is "geli attach -b " "auto fuse ublk"
is "geli reencrypt -t " "geli luks2"
is "geli delkey -" "-a -f -n -v"
is "geli suspend -" "-a -v"
has "geli init -" -a -B -b -e -i -J -K -l -P -s -T -V
has "geli bench --i" --integrity
is "geli bench --cr" "--crypto"
is "geli bench --crypto " "all gcrypt openssl"
is "geli init -e ca" "camellia-cbc"
is "geli init -a hmac/sha" "hmac/sha1 hmac/sha256 hmac/sha384 hmac/sha512"
is "geli init -s 40" "4096"
is "geli setkey -n " "0 1"
is "geli init -V " "0 1 2 3 4 5 6 7"
touch "$T/passfile.txt" "$T/other"
is "geli attach -j $T/passf" "$T/passfile.txt"
is "geli serve -U $T/oth" "$T/other"
if need_fuse; then
	passfile "$T/pass" "completion"
	for d in disk0 disk1; do
		mkprov "$T/$d" 1M
		"$GELI" init -B none -i 10 -J "$T/pass" "$T/$d" >/dev/null
		"$GELI" attach -j "$T/pass" "$T/$d"
	done
	got=$(complete_line "geli detach dis")
	check "detach offers the attached providers' names (as geli lists them)" \
		test "$got" = "disk0 disk1"
	"$GELI" detach disk0 disk1
fi
is "geli resize -s " ""
done_testing
