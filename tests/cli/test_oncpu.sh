#!/bin/bash
# oncpu on a program pinned to one CPU (the last usable one, CPU 1 on a 2-CPU machine) spinning for
# a known time: thread mode (-p) shows that CPU only, CPU mode (-C) shows the program on that CPU
# only, with its time, and --only-comm, --prio and the usage errors.
# shellcheck source=tests/cli/tap.sh
source "$(dirname "$0")/tap.sh"
P=${PERFSCOPE:?}
W=${WORKLOAD:?}

plan 10
if ! need_root; then
	skip_all "needs root (sched tracepoints)"
fi
read -r -a CPUS <<<"$(usable_cpus)"
if [ "${#CPUS[@]}" -lt 2 ]; then
	skip_all "needs two usable CPUs (one to pin the program to, one it must not show on)"
fi
C=${CPUS[-1]}
json_check() { python3 -c "$1" "$2"; }
WPID=
trap '[ -n "$WPID" ] && kill "$WPID" 2>/dev/null' EXIT

# 1-3: thread mode: the program's thread ran on CPU $C only, about as long as oncpu watched it
taskset -c "$C" "$W" spin-ms 60000 &
WPID=$!
run_capture "$P" oncpu -p "$WPID" -i 300 --duration 1.5 --format json
check "oncpu -p: exit 0" test "$RC" -eq 0
check "-p: every interval's row of the pinned program shows CPU $C alone" json_check "
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
r = [x for x in o if x.get('tid') == $WPID]
sys.exit(not (len(r) >= 3 and all([c['cpu'] for c in x['cpus']] == [$C] for x in r)))" "$OUT"
check "-p: its time adds up to most of the 1.5 s watched (a busy CPU: over 0.4 s)" json_check "
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
t = sum(x['sum_ns'] for x in o if x.get('tid') == $WPID)
sys.exit(not (0.4e9 < t <= 1.6e9))" "$OUT"

# 4-6: CPU mode: the program is in CPU $C's rows and in no other CPU's
run_capture "$P" oncpu -C "$(IFS=,; echo "${CPUS[*]}")" --duration 1.5 -i 500 --format json
check "oncpu -C: exit 0" test "$RC" -eq 0
check "-C: the pinned program ran on CPU $C, for over 0.4 s" json_check "
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
t = sum(k['ns'] for x in o if x['cpu'] == $C for k in x['tasks'] if k.get('tid') == $WPID)
sys.exit(not (0.4e9 < t <= 1.6e9))" "$OUT"
check "-C: and on no other CPU" json_check "
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
sys.exit(any(k.get('tid') == $WPID for x in o if x['cpu'] != $C for k in x['tasks']))" "$OUT"

# 7: --only-comm --detail in text: CPU $C's line names the program without its tid
run_capture "$P" oncpu -C "$C" --only-comm --detail --duration 1 -i 400
check "--only-comm --detail: CPU $C's line has workload(ms/switches/max)" \
	grep -qE "^0*$C .* workload\([0-9.]+ms/[0-9]+/[0-9.]+ms\)" "$OUT"
kill "$WPID" 2>/dev/null
wait "$WPID" 2>/dev/null
WPID=

# 8: --prio filters sched_switch: not in thread mode
run_capture "$P" oncpu --prio 1-99 --duration 0.5 --format json -- taskset -c "$C" "$W" spin-ms 200
check "--prio with a COMMAND: a usage error (it filters sched_switch, CPU mode)" test "$RC" -eq 2
# 9-10: usage errors
expect_rc "--prio 200: a usage error" 2 "$P" oncpu --prio 200
expect_rc "--filter and --prio together: a usage error" 2 "$P" oncpu --prio 1-99 --filter 'prev_pid>0'
done_testing
