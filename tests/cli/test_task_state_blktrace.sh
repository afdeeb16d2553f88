#!/bin/bash
# CLI tests of the presets task-state and blktrace: a napping program's S stays and their
# outliers (with the stack of the switch-out), D stays of direct I/O, -p, perf-prof's command lines;
# blktrace's stages on a loop device (a temp file, removed after) written with O_DIRECT.
# shellcheck source=tests/cli/tap.sh
source "$(dirname "$0")/tap.sh"
P=${PERFSCOPE:?}
W=${BUILD_ROOT:?}/tests/mt_workload

plan 32
if ! need_root; then
	skip_all "needs root (tracepoints)"
fi
if ! "$P" trace -e sched:sched_switch --duration 0.01 >/dev/null 2>&1; then
	skip_all "no sched tracepoints on this kernel"
fi
TMPD=$(mktemp -d)
LOOP=
declare -a BG=()
cleanup() {
	local pid
	for pid in "${BG[@]}"; do kill -9 "$pid" 2>/dev/null; done
	for pid in "${BG[@]}"; do wait "$pid" 2>/dev/null; done
	[ -n "$LOOP" ] && losetup -d "$LOOP" 2>/dev/null
	rm -rf "$TMPD"
}
trap cleanup EXIT
# The napper under a name of its own: other runs of mt_workload (another suite, a bench) must not
# match --filter and add their naps to the counts asserted here.
COMM=tsnap$$
cp "$W" "$TMPD/$COMM"
W=$TMPD/$COMM
json_check() { python3 -c "$1" "$2"; }
# the napper runs on a CPU whose idle-time events reach the rings (tap.sh idle_ok_cpu)
pin_idle_ok "$P" "$W"

# start_bg OUT ARGS...: perfscope ARGS -i 100 in the background, returned once it printed
start_bg() {
	local out=$1
	shift
	timeout -s INT -k 10 --preserve-status 60 "$P" "$@" -i 100 >"$out" 2>"$out.err" &
	BGPID=$!
	BG+=("$BGPID")
	for _ in $(seq 100); do [ -s "$out" ] && break; sleep 0.1; done
}
stop_bg() {
	kill -INT "$BGPID"
	wait "$BGPID"
	RC=$?
}
# watch_run OUT PID ARGS...: perfscope ARGS -p PID -v in the background (WPID) with stderr in
# OUT.err, returned once its events are on; 1 when it never got there
watch_run() {
	local out=$1 pid=$2
	shift 2
	rm -f "$out" "$out.err"
	"$P" "$@" -p "$pid" -v >"$out" 2>"$out.err" &
	WPID=$!
	BG+=("$WPID")
	wait_running "$out.err" "$WPID"
}

# 1-4: 10 naps of 100 ms: 10 S stays over 50 ms, each an outlier with its two events and the stack
# of the switch-out (where it slept: nanosleep)
start_bg "$TMPD/s.json" task-state --filter "$COMM" -S --than 50ms -g --format json
"${PIN[@]}" "$W" naps 10 100
stop_bg
check "task-state -S: exit 0 (exit $RC)" test "$RC" -eq 0
idle_check "task-state -S --than 50ms: 10 outliers in S, from a sched_switch to a wakeup" json_check '
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
x = [l for l in o if l.get("outlier")]
ok = len(x) == 10 and all(l["state"] == "S" and l["comm"] == "'"$COMM"'"
	and l["latency_ns"] > 50000000 and l["start"]["event"] == "sched:sched_switch"
	and l["start"]["fields"]["prev_pid"] == l["tid"]
	and l["end"]["event"] in ("sched:sched_wakeup", "sched:sched_switch") for l in x)
sys.exit(not ok)' "$TMPD/s.json"
idle_check "task-state -g: the outlier's switch-out has its stack, through nanosleep" json_check '
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
x = [l for l in o if l.get("outlier")]
st = json.dumps(x[0]["start"]) if x else ""
sys.exit(not ("schedule" in st and "nanosleep" in st))' "$TMPD/s.json"
idle_check "task-state -S: only S rows, at least the 10 naps, over_than 10" json_check '
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
f = [l for l in o if l.get("final") and "state" in l]
sys.exit(not (len(f) == 1 and f[0]["state"] == "S" and f[0]["count"] >= 10
	and f[0]["over_than"] == 10))' "$TMPD/s.json"

