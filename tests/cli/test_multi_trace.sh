#!/bin/bash
# CLI tests of `perfscope multi-trace` on pairs known in advance: the issue's correctness program
# (100 nanosleeps of 2 ms and one of 30 ms), JSON fields, --perins, --impl pair, --detail,
# --heatmap, -i, a forced loss (no pair across lost events), usage errors, and perf-prof agreeing.
# shellcheck source=tests/cli/tap.sh
source "$(dirname "$0")/tap.sh"
P=${PERFSCOPE:?}
W=${BUILD_ROOT:?}/tests/mt_workload
PP=${PERF_PROF:-$SOURCE_ROOT/../shared/peers/perf-prof/perf-prof}
ENTER=syscalls:sys_enter_nanosleep
EXIT=syscalls:sys_exit_nanosleep

plan 35
if ! need_root; then
	skip_all "needs root (tracepoints)"
fi
if ! "$P" trace -e $ENTER --duration 0.01 >/dev/null 2>&1; then
	skip_all "no $ENTER tracepoint on this kernel"
fi
TMPD=$(mktemp -d)
trap 'rm -rf "$TMPD"' EXIT

# long30 FILE: the outlier lines of at least 30 ms (the 30 ms sleep: more on a loaded machine, never
# less; "latency 3x ms" failed when it took 40), counted
long30() { awk '{ for (i = 1; i < NF; i++) if ($i == "latency" && $(i + 2) == "ms" && $(i + 1) >= 30) n++ } END { print n + 0 }' "$1"; }
export -f long30
json_check() { python3 -c "$1" "$2"; }

# 1-6: the correctness test of the issue, in JSON. On a loaded machine one of the 2 ms sleeps
# may really take over 20 ms (the kernel's own timestamps say so): the run is then tried again,
# up to 3 times, so that "exactly one outlier" asserts the tool, not the machine's load.
for try in 1 2 3; do
	run_report "$P" multi-trace -e "$ENTER//key=common_pid/" -e "$EXIT//key=common_pid/" --than 20ms \
		--format json -- "$W" sleeps
	n=$(grep -c '"outlier":true' "$OUT")
	[ "$n" -eq 1 ] && break
	diag "try $try: $n outliers (sleeps over 20 ms on a loaded machine?); again"
done
check "sleeps: exit 0 (exit $RC)" test "$RC" -eq 0
check "sleeps: 101 calls, min >= 2 ms, max >= 30 ms, over_than 1" json_check '
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
s = [x for x in o if x.get("pair") and x.get("final")]
sys.exit(not (len(s) == 1 and s[0]["count"] == 101 and s[0]["min_ns"] >= 2000000
  and s[0]["max_ns"] >= 30000000 and s[0]["over_than"] == 1))' "$OUT"
check "sleeps: exactly one outlier, >= 30 ms, with its key and both events" json_check '
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
out = [x for x in o if x.get("outlier")]
sys.exit(not (len(out) == 1 and out[0]["latency_ns"] >= 30000000 and out[0]["key"].isdigit()
  and out[0]["start"]["event"].endswith("sys_enter_nanosleep")
  and out[0]["end"]["event"].endswith("sys_exit_nanosleep")
  and out[0]["end"]["time"] - out[0]["start"]["time"] == out[0]["latency_ns"]))' "$OUT"
check "json summary: count min_ns max_ns mean_ns p50_ns p95_ns p99_ns p999_ns over_than and every outcome" json_check '
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
s = [x for x in o if x.get("pair") and x.get("final")][0]
need = ["count", "min_ns", "max_ns", "mean_ns", "p50_ns", "p95_ns", "p99_ns", "p999_ns", "over_than"]
outc = ["paired", "replaced", "no_start", "open", "evicted", "lost", "reversed", "nomem"]
sys.exit(not (all(isinstance(s[k], int) for k in need) and all(k in s["outcomes"] for k in outc)
  and s["outcomes"]["paired"] == 101 and s["min_ns"] <= s["p50_ns"] <= s["p99_ns"] <= s["max_ns"]))' "$OUT"
check "json: the last line says outliers 1, final" json_check '
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
sys.exit(not (o[-1].get("outliers") == 1 and o[-1]["final"]))' "$OUT"
check "json: stdout is JSON only" json_check '
import json, sys
[json.loads(l) for l in open(sys.argv[1])]' "$OUT"

# 7-8: the same in text
for try in 1 2 3; do
	run_report "$P" multi-trace -e "$ENTER//key=common_pid/" -e "$EXIT//key=common_pid/" --than 20ms -- "$W" sleeps
	grep -q '^outliers: 1$' "$OUT" && break
	diag "try $try: $(grep '^outliers:' "$OUT"); again"
