#!/bin/bash
# CLI tests of `perfscope trace`: exact event counts, exact lost accounting, JSON, filters, stop conditions, bad input.
# shellcheck source=tests/cli/tap.sh
source "$(dirname "$0")/tap.sh"
P=${PERFSCOPE:?}
GEN=${BUILD_ROOT:?}/bench/gen_events
TP=syscalls:sys_enter_getppid

plan 91
if ! need_root; then
	skip_all "needs root (tracepoints)"
fi
if [ ! -x "$GEN" ]; then
	skip_all "bench/gen_events not built"
fi
if ! "$P" trace -e $TP --duration 0.01 >/dev/null 2>&1; then
	skip_all "no $TP tracepoint on this kernel"
fi

# stats: "perfscope trace: EVENT: N events, M lost" -> "N M"
stat_of() { sed -n "s/^perfscope trace: $1: \([0-9]*\) events, \([0-9]*\) lost$/\1 \2/p" "$2" | tail -1; }

# 1-3: exactly N events from a command making exactly N calls
run_capture "$P" trace -e $TP -- "$GEN" -q getppid 5000
lines=$(wc -l <"$OUT")
if [ "$RC" -eq 0 ] && [ "$lines" -eq 5000 ]; then ok "5000 calls -> 5000 lines"; else fail "5000 calls -> $lines lines (exit $RC)"; fi
set -- $(stat_of $TP "$ERR")
if [ "$1" = 5000 ] && [ "$2" = 0 ]; then ok "stderr says 5000 events, 0 lost"; else fail "stderr stats: $*"; sed 's/^/#   /' "$ERR" | head; fi
if grep -q "sys_enter_getppid" "$ERR"; then ok "stdout has events only, stats on stderr"; else fail "no stats on stderr"; fi

# the JSON stream says what it is missing at its end: a 1-page ring overflows on 200000 calls
# (or, on a machine fast enough to keep up, nothing is missing and there is no such line)
run_capture "$P" trace -e $TP --format json -m 1 -- "$GEN" -q getppid 200000
check "JSON: event objects + {\"incomplete\"}'s lost + kernel_dropped = the 200000 calls" python3 -c '
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1])]
ev = [o for o in objs if "event" in o]
inc = [o["incomplete"] for o in objs if "incomplete" in o]
assert len(ev) + len(inc) == len(objs), "an object neither an event nor the note"
if not inc:
    assert len(ev) == 200000, len(ev)
else:
    i = inc[0]
    assert len(inc) == 1 and objs[-1] == {"incomplete": i} and i["final"], inc
    assert i["seen"] == len(ev) + i["output_dropped"] + i["filtered"], (i, len(ev))
    assert i["seen"] + i["lost"] + i["kernel_dropped"] == 200000, i
' "$OUT"

# events dropped on purpose by --sampling-limit are "filtered", so the note's counts add up
run_capture "$P" trace -e $TP --format json -m 1 --sampling-limit 1000 -- "$GEN" -q getppid 200000
check "JSON, --sampling-limit: objects + output_dropped + filtered = seen, seen + lost + kernel_dropped = 200000" python3 -c '
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1])]
ev = [o for o in objs if "event" in o]
inc = [o["incomplete"] for o in objs if "incomplete" in o]
if inc:
    i = inc[0]
    assert i["seen"] == len(ev) + i["output_dropped"] + i["filtered"], (i, len(ev))
    assert i["seen"] + i["lost"] + i["kernel_dropped"] == 200000, i
else:
    assert len(ev) <= 200000, len(ev)
' "$OUT"


OFILE=$(mktemp)
run_capture "$P" trace -e $TP -o "$OFILE" -- sh -c "'$GEN' -q getppid 300; echo from-command"
check "-o: the command's output alone on stdout" test "$RC" -eq 0 -a "$(cat "$OUT")" = from-command
# (sh makes a getppid call of its own: count gen_events' lines)
check "-o: 300 calls -> 300 events in the file" test "$(grep -c '^ *gen_events .*sys_enter_getppid' "$OFILE")" -eq 300
rm -f "$OFILE"
expect_rc "-o into a directory that does not exist" 1 "$P" trace -e $TP -o /nonexistent/psc/x -- true

# 4-5: the kernel filter applies
run_capture "$P" trace --no-order -e "$TP/common_pid>0/" -- "$GEN" -q getppid 3000
if [ "$(wc -l <"$OUT")" -eq 3000 ]; then ok "filter common_pid>0 keeps all 3000 (--no-order)"; else fail "filter kept $(wc -l <"$OUT")"; fi
run_capture "$P" trace -e "$TP/common_pid==1/" -- "$GEN" -q getppid 3000
if [ "$RC" -eq 0 ] && [ ! -s "$OUT" ]; then ok "filter common_pid==1 keeps none"; else fail "filter common_pid==1: exit $RC, $(wc -l <"$OUT") lines"; fi

# 6-7: when the ring overflows (1 page, stdout a slow pipe), printed + lost == N exactly
N=300000
OUTF=$(mktemp); _tap_tmpfiles+=("$OUTF")
run_capture bash -c "'$P' trace -m 1 --format json -e $TP -- '$GEN' -q getppid $N | (sleep 1; cat > '$OUTF')"
set -- $(stat_of $TP "$ERR")
printed=$(grep -c '"event"' "$OUTF")
diag "printed $printed, stats $*"
if [ -n "$1" ] && [ "$1" -eq "$printed" ] && [ $(($1 + $2)) -eq $N ]; then ok "printed ($printed) + lost ($2) = $N"; else fail "printed $printed, stats '$*', want sum $N"; fi
if [ "${2:-0}" -gt 0 ] && grep -q "lost [0-9]* events on cpu [0-9]" "$ERR"; then ok "losses reported per CPU"; else fail "no 'lost N events on cpu C' line"; sed 's/^/#   /' "$ERR" | head; fi
# ... and what would have kept them: a bigger -m with the value to try, a filter, --no-order
if grep -q "^perfscope trace: to lose fewer: a bigger ring, e.g. -m 4 (now 1 pages, .*; a kernel filter.*; or --no-order" "$ERR"; then
	ok "the loss message says what helps (-m 4, a filter, --no-order)"
