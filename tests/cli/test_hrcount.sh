#!/bin/bash
# hrcount on a known count: a program pinned to one CPU makes N close(fd >= 1000000) calls while
# hrcount counts them in 1 ms slots: the slots of every interval add up to N, as do the run's
# histogram ("events") and the events the skeleton says it saw; the program's CPU holds them all.
# A COMMAND bounds the run only (perf-prof takes none): the CPUs are counted whole.
# shellcheck source=tests/cli/tap.sh
source "$(dirname "$0")/tap.sh"
P=${PERFSCOPE:?}
MW=${BUILD_ROOT:?}/tests/mt_workload
N=20000

plan 8
if ! need_root; then
	skip_all "needs root (tracepoints on whole CPUs)"
fi
if ! "$P" trace -e syscalls:sys_enter_close --duration 0.01 >/dev/null 2>&1; then
	skip_all "no syscalls:sys_enter_close tracepoint on this kernel"
fi
read -r -a CPUS <<<"$(usable_cpus)"
C=${CPUS[-1]}
json_check() { python3 -c "$1" "$2"; }
TMPD=$(mktemp -d)
trap 'rm -rf "$TMPD"' EXIT

# 1-5: summed rows
"$P" hrcount -v -e 'syscalls:sys_enter_close/fd>=1000000/' --period 1ms -i 200 --format json \
	>"$TMPD/out" 2>"$TMPD/err" &
HP=$!
if wait_running "$TMPD/err" "$HP"; then
	taskset -c "$C" "$MW" closedup $N
	kill -INT "$HP"
fi
wait "$HP"
RC=$?
check "hrcount: exit 0" test "$RC" -eq 0
check "the intervals' slots add up to the $N calls" json_check "
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
r = [x for x in o if 'slots' in x and isinstance(x['slots'], list)]
t = sum(sum(x['slots']) for x in r)
ok = t == $N and all(sum(x['slots']) == x['total'] for x in r)
if not ok: print('#', t)
sys.exit(not ok)" "$TMPD/out"
check "the run's histogram counts $N events in its slots, none lost" json_check "
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
f = [x for x in o if x.get('final')][0]
sys.exit(not (f['events'] == $N and f['slots_lost'] == 0 and f['count'] > 0 and f['max'] >= 1))" "$TMPD/out"
check "the skeleton saw $N events, none lost" grep -q "sys_enter_close: $N events, 0 lost\$" "$TMPD/err"
check "many slots of 1 ms (the calls spread over them)" json_check "
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
n = sum(1 for x in o if 'slots' in x and isinstance(x['slots'], list) for v in x['slots'] if v)
sys.exit(not n >= 2)" "$TMPD/out"

# 6-7: --perins: the program's CPU holds every call
rm -f "$TMPD/err"
"$P" hrcount -v -e 'syscalls:sys_enter_close/fd>=1000000/' --period 5ms -i 300 --perins \
	--format json >"$TMPD/out" 2>"$TMPD/err" &
HP=$!
if wait_running "$TMPD/err" "$HP"; then
	taskset -c "$C" "$MW" closedup $N
	kill -INT "$HP"
fi
wait "$HP"
check "--perins: exit 0" test "$?" -eq 0
check "--perins: CPU $C's slots hold the $N calls, the other CPUs' none" json_check "
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
r = [x for x in o if 'slots' in x and isinstance(x['slots'], list)]
mine = sum(sum(x['slots']) for x in r if x['cpu'] == $C)
other = sum(sum(x['slots']) for x in r if x['cpu'] != $C)
sys.exit(not (mine == $N and other == 0))" "$TMPD/out"
# 8: a COMMAND bounds the run, the CPU is counted whole: the command's calls, all of them
run_capture "$P" hrcount -e 'syscalls:sys_enter_close/fd>=1000000/' -C "$C" --period 5ms --format json \
	-- taskset -c "$C" "$MW" closedup $N
check "-- COMMAND: exit 0, the run ends with it, its $N calls counted" json_check "
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
f = [x for x in o if x.get('final')]
sys.exit(not (f and f[0]['events'] == $N))" "$OUT"
done_testing
