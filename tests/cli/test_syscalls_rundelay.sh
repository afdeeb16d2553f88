#!/bin/bash
# CLI tests of the multi-trace presets: `perfscope syscalls` counts a known number of calls of a
# program and its failures; `perfscope rundelay` sees the wakeups of a sleeping program, by
# --filter COMM and by -p PID, and its sched_switch conditions follow this kernel's format.
# shellcheck source=tests/cli/tap.sh
source "$(dirname "$0")/tap.sh"
P=${PERFSCOPE:?}
W=${BUILD_ROOT:?}/tests/mt_workload

plan 14
if ! need_root; then
	skip_all "needs root (tracepoints)"
fi
if ! "$P" trace -e raw_syscalls:sys_enter --duration 0.01 >/dev/null 2>&1; then
	skip_all "no raw_syscalls tracepoints on this kernel"
fi
# the sleepers run on a CPU whose idle-time events reach the rings (tap.sh idle_ok_cpu)
pin_idle_ok "$P" "$W"
TMPD=$(mktemp -d)
declare -a BG=()
cleanup() {
	local pid
	for pid in "${BG[@]}"; do kill -9 "$pid" 2>/dev/null; done
	for pid in "${BG[@]}"; do wait "$pid" 2>/dev/null; done
	rm -rf "$TMPD"
}
trap cleanup EXIT
json_check() { python3 -c "$1" "${@:2}"; }

# 1-3: 777 getppid calls, counted exactly (nothing else in the program calls it)
run_report "$P" syscalls --format json -- "$W" getppid 777
check "syscalls: exit 0 (exit $RC)" test "$RC" -eq 0
check "syscalls: getppid(110) 777 calls, no error, latency fields" json_check '
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
g = [x for x in o if x.get("syscall") == "getppid" and x.get("final")]
sys.exit(not (len(g) == 1 and g[0]["count"] == 777 and g[0]["errors"] == 0 and g[0]["id"] == 110
  and 0 < g[0]["min_ns"] <= g[0]["p50_ns"] <= g[0]["max_ns"]))' "$OUT"
check "syscalls: the pair object counts every outcome" json_check '
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
s = [x for x in o if x.get("pair") and x.get("final") and "syscall" not in x][0]
sys.exit(not (s["outcomes"]["paired"] == s["count"] and s["count"] >= 777))' "$OUT"

# 4-5: 1000 failing close(-1): the errors of close are exactly those (the loader's closes succeed)
run_report "$P" syscalls -- "$W" badclose 1000
check "syscalls text: close(3) with 1000 errors" \
	awk '$1 ~ /^close\(3\)$/ && $2 >= 1000 && $NF == 1000 { f = 1 } END { exit !f }' "$OUT"
check "syscalls text: the header has an errors column" grep -q ' errors$' "$OUT"

# 6: perf-prof's own form with a filter on the id
run_report "$P" syscalls -e 'raw_syscalls:sys_enter/id==110/' -e 'raw_syscalls:sys_exit/id==110/' \
	--format json -- "$W" getppid 50
check "syscalls -e .../id==110/: only getppid, 50 calls" json_check '
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
g = [x for x in o if x.get("final") and "syscall" in x]
sys.exit(not (len(g) == 1 and g[0]["syscall"] == "getppid" and g[0]["count"] == 50))' "$OUT"

# 7-8: rundelay --filter COMM: a program that naps 40 times is woken 40 times
# (-v's running line says the events are on; then the program runs; SIGINT ends it)
# The sleeper has a name of its own: any other mt_workload on the machine (a test running beside
# this one) would match the filter too.
NAPPER=rdnap$$
cp "$W" "$TMPD/$NAPPER"
timeout -s INT -k 10 --preserve-status 300 "$P" rundelay -v --filter "$NAPPER" --format json -i 100 \
	>"$TMPD/rd.json" 2>"$TMPD/rd.err" &
RD=$!
BG+=("$RD")
wait_running "$TMPD/rd.err" "$RD" || diag "rundelay: no running line: $(head -3 "$TMPD/rd.err")"
"${PIN[@]}" "$TMPD/$NAPPER" naps 40 5 "$TMPD/nvcsw"
kill -INT "$RD" # timeout passes it on
wait "$RD"
RC=$?
check "rundelay --filter: exit 0 (exit $RC)" test "$RC" -eq 0
# Every wakeup is paired, lost (a loss on a loaded machine invalidates starts: counted as lost,
# never paired) or dropped by the kernel before the ring (an idle CPU's timer wakeup on some VM
# kernels, common/loop/kdrop.h: JSON kernel_dropped). A drop of the wakeup or of its switch-in each
# leaves one nap unpaired; a switch-in dropped uncounted leaves its wakeup replaced or open. So
# paired + lost <= 40 <= paired + lost + replaced + open + evicted + dropped, on any CPU. The 40
# is a floor: on a loaded machine it is also preempted, and a preempted task's wait for the CPU is
# a run delay too (a fresh clone paired 41). The switches the kernel counted for it, voluntary and
# not (getrusage: each ends with a switch-in), bound paired + lost from above.
check "rundelay --filter: the 40 wakeups -> switch-in of the sleeper, paired, lost or dropped by the kernel" json_check '
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
s = [x for x in o if x.get("pair") and x.get("final")][0]
d = [x for x in o if "kernel_dropped" in x and x.get("final")][-1]["kernel_dropped"]
print("# count %d, kernel_dropped %d, outcomes %s" % (s["count"], d, s["outcomes"]))
u = s["outcomes"]
seen = s["count"] + u["lost"]
nvcsw = int(open(sys.argv[2]).read())
print("# the sleeper was switched out %d times" % nvcsw)
sys.exit(not (seen <= nvcsw and 40 <= seen + u["replaced"] + u["open"] + u["evicted"] + d
  and s["outcomes"]["paired"] == s["count"]))' "$TMPD/rd.json" "$TMPD/nvcsw"