else fail "no advice after losses"; grep "lose fewer" "$ERR" | sed 's/^/#   /'; fi

# 8-9: JSON: one valid object per line, typed fields
run_capture "$P" trace --format json -e sched:sched_switch -- "$GEN" -q pingpong 200
if python3 -c '
import json, sys
n = 0
for line in open(sys.argv[1]):
    o = json.loads(line)
    if "incomplete" in o:
        continue  # what the stream missed, at its end
    assert isinstance(o["time"], int) and isinstance(o["cpu"], int) and isinstance(o["pid"], int)
    assert o["event"] == "sched:sched_switch"
    f = o["fields"]
    assert isinstance(f["prev_pid"], int) and isinstance(f["prev_comm"], str)
    n += 1
assert n > 0
' "$OUT"; then ok "JSON lines parse, fields typed"; else fail "bad JSON"; head -2 "$OUT" | sed 's/^/#   /'; fi
run_capture "$P" trace --format json -e "$TP//alias=gp/" -- "$GEN" -q getppid 10
if [ "$(grep -c '"event":"gp"' "$OUT")" -eq 10 ]; then ok "alias names the event"; else fail "alias: $(head -1 "$OUT")"; fi

# 10: text line layout: comm pid/tid [cpu] time: event: fields
run_capture "$P" trace -e sched:sched_switch -- "$GEN" -q pingpong 50
if grep -qE '^ *[^ ].* +[0-9]+/[0-9]+ \[[0-9]{3}\] [0-9]+\.[0-9]{6}: sched:sched_switch: prev_comm=.* ==> next_comm=' "$OUT"; then
	ok "text lines carry comm, pid/tid, cpu, time, name, print fmt"; else fail "text layout: $(head -1 "$OUT")"; fi

# 11: time order (the default): time never goes back across CPUs
run_capture "$P" trace -e sched:sched_switch,$TP -- "$GEN" -q -j 2 getppid 20000
if awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) { t = substr($i, 1, length($i) - 1) + 0; if (t < last) bad++; last = t } } END { exit bad > 0 }' "$OUT" &&
	printed=$(grep -c sys_enter_getppid "$OUT") && set -- $(stat_of $TP "$ERR") &&
	[ "$printed" = "$1" ] && [ $(($1 + $2)) -eq 40000 ]; then ok "time order: 40000 events (printed + lost), time never goes back"
else fail "--order: out of order, or printed $printed + stats '$*' != 40000"; fi

# 12: the command's exit status is passed through
expect_rc "command status passed through" 5 "$P" trace -e $TP -- sh -c 'exit 5'

# 13-19: bad input
expect_rc "unknown filter field" 2 "$P" trace -e "sched:sched_switch/nope==1/" --duration 0.1
if grep -q "prev_comm" "$ERR"; then ok "unknown field: the event's fields are listed"; else fail "fields not listed"; fi
expect_rc "filter on a software event" 2 "$P" trace -e "page-faults/x==1/" --duration 0.1
expect_rc "-m not a power of two" 2 "$P" trace -m 3 -e $TP --duration 0.1
expect_rc "'--' with no command after it" 2 "$P" trace -e $TP --duration 0.1 --
expect_rc "command not found" 127 "$P" trace -e $TP -- /nonexistent/perfscope-cmd
if grep -q "cannot run '/nonexistent/perfscope-cmd'" "$ERR"; then ok "says which command cannot run"; else fail "no clear message"; fi
expect_rc "no -e" 2 "$P" trace --duration 0.1

# 20: a pid that does not exist
nopid=$(($(cat /proc/sys/kernel/pid_max) - 1))
while [ -e /proc/$nopid ]; do nopid=$((nopid - 1)); done
expect_rc "nonexistent pid" 1 "$P" trace -e $TP -p $nopid

# 21: a traced pid that exits mid-run stops the trace cleanly
sleep 0.5 &
spid=$!
run_capture timeout 10 "$P" trace -e sched:sched_switch -p $spid
wait $spid 2>/dev/null
if [ "$RC" -eq 0 ] && grep -q "process followed exited; stopped" "$ERR"; then ok "-p target exits: clean stop"; else fail "-p exit: rc $RC"; sed 's/^/#   /' "$ERR" | head -3; fi

# 22: closed pipe on stdout: stop cleanly and say so
run_capture timeout 20 bash -c "'$P' trace -e $TP -- '$GEN' -q getppid 2000000 | head -1 >/dev/null; echo \${PIPESTATUS[0]} >&2"
if grep -q "standard output was closed" "$ERR" && [ "$(tail -1 "$ERR")" = 0 ]; then ok "closed pipe: clean stop, reported"; else fail "closed pipe: $(tail -3 "$ERR" | tr '\n' ' ')"; fi

# 23: full disk on stdout
run_capture bash -c "'$P' trace -e $TP -- '$GEN' -q getppid 100000 > /dev/full"
if [ "$RC" -eq 1 ] && grep -q "No space left" "$ERR"; then ok "full disk: exit 1, reported"; else fail "full disk: rc $RC"; fi