done
check "text: the row of 101 calls with 1 over --than" \
	awk '$1 == "all" && $2 == 101 && $NF == 1 { f = 1 } END { exit !f }' "$OUT"
check "text: 'outliers: 1' and the outlier's latency line" \
	bash -c "grep -q '^outliers: 1$' '$OUT' && test \$(long30 '$OUT') -eq 1"

# 9: perf-prof on the same program
if [ -x "$PP" ] && "$PP" -V >/dev/null 2>&1; then
	"$PP" multi-trace -e "$ENTER//key=common_pid/" -e "$EXIT//key=common_pid/" --than 20ms -- "$W" sleeps \
		>"$TMPD/pp" 2>&1
	check "perf-prof agrees: 101 calls, 1 over 20 ms" \
		awk '/sys_enter_nanosleep => sys_exit_nanosleep/ && $4 == 101 && $(NF-2) == 1 { f = 1 } END { exit !f }' "$TMPD/pp"
else
	skip "perf-prof not runnable here"
fi

# 10: --perins: a row per key (the one thread)
run_report "$P" multi-trace -e "$ENTER" -e "$EXIT" --perins --format json -- "$W" sleeps
check "--perins: one key row of 101, the key the thread" json_check '
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
k = [x for x in o if x.get("final") and "key" in x]
sys.exit(not (len(k) == 1 and k[0]["count"] == 101 and int(k[0]["key"]) > 0))' "$OUT"

# 11: --lower prints the pairs below it
run_report "$P" multi-trace -e "$ENTER" -e "$EXIT" --lower 20ms --format json -- "$W" sleeps
check "--lower 20ms: the pairs below it are printed (the short sleeps), not the 30 ms one" json_check '
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
out = [x for x in o if x.get("outlier")]
s = [x for x in o if x.get("pair") and x.get("final")][0]
sys.exit(not (0 < len(out) <= 100 and all(x["latency_ns"] < 20000000 for x in out)
  and s["over_than"] == len(out)))' "$OUT"

# 12: --only-than: the outlier, no table
run_report "$P" multi-trace -e "$ENTER" -e "$EXIT" --only-than 20ms -- "$W" sleeps
check "--only-than: the outlier and no table" \
	bash -c "test \$(long30 '$OUT') -ge 1 && ! grep -q ' calls ' '$OUT'"

# 13: --detail: the events around the outlier, start and end marked
run_report "$P" multi-trace -e "$ENTER" -e "$EXIT,sched:sched_switch//untraced/" --than 20ms \
	--detail=samepid -- "$W" sleeps
check "--detail=samepid: start (S), end (E) and the untraced switch between them" \
	bash -c "grep -q '^S .*sys_enter_nanosleep' '$OUT' && grep -q '^E .*sys_exit_nanosleep' '$OUT' &&
		sed -n '/^S /,/^E /p' '$OUT' | grep -q 'sched_switch'"

# 14: --impl pair: the outcomes only
run_report "$P" multi-trace -e "$ENTER" -e "$EXIT" --impl pair -- "$W" sleeps
check "--impl pair: 'paired 101' and no latency table" \
	bash -c "grep -q 'outcomes: paired 101, replaced 0, no_start 0, open 0' '$OUT' && ! grep -q ' p99.9 ' '$OUT'"

# 15: --heatmap writes an SVG
run_report "$P" multi-trace -e "$ENTER" -e "$EXIT" --heatmap "$TMPD/hm.svg" -- "$W" sleeps
check "--heatmap: an SVG document" bash -c "head -c 300 '$TMPD/hm.svg' | grep -q '<svg'"

# 16: -i: interval objects, then the final one
run_report "$P" multi-trace -e "$ENTER" -e "$EXIT" -i 100 --format json -- "$W" sleeps
check "-i 100: interval objects then final ones" json_check '
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
iv = [x for x in o if x.get("pair") and not x.get("final")]
fin = [x for x in o if x.get("pair") and x.get("final")]
sys.exit(not (len(iv) >= 1 and fin[0]["count"] == 101 and sum(x.get("count", 0) for x in iv) <= 101))' "$OUT"

# 17: trigger: an event prints the interval's tables (here exit_group, once, at the end)
run_report "$P" multi-trace -e "$ENTER" -e "$EXIT,syscalls:sys_enter_exit_group//untraced/trigger/" \
	--format json -- "$W" sleeps
