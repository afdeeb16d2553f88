#!/bin/bash
# CLI tests of `perfscope expr` (an expression's type and its value per event, on exact workloads)
# and of filters the kernel refuses, run in user space by any streaming profiler.
# shellcheck source=tests/cli/tap.sh
source "$(dirname "$0")/tap.sh"
P=${PERFSCOPE:?}
GEN=${BUILD_ROOT:?}/bench/gen_events
TP=syscalls:sys_enter_getppid

plan 38
if ! need_root; then
	skip_all "needs root (tracepoints)"
fi
if [ ! -x "$GEN" ]; then
	skip_all "bench/gen_events not built"
fi
if ! "$P" trace -e $TP --duration 0.01 >/dev/null 2>&1; then
	skip_all "no $TP tracepoint on this kernel"
fi

# 1-3: each event, then its value; the value is the event's own (common_pid is the pid shown)
run_capture "$P" expr -e $TP 'common_pid + 1' -- "$GEN" -q getppid 200
check "200 calls: 200 results (exit $RC)" test "$RC" -eq 0 -a "$(grep -c '^result: ' "$OUT")" -eq 200
if awk '/sys_enter_getppid/ { split($2, a, "/"); want = a[1] + 1; next }
	/^result: / { if ($2 != want) bad++; n++ }
	END { exit !(n == 200 && !bad) }' "$OUT"; then ok "each result is that event's common_pid + 1, in decimal"
else fail "results do not follow their events"; head -4 "$OUT" | sed 's/^/#   /'; fi
check "its type on stderr: long" grep -q "^perfscope expr: common_pid + 1 on $TP is of type long$" "$ERR"

# 4: perf-prof's form, options after the expression
run_capture "$P" expr -e $TP 'common_pid > 0' -N 5 -q -- "$GEN" -q getppid 100
check "options after EXPR (-N 5 -q): 5 results of 1 (exit $RC)" \
	test "$RC" -eq 0 -a "$(grep -c '^result: 1 0x1 (int)$' "$OUT")" -eq 5

# 5-6: strings from functions, and printf
run_capture "$P" expr -e raw_syscalls:sys_enter 'syscall_name(id)' -- "$GEN" -q getppid 50
check "syscall_name(id): 50 'getppid' among the command's calls" \
	test "$(grep -c '^result: "getppid" (string)$' "$OUT")" -eq 50
run_capture "$P" expr -e $TP 'printf("nr=%d comm=%s", __syscall_nr, comm_get(common_pid))' \
	-- "$GEN" -q getppid 3
check "printf with comm_get: 3 results 'nr=110 comm=gen_events'" \
	test "$(grep -c '^result: "nr=110 comm=gen_events" (string)$' "$OUT")" -eq 3

# 7: string comparison and glob on char arrays, whatever the kernel says of char's sign
run_capture "$P" expr -e sched:sched_switch 'prev_comm ~ "gen_ev*" || next_comm == "gen_events"' \
	-- "$GEN" -q pingpong 100
n=$(grep -c '^result: ' "$OUT")
check "sched_switch of the command: every one of $n says 1" \
	test "$n" -gt 0 -a "$(grep -c '^result: 1 0x1 (int)$' "$OUT")" -eq "$n"

# 8: JSON: trace's object with type and value
run_capture "$P" expr --format json -e $TP 'common_pid * 2' -- "$GEN" -q getppid 20
if python3 -c '
import json, sys
n = 0
for line in open(sys.argv[1]):
    o = json.loads(line)
    assert o["type"] == "long" and o["value"] == 2 * o["fields"]["common_pid"], o
    n += 1
assert n == 20, n
' "$OUT"; then ok "JSON: 20 objects, type long, value 2 * common_pid"; else
	fail "JSON output"; head -2 "$OUT" | sed 's/^/#   /'; fi

# 9-10: a run error per event, said on each and counted at the end
run_capture "$P" expr -e $TP 'common_pid / (__syscall_nr - 110)' -- "$GEN" -q getppid 7
check "division by zero: 7 'result: error: division by zero'" \
	test "$(grep -c '^result: error: division by zero$' "$OUT")" -eq 7
check "... and counted at the end" grep -q "$TP: 7 events where it could not run (division by zero)" "$ERR"

# 11-12: help lists the names
run_capture "$P" expr -e $TP help
check "help: exit 0 (exit $RC)" test "$RC" -eq 0
check "help: the fields and the sample's names" \
	grep -q "^$TP has fields: common_type, .*__syscall_nr" "$OUT"

# 13-19: expressions that do not compile: usage errors that point at the byte
run_capture "$P" expr -e $TP 'common_pid + __syscal_nr'
check "unknown name: exit 2 (exit $RC)" test "$RC" -eq 2
check "unknown name: a suggestion" grep -q "has no field '__syscal_nr'; did you mean '__syscall_nr'?" "$ERR"
check "unknown name: a caret under it" grep -qx "$(printf '%15s^')" "$ERR"
check "unknown name: the fields" grep -q "has fields: common_type, common_flags" "$ERR"
run_capture "$P" expr -e sched:sched_switch 'prev_pid + prev_comm'
check "type error: exit 2, names the operand" \
	test "$RC" -eq 2 -a -n "$(grep "the right operand of '+' is a string" "$ERR")"