# 24: SIGINT stops cleanly with the statistics
ERRF=$(mktemp); _tap_tmpfiles+=("$ERRF")
"$P" trace -v -e sched:sched_switch -i 100 >/dev/null 2>"$ERRF" &
tpid=$!
wait_running "$ERRF" $tpid
kill -INT $tpid
wait $tpid
rc=$?
if [ $rc -eq 0 ] && grep -q "sched:sched_switch: [0-9]* events, [0-9]* lost" "$ERRF"; then ok "SIGINT: clean stop with statistics"; else fail "SIGINT: rc $rc"; fi


# 25: SIGUSR1 prints the counts so far and the trace goes on
ERRF=$(mktemp); _tap_tmpfiles+=("$ERRF")
"$P" trace -v -e sched:sched_switch >/dev/null 2>"$ERRF" &
tpid=$!
# each SIGUSR1 once the previous one was answered (two pending ones would merge into one);
# the first once the trace runs (-v's running line)
stat_lines() { grep -c "sched:sched_switch: [0-9]* events, [0-9]* lost" "$ERRF"; }
wait_running "$ERRF" $tpid
for want in 1 2; do
	kill -USR1 $tpid
	for _ in $(seq 600); do [ "$(stat_lines)" -ge $want ] && break; sleep 0.05; done
done
kill -INT $tpid
wait $tpid
rc=$?
if [ $rc -eq 0 ] && [ "$(grep -c "sched:sched_switch: [0-9]* events, [0-9]* lost" "$ERRF")" -eq 3 ]; then
	ok "SIGUSR1: current counts, twice, then the final ones"
else fail "SIGUSR1: rc $rc"; sed 's/^/#   /' "$ERRF" | head -5; fi

# 26: -i: counts per event every interval, then the totals
run_capture "$P" trace -i 100 -e $TP -- "$GEN" -q -r 10000 getppid 5000
# interval lines say so, and are not taken for the totals (the one line without the suffix)
if [ "$(grep -c "^perfscope trace: $TP: [0-9]* events, [0-9]* lost in the last 100 ms$" "$ERR")" -ge 1 ] &&
	[ "$(grep -c "^perfscope trace: $TP: [0-9]* events, [0-9]* lost$" "$ERR")" -eq 1 ] &&
	[ "$(stat_of $TP "$ERR")" = "5000 0" ]; then
	ok "-i 100: interval lines marked as such, then the totals: 5000 events, 0 lost"; else fail "-i: $(tr '\n' ' ' <"$ERR")"; fi

# 27-28: sampled software events: period= and freq=
run_capture "$P" trace --format json -e "cpu-clock//period=100000/" -- "$GEN" -q getppid 300000
if [ -s "$OUT" ] && python3 -c '
import json, sys
for line in open(sys.argv[1]):
    o = json.loads(line)
    if "incomplete" in o:
        continue  # what the stream missed, at its end
    assert o["event"] == "cpu-clock" and o["period"] == 100000 and o["ip"].startswith("0x")
' "$OUT"; then ok "cpu-clock//period=100000/: samples with ip and period"; else fail "cpu-clock period: rc $RC, $(head -1 "$OUT")"; fi
run_capture "$P" trace --format json -e "task-clock//freq=2000/" -- "$GEN" -q getppid 300000
if [ "$RC" -eq 0 ] && [ -s "$OUT" ] && grep -q '"event":"task-clock"' "$OUT"; then ok "task-clock//freq=2000/: sampled by frequency"
else fail "task-clock freq: rc $RC"; fi

# 29: software events counted one by one carry the faulting address
run_capture "$P" trace --format json -e page-faults -- "$GEN" -q getppid 10
if [ -s "$OUT" ] && python3 -c '
import json, sys
for line in open(sys.argv[1]):
    o = json.loads(line)
    if "incomplete" in o:
        continue  # what the stream missed, at its end
    assert o["event"] == "page-faults" and o["period"] == 1 and o["addr"].startswith("0x")
' "$OUT"; then ok "page-faults: every fault, with its address"; else fail "page-faults: rc $RC"; fi

# 30-31: hardware events where present; here (no PMU) a clear refusal, and the rest keeps working
run_capture "$P" trace -e cycles -- "$GEN" -q getppid 100000
if [ "$RC" -eq 1 ] && grep -q "not supported on this machine" "$ERR" && grep -q "none of the events can be used" "$ERR"; then
	ok "cycles without a PMU: 'not supported on this machine', exit 1"
elif [ "$RC" -eq 0 ] && grep -q ": cycles: " "$OUT"; then
	ok "cycles sampled (this machine has a hardware PMU)"
else fail "cycles: rc $RC: $(head -2 "$ERR" | tr '\n' ' ')"; fi
run_capture "$P" trace -e cycles,$TP -- "$GEN" -q getppid 1000
if [ "$RC" -eq 0 ] && [ "$(grep -c "$TP" "$OUT")" -eq 1000 ]; then ok "cycles,$TP: the tracepoint still traced (1000 events)"
else fail "mixed: rc $RC, $(grep -c "$TP" "$OUT") events"; fi

# 32: --order and --no-order together are a usage error
expect_rc "--order with --no-order" 2 "$P" trace --order --no-order -e $TP --duration 0.1

# 33-34: a filter the grammar allows but the kernel refuses: usage error pointing at the part
expect_rc "filter refused by the kernel" 2 "$P" trace -e "$TP/common_pid > 0 && __syscall_nr == 99999999999999999999999/" -- true
if grep -q "the kernel rejected '__syscall_nr == 99999999999999999999999'" "$ERR" && grep -q "has fields: .*common_pid" "$ERR" &&
	grep -qx "$(printf '%20s^')" "$ERR"; then ok "kernel-refused filter: the part, a caret under it, the fields"