# 5-6: all states of the napper: R (on CPU), S, RD (woken -> switched in), every outcome counted
start_bg "$TMPD/all.json" task-state --filter "$COMM" --format json
"${PIN[@]}" "$W" naps 20 10
stop_bg
# One nap of the 20 went unseen in S and RD alike once, under ASan (a fresh run in 5, its cause
# open: an idle-time drop the probe missed, kdrop.h, is suspected): that case is a TODO, said,
# and any larger shortfall a failure.
D="task-state: R, S and RD rows of the napper"
if [ -z "${IDLE_OK_CPU:-}" ]; then
	skip "$D: no CPU of this machine delivers the events taken while it idles (kdrop.h)"
else
	python3 -c '
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
f = {l["state"]: l for l in o if l.get("final") and "state" in l}
n = {k: f[k]["count"] if k in f else 0 for k in ("S", "RD", "R")}
if n["S"] >= 20 and n["RD"] >= 20 and n["R"] >= 19: sys.exit(0)
oc = [l for l in o if l.get("final") and l.get("task_state") == "outcomes"]
kd = oc[0].get("kernel_dropped", 0) if oc else 0
print("# counts", n, "kernel_dropped", kd)
# the kernel said it dropped events (kdrop.h): the CPU the probe found delivering did not, this run
if kd and 20 - min(n["S"], n["RD"]) <= kd: sys.exit(4)
sys.exit(3 if n["S"] >= 19 and n["RD"] >= 19 and n["R"] >= 18 else 1)' "$TMPD/all.json"
	case $? in
	0) ok "$D" ;;
	4) skip "$D: the naps not seen were dropped by the kernel this run (kernel_dropped, kdrop.h)" ;;
	3) todo_check "one nap of 20 unseen in S and RD, cause open" "$D" false ;;
	*) fail "$D" ;;
	esac
fi
idle_check "task-state: the outcomes: paired = the calls of every row" json_check '
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
f = [l for l in o if l.get("final") and "state" in l]
oc = [l for l in o if l.get("final") and l.get("task_state") == "outcomes"][0]
sys.exit(not (oc["outcomes"]["paired"] >= sum(l["count"] for l in f) > 0))' "$TMPD/all.json"

# 7-8: -p PID --perins: rows of that process's thread only
"${PIN[@]}" "$W" naps 2000 5 &
NAP=$!
BG+=("$NAP")
run_report "$P" task-state -p "$NAP" --perins --format json --duration 0.6
check "task-state -p: exit 0 (exit $RC)" test "$RC" -eq 0
idle_check "task-state -p PID --perins: per-thread rows only of PID, S among them" json_check "
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
t = [x for x in o if x.get('final') and 'tid' in x]
sys.exit(not (t and all(x['tid'] == $NAP for x in t) and any(x['state'] == 'S' for x in t)))" "$OUT"
kill "$NAP" 2>/dev/null

# 9-10: -p only bounds the run (PROF_WATCH_TASKS): without --duration, task-state ends by itself,
# cleanly and without a word, once the process is gone; its rows are still its own
"${PIN[@]}" "$W" naps 2000 5 &
NAP=$!
BG+=("$NAP")
watch_run "$TMPD/w.json" "$NAP" task-state --perins --format json && kill "$NAP"
wait "$NAP" 2>/dev/null
watch_end
check "task-state -p PID: ends by itself once PID exits, exit 0, said nothing of it (exit $RC)" \
	bash -c "[ $RC -eq 0 ] && ! grep -q 'exited; stopped' '$TMPD/w.json.err'"
idle_check "task-state -p PID, ended by its exit: rows only of PID, S among them" json_check "
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
t = [x for x in o if x.get('final') and 'tid' in x]
sys.exit(not (t and all(x['tid'] == $NAP for x in t) and any(x['state'] == 'S' for x in t)))" \
	"$TMPD/w.json"

# 11-15: perf-prof's command lines (its --help examples) with perfscope in place of perf-prof
"${PIN[@]}" "$W" naps 2000 5 &
NAP=$!
BG+=("$NAP")
run_report "$P" task-state -i 200 --no-interruptible --duration 0.5
check "perf-prof's 'task-state -i 1000 --no-interruptible': a table without S" \
	bash -c "[ $RC -eq 0 ] && grep -q '^St ' '$OUT' && grep -q '^R ' '$OUT' && ! grep -q '^S ' '$OUT'"
run_report "$P" task-state -p "$NAP" --perins --ptrace --duration 0.5
idle_check "perf-prof's 'task-state -p PID --perins --ptrace': per-thread rows (exit $RC)" \
	bash -c "[ $RC -eq 0 ] && grep -qE '^S +$NAP $COMM' '$OUT'"
