#!/bin/bash
# CLI tests of `perfscope lock`: threads contending one kernel lock (tests/cli/lock_load.c: flock on
# one file, or 1 MiB writes to one file under its inode's rwsem), every begin accounted for, the
# rows adding up to the pairs, the flock stack named; and Debian's `perf lock contention` on the
# same run: the same count of waits, the same total wait within 1% (waits of milliseconds).
# shellcheck source=tests/cli/tap.sh
source "$(dirname "$0")/tap.sh"
P=${PERFSCOPE:?}

plan 14
if ! need_root; then
	skip_all "needs root (tracepoints)"
fi
if [ ! -d /sys/kernel/tracing/events/lock/contention_begin ] &&
	[ ! -d /sys/kernel/debug/tracing/events/lock/contention_begin ]; then
	skip_all "no lock:contention_begin tracepoint on this kernel"
fi
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
if ! ${CC:-cc} -O2 -pthread -o "$TMPD/lock_load" "$(dirname "$0")/lock_load.c" 2>"$TMPD/cc.err"; then
	sed 's/^/#   /' "$TMPD/cc.err" | head -5
	skip_all "cannot build tests/cli/lock_load.c"
fi
L=$TMPD/lock_load

# 1-2: help, the alias, usage errors
check "lock --help and lock-contention --help show examples" \
	sh -c "'$P' lock --help | grep -q '^Examples' && '$P' lock-contention --help | grep -q 'lock -g'"
run_capture "$P" lock -e sched:sched_switch --duration 0.1
check "an event other than lock's is a usage error (exit $RC)" test "$RC" -eq 2

# start_load MODE THREADS SECS NAME: the workload, waiting for $TMPD/NAME.go; LOAD = its pid
start_load() {
	"$L" "$1" "$2" "$3" "$TMPD/$4.go" >"$TMPD/$4.calls" &
	LOAD=$!
	BG+=("$LOAD")
	# its threads exist before a tracer of -p looks for them
	local i
	for ((i = 0; i < 1200; i++)); do
		[ -e "$TMPD/$4.go.ready" ] && break
		_alive "$LOAD" || break
		sleep 0.05
	done
}

# 3-8: flock by 4 threads, -g -i: every event accounted for, the rows sum to the pairs
start_load flock 4 1 flock
"$P" lock -g --top 0 -i 300 -p "$LOAD" -v --format json -o "$TMPD/flock.json" 2>"$TMPD/flock.err" &
PS=$!
BG+=("$PS")
if wait_running "$TMPD/flock.err" "$PS"; then touch "$TMPD/flock.go"; fi
wait "$LOAD"
wait "$PS"
RC=$?
check "flock run: exit 0 (exit $RC)" test "$RC" -eq 0
F=$TMPD/flock.json
check "every begin and end accounted for: begins = paired + open + lost + evicted + replaced + nomem, ends = paired + no_start + reversed" json_check '
import json, sys
f = [json.loads(l) for l in open(sys.argv[1])]
f = [x for x in f if x.get("final") and "begins" in x][0]
o = f["outcomes"]
print("#", f)
sys.exit(not (f["begins"] > 100 and f["mismatched"] == 0 and
  f["begins"] == o["paired"] + o["open"] + o["lost"] + o["evicted"] + o["replaced"] + o["nomem"] and
  f["ends"] == o["paired"] + o["no_start"] + o["reversed"]))' "$F"
check "the lock rows and the caller rows each add up to the pairs" json_check '
import json, sys
a = [json.loads(l) for l in open(sys.argv[1])]
f = [x for x in a if x.get("final") and "begins" in x][0]
n = f["outcomes"]["paired"] - f["mismatched"]
locks = sum(x["count"] for x in a if x.get("table") == "locks" and x.get("final"))
callers = sum(x["count"] for x in a if x.get("table") == "callers" and x.get("final"))
sys.exit(not (locks == n and callers == n))' "$F"
check "the busiest lock is a spinlock whose waiters' stack goes through flock, percentiles ordered" json_check '
import json, sys
a = [json.loads(l) for l in open(sys.argv[1])]
l = [x for x in a if x.get("table") == "locks" and x.get("final")][0]
c = [x for x in a if x.get("table") == "callers" and x.get("final")][0]
names = [fr.get("sym") or fr.get("name") or "" for fr in c["stack"]]
print("#", l["name"], l["count"], c["name"], names[:4])
sys.exit(not ("(spinlock)" in l["name"] and any("flock" in n for n in names) and
  "flock" in c["name"] and l["min_ns"] <= l["p50_ns"] <= l["p99_ns"] <= l["p999_ns"] <= l["max_ns"]))' "$F"