else fail "kernel-refused filter message"; sed 's/^/#   /' "$ERR" | head -4; fi

# 35: fixed byte arrays (__u8 daddr[4]) are JSON arrays of numbers, not strings
if [ ! -e /sys/kernel/tracing/events/sock/inet_sock_set_state ] && [ ! -e /sys/kernel/debug/tracing/events/sock/inet_sock_set_state ]; then
	skip "no sock:inet_sock_set_state tracepoint"
else
	run_capture "$P" trace --format json -e sock:inet_sock_set_state -- python3 -c '
import socket
s = socket.socket()
try:
    s.connect(("127.0.0.1", 1))
except OSError:
    pass'
	if [ "$RC" -eq 0 ] && python3 -c '
import json, sys
evs = [e for e in map(json.loads, open(sys.argv[1])) if "event" in e]
assert evs and all(e["fields"]["daddr"] == [127, 0, 0, 1] and len(e["fields"]["daddr_v6"]) == 16 for e in evs)
' "$OUT"; then ok "u8 arrays in JSON: daddr == [127, 0, 0, 1]"; else fail "u8 arrays in JSON: $(head -c 400 "$OUT")"; fi
fi

# 36: -G: exactly the calls made inside a cgroup2 group of our own, none of those outside it; the
# events are open once the first interval line is out
cg2=$(awk '$3 == "cgroup2" {print $2; exit}' /proc/mounts)
name=psc-trace-test.$$
if [ -n "$cg2" ] && mkdir "$cg2/$name" 2>/dev/null; then
	out=$(mktemp) err=$(mktemp)
	_tap_tmpfiles+=("$out" "$err")
	"$P" trace -G "$name" -i 50 --duration 20 -e $TP >"$out" 2>"$err" &
	tp=$!
	for _ in $(seq 200); do [ -s "$err" ] && break; sleep 0.05; done
	sh -c "echo \$\$ >'$cg2/$name/cgroup.procs' && exec '$GEN' -q getppid 7"
	"$GEN" -q getppid 5
	kill -INT $tp
	wait $tp
	rc=$?
	rmdir "$cg2/$name"
	set -- $(stat_of $TP "$err")
	if [ $rc -eq 0 ] && [ "$(wc -l <"$out")" -eq 7 ] && [ "$1" = 7 ]; then ok "-G CGROUP: the 7 calls made in the group, not the 5 outside"
	else fail "-G: rc $rc, $(wc -l <"$out") lines, stats '$*'"; fi
else
	skip "no cgroup2 mount where a test group can be made"
fi

# 37: tracefs not readable by the user (root's, mode 0700, by default): a runtime failure that
# says so, not "unknown tracepoint"
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
if ! command -v setpriv >/dev/null || ! "${NOBODY[@]}" test -x "$P" -a -x "$GEN" 2>/dev/null; then
	skip "setpriv cannot drop to nobody here, or nobody cannot run the build's binaries"
elif "${NOBODY[@]}" test -r /sys/kernel/tracing/events/syscalls; then
	skip "tracefs is readable by unprivileged users here"
else
	run_capture "${NOBODY[@]}" "$P" trace -e $TP --duration 0.1
	if [ "$RC" -eq 1 ] && grep -q "permission denied (tracefs is readable by root only" "$ERR"; then
		ok "tracefs unreadable: exit 1, says permission denied"
	else fail "tracefs unreadable: exit $RC"; sed 's/^/#   /' "$ERR" | head -3; fi
fi

# 38-39: an unprivileged user (no capabilities) traces user-space events of their own command
# (perf_event_paranoid 2 allows that), and is told of the lock limit when -m asks too much
if ! command -v setpriv >/dev/null || ! "${NOBODY[@]}" test -x "$P" -a -x "$GEN" 2>/dev/null; then
	skip "nobody cannot run the build's binaries here"; skip "nobody cannot run the build's binaries here"
elif [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 2 ]; then
	skip "perf_event_paranoid > 2 refuses unprivileged users"; skip "perf_event_paranoid > 2"
else
	run_capture "${NOBODY[@]}" "$P" trace -e page-faults:u -- "$GEN" -q getppid 1
	set -- $(stat_of page-faults:u "$ERR")
	if [ "$RC" -eq 0 ] && [ "${1:-0}" -gt 0 ] && [ "$(wc -l <"$OUT")" -eq "$1" ]; then ok "unprivileged: page-faults:u of its own command ($1 events)"
	else fail "unprivileged page-faults:u: exit $RC"; sed 's/^/#   /' "$ERR" | head -3; fi
	run_capture "${NOBODY[@]}" "$P" trace -m 65536 -e page-faults:u -- true
	if [ "$RC" -eq 0 ]; then skip "no lock limit for this user here"
	elif [ "$RC" -eq 1 ] && grep -q "perf_event_mlock_kb\|more than the kernel could allocate" "$ERR"; then ok "-m over the lock limit: exit 1, says which limit"
	else fail "-m 65536 unprivileged: exit $RC"; sed 's/^/#   /' "$ERR" | head -3; fi
fi

# 40: a wildcard expands to each matching tracepoint, its filter applied to each: exactly N apiece
run_capture "$P" trace -e "syscalls:sys_e*_getppid/common_pid>0/" -- "$GEN" -q getppid 300
enter=$(stat_of syscalls:sys_enter_getppid "$ERR") exit_=$(stat_of syscalls:sys_exit_getppid "$ERR")
if [ "$RC" -eq 0 ] && [ "$enter" = "300 0" ] && [ "$exit_" = "300 0" ] && [ "$(wc -l <"$OUT")" -eq 600 ]; then
	ok "wildcard sys_e*_getppid with a filter: 300 enters and 300 exits"