run_report "$P" task-state -p "$NAP" -SD --than 20ms -g --duration 0.5
check "perf-prof's 'task-state -p PID -SD --than 20ms -g' (exit $RC)" \
	bash -c "[ $RC -eq 0 ] && grep -q '^outliers: ' '$OUT'"
run_report "$P" task-state --filter 'java,tsnap*' -S --than 1ms -g --duration 0.5
idle_check "perf-prof's 'task-state --filter java,python* -S --than 100ms -g': globs (exit $RC)" \
	bash -c "[ $RC -eq 0 ] && grep -q 'task-state: $NAP $COMM in S for' '$OUT'"
kill "$NAP" 2>/dev/null
# perf-prof's 'task-state -- ip link show eth0': a COMMAND's own states while it runs
run_report "$P" task-state --format json -- "${PIN[@]}" "$W" naps 5 20
idle_check "task-state -- COMMAND: its S stays, only its own thread (exit $RC)" json_check '
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
f = {l["state"]: l for l in o if l.get("final") and "state" in l}
sys.exit(not ("S" in f and 5 <= f["S"]["count"] <= 7))' "$OUT"
# every example of --help runs as it is
bad=
for prof in task-state blktrace; do
	while IFS= read -r ex; do
		eval "timeout -k 5 20 \"\$P\" ${ex#perfscope }" >/dev/null 2>"$TMPD/ex.err" ||
			bad+="[$ex: $(head -c 200 "$TMPD/ex.err")] "
	done < <("$P" "$prof" --help | sed -n '/^Examples:/,$p' | sed -n 's/^  perfscope /perfscope /p')
done
check "every --help example of task-state and blktrace exits 0${bad:+: $bad}" test -z "$bad"
expect_rc "task-state -S --no-interruptible: usage error" 2 "$P" task-state -S --no-interruptible \
	--duration 0.1

# 18-29: blktrace on a loop device over a temp file, with mq-deadline so requests are inserted
if ! LOOP=$(losetup -f --show "$(truncate -s 32M "$TMPD/disk" && echo "$TMPD/disk")" 2>/dev/null); then
	LOOP=
	while [ "$_tap_n" -lt 26 ]; do skip "no loop device (losetup -f failed): blktrace not tested"; done
	expect_rc "blktrace without -d: usage error" 2 "$P" blktrace --duration 0.1
	expect_rc "blktrace -d nosuchdisk: usage error" 2 "$P" blktrace -d nosuchdisk --duration 0.1
	expect_rc "blktrace -d a/b: usage error" 2 "$P" blktrace -d a/b --duration 0.1
	done_testing
