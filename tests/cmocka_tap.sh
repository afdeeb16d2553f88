#!/bin/sh
# Runs a cmocka test in TAP mode, rewriting its skips ("not ok N # SKIP name") into TAP's "ok N - name # SKIP".
set -u
tmp=$(mktemp) || exit 1
CMOCKA_MESSAGE_OUTPUT=TAP "$@" >"$tmp"
rc=$?
sed -E 's/^not ok ([0-9]+) # SKIP (.*)$/ok \1 - \2 # SKIP/' "$tmp"
rm -f "$tmp"
exit $rc