else fail "wildcard: rc $RC, enter '$enter', exit '$exit_', $(wc -l <"$OUT") lines"; fi

# 41: throttling is not silent: with kernel.perf_event_max_sample_rate lowered for one run (and
# put back at once), a cpu-clock sampled faster than that is throttled, and stderr says so
MSR=/proc/sys/kernel/perf_event_max_sample_rate
msr_old=$(cat $MSR 2>/dev/null)
if [ -z "$msr_old" ] || ! echo 5000 >$MSR 2>/dev/null; then
	skip "cannot lower $MSR here"
else
	trap 'echo "$msr_old" >$MSR' EXIT
	run_capture "$P" trace --format json -e "cpu-clock//period=50000/" -- "$GEN" -q getppid 300000
	echo "$msr_old" >$MSR
	trap - EXIT
	if [ "$RC" -eq 0 ] && grep -q "^perfscope trace: cpu-clock: throttled [1-9][0-9]* times: .*max_sample_rate=5000" "$ERR"; then
		ok "throttling reported per event, with the limit"
	else fail "throttling: exit $RC"; sed 's/^/#   /' "$ERR" | head -3; fi
fi

# A kernel function in a print format (%pS/%ps) is named, as perf script names it: the timer a
# sleep arms runs hrtimer_wakeup. Root reads kallsyms unless kernel.kptr_restrict is 2.
if need_root && [ "$(cat /proc/sys/kernel/kptr_restrict 2>/dev/null)" != 2 ] &&
	"$P" list timer:hrtimer_start >/dev/null 2>&1; then
	run_capture "$P" trace -e timer:hrtimer_start -- sleep 0.1
	if [ "$RC" -eq 0 ] && grep -q "timer:hrtimer_start: .* function=hrtimer_wakeup " "$OUT"; then
		ok "kernel functions in print formats are named (function=hrtimer_wakeup)"
	else fail "print format functions: exit $RC"; sed 's/^/#   /' "$OUT" | head -3; fi
else
	skip "kallsyms hidden or no timer:hrtimer_start here"
fi

# A thread that existed before the trace and exits during it is named by its comm, as perf names
# it, not <...>: its parent reaps it at once, so /proc has forgotten it by the time its exit
# event is printed. The trace is known to run once its first -i line is out.
dir=$(mktemp -d); _tap_tmpfiles+=("$dir/fifo" "$dir/pid" "$dir/out" "$dir/err")
mkfifo "$dir/fifo"
sh -c "cat '$dir/fifo' >/dev/null & echo \$! >'$dir/pid'; wait" &
shp=$!
for _ in $(seq 100); do [ -s "$dir/pid" ] && break; sleep 0.02; done
"$P" trace -e sched:sched_process_exit -p "$(cat "$dir/pid")" -i 50 >"$dir/out" 2>"$dir/err" &
tp=$!
for _ in $(seq 200); do [ -s "$dir/err" ] && break; sleep 0.05; done
echo >"$dir/fifo"
wait $tp; rc=$?
wait $shp
if [ $rc -eq 0 ] && grep -Eq '^ +cat +[0-9]+/[0-9]+ .*sched:sched_process_exit: comm=cat ' "$dir/out"; then
	ok "a thread older than the trace keeps its name to its exit (not <...>)"
else fail "comm of a thread older than the trace: exit $rc: $(head -1 "$dir/out")"; fi
rm -rf "$dir"

# Every sample is one event: sched_stat_runtime counts nanoseconds (__perf_count), and without
# PERF_SAMPLE_PERIOD the kernel emitted one sample per unit until it throttled (8,800 lines of
# which 22 distinct, where perf record saw 858). Two CPU-busy processes, started stopped so both
# tracers can filter on their pids and be ready first, traced at once by perfscope trace and
# perf record: the counts agree, and no line repeats.
if ! command -v perf >/dev/null || [ ! -x "${WORKLOAD:-}" ] || ! "$P" list sched:sched_stat_runtime >/dev/null 2>&1; then
	skip "perf or sched:sched_stat_runtime missing"; skip "perf or sched:sched_stat_runtime missing"