check "-i 300: interval rows" json_check '
import json, sys
a = [json.loads(l) for l in open(sys.argv[1])]
sys.exit(not any("interval_s" in x and x.get("table") == "locks" for x in a))' "$F"
check "no error on stderr" sh -c "! grep -qiE 'error|warning' '$TMPD/flock.err'"

# 9-12: the same run seen by perf lock record and perfscope lock: 1 MiB writes, waits of ms
if ! command -v perf >/dev/null; then
	skip "perf is not installed"; skip "perf is not installed"
	skip "perf is not installed"; skip "perf is not installed"
else
	start_load write 4 1 write
	mkfifo "$TMPD/ctl" "$TMPD/ack"
	# perf starts disabled and says when it is enabled (--control): a condition, not a sleep
	perf lock record -o "$TMPD/perf.data" -D -1 --control "fifo:$TMPD/ctl,$TMPD/ack" \
		-p "$LOAD" >"$TMPD/perf.out" 2>&1 &
	PP=$!
	BG+=("$PP")
	"$P" lock --top 0 --than 1ms -p "$LOAD" -v --format json -o "$TMPD/write.json" 2>"$TMPD/write.err" &
	PS=$!
	BG+=("$PS")
	exec 5<>"$TMPD/ctl" 6<>"$TMPD/ack"
	echo enable >&5
	read -r -t 60 ack <&6
	if wait_running "$TMPD/write.err" "$PS" && [ "$ack" = ack ]; then touch "$TMPD/write.go"; fi
	wait "$LOAD"
	wait "$PP"
	wait "$PS"
	exec 5>&- 6>&-
	perf lock contention -i "$TMPD/perf.data" -E 100000 >"$TMPD/perf.txt" 2>&1
	check "perf lock contention read the run" grep -q contended "$TMPD/perf.txt"
	cmp_py='
import json, re, sys
u = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}
pc = pt = 0.0
for l in open(sys.argv[1]):
    m = re.match(r"\s*(\d+)\s+([\d.]+) (ns|us|ms|s)\s", l)
    if m:
        pc += int(m.group(1)); pt += float(m.group(2)) * u[m.group(3)]
a = [json.loads(l) for l in open(sys.argv[2])]
rows = [x for x in a if x.get("table") == "locks" and x.get("final")]
sc = sum(x["count"] for x in rows); st = sum(x["total_ns"] for x in rows)
print("# perf: %d waits, %.0f ns; perfscope: %d waits, %d ns" % (pc, pt, sc, st))
what = sys.argv[3]
if what == "count": sys.exit(not (pc > 0 and abs(sc - pc) <= 0.01 * pc))
sys.exit(not (pt > 0 and abs(st - pt) <= 0.01 * pt))'
	check "the same number of waits as perf lock contention (within 1%)" \
		python3 -c "$cmp_py" "$TMPD/perf.txt" "$TMPD/write.json" count
	check "the same total wait as perf lock contention (within 1%)" \
		python3 -c "$cmp_py" "$TMPD/perf.txt" "$TMPD/write.json" total
	check "--than 1ms: one object per wait over 1 ms, as many as over_than counts" json_check '
import json, sys
a = [json.loads(l) for l in open(sys.argv[1])]
w = [x for x in a if "wait_ns" in x]
f = [x for x in a if x.get("final") and "begins" in x][0]
rows = sum(x["over_than"] for x in a if x.get("table") == "locks" and x.get("final"))
sys.exit(not (w and all(x["wait_ns"] > 1000000 for x in w) and len(w) == f["over_than"] == rows))' \
		"$TMPD/write.json"
fi

# 13-14: text, with a COMMAND whose go file is there already
touch "$TMPD/text.go"
run_capture "$P" lock -o "$TMPD/text.out" -- "$L" flock 2 0.3 "$TMPD/text.go"
check "text run: exit 0 (exit $RC)" test "$RC" -eq 0
check "text: the table's header, the counts and the outcomes" \
	sh -c "grep -q '^lock (wait) *calls *total' '$TMPD/text.out' && grep -q 'begins [0-9]*, ends' '$TMPD/text.out' && grep -q 'outcomes: paired' '$TMPD/text.out'"
done_testing