fi
DEV=${LOOP#/dev/}
echo mq-deadline >"/sys/block/$DEV/queue/scheduler" 2>/dev/null ||
	diag "$DEV: no mq-deadline scheduler; insert stages may be skipped"
MAJMIN=$(cat "/sys/block/$DEV/dev")
cp "$(command -v dd)" "$TMPD/tsdd"

start_bg "$TMPD/bt.json" blktrace -d "$LOOP" --format json
"$TMPD/tsdd" if=/dev/zero of="$LOOP" bs=4k count=200 oflag=direct 2>/dev/null
stop_bg
check "blktrace -d /dev/loopN: exit 0 (exit $RC)" test "$RC" -eq 0
check "blktrace: issue -> complete and total for at least the 200 direct writes" json_check '
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
f = {l["stage"]: l for l in o if l.get("final") and "stage" in l}
sys.exit(not (f["issue -> complete"]["count"] >= 200 and f["total"]["count"] >= 200
	and f["total"]["count"] == f["issue -> complete"]["count"]))' "$TMPD/bt.json"
if grep -q '\[mq-deadline\]' "/sys/block/$DEV/queue/scheduler"; then
	check "blktrace: with a scheduler, getrq -> insert -> issue for each write" json_check '
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
f = {l["stage"]: l for l in o if l.get("final") and "stage" in l}
sys.exit(not (f["getrq -> insert"]["count"] >= 200 and f["insert -> issue"]["count"] >= 200))' \
		"$TMPD/bt.json"
else
	skip "no mq-deadline: no insert stage to check"
fi
check "blktrace: the device's name in each row, nothing reversed" json_check "
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
oc = [l for l in o if l.get('final') and 'outcomes' in l][0]
sys.exit(not (oc['device'] == '$DEV' and oc['outcomes']['reversed'] == 0
	and all(l['device'] == '$DEV' for l in o if 'stage' in l)))" "$TMPD/bt.json"

# -p bounds the run, the requests are anyone's (PROF_WATCH_TASKS): another task's writes are
# counted while a napper is watched, and blktrace ends by itself once the napper is gone
"$W" naps 2000 5 &
NAP=$!
BG+=("$NAP")
if watch_run "$TMPD/btw.json" "$NAP" blktrace -d "$LOOP" --format json; then
	"$TMPD/tsdd" if=/dev/zero of="$LOOP" bs=4k count=50 oflag=direct 2>/dev/null
	kill "$NAP"
fi
wait "$NAP" 2>/dev/null
watch_end
check "blktrace -p PID: ends by itself once PID exits, exit 0 (exit $RC)" test "$RC" -eq 0
check "blktrace -p PID: the 50 direct writes of another task counted" json_check '
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
f = {l["stage"]: l for l in o if l.get("final") and "stage" in l}
sys.exit(not ("total" in f and f["total"]["count"] >= 50))' "$TMPD/btw.json"

# D: the direct writer waits for its I/O uninterruptibly
start_bg "$TMPD/d.json" task-state --filter tsdd -D --format json
"$TMPD/tsdd" if=/dev/zero of="$LOOP" bs=4k count=100 oflag=direct 2>/dev/null
stop_bg
check "task-state -D: the O_DIRECT writer's D stays" json_check '
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
f = [l for l in o if l.get("final") and "state" in l]
sys.exit(not (len(f) == 1 and f[0]["state"] == "D" and f[0]["count"] >= 1))' "$TMPD/d.json"

# perf-prof's lines: -d /dev/sdX -i 1000 [--than 10ms], and MAJ:MIN
start_bg "$TMPD/bt.txt" blktrace -d "$LOOP" --than 1ns
"$TMPD/tsdd" if=/dev/zero of="$LOOP" bs=4k count=20 oflag=direct 2>/dev/null
stop_bg
check "perf-prof's 'blktrace -d /dev/sda -i 1000 --than 10ms': table and outliers (exit $RC)" \
	bash -c "[ $RC -eq 0 ] && grep -q '^  issue -> complete ' '$TMPD/bt.txt' &&
		grep -q '^blktrace: sector [0-9]* issue -> complete' '$TMPD/bt.txt' &&
		grep -q 'block:block_rq_complete' '$TMPD/bt.txt'"
run_report "$P" blktrace -d "$MAJMIN" --duration 0.2
check "blktrace -d MAJ:MIN names the device (exit $RC)" \
	bash -c "[ $RC -eq 0 ] && grep -q '^$DEV ($MAJMIN)' '$OUT'"
expect_rc "blktrace without -d: usage error" 2 "$P" blktrace --duration 0.1
expect_rc "blktrace -d nosuchdisk: usage error" 2 "$P" blktrace -d nosuchdisk --duration 0.1
expect_rc "blktrace -d a/b: usage error" 2 "$P" blktrace -d a/b --duration 0.1

# task-state --flame-graph FILE (perf-prof's): the stacks of the stays over --than, one count each;
# the truth: 10 sleeps of 30 ms are 10 S stays over 20 ms, each asleep in do_nanosleep
# (pinned to a CPU that delivers the wakeups taken while it idles, kdrop.h; skipped, said, when
# this run's kernel dropped some all the same)
pin_idle_ok "$P" "$W"
run_report "$P" task-state -S --than 20ms --flame-graph "$TMPD/ts" -- "${PIN[@]}" python3 -c 'import time
for _ in range(10): time.sleep(0.03)'
RUN_KDROP=$(sed -n 's/.*, \([0-9]*\) dropped by the kernel).*/\1/p' "$ERR" | head -1)
n=$(awk '/do_nanosleep/ {n += $NF} END {print n + 0}' "$TMPD/ts.folded" 2>/dev/null)
# the truth holds, or this run's kernel dropped events (machine-wide: maybe these wakeups)
if [ "$RC" -eq 0 ] && [ "$n" = 10 ] || [ "${RUN_KDROP:-0}" -eq 0 ]; then
	check "--flame-graph: 10 stays over 20 ms folded through do_nanosleep (exit $RC, got $n)" \
		bash -c "[ $RC -eq 0 ] && [ '$n' = 10 ]"
	check "--flame-graph: the thread's name is the root (python3;...)" \
		grep -q '^python3;.*do_nanosleep' "$TMPD/ts.folded"
else
	idle_check "--flame-graph: 10 stays (got $n)" false
	idle_check "--flame-graph: the thread's name is the root" false
fi
RUN_KDROP=0
expect_rc "task-state --flame-graph without --than" 2 "$P" task-state --flame-graph "$TMPD/x" --duration 0.1

done_testing