else
	dir=$(mktemp -d)
	spin() { sh -c 'kill -STOP $$; exec "$0" spin-ms 700' "$WORKLOAD" & }
	spin; s1=$!
	spin; s2=$!
	for p in $s1 $s2; do
		for _ in $(seq 100); do grep -q '^State:.*T' /proc/$p/status 2>/dev/null && break; sleep 0.02; done
	done
	f="pid == $s1 || pid == $s2"
	mkfifo "$dir/ctl" "$dir/ack"
	perf record -q -e sched:sched_stat_runtime --filter "$f" -a -D -1 \
		--control "fifo:$dir/ctl,$dir/ack" -o "$dir/perf.data" 2>"$dir/perf.err" &
	pp=$!
	exec 8<>"$dir/ctl" 9<>"$dir/ack"
	echo enable >&8
	read -r -t 20 _ <&9
	"$P" trace -i 100 -e "sched:sched_stat_runtime/$f/" >"$dir/out" 2>"$dir/err" &
	tp=$!
	for _ in $(seq 400); do [ -s "$dir/err" ] && break; sleep 0.05; done
	kill -CONT $s1 $s2
	wait $s1 $s2
	kill -INT $tp $pp
	wait $tp
	wait $pp
	exec 8>&- 9>&-
	set -- $(stat_of sched:sched_stat_runtime "$dir/err")
	theirs=$(perf report -i "$dir/perf.data" --stats 2>/dev/null |
		awk '/sched:sched_stat_runtime stats:/ { s = 1; next } / stats:$/ { s = 0 } s && /^ *SAMPLE events:/ { print $3 }')
	lines=$(wc -l <"$dir/out")
	distinct=$(sort -u "$dir/out" | wc -l)
	diag "sched_stat_runtime: perfscope $* (events lost), $lines lines, $distinct distinct; perf record ${theirs:-?}"
	# both see every switch of the two processes; a few at the edges may differ
	if [ "${1:-0}" -gt 0 ] && [ "${theirs:-0}" -gt 0 ] && [ "$2" = 0 ] &&
		[ $((100 * ($1 > theirs ? $1 - theirs : theirs - $1))) -le $((5 * theirs + 200)) ]; then
		ok "sched_stat_runtime: $1 events, perf record $theirs in the same run"
	else fail "sched_stat_runtime: perfscope '$*', perf record '${theirs:-?}'"; sed 's/^/#   /' "$dir/perf.err" | head -3; fi
	if [ "$lines" -gt 0 ] && [ "$lines" -eq "$1" ] && [ $((100 * distinct)) -ge $((99 * lines)) ]; then
		ok "sched_stat_runtime: one line per event, none repeated ($distinct distinct of $lines)"
	else fail "sched_stat_runtime: $lines lines, $distinct distinct, $1 events"; fi
	rm -rf "$dir"
fi

# --per-cpu is stat's: trace refuses it instead of accepting it to do nothing
expect_rc "trace --per-cpu is an unknown option" 2 "$P" trace --per-cpu -e $TP -- true

# an ATTR where the filter goes (sys:name/stack/) is a usage error that writes the fix out
expect_rc "an ATTR in the filter's place" 2 "$P" trace -e "$TP/stack/" -- true
check "an ATTR in the filter's place: the error gives the form with an empty filter" \
	grep -qF "leave it empty to give ATTRs only: $TP//stack/" "$ERR"

# --overwrite: a flight recorder; the rings keep the newest events and are read once at the end,
# in time order across CPUs
run_capture "$P" trace -e syscalls:sys_enter_getppid --overwrite -m 1 -- "$GEN" -q getppid 100000
n=$(grep -c sys_enter_getppid "$OUT")
check "--overwrite -m 1: exit 0, the last events only ($n of 100000)" \
	sh -c "[ $RC -eq 0 ] && [ ${n:-0} -gt 0 ] && [ ${n:-0} -lt 100000 ]"
check "--overwrite: shown in time order" sh -c "awk '{print \$4}' '$OUT' | tr -d : | sort -c -n"
# -N: stops after N events, exit 0
run_capture "$P" trace -e syscalls:sys_enter_getppid -N 7 -- "$GEN" -q getppid 100000
check "-N 7: exactly 7 events, exit 0 (exit $RC)" sh -c "[ $RC -eq 0 ] && [ \$(grep -c getppid '$OUT') -eq 7 ]"
# --usage-self: perfscope's own CPU use on stderr every MS
run_capture "$P" trace -e sched:sched_switch --usage-self 100 --duration 0.5
check "--usage-self 100: own CPU use lines (exit $RC)" sh -c "[ $RC -eq 0 ] && grep -q 'own CPU use in the last' '$ERR'"
# --sampling-limit: at most N a second and CPU, the rest counted as dropped
run_capture "$P" trace -e syscalls:sys_enter_getppid --sampling-limit 10 -- "$GEN" -q getppid 50000
n=$(grep -c getppid "$OUT")
check "--sampling-limit 10: few events ($n), the rest reported dropped" \
	sh -c "[ ${n:-0} -ge 1 ] && [ ${n:-0} -le 40 ] && grep -q 'dropped by --sampling-limit' '$ERR'"
# -q: no statistics when nothing was lost
run_capture "$P" trace -e syscalls:sys_enter_getppid -q -- "$GEN" -q getppid 100
check "-q: no statistics lines on stderr" sh -c "[ $RC -eq 0 ] && ! grep -q 'events, 0 lost' '$ERR'"
# --no-kernel-callchain: user frames only. sched_switch has kernel frames (__schedule) under -g,
# unlike a sys_enter tracepoint, whose regs are the user's: without the option there must be some.
run_capture "$P" trace -e sched:sched_switch -g --format json -- "$GEN" -q pingpong 50
check "-g on sched_switch: kernel frames (the control of the next check)" python3 -c '
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
assert any(f["kernel"] for e in ev for f in e.get("stack", []))' "$OUT"
run_capture "$P" trace -e sched:sched_switch -g --no-kernel-callchain --format json -- "$GEN" -q pingpong 50
check "--no-kernel-callchain: no kernel frame in any stack" python3 -c '
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
assert ev and all(not f["kernel"] for e in ev for f in e.get("stack", []))
assert any(e.get("stack") for e in ev)' "$OUT"

# --flame-graph FILE: FILE.folded holds every stack once with its count, root first
FG=$(mktemp -d)
run_capture "$P" trace -e syscalls:sys_enter_getppid --flame-graph "$FG/g" -- "$GEN" -q getppid 200
check "--flame-graph: 200 stacks of gen_events counted in FILE.folded" sh -c "[ $RC -eq 0 ] &&
	[ \$(awk '/^gen_events;/ { n += \$NF } END { print n + 0 }' '$FG/g.folded') -eq 200 ]"
