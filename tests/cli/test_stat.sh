#!/usr/bin/env bash
# perfscope stat on known workloads: agreement with perf stat, JSON, intervals, per-CPU, bad input.
# Text counts go to standard error, as perf stat's do; JSON to standard output.
. "$(dirname "$0")/tap.sh"
P=$PERFSCOPE
W=$WORKLOAD
plan 115

# --- agreement with perf stat on a deterministic workload -----------------------------------
# value of EVENT from perfscope's JSON and from perf stat's CSV, for the same command
ps_value() { python3 -c 'import json,sys
for l in open(sys.argv[1]):
    o=json.loads(l)
    if o["event"]==sys.argv[2]: print(o["value"] if o["value"] is not None else "")' "$1" "$2"; }
perf_value() { awk -F, -v e="$2" '$3==e {print $1}' "$1"; }
close_enough() { python3 -c 'import sys
a,b,tol=float(sys.argv[1]),float(sys.argv[2]),float(sys.argv[3])
sys.exit(0 if abs(a-b) <= max(tol*max(a,b), 3) else 1)' "$@"; }

run_capture "$P" stat -e page-faults,context-switches,task-clock --format json -- "$W" faults 3000
check "stat -- workload exits 0" test "$RC" -eq 0
cp "$OUT" /tmp/psc_stat_json.$$
pf=$(ps_value /tmp/psc_stat_json.$$ page-faults)
cs=$(ps_value /tmp/psc_stat_json.$$ context-switches)
check "page-faults counted ($pf) >= 3000 touched pages" test "${pf:-0}" -ge 3000
if command -v perf >/dev/null && perf stat -x, -e page-faults true >/dev/null 2>&1; then
	perf stat -x, -e page-faults,context-switches,task-clock -o /tmp/psc_perf_csv.$$ -- "$W" faults 3000
	ppf=$(perf_value /tmp/psc_perf_csv.$$ page-faults)
	check "page-faults agree with perf stat ($pf vs $ppf, 2%)" close_enough "$pf" "$ppf" 0.02
	# 200 sleeps are 200 voluntary switches; preemption by other load adds a few at random, so
	# each side is the least of 3 runs
	a= b=
	for _ in 1 2 3; do
		"$P" stat -e context-switches --format json -- "$W" sleeps 200 >/tmp/psc_cs.$$ 2>/dev/null
		perf stat -x, -e context-switches -o /tmp/psc_perf_cs.$$ -- "$W" sleeps 200
		x=$(ps_value /tmp/psc_cs.$$ context-switches); y=$(perf_value /tmp/psc_perf_cs.$$ context-switches)
		if [ -z "$a" ] || [ "${x:-0}" -lt "$a" ]; then a=${x:-0}; fi
		if [ -z "$b" ] || [ "${y:-0}" -lt "$b" ]; then b=${y:-0}; fi
	done
	check "context-switches agree with perf stat ($a vs $b, least of 3 runs each, 10%)" close_enough "$a" "$b" 0.10
	# a sleep whose timer has already fired by the time the task blocks does not switch, so a
	# few of the 200 may be missing; far fewer would mean switches are not being counted
	check "200 sleeps give at least 190 context switches ($a)" test "${a:-0}" -ge 190
	rm -f /tmp/psc_perf_csv.$$ /tmp/psc_perf_cs.$$ /tmp/psc_cs.$$
else
	skip "perf stat is not usable here"; skip "perf stat is not usable here"; skip "perf stat is not usable here"
fi
rm -f /tmp/psc_stat_json.$$

# --- unsupported events do not stop the others -------------------------------------------
run_capture "$P" stat -e cycles,page-faults -- "$W" faults 100
if grep -q '<not supported>.*cycles' "$ERR"; then
	ok "cycles shown as <not supported> on this machine"
	check "page-faults still counted alongside" grep -Eq '^ +[0-9]+ +page-faults' "$ERR"
	check "the reason is on stderr" grep -q 'not supported on this machine' "$ERR"
else
	check "cycles counted (hardware PMU present)" grep -Eq '[0-9] +cycles' "$ERR"
	skip "hardware PMU present"; skip "hardware PMU present"
fi

# groups as written: counted together with a command (inherited, read per member); a group whose
# leader this machine lacks is unsupported as a whole, as in perf stat, and the rest still count
run_capture "$P" stat -e '{task-clock,page-faults,minor-faults},cycles' --format json -- "$W" faults 500
check "-e '{task-clock,page-faults,minor-faults}' with a command: every member counted" python3 -c '
import json, sys
o = {x["event"]: x for x in map(json.loads, open(sys.argv[1]))}
assert o["page-faults"]["value"] >= 500 and o["minor-faults"]["value"] >= 500, o
assert o["task-clock"]["value"] > 0, o' "$OUT"
run_capture "$P" stat -e '{cycles,page-faults},minor-faults' -- "$W" faults 100
if grep -q '<not supported>.*cycles' "$ERR"; then
	check "a group led by an unsupported event is <not supported>, the event outside counts" \
		sh -c "grep -q '<not supported>.*page-faults' '$ERR' && grep -Eq '^ +[0-9]+ +minor-faults' '$ERR'"
	run_capture "$P" stat -e '{cycles,page-faults},minor-faults' --format json -- "$W" faults 100
	check "JSON: the member's error blames its group's leader" python3 -c '
import json, sys
o = {x["event"]: x for x in map(json.loads, open(sys.argv[1]))}
assert o["page-faults"]["error"].startswith("page-faults: its group cannot be counted: cpu-cycles"), o' "$OUT"
else
	skip "this machine counts cycles"; skip "this machine counts cycles"
fi

# cache events: every one encodes to PERF_TYPE_HW_CACHE (unit test); here they need the PMU too
run_capture "$P" stat -e L1-dcache-load-misses,dTLB-loads,LLC-store-misses,page-faults -- "$W" faults 100
if [ "$(grep -c '<not supported>' "$ERR")" -eq 3 ]; then
	check "cache events <not supported>, page-faults counted in the same run (exit $RC)" \
		sh -c "[ $RC -eq 0 ] && grep -Eq '^ +[0-9]+ +page-faults' '$ERR' &&
			grep -q '<not supported>.*L1-dcache-load-misses' '$ERR' &&
			grep -q '<not supported>.*LLC-store-misses' '$ERR'"
else
	skip "this machine counts cache events"
fi

# --- exit status, JSON, intervals, per-CPU ------------------------------------------------
expect_rc "command exit status passed through" 3 "$P" stat -e task-clock -- sh -c 'exit 3'
expect_rc "command killed by SIGTERM gives 143" 143 "$P" stat -e task-clock -- sh -c 'kill -TERM $$'
run_capture "$P" stat -e task-clock,page-faults --format json -- "$W" faults 10
check "JSON output is one valid object per line" python3 -c 'import json,sys
ls=[json.loads(l) for l in open(sys.argv[1])]
assert len(ls)==2 and all("event" in o and "running_pct" in o for o in ls)' "$OUT"
# every line of interval, per-CPU JSON with an unsupported event is one object with its keys
run_capture "$P" stat -a -i 100 --duration 0.35 --per-cpu -e cycles,context-switches,msr/tsc/ --format json
check "JSON with -i and --per-cpu: one object per line, each complete (exit $RC)" python3 -c '
import json, sys, os
ls = [json.loads(l) for l in open(sys.argv[1])]
ncpu = os.cpu_count()
ivals = sorted({o["interval"] for o in ls})
assert len(ivals) >= 3, ivals
for o in ls:
    assert o["event"] in ("cycles", "context-switches", "msr/tsc/") and "interval" in o, o
    if o["supported"]:
        assert set(o) >= {"cpu", "value", "unit", "raw", "enabled_ns", "running_ns", "running_pct"}, o
    else:
        assert "cpu" not in o and "not supported" in o["error"], o
per = {}
for o in ls:
    per[o["interval"]] = per.get(o["interval"], 0) + 1
# an interval holds 1 line for the unsupported event, one per CPU for each other (no PMU here);
# with a PMU, cycles has one per CPU too
assert all(n in (1 + 2 * ncpu, 3 * ncpu) for n in per.values()), per' "$OUT"
run_capture "$P" stat -a -i 100 --duration 0.55 -e context-switches
n=$(grep -c 'context-switches' "$ERR")
check "interval mode prints one line per 100 ms ($n lines)" test "$n" -ge 4
ncpu=$(nproc)
run_capture "$P" stat -a --per-cpu --duration 0.2 -e context-switches,cpu-clock
n=$(grep -c '^CPU' "$ERR")
check "--per-cpu prints a line per CPU and event ($n)" test "$n" -eq $((ncpu * 2))
run_capture "$P" stat -C 0 --duration 0.2 -e cpu-clock --format json
check "-C 0 counts cpu-clock on one CPU" python3 -c 'import json,sys
o=json.loads(open(sys.argv[1]).readline()); assert o["value"]>0' "$OUT"

# --- -p, -t and -G targets ------------------------------------------------------------------
# -p: a process that sleeps 50 times; stat follows it and ends when it exits, like perf stat
(sleep 0.3; exec "$W" sleeps 50) &
wp=$!
run_capture timeout 20 "$P" stat -p $wp -e context-switches --format json
wait $wp
cs=$(ps_value "$OUT" context-switches)
check "-p PID: counts the process and ends with it (exit $RC, $cs switches)" \
	sh -c "[ $RC -eq 0 ] && [ ${cs:-0} -ge 50 ]"
# -p counts what the process forks after stat attached (inherit, as perf stat does): a shell
# that, once followed, runs the workload touching 2000 pages in a child
(sleep 0.3; exec sh -c "sleep 0.2; '$W' faults 2000; true") &
wp=$!
run_capture timeout 20 "$P" stat -p $wp -e page-faults --format json
wait $wp
pf=$(ps_value "$OUT" page-faults)
check "-p PID: children forked after attaching are counted ($pf page-faults for 2000 pages)" \
	test "${pf:-0}" -ge 2000
# -t: one thread, ended the same way
sleep 0.3 &
sp=$!
run_capture timeout 20 "$P" stat -t $sp -e task-clock
wait $sp
check "-t TID: ends when the thread does (exit $RC)" sh -c "[ $RC -eq 0 ] && grep -q task-clock '$ERR'"
# -G: a cgroup2 group of our own with a workload in it; the counters are known to be open once
# the first interval line is out, then the workload runs and stat is stopped
cg2=$(awk '$3 == "cgroup2" {print $2; exit}' /proc/mounts)
name=psc-test.$$
if need_root && [ -n "$cg2" ] && mkdir "$cg2/$name" 2>/dev/null; then
	out=$(mktemp)
	"$P" stat -G "$name" -i 100 --duration 20 -e page-faults --format json >"$out" 2>&1 &
	sp=$!
	for _ in $(seq 100); do [ -s "$out" ] && break; sleep 0.05; done
	sh -c "echo \$\$ >'$cg2/$name/cgroup.procs' && exec '$W' faults 2000"
	kill -INT $sp
	wait $sp
	rc=$?
	pf=$(python3 -c 'import json,sys
print(sum(json.loads(l)["value"] or 0 for l in open(sys.argv[1]) if l.startswith("{")))' "$out")
	check "-G CGROUP: counts the tasks of the cgroup (exit $rc, $pf page-faults for 2000 pages)" \
		sh -c "[ $rc -eq 0 ] && [ ${pf:-0} -ge 2000 ]"
	rm -f "$out"
	# stdin closed: the cgroup's fd must not become fd 0, which means "no cgroup" (whole machine)
	run_capture "$P" stat -G "$name" -e context-switches --duration 0.3 --format json <&-
	check "-G with stdin closed counts the empty cgroup, not the machine (exit $RC)" python3 -c '
import json, sys
o = json.loads(open(sys.argv[1]).readline())
assert o["value"] in (None, 0), o' "$OUT"
	rmdir "$cg2/$name"
	expect_rc "-G of a cgroup that does not exist" 2 "$P" stat -G "$name" --duration 0.1
else
	skip "no cgroup2 mount where a test group can be made"; skip "no cgroup2 mount"; skip "no cgroup2 mount"
fi

# --- SIGINT stops cleanly and prints --------------------------------------------------------
"$P" stat -v -a -e context-switches >/tmp/psc_int.$$ 2>&1 &
pid=$!
wait_running /tmp/psc_int.$$ $pid
kill -INT $pid
wait $pid
rc=$?
check "SIGINT: exit 0 (got $rc) and counts printed" sh -c "[ $rc -eq 0 ] && grep -q context-switches /tmp/psc_int.$$"
rm -f /tmp/psc_int.$$
# SIGTERM too; with a command, the command gets it and its status (143) is passed through
term_out=$(mktemp)
term_err=$(mktemp)
_tap_tmpfiles+=("$term_err")
"$P" stat -v -a -e context-switches --format json >"$term_out" 2>"$term_err" &
pid=$!
wait_running "$term_err" $pid
kill -TERM $pid
wait $pid
rc=$?
check "SIGTERM: exit 0 (got $rc) and the counts printed as JSON" sh -c "[ $rc -eq 0 ] && python3 -c 'import json,sys; json.loads(open(sys.argv[1]).readline())' '$term_out'"
"$P" stat -v -e context-switches -- sleep 30 >"$term_out" 2>&1 &
pid=$!
wait_running "$term_out" $pid
kill -TERM $pid
wait $pid
rc=$?
check "SIGTERM with a command: forwarded, exit 143 (got $rc), counts printed" sh -c "[ $rc -eq 143 ] && grep -q context-switches '$term_out'"
# --duration ends before the command: like perf stat --timeout, the command is stopped (stat
# reaps it before exiting), not left running behind
cmd_pid=$(mktemp)
run_capture "$P" stat -e context-switches --duration 0.2 -- sh -c "echo \$\$ >'$cmd_pid'; exec sleep 30"
check "--duration with a command: exit 0 (got $RC), counts printed, the command is not left running" \
	sh -c "[ $RC -eq 0 ] && grep -q context-switches '$ERR' && ! kill -0 \$(cat '$cmd_pid') 2>/dev/null"
rm -f "$cmd_pid"
rm -f "$term_out"

# --- bad input ------------------------------------------------------------------------------
# -e given twice: both lists are counted, as perf stat does (the second used to replace the first)
run_capture "$P" stat -e context-switches -e 'page-faults,cpu-migrations' --format json -- true
check "-e twice: the lists add up (exit $RC)" python3 -c '
import json, sys
names = [json.loads(l)["event"] for l in open(sys.argv[1])]
assert names == ["context-switches", "page-faults", "cpu-migrations"], names' "$OUT"
long_list=$(printf 'page-faults,%.0s' $(seq 300))page-faults
expect_rc "-e lists together longer than 4095 characters" 2 "$P" stat -e "$long_list" -e "$long_list" -- true
# perf's spellings of options perfscope spells differently name the equivalent
expect_rc "perf's -I" 2 "$P" stat -I 1000 -- true
check "perf's -I is answered with -i MS" grep -q "unknown option '-I'; -i MS prints every MS milliseconds" "$ERR"
expect_rc "-e without its value" 2 "$P" stat -e
check "a missing value is named as such" grep -q "option '-e' needs a value" "$ERR"
expect_rc "unknown option" 2 "$P" stat --bogus -- true
check "an unknown option is named as such" grep -q "unknown option '--bogus'" "$ERR"
expect_rc "'--' with no command after it" 2 "$P" stat -e task-clock --duration 0.1 --
check "the missing command is named as such" grep -q "'--' is not followed by a command" "$ERR"
# -o FILE: the counts go to FILE, the command keeps standard output for itself
OFILE=$(mktemp)
run_capture "$P" stat -e page-faults --format json -o "$OFILE" -- sh -c 'echo from-command'
check "-o: the command's output alone on stdout" test "$RC" -eq 0 -a "$(cat "$OUT")" = from-command
check "-o: the counts in the file, as JSON" grep -q '^{"event":"page-faults","canonical":"page-faults","supported":true' "$OFILE"
rm -f "$OFILE"
expect_rc "-o into a directory that does not exist" 1 "$P" stat -e page-faults -o /nonexistent/psc/x -- true
check "the file that cannot be written is named" grep -q "cannot write to '/nonexistent/psc/x'" "$ERR"
expect_rc "-o with an empty name" 2 "$P" stat -o '' -- true
expect_rc "empty event list" 2 "$P" stat -e '' -- true
expect_rc "unknown event" 2 "$P" stat -e page-fault -- true
check "unknown event suggests the close name" grep -q "page-faults" "$ERR"
expect_rc "filter on a non-tracepoint" 2 "$P" stat -e 'page-faults/pid==1/' -- true
check "the filter error says filters are for tracepoints" grep -q 'filters apply to tracepoints only' "$ERR"
if "$P" list 'sched:sched_switch' >/dev/null 2>&1; then
	expect_rc "filter naming an unknown field" 2 "$P" stat -e 'sched:sched_switch/badfield==1/' --duration 0.1
	check "the error lists the event's fields" grep -q "unknown field 'badfield'.*prev_pid.*next_pid" "$ERR"
else
	skip "no sched:sched_switch tracepoint"; skip "no sched:sched_switch tracepoint"
fi
expect_rc "CPU range going down" 2 "$P" stat -C 1-0 --duration 0.1
expect_rc "CPU that does not exist" 2 "$P" stat -C 99 --duration 0.1
expect_rc "CPU list that is not a number" 2 "$P" stat -C a --duration 0.1
expect_rc "nonexistent pid" 1 "$P" stat -p 999999 --duration 0.1
expect_rc "command that cannot be executed" 127 "$P" stat -e task-clock -- /nonexistent/cmd
check "a path that does not exist is not blamed on PATH" sh -c "grep -q \"cannot run '/nonexistent/cmd'\" '$ERR' && ! grep -q PATH '$ERR'"
expect_rc "command not in PATH" 127 "$P" stat -e task-clock -- psc-no-such-command
check "a name not found says PATH" grep -q 'not found in PATH' "$ERR"
noexec=$(mktemp)
chmod 644 "$noexec"
expect_rc "command that is not executable" 126 "$P" stat -e task-clock -- "$noexec"
rm -f "$noexec"
expect_rc "interval of 0" 2 "$P" stat -i 0 -a --duration 0.1
expect_rc "negative interval" 2 "$P" stat -i -5 -a --duration 0.1
# An fd limit below what one event per CPU needs, with a hard limit that forbids raising it.
run_capture bash -c "ulimit -n 6; exec '$P' stat -a -e context-switches,cpu-migrations,page-faults,task-clock,cpu-clock --duration 0.1"
check "RLIMIT_NOFILE too low: exit 1 with advice (exit $RC)" sh -c "[ $RC -eq 1 ] && grep -qi 'ulimit\|open files\|file descriptors' '$ERR'"
# A soft limit too low under a higher hard one is raised for perfscope only: the command keeps its own.
run_capture bash -c "ulimit -Sn 8; exec '$P' stat -e context-switches,cpu-migrations,page-faults,task-clock,cpu-clock -- sh -c 'ulimit -Sn'"
check "RLIMIT_NOFILE soft limit raised up to the hard one, the command still sees 8 (exit $RC)" \
	sh -c "[ $RC -eq 0 ] && [ \"\$(cat '$OUT')\" = 8 ] && grep -q 'cpu-clock' '$ERR'"

# perf_event_paranoid too strict for a user without privileges: run as nobody. At level 2 (the
# usual default) whole CPUs are refused, and a task's counters count its user space only, as perf
# stat does, saying so once. A lower level is raised to 2 for these commands and put back.
if need_root && id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null &&
	setpriv --reuid=nobody --regid=nogroup --clear-groups test -x "$P"; then
	para=/proc/sys/kernel/perf_event_paranoid
	old_para=$(cat $para)
	if [ "$old_para" -lt 2 ]; then
		trap 'echo "$old_para" >'"$para" EXIT
		echo 2 >$para
	fi
	as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
	run_capture as_nobody "$P" stat -a -e context-switches --duration 0.1
	check "paranoid, not root, -a: exit 1 naming perf_event_paranoid and CAP_PERFMON (exit $RC)" \
		sh -c "[ $RC -eq 1 ] && grep -q 'perf_event_paranoid is [0-9]' '$ERR' && grep -q CAP_PERFMON '$ERR'"
	run_capture as_nobody "$P" stat -e page-faults,task-clock -- "$W" faults 300
	check "paranoid, not root, own command: user space counted, as page-faults:u (exit $RC)" \
		sh -c "[ $RC -eq 0 ] && grep -Eq '^ +[0-9]{3,} +page-faults:u ' '$ERR' &&
			grep -Eq 'msec task-clock:u ' '$ERR'"
	check "paranoid, not root: the fallback is said once on stderr" \
		test "$(grep -c 'counting user space only' "$ERR")" -eq 1
	run_capture as_nobody "$P" stat -e page-faults:u -- "$W" faults 100
	check "paranoid, not root, :u given: counted, nothing to fall back from (exit $RC)" \
		sh -c "grep -Eq '^ +[0-9]+ +page-faults:u' '$ERR' && ! grep -q 'user space only' '$ERR'"
	if [ "$old_para" -lt 2 ]; then
		echo "$old_para" >$para
		trap - EXIT
	fi
else
	for i in 1 2 3 4; do skip "needs root, user nobody and setpriv, and $P executable by nobody"; done
fi
# -p takes a list, as perf and perf-prof do: both processes counted, and a pid given twice refused
sleep 30 &
s1=$!
sleep 30 &
s2=$!
run_capture "$P" stat -e context-switches --duration 0.3 -p "$s1,$s2"
kill "$s1" "$s2" 2>/dev/null
wait "$s1" "$s2" 2>/dev/null
check "-p PID,PID: both followed (exit $RC)" sh -c "[ $RC -eq 0 ] && grep -q \"process id '$s1,$s2'\" '$ERR'"
run_capture "$P" stat -e context-switches -p "$$,$$"
check "-p PID,PID with a pid twice: usage error (exit $RC)" sh -c "[ $RC -eq 2 ] && grep -q 'given twice' '$ERR'"
# --- where the counts go: standard error, as perf stat's; JSON on standard output --------------
run_capture "$P" stat -e page-faults -- sh -c 'echo to-stdout; echo to-stderr >&2'
check "text counts on stderr, the command's stdout alone on stdout (exit $RC)" \
	sh -c "[ $RC -eq 0 ] && [ \"\$(cat '$OUT')\" = to-stdout ] &&
		grep -q 'Performance counter stats for' '$ERR' && grep -Eq '^ +[0-9]+ +page-faults' '$ERR'"
run_capture sh -c "'$P' stat -e page-faults -- '$W' faults 10 >/dev/null"
check "stat -- cmd > /dev/null still shows the counts" grep -Eq '^ +[0-9]+ +page-faults' "$ERR"
run_capture "$P" stat -e page-faults --format json -- sh -c 'echo to-stderr >&2'
check "--format json stays on stdout, for pipes" sh -c "python3 -c 'import json,sys
json.loads(open(sys.argv[1]).read())' '$OUT' && [ \"\$(cat '$ERR')\" = to-stderr ]"
run_capture "$P" stat -x, -e page-faults -- true
check "-x CSV on stderr, as perf stat -x" sh -c "[ ! -s '$OUT' ] && grep -q ',page-faults,' '$ERR'"

# --- -a / -C with a command: the whole machine (those CPUs) while it runs --------------------
# A process that is not the command's, started before it and told to work through a fifo, is
# counted by -a -- COMMAND and not by -- COMMAND alone; stat stops when the command exits.
fifo=$(mktemp -u)
donef=$(mktemp -u)
mkfifo "$fifo"
sys_run() {
	rm -f "$donef"
	(
		read -r _ <"$fifo"
		"$W" faults 3000
		touch "$donef"
	) &
	local bg=$!
	run_capture timeout 60 "$P" stat "$@" -e page-faults --format json -- \
		sh -c "echo go >'$fifo'; while [ ! -e '$donef' ]; do sleep 0.05; done"
	wait $bg
}
sys_run -a
a_rc=$RC a_pf=$(ps_value "$OUT" page-faults)
sys_run
t_pf=$(ps_value "$OUT" page-faults)
check "-a -- COMMAND: the whole machine while it runs, stopped with it (exit $a_rc, $a_pf page-faults >= 3000; the command alone $t_pf)" \
	sh -c "[ $a_rc -eq 0 ] && [ ${a_pf:-0} -ge 3000 ] && [ ${t_pf:-0} -lt 3000 ]"
rm -f "$fifo" "$donef"
expect_rc "-a -- COMMAND: the command's exit status" 5 "$P" stat -a -e cs -- sh -c 'exit 5'
check "-a -- COMMAND: titled 'system wide', as perf" grep -q "counter stats for 'system wide':" "$ERR"
run_capture "$P" stat -C 0 --per-cpu -e cs,cpu-clock -- sleep 0.1
check "-C 0 --per-cpu -- COMMAND: CPU 0 alone, for each event (exit $RC)" \
	sh -c "[ $RC -eq 0 ] && [ \$(grep -c '^CPU0 ' '$ERR') -eq 2 ] && [ \$(grep -c '^CPU' '$ERR') -eq 2 ]"
expect_rc "-a with -p: still one or the other" 2 "$P" stat -a -p $$ --duration 0.1

# --- perf's derived columns -------------------------------------------------------------------
run_capture "$P" stat -e task-clock,page-faults,cs,duration_time -- "$W" faults 2000
check "text: CPUs utilized beside task-clock, a rate beside page-faults (exit $RC)" \
	sh -c "grep -Eq 'msec task-clock +# +[0-9.]+ CPUs utilized$' '$ERR' &&
		grep -Eq ' page-faults +# +[0-9.]+ [KMG]?/sec$' '$ERR'"
check "text: seconds user and seconds sys of the command" \
	sh -c "grep -Eq '^ +[0-9]+\.[0-9]{9} seconds user$' '$ERR' && grep -Eq '^ +[0-9]+\.[0-9]{9} seconds sys$' '$ERR'"
check "text: duration_time in ns, the time elapsed" python3 -c '
import re, sys
t = open(sys.argv[1]).read()
d = int(re.search(r"^ +(\d+) ns +duration_time$", t, re.M).group(1))
e = re.search(r"^ +([0-9.]+) seconds time elapsed$", t, re.M).group(1)
assert "%.9f" % (d / 1e9) == e, (d, e)' "$ERR"
run_capture "$P" stat -e task-clock,page-faults,cs,duration_time --format json -- "$W" faults 2000
check "JSON: the rate is per second of task-clock, CPUs utilized is task-clock over the wall clock" python3 -c '
import json, sys
o = {x["event"]: x for x in map(json.loads, open(sys.argv[1]))}
tc, pf, d = o["task-clock"], o["page-faults"], o["duration_time"]
assert tc["metric_unit"] == "CPUs utilized", tc
assert abs(tc["metric_value"] - tc["value"] * 1e6 / d["value"]) <= 1e-9 * tc["metric_value"], (tc, d)
rate = pf["value"] / (tc["value"] / 1e3)
mult = {"/sec": 1, "K/sec": 1e3, "M/sec": 1e6, "G/sec": 1e9}[pf["metric_unit"]]
assert abs(pf["metric_value"] * mult - rate) <= 1e-9 * rate, (pf, rate)
assert d["unit"] == "ns" and d["canonical"] == "duration_time" and "metric_value" not in d, d' "$OUT"
check "duration_time of 'sleep 0.2' is at least 0.2 s" python3 -c '
import json, subprocess, sys
r = subprocess.run([sys.argv[1], "stat", "-e", "duration_time", "--format", "json", "--", "sleep", "0.2"],
    capture_output=True, text=True)
assert json.loads(r.stdout)["value"] >= 200000000, r.stdout' "$P"
if command -v perf >/dev/null && perf stat -x, -e task-clock true >/dev/null 2>&1; then
	# side by side on the same workload: the same rows, units and derived figures' units
	perf stat -x, -e task-clock,page-faults,cs,cpu-migrations,cycles -o /tmp/psc_perf_x.$$ -- "$W" faults 500
	run_capture "$P" stat -x, -e task-clock,page-faults,cs,cpu-migrations,cycles -- "$W" faults 500
	check "-x, side by side with perf stat -x,: events, units, columns and the derived figures' units" python3 -c '
import re, sys
def rows(path):
    out = {}
    for l in open(path):
        f = l.rstrip("\n").split(",")
        if len(f) < 7 or l.startswith("#"):
            continue
        # the prefix (K, M) of a rate depends on the value
        out[f[2]] = (len(f), f[1], f[0].startswith("<"), re.sub("^[KMG]", "", f[6]))
    return out
a, b = rows(sys.argv[1]), rows(sys.argv[2])
assert a == b and len(a) == 5, (a, b)' /tmp/psc_perf_x.$$ "$ERR"
	rm -f /tmp/psc_perf_x.$$
	# and the text layout: where the event name, '#' and '( +-' stand on each line
	perf stat -r 3 -e task-clock,cs -o /tmp/psc_perf_r.$$ -- "$W" sleeps 2
	run_capture "$P" stat -r 3 -e task-clock,cs -- "$W" sleeps 2
	check "text side by side with perf stat -r 3: the same columns for names, figures and spread" python3 -c '
import sys
def cols(path):
    out = {}
    for l in open(path):
        for ev in ("task-clock", "cs"):
            if (" %s " % ev) in l:
                out[ev] = (l.index(" %s " % ev), l.find("#"), l.find("( +-"))
    return out
a, b = cols(sys.argv[1]), cols(sys.argv[2])
assert len(a) == 2 and a.keys() == b.keys(), (a, b)
for ev in a:
    # the spread is left out when it is 0 (perf too): compare where both have it
    assert a[ev][:2] == b[ev][:2] and (-1 in (a[ev][2], b[ev][2]) or a[ev][2] == b[ev][2]), (ev, a, b)' \
		/tmp/psc_perf_r.$$ "$ERR"
	rm -f /tmp/psc_perf_r.$$
else
	skip "perf stat is not usable here"
	skip "perf stat is not usable here"
fi

# --- -r N: mean and spread of N runs ------------------------------------------------------------
# a command that touches 1000, 2000, 3000 pages on its 1st, 2nd, 3rd run
cnt=$(mktemp)
varrun=$(mktemp)
printf '#!/bin/sh\nn=$(($(cat %s) + 1))\necho $n >%s\nexec %s faults $((n * 1000))\n' \
	"$cnt" "$cnt" "$W" >"$varrun"
chmod +x "$varrun"
echo 0 >"$cnt"
run_capture "$P" stat -r 3 -e page-faults --format json -- "$varrun"
runs=$(cat "$cnt")
cp "$OUT" /tmp/psc_r3.$$
# the same three runs one by one: what the mean and the spread must be
echo 0 >"$cnt"
singles=
for _ in 1 2 3; do
	"$P" stat -e page-faults --format json -- "$varrun" >/tmp/psc_r1.$$ 2>/dev/null
	singles="$singles $(ps_value /tmp/psc_r1.$$ page-faults)"
done
check "-r 3: 3 runs ($runs), their mean and perf's spread, the standard error over the mean (runs alone:$singles)" python3 -c '
import json, math, sys
o = json.loads(open(sys.argv[1]).readline())
v = [float(x) for x in sys.argv[3:]]
m = sum(v) / 3
sem = math.sqrt(sum((x - m) ** 2 for x in v) / 2 / 3)
assert sys.argv[2] == "3" and o["runs"] == 3, o
assert abs(o["value"] - m) <= 0.02 * m, (o, m)
assert abs(o["stddev_pct"] - 100 * sem / m) <= 2, (o, 100 * sem / m)' /tmp/psc_r3.$$ "$runs" $singles
rm -f /tmp/psc_r3.$$ /tmp/psc_r1.$$
echo 0 >"$cnt"
run_capture "$P" stat -r 3 -e page-faults,task-clock -- "$varrun"
check "-r 3 text: '(3 runs)', ( +- N% ) per event, the elapsed mean +- its error (exit $RC)" \
	sh -c "[ $RC -eq 0 ] && grep -q \"stats for '$varrun' (3 runs):\" '$ERR' &&
		grep -Eq ' page-faults .*\\( \\+- *[0-9.]+% \\)$' '$ERR' &&
		grep -Eq '^ +[0-9.]+ \\+- [0-9.]+ seconds time elapsed' '$ERR' && ! grep -q 'seconds user' '$ERR'"
# a run that ends by SIGINT (Ctrl-C reaches the whole group) ends the runs
: >"$cnt"
expect_rc "-r 5: a run killed by SIGINT ends the runs, with its status" 130 \
	"$P" stat -r 5 -e task-clock -- sh -c "echo x >>'$cnt'; kill -INT \$\$"
check "-r 5: no run after the one SIGINT killed ($(grep -c x "$cnt") runs)" test "$(grep -c x "$cnt")" -eq 1
expect_rc "-r 2: the command's status (of the last run)" 4 "$P" stat -r 2 -e task-clock -- sh -c 'exit 4'
expect_rc "-r without a command" 2 "$P" stat -r 3 -a --duration 0.1
expect_rc "-r with -i" 2 "$P" stat -r 3 -i 100 -- true
expect_rc "-r 0" 2 "$P" stat -r 0 -- true
rm -f "$cnt" "$varrun"

# --- -x SEP: perf's CSV columns ---------------------------------------------------------------
run_capture "$P" stat -x, -e task-clock,cs,cycles -- "$W" faults 100
check "-x,: value,unit,event,run,pct,metric,metric unit; <not supported> as perf writes it" python3 -c '
import sys
ls = [l.rstrip("\n").split(",") for l in open(sys.argv[1]) if not l.startswith("perfscope")]
d = {f[2]: f for f in ls}
assert len(ls) == 3 and all(len(f) == 7 for f in ls), ls
assert d["task-clock"][1] == "msec" and d["task-clock"][6] == "CPUs utilized", d
assert int(d["task-clock"][3]) > 0 and d["task-clock"][4] == "100.00", d
assert d["cs"][1] == "" and d["cs"][0].isdigit() and d["cs"][6].endswith("/sec"), d
c = d["cycles"]
assert c == ["<not supported>", "", "cycles", "0", "100.00", "", ""] or c[0].isdigit(), c' "$ERR"
run_capture "$P" stat -x';' -r 2 -e cs -- true
check "-x with -r: the spread after the event, as perf ('N.NN%')" \
	grep -Eq '^[0-9]+;;cs;[0-9]+\.[0-9]{2}%;[0-9]+;[0-9.]+;' "$ERR"
run_capture "$P" stat -x, -a -i 100 --per-cpu --duration 0.25 -e cs
check "-x with -i and --per-cpu: the time, then CPUn, as perf" \
	grep -Eq '^ +[0-9]+\.[0-9]{9},CPU[0-9]+,[0-9]+,,cs,' "$ERR"
expect_rc "-x and --format json" 2 "$P" stat -x, --format json -- true
expect_rc "-x with an empty separator" 2 "$P" stat -x '' -- true

# --- --per-core, --per-socket from sysfs ---------------------------------------------------
topo_count() { python3 -c '
import os, sys
def cpus(s):
    for part in s.strip().split(","):
        a, _, b = part.partition("-")
        yield from range(int(a), int(b or a) + 1)
def rd(t, f):
    return int(open(t + f).read()) if os.path.exists(t + f) else 0
keys = set()
for c in cpus(open("/sys/devices/system/cpu/online").read()):
    t = "/sys/devices/system/cpu/cpu%d/topology/" % c
    if sys.argv[1] == "core":
        keys.add((rd(t, "physical_package_id"), rd(t, "die_id"), rd(t, "core_id")))
    else:
        keys.add(rd(t, "physical_package_id"))
print(len(keys))' "$1"; }
for aggr in core socket; do
	n=$(topo_count $aggr)
	run_capture "$P" stat -a --per-$aggr -e cs,cpu-clock --duration 0.2 --format json
	check "--per-$aggr: one line per $aggr ($n) and event, every online CPU in one (exit $RC)" python3 -c '
import json, os, sys
ls = [json.loads(l) for l in open(sys.argv[1])]
n = int(sys.argv[2])
assert len(ls) == 2 * n, ls
for ev in ("cs", "cpu-clock"):
    rows = [o for o in ls if o["event"] == ev]
    assert sum(o["cpus"] for o in rows) == os.cpu_count(), rows
    assert all("socket" in o and ("core" in o) == (sys.argv[3] == "core") for o in rows), rows' "$OUT" "$n" $aggr
done
run_capture "$P" stat -a --per-core -e cs --duration 0.1
check "--per-core text: perf's S0-D0-C0 labels and the CPUs in each" grep -Eq '^S[0-9]+-D[0-9]+-C[0-9]+ +[0-9]+ +[0-9]+ +cs' "$ERR"
if command -v perf >/dev/null && perf stat -a -x, --per-core -e cs true >/dev/null 2>&1; then
	perf stat -a -x, --per-core -e cs,cpu-clock -o /tmp/psc_perf_core.$$ -- sleep 0.1
	run_capture "$P" stat -a -x, --per-core -e cs,cpu-clock -- sleep 0.1
	check "--per-core: perf stat --per-core's cores, their CPU counts and its order (a core's events together)" \
		test "$(grep '^S' /tmp/psc_perf_core.$$ | cut -d, -f1,2,5)" = "$(grep '^S' "$ERR" | cut -d, -f1,2,5)"
	rm -f /tmp/psc_perf_core.$$
else
	skip "perf stat --per-core is not usable here"
fi
expect_rc "--per-core of a command alone" 2 "$P" stat --per-core -- true
expect_rc "--per-core with --per-cpu" 2 "$P" stat -a --per-core --per-cpu --duration 0.1

# --- names as typed, the canonical one in JSON ----------------------------------------------
run_capture "$P" stat -e 'cs,faults,{migrations,cs}:u' --format json -- true
check "JSON: event as typed, canonical beside it" python3 -c '
import json, sys
ls = [json.loads(l) for l in open(sys.argv[1])]
assert [o["event"] for o in ls] == ["cs", "faults", "migrations:u", "cs:u"], ls
assert [o["canonical"] for o in ls] == ["context-switches", "page-faults", "cpu-migrations:u",
    "context-switches:u"], ls' "$OUT"
run_capture "$P" stat -e cs,branches -- true
check "text: cs and branches as typed, as perf" \
	sh -c "grep -Eq '^ +[0-9]+ +cs( |$)' '$ERR' && grep -Eq ' branches( |$)' '$ERR' &&
		! grep -q 'context-switches' '$ERR'"

# --- wildcards: zero counts left out unless --all -----------------------------------------------
tr=/sys/kernel/tracing
[ -d $tr/events ] || tr=/sys/kernel/debug/tracing
# sys_enter_m* (mmap, munmap, mkdir, ... about 37): the loader's mmap counts, most do not. Not
# sys_enter_*: opening and closing its ~360 costs the kernel about 20 s per run (perf stat too).
if [ -d $tr/events/syscalls ]; then
	nsys=$(ls -d $tr/events/syscalls/sys_enter_m* | wc -l)
	run_capture "$P" stat -e 'syscalls:sys_enter_m*' -- "$W" faults 10
	shown=$(grep -c ' syscalls:sys_enter_' "$ERR")
	check "a wildcard's zero counts are left out ($shown of $nsys shown), and said (exit $RC)" \
		sh -c "[ $RC -eq 0 ] && [ $shown -gt 0 ] && [ $shown -lt $nsys ] &&
			! grep -Eq '^ +0 +syscalls:' '$ERR' &&
			grep -q \"^ $((nsys - shown)) zero counts of events matched by a wildcard are not shown (--all shows them)\" '$ERR'"
	run_capture "$P" stat -e 'syscalls:sys_enter_m*' --all -- true
	check "--all shows every event of the wildcard ($nsys)" \
		test "$(grep -c ' syscalls:sys_enter_' "$ERR")" -eq "$nsys"
	run_capture "$P" stat -e 'syscalls:sys_enter_m*,syscalls:sys_enter_reboot' --format json -- true
	check "JSON: a named event is shown even at 0, the wildcard's zeros are not, and stderr says how many" python3 -c '
import json, sys
ls = [json.loads(l) for l in open(sys.argv[1])]
assert all(o["value"] > 0 for o in ls[:-1]), ls
assert ls[-1]["event"] == "syscalls:sys_enter_reboot" and ls[-1]["value"] == 0, ls
assert "were not shown (--all shows them)" in open(sys.argv[2]).read()' "$OUT" "$ERR"
else
	skip "no syscalls tracepoints"; skip "no syscalls tracepoints"; skip "no syscalls tracepoints"
fi
# A PMU that names its CPUs (RAPL's power/, uncore) opens system-wide only on those: one package
# counter read once, not once per CPU and summed.
pmu_ev=
for d in /sys/bus/event_source/devices/*; do
	[ -s "$d/cpumask" ] && [ -d "$d/events" ] || continue
	e=$(ls "$d/events" | grep -v '\.' | head -1)
	[ -n "$e" ] && { pmu_ev="$(basename "$d")/$e/"; pmu_mask=$(cat "$d/cpumask"); break; }
done
if [ -n "$pmu_ev" ] && [ "$ncpu" -gt 1 ]; then
	run_capture "$P" stat -a --per-cpu -e "$pmu_ev" --format json --duration 0.2
	check "system-wide $pmu_ev opens on its PMU's cpumask ($pmu_mask) only (exit $RC)" python3 -c '
import json, sys
def cpus(t):
    out = []
    for part in t.split(","):
        a, _, b = part.partition("-")
        out += range(int(a), int(b or a) + 1)
    return out
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
got = sorted(r["cpu"] for r in rows)
assert got == cpus(sys.argv[2]), (got, sys.argv[2])' "$OUT" "$pmu_mask"
else
	skip "no PMU with a cpumask and events here, or one CPU"
fi
# --- --period (perf-prof's stat): counters read every period, a line of slots per -i ---------
# the truth: 3000 sleeps are 3000 clock_nanosleep calls, spread over ~1 s of slots
if grep -q '^syscalls:sys_enter_clock_nanosleep$' /sys/kernel/tracing/available_events 2>/dev/null; then
	run_capture "$P" stat -e syscalls:sys_enter_clock_nanosleep --period 50ms -i 200 --format json -- "$W" sleeps 3000
	check "--period: the slots of all lines add up to the 3000 calls, 4 slots a line but the last" python3 -c '
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
assert len(r) >= 2, r
assert all(len(o["slots"]) == 4 and o["period_ns"] == 50000000 for o in r[:-1]), r
assert all(sum(o["slots"]) == o["total"] for o in r), r
assert sum(o["total"] for o in r) == 3000, sum(o["total"] for o in r)' "$OUT"
	run_capture "$P" stat -e syscalls:sys_enter_clock_nanosleep --period 100ms -i 200 -- "$W" sleeps 500
	check "--period text: perf-prof's 'EVENT  n| n | total N' rows" grep -Eq '^ *syscalls:sys_enter_clock_nanosleep +[0-9]+\| [0-9]+ \| total [0-9]+$' "$ERR"
else
	skip "no syscalls tracepoints"; skip "no syscalls tracepoints"
fi
expect_rc "--period longer than -i" 2 "$P" stat -e cs --period 2s -i 1000 -- true
expect_rc "--period with -x" 2 "$P" stat -e cs --period 10ms -x, -- true
done_testing
