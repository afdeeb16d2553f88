#!/bin/bash
# CLI tests of `perfscope trigger --latency`: nanosleep(2) latencies that jump from 1 ms to 30 ms on
# CPU 1 fire one capture of CPU 1 whose JSON line names the latency condition and its measured
# value; quiet 1 ms sleeps fire none; bad specs are usage errors that say what is wrong.
# shellcheck source=tests/cli/tap.sh
source "$(dirname "$0")/tap.sh"
P=${PERFSCOPE:?}
SCALE=1
[ "${B_SANITIZE:-none}" != none ] && SCALE=3
ENTER='syscalls:sys_enter_nanosleep//key=common_pid/'
EXIT='syscalls:sys_exit_nanosleep//key=common_pid/'
SPEC="$ENTER,$EXIT>20ms"
COND='latency sys_enter_nanosleep->sys_exit_nanosleep>20ms'

plan 18
TMP=$(mktemp -d)
PIDS=()
cleanup() {
	local pid
	for pid in "${PIDS[@]}"; do kill -9 "$pid" 2>/dev/null; done
	[ -n "${KEEP_TMP:-}" ] || rm -rf "$TMP"
}
trap cleanup EXIT

# 1: usage, before anything needs root
expect_rc "--latency without '>T': usage error" 2 "$P" trigger --latency sched:sched_switch
check "... saying the form START,END>THRESHOLD" grep -q "START,END>THRESHOLD" "$ERR"

if ! need_root; then
	skip_all "needs root (tracepoints, system-wide sampling)"
fi
if [ ! -d /sys/kernel/tracing/events/syscalls/sys_enter_nanosleep ] &&
	[ ! -d /sys/kernel/debug/tracing/events/syscalls/sys_enter_nanosleep ]; then
	"$P" list >/dev/null 2>&1 # mounts tracefs when it is missing
fi

# 3-10: bad specs: exit 2 and a message that says what is wrong
expect_rc "one event only: usage error" 2 "$P" trigger --latency "$ENTER>20ms" -o "$TMP/x"
check "... asking for exactly two events" grep -q "exactly two events" "$ERR"
expect_rc "a threshold that is no time: usage error" 2 "$P" trigger --latency "$ENTER,$EXIT>soon" -o "$TMP/x"
check "... saying the threshold must be a time" grep -q "threshold after '>' must be a time" "$ERR"
expect_rc "key= naming no field: usage error" 2 "$P" trigger \
	--latency "syscalls:sys_enter_nanosleep//key=nosuch/,$EXIT>20ms" -o "$TMP/x"
check "... naming the field and listing the event's fields" \
	sh -c "grep -q \"no field 'nosuch'\" '$ERR' && grep -q 'common_pid' '$ERR'"
expect_rc "an unknown event: usage error" 2 "$P" trigger \
	--latency "syscalls:sys_enter_nosuch,$EXIT>20ms" -o "$TMP/x"
check "... naming it" grep -q "sys_enter_nosuch" "$ERR"

if [ "$(nproc)" -lt 2 ] || ! taskset -c 1 true 2>/dev/null; then
	skip_all "needs CPU 1 (taskset -c 1)"
fi

# The workload: nanosleep(2) itself (glibc's nanosleep() is clock_nanosleep(2)), for each
# MS:SECONDS argument sleeps of MS milliseconds for SECONDS.
cat >"$TMP/w.c" <<'C'
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		double ms = atof(argv[i]), secs = atof(strchr(argv[i], ':') + 1);
		struct timespec ts = { 0, (long)(ms * 1e6) }, a, b;

		clock_gettime(CLOCK_MONOTONIC, &a);
		do {
			syscall(SYS_nanosleep, &ts, NULL);
			clock_gettime(CLOCK_MONOTONIC, &b);
		} while ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9 < secs);
	}
	return 0;
}
C
if ! ${CC:-cc} -O1 -o "$TMP/w" "$TMP/w.c" 2>"$TMP/cc.err"; then
	sed 's/^/#   /' "$TMP/cc.err" | head -5
	skip_all "cannot compile the workload"
fi

