#!/bin/bash
# watchdog: the kernel's watchdog timer runs every 2/5 of watchdog_thresh (4 s by default). Judged
# by --thresh 0.2 (a hard lockup said after 0.1 s without the timer), every CPU watched looks hard
# locked between two runs of its timer: each sample then says it, with its stack. Judged by the
# kernel's own threshold, a healthy machine has none.
# A real lockup cannot be made from user space: the stopper thread preempts any task.
# shellcheck source=tests/cli/tap.sh
source "$(dirname "$0")/tap.sh"
P=${PERFSCOPE:?}

plan 6
if ! need_root; then
	skip_all "needs root (kernel symbols, timers on whole CPUs)"
fi
if [ "$(cat /proc/sys/kernel/watchdog 2>/dev/null)" != 1 ] ||
	! grep -qw watchdog_timer_fn /proc/kallsyms; then
	skip_all "the kernel's watchdog is off or has no watchdog_timer_fn here"
fi
read -r -a CPUS <<<"$(usable_cpus)"
LIST=$(IFS=,; echo "${CPUS[*]}")
json_check() { python3 -c "$1" "$2"; }

# every CPU busy meanwhile: this kernel drops the samples taken while a CPU idles, and an idle
# CPU would say nothing (seen once: one of two CPUs silent)
SPIN=()
for c in "${CPUS[@]}"; do
	taskset -c "$c" "${WORKLOAD:?}" spin-ms 3000 >/dev/null 2>&1 &
	SPIN+=($!)
done
run_capture "$P" watchdog -C "$LIST" -F 20 -g --thresh 0.2 --format json --duration 1.5
for s in "${SPIN[@]}"; do
	kill "$s" 2>/dev/null
	wait "$s" 2>/dev/null
done
diag "hard lockups said per CPU: $(python3 -c '
import json, sys, collections
c = collections.Counter(json.loads(l).get("cpu") for l in open(sys.argv[1]) if "\"lockup\":\"hard\"" in l)
print(dict(c))' "$OUT" 2>&1)"
check "watchdog --thresh 0.2: exit 0" test "$RC" -eq 0
check "a hard lockup said on every CPU watched (${CPUS[*]}), each with its stack" json_check "
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
h = [x for x in o if x.get('lockup') == 'hard']
sys.exit(not (sorted({x['cpu'] for x in h}) == [${LIST}] and all(x.get('stack') for x in h)
  and all(x['since_ns'] > 100000000 for x in h)))" "$OUT"
check "each sample while it lasts says it, the time since the timer growing (per CPU, until it runs)" json_check "
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
ok = True
for c in {x['cpu'] for x in o}:
    s = [x for x in o if x.get('lockup') == 'hard' and x['cpu'] == c]
    ok = ok and len(s) >= 2 and any(b['since_ns'] > a['since_ns'] for a, b in zip(s, s[1:]))
sys.exit(not ok)" "$OUT"

run_capture "$P" watchdog -F 5 -g --duration 1
check "the kernel's own threshold: exit 0, nothing said" sh -c "[ '$RC' -eq 0 ] && [ ! -s '$OUT' ]"
check "  ... and the counts said on standard error" grep -q "0 hard and 0 soft lockups said" "$ERR"
expect_rc "-- COMMAND bounds the run: its exit status" 3 "$P" watchdog -F 10 -- sh -c 'exit 3'
done_testing
