#!/bin/bash
# The drain on SIGINT: every event written to the rings before the stop is delivered or counted
# lost. A program makes exactly N getppid calls and exits; only then is perfscope stopped.
# shellcheck source=tests/cli/tap.sh
source "$(dirname "$0")/tap.sh"
P=${PERFSCOPE:?}
W=${BUILD_ROOT:?}/tests/mt_workload

plan 4
if ! need_root; then
	skip_all "needs root (tracepoints)"
fi
if ! "$P" trace -e syscalls:sys_enter_getppid --duration 0.01 >/dev/null 2>&1; then
	skip_all "no syscalls:sys_enter_getppid tracepoint on this kernel"
fi
TMPD=$(mktemp -d)
PS=
cleanup() {
	[ -n "$PS" ] && kill -9 "$PS" 2>/dev/null
	rm -rf "$TMPD"
}
trap cleanup EXIT
COMM=drain$$
cp "$W" "$TMPD/$COMM"

# lost_in FILE: the events stderr FILE reports lost, summed
lost_in() { sed -n 's/.*: [0-9]* events, \([0-9]*\) lost$/\1/p' "$1" | awk '{ n += $1 } END { print n + 0 }'; }

# drain DESC N FORMAT ARGS...: perfscope trace of the program's getppid calls (a kernel filter on
# its comm), started with -v; the program runs once the running line is there and makes N calls;
# SIGINT after it exited. Every call is a line of output or counted lost, and exit 0.
drain() {
	local d=$1 n=$2 seen lost rc
	shift 2
	# not the last run's files: its running line would be taken for this one's (wait_running)
	rm -f "$TMPD/out" "$TMPD/err"
	"$P" trace -v -e "syscalls:sys_enter_getppid/comm==\"$COMM\"/" "$@" >"$TMPD/out" 2>"$TMPD/err" &
	PS=$!
	if ! wait_running "$TMPD/err" "$PS"; then
		fail "$d: no running line: $(head -3 "$TMPD/err" | tr '\n' '|')"
		fail "$d: exit"
		return
	fi
	"$TMPD/$COMM" getppid "$n"
	kill -INT "$PS"
	wait "$PS"
	rc=$?
	PS=
	seen=$(grep -c 'sys_enter_getppid' "$TMPD/out")
	lost=$(lost_in "$TMPD/err")
	diag "$d: $seen seen, $lost lost of $n"
	check "$d: exit 0 on SIGINT (exit $rc)" test "$rc" -eq 0
	if [ "$lost" -eq 0 ]; then
		check "$d: nothing lost, all $n calls seen ($seen)" test "$seen" -eq "$n"
	else
		# Every call is accounted for. (Not "= N": under ASan the reported loss once exceeded
		# the calls missing, 63092 seen + 136922 lost of 200000; an open question, see git log.)
		[ $((seen + lost)) -ne "$n" ] && diag "$d: seen + lost - calls = $((seen + lost - n))"
		check "$d: seen $seen <= the $n calls <= seen + lost $lost" \
			test "$seen" -le "$n" -a $((seen + lost)) -ge "$n"
	fi
}

# 1-2: a few calls, far below a ring's size: all of them are still in the rings at the stop
drain "1000 calls" 1000
# 3-4: more than the rings hold: read while they run, the rest drained or counted lost
drain "200000 calls, -m 4" 200000 -m 4

done_testing
