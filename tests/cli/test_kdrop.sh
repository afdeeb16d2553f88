#!/bin/bash
# CLI tests of the report of hits the kernel counted but dropped before its ring (common/kdrop.h):
# on a CPU that drops the events taken while it idles (some VM kernels do), a napping program's
# wakeups are reported as dropped by the kernel, in text and in multi-trace's JSON; on a CPU that
# delivers them, nothing is reported.
# shellcheck source=tests/cli/tap.sh
source "$(dirname "$0")/tap.sh"
P=${PERFSCOPE:?}
W=${BUILD_ROOT:?}/tests/mt_workload

plan 5
if ! need_root; then
	skip_all "needs root (tracepoints)"
fi
if ! "$P" trace -e sched:sched_wakeup --duration 0.01 >/dev/null 2>&1; then
	skip_all "no sched tracepoints on this kernel"
fi
TMPD=$(mktemp -d)
trap 'rm -rf "$TMPD"' EXIT
COMM=kdrop$$
cp "$W" "$TMPD/$COMM"
W=$TMPD/$COMM
WAKE="sched:sched_wakeup/comm==\"$COMM\"/"

# naps_on CPU: trace of 10 naps of the program pinned to CPU, that CPU only; stdout/stderr to OUT/ERR
naps_on() {
	run_capture "$P" trace -C "$1" -e "$WAKE" -- taskset -c "$1" "$W" naps 10 3
}
dropped_of() { sed -n 's/.*the kernel counted \([0-9]*\) hits on cpu .* never reached the ring.*/\1/p' "$1"; }

# 1-2: a CPU that delivers: all 10 wakeups, no drop reported (no false alarm)
IDLE_OK_CPU=$(idle_ok_cpu "$P" "$W")
if [ -n "$IDLE_OK_CPU" ]; then
	naps_on "$IDLE_OK_CPU"
	check "cpu $IDLE_OK_CPU delivers: 10 wakeups traced (exit $RC)" test "$(wc -l <"$OUT")" -eq 10
	check "cpu $IDLE_OK_CPU delivers: no drop reported" bash -c "! grep -q 'never reached the ring' '$ERR'"
else
	skip "no CPU here delivers the events taken while it idles"
	skip "no CPU here delivers the events taken while it idles"
fi

# 3-5: a CPU that drops: what was traced and what was reported dropped add up to the 10 wakeups
BAD=
for c in $(python3 -c 'import os; print(" ".join(map(str, sorted(os.sched_getaffinity(0)))))'); do
	naps_on "$c"
	if [ "$(wc -l <"$OUT")" -lt 10 ]; then
		BAD=$c
		break
	fi
done
if [ -z "$BAD" ]; then
	skip_all "every CPU here delivers the events taken while it idles: nothing is dropped to report"
fi
diag "cpu $BAD dropped wakeups: $(wc -l <"$OUT") traced; $(grep 'never reached' "$ERR")"
check "cpu $BAD drops: the drop is reported on stderr, naming the CPU" grep -q "hits on cpu $BAD that never reached the ring" "$ERR"
check "cpu $BAD drops: traced + reported dropped = the 10 wakeups" \
	test $(($(wc -l <"$OUT") + $(dropped_of "$ERR"))) -eq 10
run_capture "$P" multi-trace -C "$BAD" -e "$WAKE" -e "sched:sched_switch/next_comm==\"$COMM\"/" \
	--format json -- taskset -c "$BAD" "$W" naps 10 3
check "multi-trace JSON: the final line has kernel_dropped > 0 (exit $RC)" python3 -c '
import json, sys
f = [json.loads(l) for l in open(sys.argv[1]) if "outliers" in l]
sys.exit(not (f and f[-1]["kernel_dropped"] > 0))' "$OUT"
done_testing