check "trigger: one interval object with the 101 calls, before the final one" json_check '
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
iv = [x for x in o if x.get("pair") and not x.get("final")]
sys.exit(not (len(iv) == 1 and iv[0]["count"] == 101))' "$OUT"

# 18: a chain of three groups gives two pairs
run_report "$P" multi-trace -e "$ENTER" -e "$EXIT" -e "syscalls:sys_enter_exit_group" --format json \
	-- "$W" sleeps
check "three groups: two pairs, the second paired once (last sleep -> exit_group)" json_check '
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
s = [x for x in o if x.get("pair") and x.get("final")]
sys.exit(not (len(s) == 2 and s[0]["count"] == 101 and s[1]["count"] == 1
  and s[1]["outcomes"]["replaced"] == 100))' "$OUT"

# 19-20: --impl kmemprof on the kernel's kmalloc/kfree: bytes allocated, freed, not freed
if [ -d /sys/kernel/tracing/events/kmem/kmalloc ]; then
	# the kernel allocates as it reads /proc: a quiet machine may do no kmalloc in half a second
	(for _ in $(seq 40); do cat /proc/self/status /proc/self/maps >/dev/null; sleep 0.01; done) &
	KM=$!
	run_report "$P" multi-trace -e 'kmem:kmalloc//key=ptr/stack/' -e 'kmem:kfree//key=ptr/' --impl kmemprof \
		--format json --duration 0.5
	wait "$KM"
	check "kmemprof: freed = paired, not freed = allocated - freed, in objects and bytes" json_check '
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
t = [x for x in o if x.get("pair") and "outcomes" in x][0]
sys.exit(not (t["alloc_count"] > 0 and t["free_count"] == t["outcomes"]["paired"]
  and t["count"] == t["alloc_count"] - t["free_count"]
  and t["bytes"] == t["alloc_bytes"] - t["free_bytes"]))' "$OUT"
	check "kmemprof: stacks (innermost first) adding up to the totals" json_check '
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
t = [x for x in o if x.get("pair") and "outcomes" in x][0]
g = [x for x in o if "stack" in x]
sys.exit(not (len(g) > 0 and isinstance(g[0]["stack"], list) and
  sum(x["alloc_bytes"] for x in g) == t["alloc_bytes"] and sum(x["count"] for x in g) == t["count"]))' "$OUT"
else
	skip "no kmem:kmalloc tracepoint"
	skip "no kmem:kmalloc tracepoint"
fi

# 21-24: a forced loss: one-page rings and 300000 close/dup rounds. Each close and dup carry the
# round number; a pair across lost events would join two rounds.
run_report "$P" multi-trace -e 'syscalls:sys_enter_close/fd>=1000000/' \
	-e 'syscalls:sys_enter_dup/fildes>=1000000/' --lower 100s -m 1 --format json -- "$W" closedup 300000
check "loss: exit 0 (exit $RC)" test "$RC" -eq 0
if grep -q 'lost [1-9][0-9]* events on cpu' "$ERR"; then
	# A loss on another CPU's ring is told by its LOST record only at that ring's next event:
	# the session hears it first from the kernel's counts (lost_early, loss_watch.h)
	check "loss: every pair joins the close and the dup of one round" json_check '
import json, sys
bad = n = 0
for l in open(sys.argv[1]):
    o = json.loads(l)
    if o.get("outlier"):
        n += 1
        bad += o["start"]["fields"]["fd"] != o["end"]["fields"]["fildes"]
s = [x for x in map(json.loads, open(sys.argv[1])) if x.get("pair") and x.get("final")][0]
print("# pairs %d, across rounds %d, starts invalidated by losses %d" % (n, bad, s["outcomes"]["lost"]))
# under a loss in every round (a slow consumer: ASan) every start is invalidated: none pairs
sys.exit(not (bad == 0 and (n > 0 or s["outcomes"]["lost"] > 0)))' "$OUT"
	check "loss: starts invalidated (outcome lost > 0) and lost windows counted" json_check '
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
s = [x for x in o if x.get("pair") and x.get("final")][0]
sys.exit(not (s["outcomes"]["lost"] > 0 and s["lost_windows"] > 0 and s["count"] < 300000))' "$OUT"
	check "loss: no latency above the run's own length" json_check '
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
s = [x for x in o if x.get("pair") and x.get("final")][0]
out = [x for x in o if x.get("outlier")]
if not out:  # nothing paired (see above): no latency at all
    sys.exit(not (s["count"] == 0 and s["max_ns"] is None))