# run_trigger OUT ERR SECONDS ARGS...: the issue's command line, stopped after SECONDS at most
run_trigger() {
	local out=$1 err=$2 secs=$3
	shift 3
	# -C 1: the workload's CPU only, so that another process's sleeps elsewhere cannot fire
	"$P" trigger --latency "$SPEC" --for 1 --capture 1 --max 1 --format json -C 1 \
		--duration $((secs * SCALE)) "$@" >"$out" 2>"$err"
}

# 11-12: quiet sleeps (1 ms on CPU 1 for 3 s): no capture. The machine is shared: a capture of
# another CPU is another process's nanosleep, not this one's.
taskset -c 1 "$TMP/w" 1:$((3 * SCALE)) &
PIDS+=($!)
run_trigger "$TMP/q.out" "$TMP/q.err" 3 -o "$TMP/quiet"
RC=$?
check "quiet sleeps: a clean stop at --duration (exit $RC)" test "$RC" -eq 0
if ! grep -q '"capture"' "$TMP/q.out"; then
	ok "quiet sleeps of 1 ms: no capture"
elif ! grep '"capture"' "$TMP/q.out" | grep -q '"cpu":1,'; then
	skip "another process's nanosleep fired a capture of another CPU: $(grep '"capture"' "$TMP/q.out" | head -1)"
else
	fail "quiet sleeps of 1 ms: a capture of CPU 1"
	sed 's/^/#   /' "$TMP/q.out" | tail -3
fi

# 13-16: sleeps of 1 ms for 2 s, then of 30 ms for 3 s, on CPU 1: one capture of CPU 1
D=$TMP/cap
taskset -c 1 "$TMP/w" 1:2 30:$((3 * SCALE)) &
PIDS+=($!)
run_trigger "$TMP/out" "$TMP/err" 12 -o "$D"
RC=$?
LINE=$(grep '"capture"' "$TMP/out")
diag "$LINE"
check "latencies of 30 ms for 3 s: one capture, then --max 1 stops it (exit $RC)" \
	test "$RC" -eq 0 -a "$(grep -c '"capture"' "$TMP/out")" -eq 1
check "it is CPU 1's, names the latency condition and a value above 20 (ms)" \
	awk -v l="$LINE" -v c="\"condition\":\"$COND\"" 'BEGIN { exit !(index(l, c) && l ~ /"cpu":1,/ &&
		match(l, /"value":[0-9.]+/) && substr(l, RSTART + 8, RLENGTH - 8) + 0 > 20 &&
		l ~ /"threshold":20,/) }'
FOLDED=$(sed -n 's/.*"files":\["\([^"]*\.folded\)".*/\1/p' <<<"$LINE")
# (the folded file may be empty: a sleeper on an otherwise idle CPU 1 gives no CPU samples)
check "its files are written, named by the condition and the CPU" \
	sh -c "test -f '$FOLDED' && test -s '${FOLDED%.folded}.svg' && basename '$FOLDED' | grep -q '^trigger-.*-lat-sys_exit_nanosleep-cpu1.folded$'"
check "the end report counts the pairs and those above the threshold" \
	grep -qE "$COND: [1-9][0-9]* pairs, [1-9][0-9]* above the threshold" "$TMP/err"

# 17-18: latencies longer than --period (500 ms sleeps of a COMMAND, over 300 ms): periods with no
# end keep the last latency seen, so the run is not broken between two ends, and it fires
"$P" trigger --latency "syscalls:sys_enter_nanosleep,syscalls:sys_exit_nanosleep>300ms" \
	--for 1 --capture 0.5 --max 1 --format json -o "$TMP/long" -- "$TMP/w" 1:1 500:$((4 * SCALE)) \
	>"$TMP/l.out" 2>"$TMP/l.err"
RC=$?
LINE=$(grep '"capture"' "$TMP/l.out")
diag "$LINE"
check "sleeps of 500 ms of a COMMAND: exit 0 (exit $RC), one capture" \
	test "$RC" -eq 0 -a "$(grep -c '"capture"' "$TMP/l.out")" -eq 1
check "... of the process, its value above 300 (ms)" \
	awk -v l="$LINE" 'BEGIN { exit !(l ~ /"cpu":-1,"pid":[0-9]+,/ &&
		match(l, /"value":[0-9.]+/) && substr(l, RSTART + 8, RLENGTH - 8) + 0 > 300) }'

done_testing
