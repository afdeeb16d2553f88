#!/bin/bash
# CLI tests of `perfscope top`: sums per key on exact workloads (dd's bytes, getppid calls), the
# views by CPU, several events in one table, printkey=, --rows, JSON, and usage errors.
# shellcheck source=tests/cli/tap.sh
source "$(dirname "$0")/tap.sh"
P=${PERFSCOPE:?}
GEN=${BUILD_ROOT:?}/bench/gen_events
TP=syscalls:sys_enter_getppid

plan 17
if ! need_root; then
	skip_all "needs root (tracepoints)"
fi
if ! "$P" trace -e syscalls:sys_enter_write --duration 0.01 >/dev/null 2>&1; then
	skip_all "no syscalls tracepoints on this kernel"
fi

# 1-2: the issue's correctness test: dd's 1000 writes of 4096 bytes
run_report "$P" top -e 'syscalls:sys_enter_write//key=common_pid/top-by=count/' -- \
	dd if=/dev/zero of=/dev/null bs=4096 count=1000 status=none
check "dd: exit 0 (exit $RC)" test "$RC" -eq 0
if awk '$2 == "dd" { found = 1; if ($3 != 4096000 || $4 != 1000) bad = 1 } END { exit !(found && !bad) }' "$OUT"; then
	ok "dd's row: 4096000 bytes over 1000 events"
else fail "dd's row is not 4096000 / 1000"; sed 's/^/#   /' "$OUT" | head -5; fi

# 3-4: the default key (the pid), the default column (the event count), its comm
run_report "$P" top -e $TP -- "$GEN" -q getppid 300
check "default key and column: gen_events counted 300 times" \
	awk '$2 == "gen_events" && $3 == 300 && $4 == 300 { f = 1 } END { exit !f }' "$OUT"
check "the header names the key PID and the column by the event" \
	grep -qE '^ +PID COMM +sys_enter_getppid +EVENTS$' "$OUT"

# 5-6: top-add is shown, not sorted by; top-by sorts: two threads of different sums
run_report "$P" top -e "$TP//key=common_pid/top-by=1/top-add=2/alias=calls/" -- "$GEN" -q getppid 50
check "top-by=1 sums to 50, top-add=2 to 100, titled by alias and EXPR" \
	awk '/^ +PID/ { h = ($3 == "calls" && $4 == 2) } $2 == "gen_events" { r = ($3 == 50 && $4 == 100 && $5 == 50) } END { exit !(h && r) }' "$OUT"
run_report "$P" top -e "$TP//key=common_pid/top-by=common_pid/" -q -- bash -c "$GEN -q getppid 10; $GEN -q getppid 10 & wait"
check "rows are sorted by top-by, largest first" \
	awk '/^ +[0-9]+ / { if (prev != "" && $3 > prev) bad = 1; prev = $3; n++ } END { exit !(n >= 2 && !bad) }' "$OUT"

# 7: -k _cpu: a row per CPU, no name column
run_report "$P" top -e $TP -k _cpu -- taskset -c 0 "$GEN" -q getppid 100
check "-k _cpu: CPU 0 has the 100 calls" \
	awk '/^ +CPU +sys_enter_getppid/ { h = 1 } $1 == 0 && $2 == 100 { r = 1 } END { exit !(h && r) }' "$OUT"

# 8: two events in one table, a column each; key= means the same (the pid) on both
run_report "$P" top -e "$TP//key=common_pid/,syscalls:sys_exit_getppid//key=common_pid/top-by=1/alias=exits/" -- "$GEN" -q getppid 70
check "two events: 70 entries, 70 exits and 140 events in gen_events's row" \
	awk '$2 == "gen_events" && $3 == 70 && $4 == 70 && $5 == 140 { f = 1 } END { exit !f }' "$OUT"

# 9: printkey= and comm=
run_report "$P" top -e "$TP//key=common_pid/printkey=printf(\"pid-%d\", key)/comm=comm_get(common_pid)/" -- "$GEN" -q getppid 5
if grep -qE '^ *pid-[0-9]+ +gen_events +5 +5$' "$OUT"; then
	ok "printkey=printf(\"pid-%d\", key) shows pid-N; comm= names it"
else fail "printkey= / comm= row is not 'pid-N gen_events 5 5'"; sed 's/^/#   /' "$OUT" | head -5; fi

# 10: the name of a command that exited before its events were read, its COMM record in the other
# CPU's ring (top reads unordered): the command is reaped only after the drain, /proc names it
if [ "$(nproc)" -ge 2 ] && taskset -c 1 true 2>/dev/null; then
	run_report taskset -c 1 "$P" top -e "$TP//key=common_pid/comm=comm_get(common_pid)/" -- "$GEN" -c 0 -q getppid 5
	if grep -qE '^ *[0-9]+ +gen_events +5 +5$' "$OUT"; then
		ok "exec on CPU 1, events on CPU 0, gone before the read: still named gen_events"
	else fail "the command's row is not named gen_events"; sed 's/^/#   /' "$OUT" | head -5; fi
else
	skip "exec and events on different CPUs: needs CPUs 0 and 1"
fi

# 11: --only-comm hides the key
run_report "$P" top -e $TP --only-comm -- "$GEN" -q getppid 5
check "--only-comm: no PID column" awk 'NR == 2 && $1 == "COMM" { f = 1 } END { exit !f }' "$OUT"

# 12-14: JSON: one object per row, with key, name, columns and events
run_report "$P" top -e "$TP//top-by=1/alias=n/" --format json -- "$GEN" -q getppid 40
check "json: the row of gen_events has n=40 and events=40" \
	python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
r = [x for x in rows if x["name"] == "gen_events"]
sys.exit(not (r and r[0]["columns"]["n"] == 40 and r[0]["events"] == 40 and r[0]["final"] and isinstance(r[0]["key"], int)))' "$OUT"
run_report "$P" top -e sched:sched_switch -k _cpu -i 100 --duration 0.55 --format json
check "json with -i: refreshes, then final rows (exit $RC)" \
	python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
rows = [r for r in rows if "incomplete" not in r]  # a note of missing events, not a row
sys.exit(not (any(not r.get("final") for r in rows) and any(r.get("final") for r in rows) and all(r["name"] is None for r in rows)))' "$OUT"
run_report "$P" top -e sched:sched_switch -i 100 --rows 1 --duration 0.55
check "--rows 1: each refresh shows one row" \
	awk '/perfscope top:.*rows/ { ref++; n = 0; if (/top 1 shown/) cut++ } /^ +[0-9]+ / && ref && !fin { if (++n > 1) bad = 1 }
		/totals:|since the last interval:/ { fin = 1 } END { exit !(cut >= 1 && !bad) }' "$OUT"

# 15-17: usage errors point at the fault
run_report "$P" top -e "$TP//key=no_such_field/"
check "key=no_such_field: exit 2 with the event's fields (exit $RC)" \
	bash -c "[ $RC -eq 2 ] && grep -q 'common_pid' '$ERR'"
run_report "$P" top -e $TP -k 'nope +'
check "-k with a syntax error: exit 2 (exit $RC)" test "$RC" -eq 2
run_report "$P" top -e "$TP//num=1/"
check "num= is not top's: exit 2 naming it (exit $RC)" bash -c "[ $RC -eq 2 ] && grep -q num '$ERR'"
done_testing
