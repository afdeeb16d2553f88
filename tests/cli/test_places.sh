#!/bin/bash
# A profiler is 4 places: its source, its line in the profiler table, its man page and its test.
# What else names the profilers is checked against the table here, so that adding one and
# forgetting a place fails: the README shows it in use, a CLI test runs it, its page is installed.
# (perfscope.1's PROFILERS and SEE ALSO lists: test_man.sh.)
# shellcheck source=tests/cli/tap.sh
source "$(dirname "$0")/tap.sh"
P=${PERFSCOPE:?}
SRC=${SOURCE_ROOT:?}

plan 4
names=$("$P" help --table --format json | python3 -c '
import json, sys
print(" ".join(json.loads(l)["name"] for l in sys.stdin if l.strip()))')
n=$(wc -w <<<"$names")
check "the table lists the profilers ($n)" test "$n" -ge 17

# the README's examples: a line starting "perfscope NAME " for each
missing=
for name in $names; do
	grep -qE "^perfscope $name( |$)" "$SRC/README.md" || missing="$missing $name"
done
if [ -z "$missing" ]; then ok "README.md shows every profiler in use"; else
	fail "README.md has no 'perfscope NAME' example for:$missing"; fi

# a CLI test that runs it: "$P" NAME in tests/cli (a test of its own, or one it shares)
missing=
for name in $names; do
	grep -qE "\"\\\$P\" $name( |\$)|\\\$P $name( |\$)" "$SRC"/tests/cli/test_*.sh || missing="$missing $name"
done
if [ -z "$missing" ]; then ok "every profiler is run by a test in tests/cli"; else
	fail "no test in tests/cli runs:$missing"; fi

# its man page, installed: docs/man/meson.build names it
missing=
for name in $names; do
	grep -qE "'perfscope-$name\.[18]'" "$SRC/docs/man/meson.build" || missing="$missing $name"
done
if [ -z "$missing" ]; then ok "docs/man/meson.build installs every profiler's page"; else
	fail "docs/man/meson.build does not install the page of:$missing"; fi
