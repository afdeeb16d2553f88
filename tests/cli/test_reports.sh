#!/bin/bash
# CLI tests of where summary profilers' reports go and what they say: with a COMMAND and no -o
# the text report is on stderr (`prof -- cmd > /dev/null` still shows it), JSON on stdout; an
# incomplete result says so in its footer and JSON; top -i tables count their interval.
# shellcheck source=tests/cli/tap.sh
source "$(dirname "$0")/tap.sh"
P=${PERFSCOPE:?}
W=${BUILD_ROOT:?}/tests/mt_workload

plan 22
if ! need_root; then
	skip_all "needs root (tracepoints)"
fi
if ! "$P" trace -e raw_syscalls:sys_enter --duration 0.01 >/dev/null 2>&1; then
	skip_all "no raw_syscalls tracepoints on this kernel"
fi
TMPD=$(mktemp -d)
trap 'rm -rf "$TMPD"' EXIT
json_check() { python3 -c "$@"; }

# 1-3: syscalls -- COMMAND > /dev/null: the table on stderr, nothing of it on stdout
run_capture "$P" syscalls -- "$W" getppid 500
check "syscalls -- cmd: exit 0 (exit $RC)" test "$RC" -eq 0
check "syscalls -- cmd: the table is on stderr (getppid(110) row with 500 calls)" \
	awk '$1 == "getppid(110)" && $2 == 500 { f = 1 } END { exit !f }' "$ERR"
check "syscalls -- cmd: no table on stdout" sh -c "! grep -q 'sys_enter -> sys_exit' '$OUT'"

# 4: the same with --format json: JSON stays on stdout, for pipes
run_capture "$P" syscalls --format json -- "$W" getppid 500
check "syscalls --format json -- cmd: JSON on stdout, 500 getppid" json_check '
import json, sys
o = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
sys.exit(not any(x.get("syscall") == "getppid" and x.get("count") == 500 for x in o))' "$OUT"

# 5: -o FILE: the report in the file, whatever the COMMAND
run_capture "$P" syscalls -o "$TMPD/sc.txt" -- "$W" getppid 500
check "syscalls -o FILE -- cmd: the table in FILE" \
	awk '$1 == "getppid(110)" && $2 == 500 { f = 1 } END { exit !f }' "$TMPD/sc.txt"

# 6: without a COMMAND (nothing else writes to stdout) the table stays on stdout
"$W" getppid 100000000 &
GP=$!
run_capture "$P" top -e 'syscalls:sys_enter_getppid' -p "$GP" --duration 0.3
kill "$GP" 2>/dev/null
wait "$GP" 2>/dev/null
check "top -p PID (no COMMAND): the table is on stdout" grep -q "^[0-9:]* totals: " "$OUT"

# 7-8: the other summaries follow the same rule: top, num-dist
run_capture "$P" top -e 'syscalls:sys_enter_getppid' -- "$W" getppid 300
check "top -- cmd: the table is on stderr with 300 events" \
	sh -c "grep -q ' totals: ' '$ERR' && awk '\$NF == 300 { f = 1 } END { exit !f }' '$ERR'"
run_capture "$P" num-dist -e 'syscalls:sys_enter_getppid//num=common_pid/' -- "$W" getppid 300
check "num-dist -- cmd: the distribution is on stderr, stdout empty" \
	sh -c "[ ! -s '$OUT' ] && grep -q 'sys_enter_getppid' '$ERR' && grep -qw 300 '$ERR'"

# 9: memleak -- cmd > /dev/null: the leaks on stderr (uprobes on libc)
if [ -e /sys/kernel/tracing/uprobe_events ] || [ -e /sys/kernel/debug/tracing/uprobe_events ]; then
	run_capture "$P" memleak -- ls /
	check "memleak -- ls: the leak table is on stderr, not on stdout" \
		sh -c "grep -q 'bytes not freed' '$ERR' && ! grep -q 'bytes not freed' '$OUT'"
else
	skip "no uprobe events in this kernel"
fi