# 9-10: rundelay -p PID --perins: rows keyed by that pid only. The napper naps until killed, not
# 200 times: a perfscope slow to start (ASan, a loaded machine: seen on a fresh clone) must still
# find it napping for the whole --duration, whose clock starts when the events are open.
"${PIN[@]}" "$W" naps 1000000 5 &
NAP=$!
BG+=("$NAP")
run_report "$P" rundelay -p "$NAP" --perins --format json --duration 0.6
check "rundelay -p: exit 0 (exit $RC)" test "$RC" -eq 0
idle_check "rundelay -p PID --perins: one key, the pid, with its wakeups" json_check "
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
k = [x for x in o if x.get('final') and 'key' in x]
ok = len(k) == 1 and k[0]['key'] == '$NAP' and k[0]['count'] >= 10
if not ok:
    print('# keys (pid $NAP, exit $RC):', [(x['key'], x['count']) for x in k])
sys.exit(not ok)" "$OUT"
kill "$NAP" 2>/dev/null

# 11: perf-prof's form: -e 'sched:sched_wakeup*,sched:sched_switch' -e sched:sched_switch gets the
# same keys and filters
"${PIN[@]}" "$W" naps 1000000 5 &
NAP=$!
BG+=("$NAP")
run_report "$P" rundelay -e 'sched:sched_wakeup*,sched:sched_switch' -e sched:sched_switch -p "$NAP" \
	--perins --format json --duration 0.6
idle_check "rundelay perf-prof form -p: keyed by the pid" json_check "
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
k = [x for x in o if x.get('final') and 'key' in x]
ok = len(k) == 1 and k[0]['key'] == '$NAP' and k[0]['count'] >= 10
if not ok:
    print('# keys (pid $NAP, exit $RC):', [(x['key'], x['count']) for x in k])
sys.exit(not ok)" "$OUT"
[ "$RC" -eq 0 ] || diag "rundelay perf-prof form: exit $RC: $(head -3 "$ERR" | tr '\n' '|')"
kill "$NAP" 2>/dev/null

# 12: a bad --filter pattern is a usage error naming the event
expect_rc "rundelay -p with letters" 2 "$P" rundelay -p abc --duration 0.1

# 13: -t only bounds the run (PROF_WATCH_TASKS): without --duration, rundelay ends by itself,
# exit 0, once the thread is gone (a hang guard of 60 s, x3 under ASan, then SIGKILL: 137)
"$W" naps 1000000 5 &
NAP=$!
BG+=("$NAP")
"$P" rundelay -t "$NAP" -v >"$TMPD/w.out" 2>"$TMPD/w.err" &
WPID=$!
BG+=("$WPID")
wait_running "$TMPD/w.err" "$WPID" && kill "$NAP"
wait "$NAP" 2>/dev/null
watch_end
check "rundelay -t TID: ends by itself once TID exits, exit 0 (exit $RC)" test "$RC" -eq 0

# -p naming a thread that is not its process's leader has no pidfd (EINVAL; so has -t before
# Linux 6.9): /proc is polled for it, and the run still ends when that thread does, while its
# process lives on
rm -f "$TMPD/tid" "$TMPD/stop" "$TMPD/end"
python3 -c '
import os, sys, threading, time
d = sys.argv[1]
def worker():
    open(d + "/tid.tmp", "w").write(str(threading.get_native_id()))
    os.rename(d + "/tid.tmp", d + "/tid")
    while not os.path.exists(d + "/stop"):
        time.sleep(0.01)
t = threading.Thread(target=worker)
t.start()
t.join()
while not os.path.exists(d + "/end"):
    time.sleep(0.05)
' "$TMPD" &
PYPID=$!
BG+=("$PYPID")
for ((i = 0; i < 1200; i++)); do [ -s "$TMPD/tid" ] && break; sleep 0.05; done
TID=$(cat "$TMPD/tid" 2>/dev/null)
"$P" rundelay -p "${TID:-0}" -v >"$TMPD/p.out" 2>"$TMPD/p.err" &
WPID=$!
BG+=("$WPID")
wait_running "$TMPD/p.err" "$WPID" && touch "$TMPD/stop"
watch_end
check "rundelay -p TID of a thread: ends once the thread exits, its process alive, exit 0 (exit $RC)" \
	sh -c "[ $RC -eq 0 ] && [ -d /proc/$PYPID ]"
touch "$TMPD/stop" "$TMPD/end"
wait "$PYPID" 2>/dev/null

done_testing