rm -rf "$FG"
# ... and a FILE that cannot be written is said before the run, not after it (the stacks lost)
run_capture "$P" trace -e syscalls:sys_enter_getppid --flame-graph /nonexistent/psc/g -- "$GEN" -q getppid 200
check "--flame-graph into a directory that does not exist: exit 1 before any event" \
	sh -c "[ $RC -eq 1 ] && [ ! -s '$OUT' ] && grep -q 'cannot write the folded stacks' '$ERR'"

# -p PID,PID: both followed; the trace goes on while one is left, stops when the last exits
sleep 0.3 &
s1=$!
sleep 1.2 &
s2=$!
run_capture timeout 10 "$P" trace -e syscalls:sys_enter_exit_group -p "$s1,$s2"
wait "$s1" "$s2" 2>/dev/null
check "-p PID,PID: stops when they have exited, exit 0 (exit $RC)" \
	sh -c "[ $RC -eq 0 ] && grep -q 'process followed exited' '$ERR'"
# the exit_group of the one that ends last is there: the first exit did not end the trace
check "-p PID,PID: events of both (their exit_group)" sh -c "grep -q ' $s1/$s1 ' '$OUT' && grep -q ' $s2/$s2 ' '$OUT'"

# --kernel-callchain alone: the kernel part of the stacks only
run_capture "$P" trace -e sched:sched_switch --kernel-callchain -N 20 --format json
check "--kernel-callchain alone: kernel frames only" python3 -c '
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
frames = [f for e in ev for f in e.get("stack", [])]
assert frames and all(f["kernel"] for f in frames), frames[:3]' "$OUT"

# System calls' string arguments are printed as the strings they point to, copied when the call is
# made (BPF, attached to the tracepoint while the trace runs): cat has exited long before its
# events are printed, so a late read could not show them.
run_capture "$P" trace -e syscalls:sys_enter_openat -- cat /etc/hostname
check "openat of cat: filename: \"/etc/hostname\" in place of the pointer (exit $RC)" \
	sh -c "[ $RC -eq 0 ] && grep -Eq ' cat +[0-9]+/[0-9]+ .*syscalls:sys_enter_openat: dfd: 0x[0-9a-f]{8,}, filename: \"/etc/hostname\", flags: 0x[0-9a-f]{8,}, mode: 0x[0-9a-f]{8,}\$' '$OUT'"
run_capture "$P" trace -e syscalls:sys_enter_openat --format json -- cat /etc/hostname
check "JSON: \"strings\":{\"filename\":\"/etc/hostname\"}, the pointer kept in fields" python3 -c '
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]  # not what cat prints
hit = [e for e in ev if e.get("strings", {}).get("filename") == "/etc/hostname"]
assert hit and hit[0]["fields"]["filename"].startswith("0x"), ev[-1:]' "$OUT"
# one buffer refilled with a new path for each call: every event shows its own call's path, never
# a later one's (the copy of the latest call replaces the earlier ones before they are printed)
run_capture "$P" trace -e syscalls:sys_enter_faccessat -- "$WORKLOAD" paths 3000
check "3000 paths through one buffer: each event has its own ($(grep -c 'filename: "/nonexistent/psc-' "$OUT") shown)" python3 -c '
import re, sys
got = re.findall(r"sys_enter_faccessat: dfd: \S+ filename: (\S+),", open(sys.argv[1]).read())
want = ["\"/nonexistent/psc-%d\"" % i for i in range(3000)]
assert len(got) == 3000, len(got)
bad = [(i, g) for i, g in enumerate(got) if g != want[i] and not g.startswith("0x")]
assert not bad, bad[:3]
assert sum(g.startswith("\"") for g in got) >= 2900, "too few read"' "$OUT"
run_capture "$P" trace -e syscalls:sys_enter_faccessat -- "$WORKLOAD" paths 0
check "a workload that makes no call: no event" test ! -s "$OUT"
# a buffer is not a string: write's buf stays a pointer
run_capture "$P" trace -e syscalls:sys_enter_write -- /bin/echo hello-psc
check "write's buf is printed as a pointer, not read" \
	sh -c "grep -Eq 'sys_enter_write: fd: 0x0*1, buf: 0x[0-9a-f]{8,}, count: 0x0*a\$' '$OUT' && ! grep -q 'sys_enter_write.*hello-psc' '$OUT'"
# the program is attached only while the trace runs
if command -v bpftool >/dev/null; then
	check "no BPF program of perfscope left once the trace ended" \
		sh -c "! bpftool prog show 2>/dev/null | grep -q 'name psc_ustr'"
else
	skip "bpftool is not installed"
fi

# the help's examples print something: a wake-up is emitted by the waker, here the shell writing
# into cat's pipe, which the trace follows (the old example, wake-ups of pid 1 with -p 1, could not)
run_capture "$P" trace -e 'sched:sched_wakeup/comm=="cat"/alias=wakeup_cat/' -- sh -c '(sleep 0.1; echo hi) | cat'
# (or, on a VM whose idle CPU drops it, that drop reported: kdrop.h)
check "help example: cat's wake-up by the shell, under its alias (exit $RC)" \
	sh -c "[ $RC -eq 0 ] && { grep -Eq ' sh +[0-9]+/[0-9]+ .*: wakeup_cat: comm=cat pid=' '$OUT' ||
		grep -q 'wakeup_cat: the kernel counted [0-9]* hits on cpu [0-9]* that never reached the ring' '$ERR'; }"
mapfile -t examples < <("$P" help trace | sed -n 's/^  perfscope \(trace .*\)$/\1/p')
check "the help still has ${#examples[@]} examples, none of them the one that printed nothing" \
	sh -c "[ ${#examples[@]} -ge 5 ] && ! '$P' help trace | grep -q 'pid==1/alias=wakeup1'"

