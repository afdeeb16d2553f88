#!/bin/bash
# perf-prof's names for what perfscope does under others: nested-trace (multi-trace --impl
# call-delay) on a known nesting (N sendto, the loopback's NET_RX softirq inside each), kmemprof
# (--impl kmemprof) on a program touching N fresh pages, event-care on N known system calls.
# shellcheck source=tests/cli/tap.sh
source "$(dirname "$0")/tap.sh"
P=${PERFSCOPE:?}
MW=${BUILD_ROOT:?}/tests/mt_workload
W=${WORKLOAD:?}
N=40
NP=3000

plan 12
if ! need_root; then
	skip_all "needs root (tracepoints)"
fi
if ! "$P" trace -e syscalls:sys_enter_sendto --duration 0.01 >/dev/null 2>&1; then
	skip_all "no syscalls:sys_enter_sendto tracepoint on this kernel"
fi
json_check() { python3 -c "$1" "$2"; }

# 1-3: nested-trace, perf-prof's form (-e E,E_ret per function, --impl call-delay)
run_report "$P" nested-trace -e syscalls:sys_enter_sendto,syscalls:sys_exit_sendto \
	-e 'irq:softirq_entry/vec==3/,irq:softirq_exit/vec==3/' --impl call-delay --format json \
	-- "$MW" udp $N
check "nested-trace --impl call-delay: exit 0" test "$RC" -eq 0
check "nested-trace: sendto $N calls at the root, the softirq nested in it" json_check "
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
c = {tuple(x['path']): x for x in o if 'call' in x}
r, s = c.get(('sys_enter_sendto',)), c.get(('sys_enter_sendto', 'softirq_entry'))
sys.exit(not (r and r['count'] == $N and s and 1 <= s['count'] <= $N))" "$OUT"
# the default impl (perf-prof's delay) is each function's time: the same tree and rows
run_report "$P" nested-trace -e syscalls:sys_enter_sendto,syscalls:sys_exit_sendto -- "$MW" udp $N
check "nested-trace (default --impl delay): a row of $N sendto calls" \
	grep -qE "^sys_enter_sendto +$N " "$OUT"

# 4-5: the names multi-trace's other implementations have are refused with the way to them
expect_rc "nested-trace --impl pair: a usage error" 2 "$P" nested-trace -e a:b,c:d --impl pair
check "  ... naming multi-trace" grep -q "multi-trace" "$ERR"

# 6-8: kmemprof, perf-prof's page form (key=pfn on this kernel): the N pages the program touches
# are allocated in its context
if [ -d /sys/kernel/tracing/events/kmem/mm_page_alloc ]; then
	run_report "$P" kmemprof -e 'kmem:mm_page_alloc//size=4096<<order/key=pfn/stack/' \
		-e 'kmem:mm_page_free//key=pfn/' -m 256 --order --format json -- "$W" faults $NP
	check "kmemprof: exit 0" test "$RC" -eq 0
	check "kmemprof: at least $NP pages allocated, bytes = 4 KiB per order-0 page or more" json_check "
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
t = [x for x in o if x.get('pair') and 'outcomes' in x][0]
sys.exit(not ($NP <= t['alloc_count'] < $NP + 3000 and t['alloc_bytes'] >= 4096 * t['alloc_count']))" "$OUT"
	check "kmemprof: freed = paired, not freed = allocated - freed" json_check "
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
t = [x for x in o if x.get('pair') and 'outcomes' in x][0]
sys.exit(not (t['free_count'] == t['outcomes']['paired'] and t['count'] == t['alloc_count'] - t['free_count']))" "$OUT"
else
	for _ in 1 2 3; do skip "no kmem:mm_page_alloc tracepoint"; done
fi
expect_rc "kmemprof --impl delay: a usage error" 2 "$P" kmemprof -e a:b -e c:d --impl delay

# 10-12: event-care: N getppid calls of a program (never sanitized: the runtime calls getppid), all seen, none lost or out of order
run_report "$P" event-care -e syscalls:sys_enter_getppid --format json -- "$MW" getppid 500
check "event-care: exit 0" test "$RC" -eq 0
check "event-care: 500 getppid seen, 0 lost, 0 out of order" json_check "
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
e = [x for x in o if x.get('event') == 'syscalls:sys_enter_getppid'][0]
sys.exit(not (e['seen'] == 500 and e['lost'] == 0 and e['out_of_order'] == 0))" "$OUT"
run_report "$P" event-care -e syscalls:sys_enter_getppid -- "$MW" getppid 500
check "event-care text: the event's line and the skeleton's loss line" sh -c \
	"grep -q 'syscalls:sys_enter_getppid: 500 events, 0 lost, 0 out of order' '$OUT' && grep -q 'sys_enter_getppid: 500 events, 0 lost' '$ERR'"
done_testing