# 10-12: a result with losses says so inside it. A 1-page ring and 200,000 getppid make the
# kernel lose most of the events; the footer's counts are the session's: lost = the events'
# "N lost", the results count their "N events", and counted + missing = all.
run_capture "$P" syscalls -m 1 -- "$W" getppid 200000
stats() {
	awk '/^perfscope syscalls: raw_syscalls:sys_(enter|exit): [0-9]+ events, [0-9]+ lost$/ {
		s += $4; l += $6 } END { print s + 0, l + 0 }' "$1"
}
read -r seen lost < <(stats "$ERR")
if [ "$lost" -gt 0 ]; then
	foot=$(grep '^incomplete: ' "$ERR")
	diag "stats: $seen seen, $lost lost; footer: $foot"
	check "syscalls with losses: the text report has an 'incomplete:' footer" test -n "$foot"
	check "the footer's counts are the session's (lost, seen, seen + missing = all)" python3 -c '
import re, sys
m = re.match(r"incomplete: (\d+|<1)% of the run.s events missing \((\d+) lost, (\d+) dropped by the kernel\): the results above count (\d+) of (\d+)(; raw_syscalls:sys_e(nter|xit): (\d+|<1)% missing \(\d+ of \d+\))?$", sys.argv[1])
seen, lost = int(sys.argv[2]), int(sys.argv[3])
if not m: sys.exit(1)
l, k, c, a = map(int, m.groups()[1:5])
share = 100.0 * (l + k) / a
pct_ok = share < 0.5 if m.group(1) == "<1" else abs(int(m.group(1)) - share) <= 1
# the side band (task names) may lose records too: counted in the footer, not in the stats
sys.exit(not (l >= lost and c == seen and c + l + k == a and pct_ok))' \
		"$foot" "$seen" "$lost"
else
	skip "no events lost with a 1-page ring on this machine"
	skip "no events lost with a 1-page ring on this machine"
fi
run_capture "$P" syscalls -m 1 --format json -- "$W" getppid 200000
read -r seen lost < <(stats "$ERR")
if [ "$lost" -gt 0 ]; then
	check "syscalls --format json with losses: an incomplete object, its share and worst event right" json_check '
import json, sys
o = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
i = [x["incomplete"] for x in o if "incomplete" in x and x["incomplete"]["final"]]
if len(i) != 1: sys.exit(1)
i = i[0]
m = i["lost"] + i["kernel_dropped"]
print("# incomplete:", i, "stats: seen", sys.argv[2], "lost", sys.argv[3])
# the event missing the largest share of its own, as its stats lines say (events, lost)
ev = {}
for l in open(sys.argv[4]):
    f = l.split()
    if len(f) == 7 and f[4] == "events," and f[6] == "lost" and f[2].startswith("raw_syscalls:"):
        ev[f[2].rstrip(":")] = (int(f[3]), int(f[5]))
w = i.get("worst", {})
e = ev.get(w.get("event"))
print("# worst:", w, "its stats:", e)
worst_ok = e and w["missing"] >= e[1] and w["of"] == e[0] + w["missing"] and all(
    w["missing"] * (a + b) >= b * w["of"] for a, b in ev.values())
sys.exit(not (i["lost"] >= int(sys.argv[3]) > 0 and i["seen"] == int(sys.argv[2])
              and abs(i["share"] - m / (m + i["seen"])) < 1e-9 and worst_ok))' "$OUT" "$seen" "$lost" "$ERR"
else
	skip "no events lost with a 1-page ring on this machine"
fi

# 13-14: top -i: each table counts its interval, so the tables add up to the events (2000
# nanosleeps of at least 200 us: 0.4 s at least, 8 intervals of 50 ms); --cumulative keeps
# running totals, each table then holding the previous ones.
top_sum() {
	python3 -c '
import json, sys
o = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
n = sum(x["events"] for x in o if "events" in x)
tables = len({x["time"] for x in o if "events" in x and not x.get("final")})
miss = sum(x["incomplete"]["lost"] + x["incomplete"]["kernel_dropped"] for x in o
           if "incomplete" in x and x["incomplete"]["final"])
print(n, tables, miss)' "$1"
}
TP='syscalls:sys_enter_clock_nanosleep,syscalls:sys_enter_nanosleep'
run_capture "$P" top -e "$TP" -i 50 --format json -- "$W" sleeps
read -r n tables miss < <(top_sum "$OUT")
diag "top -i 50: $n events over $tables interval tables and the final one, $miss missing"
check "top -i: the interval tables and the last add up to the 101 sleeps" \
	test "$tables" -ge 2 -a $((n + miss)) -eq 101