# -p with -C (perf-prof takes both): the process's events only while it runs on those CPUs. A
# shell kept on CPU 0 that naps every 10 ms is switched out and in there; on any other CPU it
# never runs.
taskset -c 0 sh -c 'while :; do sleep 0.01; done' &
SPIN=$!
run_capture "$P" trace -e sched:sched_switch -p "$SPIN" -C 0 --duration 0.3
check "-p PID -C 0: the napping shell's switches, all on CPU 0 (exit $RC)" \
	sh -c "[ $RC -eq 0 ] && [ -s '$OUT' ] && ! grep -v ' \[000\] ' '$OUT' | grep -q ."
LAST=$(($(nproc) - 1))
if [ "$LAST" -gt 0 ]; then
	run_capture "$P" trace -e sched:sched_switch -p "$SPIN" -C "$LAST" --duration 0.3
	check "-p PID -C $LAST: nothing, it never runs there (exit $RC)" sh -c "[ $RC -eq 0 ] && [ ! -s '$OUT' ]"
else
	skip "one CPU: no other CPU to watch"
fi
kill "$SPIN"
wait "$SPIN" 2>/dev/null
expect_rc "-p with -a: a usage error" 2 "$P" trace -e sched:sched_switch -p 1 -a --duration 0.1

# perf-prof's "help" after the options: the events' formats, exit 0, nothing traced; after "--" it
# is a command like any other (none by that name here: 127)
run_capture "$P" trace -e 'sched:sched_wakeup/pid>0/,sched:sched_switch' help
check "trace -e ... help: exit 0 (exit $RC)" test "$RC" -eq 0
check "trace -e ... help: both formats, with their fields" \
	sh -c "grep -q 'field:int target_cpu;' '$OUT' && grep -q 'field:char prev_comm\[16\];' '$OUT'"
check "trace -e ... help: the ATTRs trace takes" grep -q "ATTRs trace takes: stack" "$OUT"
expect_rc "trace -e ... -- help: a command named help (none here)" 127 \
	env PATH=/nonexistent "$P" trace -e sched:sched_wakeup -- help

# cpus=LIST: that event on those CPUs only, the others everywhere; a list with none of the run's
# CPUs is a usage error naming the event
if [ "$(usable_cpus | wc -w)" -ge 2 ]; then
	run_capture "$P" trace -e 'sched:sched_switch//cpus=0/,sched:sched_wakeup' --duration 0.5 -- \
		sh -c 'for i in 1 2 3 4 5 6 7 8; do taskset -c 1 sleep 0.01; taskset -c 0 sleep 0.01; done'
	check "cpus=0: its switches only on CPU 0, the wakeups on any (exit $RC)" sh -c "[ $RC -eq 0 ] &&
		grep -E '\[[0-9]+\] [0-9.]+: sched:sched_switch:' '$OUT' | grep -q '\[000\]' &&
		! grep -E '\[[0-9]+\] [0-9.]+: sched:sched_switch:' '$OUT' | grep -qv '\[000\]'"
else
	skip "cpus=0 beside an event on every CPU: needs two CPUs"
fi
expect_rc "cpus=0 with -C 1: usage error" 2 "$P" trace -e 'sched:sched_switch//cpus=0/' -C 1 --duration 0.1
check "cpus=0 with -C 1: names the event and the CPUs watched" \
	grep -q 'sched:sched_switch: its cpus= names none of the CPUs this run watches (1)' "$ERR"

# perf-prof's --perfeval-cpus/--perfeval-pids: the events sampled in those contexts. The truth:
# 1000 getppid calls pinned on one CPU are 1000 events there and none on another CPU
read -r C1 C2 _ <<<"$(usable_cpus)"
if [ -n "${C2:-}" ]; then
	run_capture "$P" trace -e $TP --perfeval-cpus "$C1" -q -- taskset -c "$C1" "$GEN" -q getppid 1000
	check "--perfeval-cpus $C1: the 1000 calls pinned there (exit $RC)" \
		grep -q "perfeval cpus($C1) over the run: .* on 1 instances (1000 of 1000 events)" "$ERR"
	run_capture "$P" trace -e $TP --perfeval-cpus "$C2" -q -- taskset -c "$C1" "$GEN" -q getppid 1000
	check "--perfeval-cpus $C2: none of them" \
		grep -q "perfeval cpus($C2) over the run: .* on 0 instances (0 of 1000 events)" "$ERR"
else
	skip "one CPU"; skip "one CPU"
fi
# a thread's own calls, all of them its; past --sampling-limit per instance the run stops
"$GEN" -q getppid 2000000000 &
GP=$!
run_capture "$P" trace -p $GP -e $TP --perfeval-pids $GP --duration 0.5 -q
check "--perfeval-pids: every event of -p PID is that thread's" \
	grep -Eq "perfeval pids\($GP\) over the run: .* on 1 instances \(([1-9][0-9]*) of \1 events\)" "$ERR"
run_capture timeout 20 "$P" trace -p $GP -e $TP --perfeval-pids $GP --sampling-limit 10 -i 100 -q
check "--perfeval-pids over --sampling-limit: the run stops by itself, said (exit $RC)" \
	grep -q "perfeval pids($GP): .*, over --sampling-limit per instance: stopping" "$ERR"
kill $GP 2>/dev/null
wait $GP 2>/dev/null
expect_rc "--perfeval-cpus with no CPU list" 2 "$P" trace -e $TP --perfeval-cpus x --duration 0.1

done_testing
