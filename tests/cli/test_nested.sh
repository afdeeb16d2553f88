#!/bin/bash
# CLI tests of `multi-trace --impl call` and `call-delay` on a known nesting: N rounds of sendto
# (the loopback's NET_RX softirq runs inside it, in the sending thread), recvfrom and getppid.
# shellcheck source=tests/cli/tap.sh
source "$(dirname "$0")/tap.sh"
P=${PERFSCOPE:?}
W=${BUILD_ROOT:?}/tests/mt_workload
N=40

plan 10
if ! need_root; then
	skip_all "needs root (tracepoints)"
fi
if ! "$P" trace -e syscalls:sys_enter_sendto --duration 0.01 >/dev/null 2>&1; then
	skip_all "no syscalls:sys_enter_sendto tracepoint on this kernel"
fi
TMPD=$(mktemp -d)
trap 'rm -rf "$TMPD"' EXIT
json_check() { python3 -c "$1" "$2"; }

EV=(-e syscalls:sys_enter_sendto,syscalls:sys_exit_sendto
	-e 'irq:softirq_entry/vec==3/,irq:softirq_exit/vec==3/'
	-e syscalls:sys_enter_recvfrom,syscalls:sys_exit_recvfrom
	-e syscalls:sys_enter_getppid,syscalls:sys_exit_getppid)

# 1-5: call-delay in JSON
run_report "$P" multi-trace "${EV[@]}" --impl call-delay --format json -- "$W" udp $N
check "call-delay: exit 0" test "$RC" -eq 0
check "the three system calls at the root, $N calls each, all paired" json_check "
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
c = {tuple(x['path']): x for x in o if 'call' in x}
r = [c.get((n,)) for n in ('sys_enter_sendto', 'sys_enter_recvfrom', 'sys_enter_getppid')]
sys.exit(not all(x and x['count'] == $N and x['entered'] == $N for x in r))" "$OUT"
check "the softirq nested in sendto, never in recvfrom or getppid" json_check "
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
c = {tuple(x['path']): x for x in o if 'call' in x}
s = c.get(('sys_enter_sendto', 'softirq_entry'))
bad = [p for p in c if len(p) > 1 and p[0] != 'sys_enter_sendto']
sys.exit(not (s and 1 <= s['count'] <= $N and s['depth'] == 1 and not bad))" "$OUT"
check "a nested call lasts no longer than its caller (max_ns, min_ns)" json_check "
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
c = {tuple(x['path']): x for x in o if 'call' in x}
s, p = c[('sys_enter_sendto', 'softirq_entry')], c[('sys_enter_sendto',)]
sys.exit(not (s['max_ns'] <= p['max_ns'] and all(k in p for k in ('p50_ns', 'p99_ns', 'mean_ns'))))" "$OUT"
check "outcomes per function: sendto paired $N, nothing unwound or without a start" json_check "
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
s = [x for x in o if x.get('pair') == 'sys_enter_sendto' and x.get('final')][0]
sys.exit(not (s['outcomes']['paired'] == $N and s['outcomes']['unwound'] == 0
  and s['outcomes']['no_start'] == 0))" "$OUT"

# 6-7: call in text: the tree
run_report "$P" multi-trace "${EV[@]}" --impl call -- "$W" udp $N
check "call: the tree, softirq_entry under sys_enter_sendto" \
	grep -A1 -E "^sys_enter_sendto +$N\$" "$OUT"
check "call: the nested line is indented with |-" grep -qE '^  \|- softirq_entry +[0-9]+$' "$OUT"

# 8: outliers (--than 1ns: every call) name the thread as their key, not the frame's number
run_report "$P" multi-trace "${EV[@]}" --impl call-delay --than 1ns --format json -- "$W" udp 5
check "call-delay --than: $((5 * 3)) or more outliers, each keyed by its thread" json_check "
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
out = [x for x in o if x.get('outlier')]
sys.exit(not (len(out) >= 15 and all(x['key'] == str(x['end']['tid']) for x in out)))" "$OUT"

# 9-10: usage errors
expect_rc "call: a group that is not ENTER,EXIT" 2 "$P" multi-trace \
	-e syscalls:sys_enter_getppid --impl call -- true
expect_rc "call: three events in a group" 2 "$P" multi-trace \
	-e syscalls:sys_enter_getppid,syscalls:sys_exit_getppid,syscalls:sys_enter_dup --impl call -- true

done_testing