run_capture "$P" top -e "$TP" -i 50 --cumulative --format json -- "$W" sleeps
read -r n tables miss < <(top_sum "$OUT")
diag "top -i 50 --cumulative: $n events over $tables tables, $miss missing"
check "top -i --cumulative: running totals (their sum is more than the 101 sleeps)" \
	test "$tables" -ge 2 -a "$n" -gt 101

# 15-17: syscalls answers "where does the time go": a total time column, rows by total time. 1000
# getppid are the most calls, the 101 sleeps (230 ms) the most time.
run_capture "$P" syscalls -- bash -c "$W getppid 1000; $W sleeps"
check "syscalls: the header has a total column after calls" \
	awk '/^sys_enter -> sys_exit / && $4 == "calls" && $5 == "total" { f = 1 } END { exit !f }' "$ERR"
# rows of other calls (bash's clone, waiting for its child on a loaded machine) may come first
order=$(awk '/^  [a-z_0-9]+\([0-9]+\)/ { printf "%s ", $1 }' "$ERR")
check "syscalls: the sleep (most time) is above getppid (most calls): $order" \
	awk -v o="$order" 'BEGIN { s = index(o, "nanosleep("); g = index(o, "getppid(");
		exit !(s > 0 && g > 0 && s < g) }' 
run_capture "$P" syscalls --format json -- bash -c "$W getppid 1000; $W sleeps"
check "syscalls --format json: rows in order of total_ns, largest first" json_check '
import json, sys
o = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
t = [x.get("total_ns", 0) for x in o if x.get("final") and "syscall" in x]
sys.exit(not (len(t) > 2 and t == sorted(t, reverse=True)))' "$OUT"

# 18: syscalls --perins: a row per thread and call, the thread as comm/tid
run_capture "$P" syscalls --perins -- bash -c "$W getppid 300 & $W getppid 200; wait"
check "syscalls --perins: mt_workload/TID getppid rows with 300 and 200 calls" sh -c "
	awk '\$1 ~ /^mt_workload\/[0-9]+\$/ && \$2 == \"getppid(110)\" { print \$3 }' '$ERR' |
		sort -n | tr '\n' ' ' | grep -qx '200 300 '"

# 19-20: multi-trace --perins keyed by the thread: rows say comm/tid (JSON: comm)
run_capture "$P" multi-trace -e 'raw_syscalls:sys_enter/id==110/' -e 'raw_syscalls:sys_exit/id==110/' \
	--perins -- "$W" getppid 300
check "multi-trace --perins: the row is mt_workload/TID with 300 calls" \
	awk '$1 ~ /^mt_workload\/[0-9]+$/ && $2 == 300 { f = 1 } END { exit !f }' "$ERR"
run_capture "$P" multi-trace -e 'raw_syscalls:sys_enter/id==110/' -e 'raw_syscalls:sys_exit/id==110/' \
	--perins --format json -- "$W" getppid 300
check "multi-trace --perins --format json: the thread's row has its comm" json_check '
import json, sys
o = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
sys.exit(not any(x.get("final") and x.get("comm") == "mt_workload" and x.get("count") == 300 for x in o))' "$OUT"

# 21-22: trigger's exit status as its man page says: -o not writable 1, a file as the directory 2
expect_rc "trigger -o /proc/nope: exit 1" 1 "$P" trigger --sys 99 --for 1 -o /proc/nope --duration 0.2
touch "$TMPD/afile"
expect_rc "trigger -o FILE (not a directory): exit 2" 2 "$P" trigger --sys 99 --for 1 -o "$TMPD/afile" --duration 0.2

done_testing
