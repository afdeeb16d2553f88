#!/bin/bash
# percpu-stat while a program pinned to one CPU takes N page faults and sleeps N times: that CPU's
# minflt and csw columns hold at least N each, every interval's "all" row is the sum of its CPUs'.
# shellcheck source=tests/cli/tap.sh
source "$(dirname "$0")/tap.sh"
P=${PERFSCOPE:?}
W=${WORKLOAD:?}
N=3000

plan 6
if ! need_root; then
	skip_all "needs root (per-CPU counters)"
fi
read -r -a CPUS <<<"$(usable_cpus)"
C=${CPUS[-1]}
json_check() { python3 -c "$1" "$2"; }
TMPD=$(mktemp -d)
trap 'rm -rf "$TMPD"' EXIT

"$P" percpu-stat -v -i 300 --format json >"$TMPD/out" 2>"$TMPD/err" &
HP=$!
if wait_running "$TMPD/err" "$HP"; then
	taskset -c "$C" "$W" faults $N
	taskset -c "$C" "$W" sleeps $N
	kill -INT "$HP"
fi
wait "$HP"
check "percpu-stat: exit 0" test "$?" -eq 0
check "CPU $C: at least $N minor faults" json_check "
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
sys.exit(not sum(x['minflt'] for x in o if x['cpu'] == $C) >= $N)" "$TMPD/out"
check "CPU $C: at least $N context switches" json_check "
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
sys.exit(not sum(x['csw'] for x in o if x['cpu'] == $C) >= $N)" "$TMPD/out"
check "each interval's all row is the sum of its CPUs' rows, column by column" json_check "
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
ok, rows = True, []
for x in o:
    if x['cpu'] != 'all':
        rows.append(x); continue
    for k, v in x.items():
        if k not in ('cpu', 'interval_ns') and sum(r[k] for r in rows) != v: ok = False
    rows = []
sys.exit(not (ok and any(x['cpu'] == 'all' for x in o)))" "$TMPD/out"

run_capture "$P" percpu-stat -C "$C" --syscalls -i 200 --duration 0.5
check "-C $C --syscalls: a syscalls column, rows for CPU $C and all only" sh -c "
grep -q ' syscalls ' '$OUT' && grep -q '^\[ALL\]' '$OUT' && ! grep -E '^\[[0-9]+\]' '$OUT' | grep -vq '^\[0*$C\]'"
expect_rc "-- COMMAND bounds the run: its exit status" 3 "$P" percpu-stat -i 100 -- sh -c 'exit 3'
done_testing