expect_rc "no expression" 2 "$P" expr -e $TP
expect_rc "two expressions" 2 "$P" expr -e $TP pid 1

# 20-27: a filter the kernel refuses (a field against a field) runs in user space
run_capture "$P" trace -e "$TP/common_pid > __syscall_nr/" -- "$GEN" -q getppid 2000
check "kept by the user-space filter: all 2000 (exit $RC)" \
	test "$RC" -eq 0 -a "$(grep -c sys_enter_getppid "$OUT")" -eq 2000
check "said once, with the kernel's reason" \
	test "$(grep -c "the kernel refuses the filter on $TP (.*); it runs in user space instead" "$ERR")" -eq 1
check "counted at the end: kept 2000 of 2000" \
	grep -q "^perfscope trace: $TP: the user-space filter kept 2000 of 2000 events (0 dropped)$" "$ERR"
run_capture "$P" trace -e "$TP/common_pid < __syscall_nr/" -- "$GEN" -q getppid 2000
check "dropped by the user-space filter: none printed (exit $RC)" test "$RC" -eq 0 -a ! -s "$OUT"
check "counted at the end: kept 0 of 2000, 2000 dropped" \
	grep -q "^perfscope trace: $TP: the user-space filter kept 0 of 2000 events (2000 dropped)$" "$ERR"
run_capture "$P" trace -e "$TP/(common_pid & 1) == (__syscall_nr & 1) || common_pid >= 0/" -N 10 \
	-- "$GEN" -q getppid 1000
check "-N counts the events the filter kept: 10 (exit $RC)" \
	test "$RC" -eq 0 -a "$(grep -c sys_enter_getppid "$OUT")" -eq 10
run_capture "$P" expr -e "$TP/common_pid < __syscall_nr/" common_pid -- "$GEN" -q getppid 100
check "expr takes a user-space filter too: no result" test "$RC" -eq 0 -a ! -s "$OUT"
run_capture "$P" trace -q -e "$TP/common_pid > __syscall_nr/" -- "$GEN" -q getppid 10
check "-q: neither the notice nor the count" test -z "$(grep 'user.space' "$ERR")"

# 28-31: a filter neither the kernel nor the language takes stays a usage error
run_capture "$P" trace -e "$TP/common_pid > __syscal_nr/" -- true
check "neither takes it: exit 2 (exit $RC)" test "$RC" -eq 2
check "... both reasons, the expression's with a suggestion" \
	grep -q "nor can it run in user space: sys_enter_getppid has no field '__syscal_nr'; did you mean '__syscall_nr'?" "$ERR"
check "... and the fields" grep -q "has fields: common_type" "$ERR"
run_capture "$P" stat -e "$TP/common_pid > __syscall_nr/" -- true
check "stat counts in the kernel: a refused filter stays an error (exit $RC)" \
	test "$RC" -eq 2 -a -n "$(grep "counts in the kernel" "$ERR")"

# 32-34: EXPR ATTRs are checked the same way (expr has none; trace's ATTRs are its own)
run_capture "$P" expr -e "$TP//key=common_pid/" common_pid -- true
check "an ATTR expr gives no meaning to: exit 2 (exit $RC)" test "$RC" -eq 2
run_capture "$P" expr -e page-faults '_cpu >= 0' -N 3 -- "$GEN" -q getppid 10
check "a software event: the sample's names work (exit $RC)" \
	test "$RC" -eq 0 -a "$(grep -c '^result: 1 0x1 (int)$' "$OUT")" -eq 3
run_capture "$P" expr -e page-faults 'common_pid'
check "a software event has no fields: said so (exit $RC)" \
	test "$RC" -eq 2 -a -n "$(grep "not a tracepoint" "$ERR")"
# perf-prof's pointer forms on the command's own exit (comm "gen_events", pid its pid): a pointer
# into the event is its offset in the record, read inside the record only
EX=sched:sched_process_exit
run_capture "$P" expr -e $EX '*(unsigned int *)&pid == pid' -- "$GEN" -q getppid 1
check "*(unsigned int *)&pid is pid (exit $RC)" grep -q '^result: 1 0x1 (int)$' "$OUT"
run_capture "$P" expr -e $EX '*(unsigned char *)((unsigned int *)comm + 2)' -- "$GEN" -q getppid 1
check "(unsigned int *)comm + 2 is 8 bytes on: gen_events[8] = 't' (116)" \
	grep -q '^result: 116 0x74 (unsigned char)$' "$OUT"
run_capture "$P" expr -e $EX '(unsigned int *)comm' -- "$GEN" -q getppid 1
check "(unsigned int *)comm: a pointer, its type said" \
	grep -q "^perfscope expr: (unsigned int \*)comm on $EX is of type unsigned int \*$" "$ERR"
expect_rc "'*' of a number: usage error" 2 "$P" expr -e $EX '*pid' -- true

done_testing