span = max(x["end"]["time"] for x in out) - min(x["start"]["time"] for x in out)
sys.exit(not (s["max_ns"] <= span))' "$OUT"
else
	skip "no loss forced on this machine (the rings kept up)"
	skip "no loss forced on this machine (the rings kept up)"
	skip "no loss forced on this machine (the rings kept up)"
fi

# A loss whose LOST record never comes (nothing more is written on that CPU): made certain by
# the workload, which stops perfscope (SIGSTOP) while it fills CPU B's one-page ring with closes,
# then ends the call with a dup on CPU A. The closes before the loss must not pair with it; a
# close/dup after it pairs.
read -r CPU_A CPU_B _ <<<"$(usable_cpus)"
KMAJ=$(uname -r | cut -d. -f1)
if [ -n "${CPU_B:-}" ] && [ "$KMAJ" -ge 6 ]; then
	run_report "$P" multi-trace -e 'syscalls:sys_enter_close/fd>=2000000/' \
		-e 'syscalls:sys_enter_dup/fildes>=2000000/' -m 1 --lower 100s --format json -- \
		"$W" lossrace 2000 "$CPU_A" "$CPU_B"
	check "untold loss: a loss on CPU $CPU_B with no LOST record yet was lost (exit $RC)" \
		sh -c "[ $RC -eq 0 ] && grep -q 'lost [1-9][0-9]* events on cpu $CPU_B' '$ERR'"
	check "untold loss: the end after it pairs with no start from before it; the pair after it pairs" json_check '
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
pairs = [(x["start"]["fields"]["fd"], x["end"]["fields"]["fildes"]) for x in o if x.get("outlier")]
s = [x for x in o if x.get("pair") and x.get("final")][0]
print("# pairs %s, outcomes %s" % (pairs, s["outcomes"]))
sys.exit(not (pairs == [(2002001, 2002001)] and s["outcomes"]["no_start"] == 1 and s["outcomes"]["lost"] > 0))' "$OUT"
else
	skip "untold loss: needs two CPUs, and Linux 6.0+ for the per-event lost counts"
	skip "untold loss: needs two CPUs, and Linux 6.0+ for the per-event lost counts"
fi

# 25-30: usage errors
expect_rc "one -e group without --cycle" 2 "$P" multi-trace -e "$ENTER" -- true
expect_rc "--impl bogus" 2 "$P" multi-trace -e "$ENTER" -e "$EXIT" --impl bogus -- true
expect_rc "--detail without --than" 2 "$P" multi-trace -e "$ENTER" -e "$EXIT" --detail -- true
expect_rc "--than without a time" 2 "$P" multi-trace -e "$ENTER" -e "$EXIT" --than 3parsecs -- true
expect_rc "key= naming no field" 2 "$P" multi-trace -e "$ENTER//key=nosuchfield/" -e "$EXIT" -- true
expect_rc "--detail with an unknown word" 2 "$P" multi-trace -e "$ENTER" -e "$EXIT" --than 1ms \
	--detail=sideways -- true

# perf-prof's -e ...,page-faults//ATTR/: the software event in an event list, beside a tracepoint.
# The truth: every getppid call pairs (the workload's 100; a sanitizer runtime makes a few more
# of its own); each fault starts a pair that the next call replaces, or still open at the end
run_capture "$P" multi-trace -e 'syscalls:sys_enter_getppid//key=common_pid/,page-faults//key=_tid/' \
	-e 'syscalls:sys_exit_getppid//key=common_pid/' -- "${WORKLOAD:?}" getppid 100
calls=$(sed -n 's/.*multi-trace: syscalls:sys_enter_getppid: \([0-9]*\) events.*/\1/p' "$ERR")
check "page-faults//key=_tid/ in an event list: exit $RC, all $calls calls (>= 100) paired" \
	bash -c "[ $RC -eq 0 ] && [ '${calls:-0}' -ge 100 ] && grep -q 'outcomes: paired $calls, ' '$ERR'"
pf=$(sed -n 's/.*multi-trace: page-faults: \([0-9]*\) events.*/\1/p' "$ERR")
ro=$(sed -n 's/.*replaced \([0-9]*\), no_start [0-9]*, open \([0-9]*\),.*/\1 \2/p' "$ERR")
check "each of the $pf faults started a pair: replaced + open ($ro)" \
	test -n "$pf" -a "$pf" -gt 0 -a "$pf" -eq "$(( ${ro% *} + ${ro#* } ))"
expect_rc "page-faults/-N 10/ as an event: usage error" 2 "$P" multi-trace -e 'page-faults/-N 10/' \
	-e 'syscalls:sys_exit_getppid//key=common_pid/' --duration 0.1

done_testing
