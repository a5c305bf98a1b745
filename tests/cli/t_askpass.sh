#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Passphrases through systemd's password agents (src/geli/keys.c,
# common/askpass.c): a real systemd-tty-ask-password-agent runs in a tmux
# session of this test's own, and the test types at it with send-keys.
# Without a terminal, attach asks the agents, naming the provider; what was
# typed is cached in the kernel keyring under the test's key name, so that a
# second provider with the same passphrase attaches without a question; a
# third with another one: the cached passphrase fails, the agent asks, a
# wrong answer is asked again (GELI_ASKPASS_TRIES), the right one opens it
# and is cached too; with the tries used up attach fails as always; resume
# takes the cached one; setkey of a detached provider asks for its old
# passphrase after the cached ones fail.  The passphrase is in no argv or environment of
# geli's processes.
. "$(dirname "$0")/lib.sh"
need_fuse || { done_testing; exit; }
for p in tmux systemd-ask-password systemd-tty-ask-password-agent; do
	command -v "$p" >/dev/null || { skip "$p not installed"; done_testing; exit; }
done

# The agents' directories, if this test makes them, go with it.
[ -d /run/systemd/ask-password ] ||
	on_exit "rmdir /run/systemd/ask-password /run/systemd/ask-password-block 2>/dev/null"
# The cache: a key name of this test's own, invalidated at the end.
KN=geli-test-$$
export GELI_ASKPASS_KEYNAME=$KN
on_exit "python3 -c 'import ctypes,sys; c=ctypes.CDLL(None); i=c.syscall(250, 10, -4, b\"user\", sys.argv[1].encode(), 0); i > 0 and c.syscall(250, 21, i)' $KN"

# The agent in a tmux server of this test's own, stopped by its PID.
SOCK=geli-test-$$
tmux -L "$SOCK" -f /dev/null new-session -d -x 200 -y 50 \
	"systemd-tty-ask-password-agent --watch" || { nok "tmux starts"; done_testing; exit; }
tpid=$(tmux -L "$SOCK" display -p '#{pid}')
on_exit "kill $tpid 2>/dev/null"
pane() { tmux -L "$SOCK" capture-pane -p -S -200; }
# questions PROV: how many times the agent has asked for PROV.
questions() { pane | grep -c "Enter passphrase for $1:" || true; }
# asked PROV N: the agent has asked for PROV N times or more.
asked() { [ "$(questions "$1")" -ge "$2" ]; }
# answer PROV N TEXT: once the agent asks for PROV the Nth time, TEXT typed
# (the question awaited: a slow machine makes it late, never absent).
answer() {
	wait_for asked "$1" "$2" || return 1
	tmux -L "$SOCK" send-keys "$3" Enter
}
# bg_attach PROV [ENV...]: geli attach PROV without a terminal, in the
# background; its PID in $apid, its stderr in $T/a.err.
bg_attach() {
	local prov=$1; shift
	env "$@" setsid -w "$GELI" attach "$prov" </dev/null >/dev/null 2>"$T/a.err" &
	apid=$!
}

passfile "$T/alpha" "alpha passphrase"
passfile "$T/beta" "beta passphrase"
for p in p1:alpha p2:alpha p3:beta p4:beta; do
	mkprov "$T/${p%%:*}.img" 4M
	"$GELI" init -B none -i 1000 -J "$T/${p#*:}" "$T/${p%%:*}.img"
done

bg_attach "$T/p1.img"
check "no terminal: the agent asks, naming the provider" answer "$T/p1.img" 1 "alpha passphrase"
wait "$apid"; rc=$?
check "the answer opens it" eval 'test $rc = 0 && attached p1.img'
dpid=$(cat "$GELI_RUNDIR/p1.img.pid" 2>/dev/null)
check "the passphrase is in no argv or environment of the daemon" \
	eval '[ -n "$dpid" ] && [ -r "/proc/$dpid/environ" ] && ! grep -aq "alpha passphrase" "/proc/$dpid/cmdline" "/proc/$dpid/environ"'

bg_attach "$T/p2.img"
wait "$apid"; rc=$?
check "a second provider with the same passphrase: attached from the cache, no question" \
	eval 'test $rc = 0 && attached p2.img && test "$(questions "$T/p2.img")" = 0'

bg_attach "$T/p3.img" GELI_ASKPASS_TRIES=3
check "another passphrase: the cached one fails and the agent asks" \
	answer "$T/p3.img" 1 "not it"
check "a wrong answer is asked again" answer "$T/p3.img" 2 "beta passphrase"
wait "$apid"; rc=$?
check "and the right one opens it" eval 'test $rc = 0 && attached p3.img'

bg_attach "$T/p4.img"
wait "$apid"; rc=$?
check "both cached passphrases are tried: the second opens the next provider, no question" \
	eval 'test $rc = 0 && attached p4.img && test "$(questions "$T/p4.img")" = 0'
"$GELI" detach p4.img

passfile "$T/gamma" "gamma passphrase"
"$GELI" init -B none -i 1000 -J "$T/gamma" "$T/p4.img"
bg_attach "$T/p4.img" GELI_ASKPASS_TRIES=2
answer "$T/p4.img" 1 "nope" && answer "$T/p4.img" 2 "nope again"
wait "$apid"; rc=$?
check "the tries used up: attach fails as it does for a wrong key" \
	eval 'test $rc = 1 && grep -qx "geli: Wrong key for $T/p4.img." "$T/a.err" && ! attached p4.img'
check "... after exactly the tries allowed" test "$(questions "$T/p4.img")" = 2

"$GELI" suspend p1.img
run setsid -w "$GELI" resume "$T/p1.img"
check "resume without a terminal: from the cache, no question" \
	eval 'test $rc = 0 && ! "$GELI" status -s p1.img | grep -q SUSPENDED && test "$(questions "$T/p1.img")" = 1'

# setkey of a detached provider: its old passphrase through the agent (the
# cached ones fail first), the new one from a file.
passfile "$T/delta" "delta passphrase"
env setsid -w "$GELI" setkey -n 0 -i 1000 -J "$T/delta" "$T/p4.img" </dev/null >/dev/null 2>"$T/a.err" &
apid=$!
check "setkey without a terminal: the agent asks for the old passphrase" \
	answer "$T/p4.img" 3 "gamma passphrase"
wait "$apid"; rc=$?
check "... and the new one opens the provider" \
	eval 'test $rc = 0 && "$GELI" attach -j "$T/delta" "$T/p4.img" && attached p4.img'
"$GELI" detach p4.img

run env GELI_ASKPASS=tty setsid -w "$GELI" attach "$T/p4.img"
check "GELI_ASKPASS=tty: no terminal, no agent" \
	eval 'test $rc = 1 && grep -q "^geli: Cannot read passphrase: " "$T/err"'
"$GELI" detach p1.img p2.img p3.img
done_testing
