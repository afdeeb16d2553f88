#!/bin/bash
# Whole lines on output: a traced command that prints to the stdout it shares with perfscope puts
# its lines between perfscope's, never inside one (every write ends on a newline, at most PIPE_BUF
# to a pipe). Every line of the pipe is a whole trace line or exactly one of the command's, and
# every getppid call is a line or counted lost.
# shellcheck source=tests/cli/tap.sh
source "$(dirname "$0")/tap.sh"
P=${PERFSCOPE:?}
L=${BUILD_ROOT:?}/tests/lines_prog
N=200000 # getppid calls of a run
EVERY=37 # the command prints a line of its own every EVERY calls
RUNS=3

plan $((RUNS * 3 + 3))
if ! need_root; then
	skip_all "needs root (tracepoints)"
fi
if ! "$P" trace -e syscalls:sys_enter_getppid --duration 0.01 >/dev/null 2>&1; then
	skip_all "no syscalls:sys_enter_getppid tracepoint on this kernel"
fi
TMPD=$(mktemp -d)
trap 'rm -rf "$TMPD"' EXIT

# lost_in FILE: the events stderr FILE reports lost, summed
lost_in() { sed -n 's/.*: [0-9]* events, \([0-9]*\) lost$/\1/p' "$1" | awk '{ n += $1 } END { print n + 0 }'; }

# run DESC LINE_RE ARGS...: perfscope trace ARGS of lines_prog, piped into cat; every line is
# perfscope's (LINE_RE) or the command's own; the calls seen + lost = N.
run() {
	local d=$1 re=$2 rc seen lost bad own
	shift 2
	"$P" trace -e syscalls:sys_enter_getppid "$@" -- "$L" "$N" "$EVERY" 2>"$TMPD/err" | cat >"$TMPD/out"
	rc=${PIPESTATUS[0]}
	check "$d: exit 0 (exit $rc)" test "$rc" -eq 0
	bad=$(grep -Evc -e "$re" -e '^lines_prog [0-9]+$' "$TMPD/out")
	own=$(grep -Ec '^lines_prog [0-9]+$' "$TMPD/out")
	if [ "$bad" -ne 0 ]; then
		diag "$d: torn lines:"
		grep -Ev -e "$re" -e '^lines_prog [0-9]+$' "$TMPD/out" | head -3 | cut -c1-160 |
			while read -r l; do diag "  $l"; done
	fi
	check "$d: every line whole ($bad torn; $own of the command's own, of $((N / EVERY)))" \
		test "$bad" -eq 0 -a "$own" -eq $((N / EVERY))
	seen=$(grep -E -e "$re" "$TMPD/out" | grep -vc '^{"incomplete"')
	lost=$(lost_in "$TMPD/err")
	diag "$d: $seen seen, $lost lost of $N"
	if [ "$lost" -eq 0 ]; then
		check "$d: nothing lost, all $N calls seen ($seen)" test "$seen" -eq "$N"
	else
		# as in test_drain.sh: the kernel's lost count once exceeded the calls missing (here by
		# one under ASan: 147001 seen + 53000 lost of 200000), an open question
		[ $((seen + lost)) -ne "$N" ] && diag "$d: seen + lost - calls = $((seen + lost - N))"
		check "$d: seen $seen <= the $N calls <= seen + lost $lost" \
			test "$seen" -le "$N" -a $((seen + lost)) -ge "$N"
	fi
}

TEXT_RE='^ +lines_prog +[0-9]+/[0-9]+ \[[0-9]+\] [0-9]+\.[0-9]+: syscalls:sys_enter_getppid: $'
# an event per line; after a run that lost events, the stream's {"incomplete":{...}} last line
JSON_RE='^\{"time":[0-9]+,.*"event":"syscalls:sys_enter_getppid".*\}$|^\{"incomplete":\{.*\}\}$'
for i in $(seq "$RUNS"); do
	run "text, run $i" "$TEXT_RE"
done
run "--format json" "$JSON_RE" --format json

done_testing
