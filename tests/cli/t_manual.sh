#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The manual stays true: it renders without warnings and documents every verb
# the command offers.
. "$(dirname "$0")/lib.sh"

man=$GELI_TESTS/../man/geli.8
if command -v groff >/dev/null; then
	check "the manual renders without warnings" test -z "$(groff -mandoc -ww -z "$man" 2>&1)"
	for page in geli-truenas geli-boot; do
		check "$page(8) renders without warnings" \
			test -z "$(groff -mandoc -ww -z "$GELI_TESTS/../man/$page.8" 2>&1)"
	done
else
	skip "groff is not installed"
fi
"$GELI" help 2>"$T/usage"
synopsis=$(sed -n '/^\.Sh SYNOPSIS/,/^\.Sh DESCRIPTION/p' "$man")
description=$(sed -n '/^\.Sh DESCRIPTION/,/^\.Sh EXIT STATUS/p' "$man")
for verb in $(sed -E 's/^(usage:)? *geli ([a-z]+).*/\2/' "$T/usage"); do
	check "the manual's synopsis has $verb" grep -qE "^\.Cm $verb( |$)" <<<"$synopsis"
	check "the manual describes $verb" grep -qE "^\.It Cm $verb( |$)" <<<"$description"
done
check "the manual has DIFFERENCES FROM FreeBSD" grep -q '^\.Sh DIFFERENCES FROM FreeBSD' "$man"
check "the manual has EXIT STATUS" grep -q '^\.Sh EXIT STATUS' "$man"
done_testing
