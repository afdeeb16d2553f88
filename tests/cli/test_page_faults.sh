#!/bin/bash
# page-faults on a program that touches N fresh pages: N faults at main, on N consecutive pages,
# with the stack that reaches main (-g), and the same N in JSON.
# shellcheck source=tests/cli/tap.sh
source "$(dirname "$0")/tap.sh"
P=${PERFSCOPE:?}
W=${BUILD_ROOT:?}/tests/mt_workload # never sanitized: its faults are its own
N=500

plan 7
if ! need_root; then
	skip_all "needs root (page faults of a command's kernel side)"
fi
json_check() { python3 -c "$1" "$2"; }

run_capture "$P" page-faults --format json -- "$W" faults $N
check "page-faults --format json: exit 0" test "$RC" -eq 0
check "exactly $N faults at main, on $N consecutive pages" json_check "
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
m = [int(x['addr'], 16) for x in o if (x.get('ip_sym') or '').startswith('main+')]
m.sort()
ok = len(m) == $N and all(b - a == 4096 for a, b in zip(m, m[1:]))
if not ok: print('#', len(m), 'faults at main')
sys.exit(not ok)" "$OUT"
check "every fault has its address, ip, pid and comm" json_check "
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
sys.exit(not (o and all('addr' in x and 'ip' in x and x['comm'] for x in o)))" "$OUT"
check "the count of faults seen goes to standard error" grep -qE 'page-faults: [0-9]+ events, 0 lost' "$ERR"

run_capture "$P" page-faults -g -- "$W" faults $N
check "page-faults -g: exit 0" test "$RC" -eq 0
check "text: $N lines 'page-fault: addr ... ip main+'" \
	test "$(grep -c 'page-fault: addr [0-9a-f]\{16\} ip main+0x[0-9a-f]* (mt_workload)' "$OUT")" -eq $N
check "text -g: each of them with its stack (main's frame under the fault line)" \
	test "$(grep -A1 'ip main+' "$OUT" | grep -c '^[[:space:]]*[0-9a-f]* main+')" -eq $N
done_testing
