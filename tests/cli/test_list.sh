#!/usr/bin/env bash
# perfscope list: every software event, unsupported hardware marked with a reason, GLOB, JSON,
# tracepoints and PMU events from this machine, usage errors.
# shellcheck source=tests/cli/tap.sh
source "$(dirname "$0")/tap.sh"
P=${PERFSCOPE:?}
mounts_before=$(grep -cE ' (tracefs|debugfs) ' /proc/mounts)

plan 44

# 1-2: the full list, every PERF_COUNT_SW_* by perf's name, each counted as supported here
run_capture "$P" list
check "list exits 0 (exit $RC)" test "$RC" -eq 0
missing=
for ev in cpu-clock task-clock page-faults context-switches cpu-migrations minor-faults \
	major-faults alignment-faults emulation-faults dummy bpf-output cgroup-switches; do
	grep -Eq "^  $ev( OR [a-z-]+)? +\[software\]\$" "$OUT" || missing="$missing $ev"
done
if [ -z "$missing" ]; then ok "all 12 software events listed, none marked unopenable"; else
	fail "software events missing or marked:$missing"; fi

# 3-4: hardware and cache events are listed by their perf names; on a machine without a PMU they
# are marked with why they cannot be opened
if grep -Eq '^  cpu-cycles OR cycles +\[hardware\]' "$OUT" &&
	grep -Eq '^  L1-dcache-load-misses +\[hardware-cache\]' "$OUT" &&
	grep -Eq '^  node-prefetch-misses +\[hardware-cache\]' "$OUT"; then
	ok "hardware and cache events listed (cycles, L1-dcache-load-misses, node-prefetch-misses)"
else
	fail "hardware or cache names missing"
fi
cyc=$(grep -E '^  cpu-cycles OR cycles' "$OUT")
if echo "$cyc" | grep -q '<cannot open here: not supported on this machine (No such file or directory): .*>$'; then
	ok "cycles marked not supported here, with the reason"
elif echo "$cyc" | grep -q 'cannot open'; then
	fail "cycles marked, but not as unsupported: $cyc"
else
	skip "this machine has a hardware PMU: cycles can be opened"
fi

# 5-7: GLOB filters names and aliases; no match is exit 1
run_capture "$P" list '*fault*'
bad=$(grep -v -- 'fault' "$OUT" | head -3)
if [ "$RC" -eq 0 ] && [ -z "$bad" ] && grep -q 'page-faults' "$OUT" && grep -q 'major-faults' "$OUT"; then
	ok "GLOB '*fault*' shows only fault events ($(wc -l <"$OUT") lines)"
else
	fail "GLOB '*fault*': exit $RC, stray lines: $bad"
fi
run_capture "$P" list cs
if [ "$RC" -eq 0 ] && [ "$(wc -l <"$OUT")" -eq 1 ] && grep -q '^  context-switches OR cs ' "$OUT"; then
	ok "GLOB matches an alias: 'cs' finds context-switches"
else
	fail "GLOB 'cs': exit $RC: $(head -3 "$OUT")"
fi
expect_rc "GLOB matching nothing" 1 "$P" list 'no-such-event-*'
# a KIND, as perf list takes it: only events of that kind (the exporter's errors point at
# 'perfscope list tracepoint')
run_capture "$P" list sw
check "KIND 'sw': the 12 software events and nothing else (exit $RC)" \
	sh -c "[ $RC -eq 0 ] && [ \$(grep -c '\[software\]\$' '$OUT') -eq 12 ] && [ \$(wc -l <'$OUT') -eq 12 ]"
run_capture "$P" list --format json tracepoint
check "KIND 'tracepoint': every line a tracepoint (exit $RC)" python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert int(sys.argv[2]) == 0 and rows and all(r["kind"] == "tracepoint" for r in rows), len(rows)' "$OUT" "$RC"

# 8-10: JSON, one object per line, parsed by python3
run_capture "$P" list --format json
if [ "$RC" -eq 0 ] && python3 - "$OUT" <<'EOF'; then
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
by = {r["name"]: r for r in rows}
assert all(set(r) >= {"name", "kind", "supported"} for r in rows), "keys"
assert by["page-faults"]["supported"] is True and by["page-faults"]["alias"] == "faults"
assert by["page-faults"]["kind"] == "software" and "reason" not in by["page-faults"]
c = by["cpu-cycles"]
assert c["kind"] == "hardware" and c["supported"] in (True, False)
assert c["supported"] or "not supported" in c["reason"], c
assert by["LLC-store-misses"]["kind"] == "hardware-cache"
EOF
	ok "--format json: every line parses, kinds/supported/reason/alias right"
else
	fail "--format json did not parse or has wrong fields (exit $RC)"
fi
run_capture "$P" list --format json 'dTLB-*'
check "JSON with a GLOB: 6 dTLB events" test "$(python3 -c 'import json,sys; print(len([json.loads(l) for l in open(sys.argv[1])]))' "$OUT")" -eq 6
# a PMU from sysfs: msr/tsc/ where the msr PMU exists
if [ -e /sys/bus/event_source/devices/msr/events/tsc ]; then
	run_capture "$P" list 'msr/*'
	check "PMU events from sysfs: msr/tsc/ listed as pmu" grep -Eq '^  msr/tsc/ +\[pmu\]' "$OUT"
else
	skip "no msr PMU on this kernel"
fi

# options after the GLOB, as perf list takes them
run_capture "$P" list cs --format json -v
check "options after the GLOB: 'list cs --format json -v' (exit $RC)" python3 -c '
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
assert int(sys.argv[2]) == 0 and len(r) == 1 and r[0]["alias"] == "cs", r' "$OUT" "$RC"

# PMU events are probed as stat opens them: a PMU with a cpumask (RAPL's power/, uncore) counts
# only per CPU, so it is opened system-wide there, not on a task (which the kernel refuses).
# Every PMU event is then opened by stat the way list says it can (or cannot) be: what list marks
# unusable must fail in stat -a as well, what it marks usable must count.
run_capture "$P" list --format json pmu
if [ "$RC" -eq 0 ] && [ -s "$OUT" ] && need_root; then
	python3 -c '
import json, sys
for l in open(sys.argv[1]):
	o = json.loads(l)
	how = "cannot" if not o["supported"] else "cpu" if o.get("system_wide_only") else "task"
	print(how, o["name"])' "$OUT" >"$OUT.how"
	bad=
	while read -r how ev; do
		case $how in
		cannot) "$P" stat -a -e "$ev" --duration 0.1 >/dev/null 2>&1 && bad="$bad $ev(list: cannot; stat -a counts it)" ;;
		cpu) "$P" stat -a -e "$ev" --duration 0.1 >/dev/null 2>&1 || bad="$bad $ev(list: system-wide; stat -a fails)" ;;
		task) "$P" stat -e "$ev" -- true >/dev/null 2>&1 || bad="$bad $ev(list: usable; stat -- true fails)" ;;
		esac
	done <"$OUT.how"
	check "every PMU event opens in stat as list says ($(tr '\n' ' ' <"$OUT.how" | head -c 200))${bad:+:$bad}" test -z "$bad"
	if grep -q '^cpu power/energy-psys/$' "$OUT.how"; then
		ok "power/energy-psys/: supported, system-wide only (as stat -a counts it)"
	elif [ -e /sys/bus/event_source/devices/power/events/energy-psys ]; then
		fail "power/energy-psys/: $(grep 'energy-psys' "$OUT.how")"
	else
		skip "no power/energy-psys/ on this machine"
	fi
	run_capture "$P" list 'power/*'
	if grep -q 'power/energy-psys/' "$OUT"; then
		check "text: a system-wide-only event says so" grep -Eq '^  power/energy-psys/ +\[pmu\]  \(system-wide only: -a or -C\)$' "$OUT"
	else
		skip "no power/energy-psys/ on this machine"
	fi
else
	for i in 1 2 3; do skip "no PMU events listed (exit $RC), or not root (stat -a)"; done
fi

# 11-15: tracepoints, when tracefs is there (perfscope mounts it when root)
run_capture "$P" list 'sched:*'
if [ "$RC" -eq 0 ] && grep -Eq '^  sched:sched_switch +\[tracepoint\]' "$OUT"; then
	ok "tracepoints listed: sched:sched_switch"
	bad=$(grep -v '^  sched:' "$OUT" | head -3)
	check "GLOB 'sched:*' lists only sched tracepoints" test -z "$bad"
	run_capture "$P" list --format json 'sched:sched_switch'
	check "a tracepoint a GLOB narrows to is opened: kind tracepoint, supported true" python3 -c '
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
assert len(r) == 1 and r[0]["kind"] == "tracepoint" and r[0]["supported"] is True, r' "$OUT"
	# all of them would take the kernel ~25 ms each to close: listed unprobed, and stderr says so
	run_capture "$P" list --format json
	# root opens any tracepoint tracefs gives an id: supported true (jq 'select(.supported)' keeps
	# them), "probed": false saying it was not tried; null (unknown) for other users
	check "full list: tracepoints unprobed (probed false, supported true for root), stderr says how to check them" python3 -c '
import json, os, sys
r = [json.loads(l) for l in open(sys.argv[1])]
tp = [o for o in r if o["kind"] == "tracepoint"]
want = True if os.geteuid() == 0 else None
assert len(tp) > 32 and all(o["supported"] is want and o["probed"] is False for o in tp), len(tp)
assert "a GLOB that selects at most 32 checks those" in open(sys.argv[2]).read()' "$OUT" "$ERR"
	# a tracepoint the kernel refuses even to root: marked, and the advice is not "run as root"
	run_capture "$P" list --format json 'ftrace:function'
	if [ "$RC" -eq 0 ] && grep -q '"supported":false' "$OUT"; then
		check "ftrace:function marked as refused, with a reason that fits who runs it" python3 -c '
import json, os, sys
o = json.loads(open(sys.argv[1]).readline())
assert o["kind"] == "tracepoint" and "permission denied" in o["reason"], o
if os.geteuid() == 0:
	assert "although this process has CAP_PERFMON" in o["reason"] and "Run as root" not in o["reason"], o' "$OUT"
	else
		skip "no ftrace:function here, or this kernel lets it be opened"
	fi
elif grep -q tracefs /proc/filesystems && need_root; then
	fail "no sched tracepoints although tracefs is available (exit $RC)"
	for i in 1 2 3 4; do skip "no tracepoints"; done
else
	for i in 1 2 3 4 5; do skip "tracefs is not available"; done
fi

# 14-17: usage errors exit 2 with a message on stderr
expect_rc "empty GLOB" 2 "$P" list ''
expect_rc "GLOB with an unclosed '['" 2 "$P" list '[abc'
expect_rc "two GLOBs" 2 "$P" list 'sched:*' 'irq:*'
expect_rc "unknown --format" 2 "$P" list --format xml

# 18-21: tracefs is found through /proc/mounts and mounted when missing. Done in a private mount
# namespace, so the machine's own mounts are never touched: there tracefs and debugfs are
# unmounted, then perfscope must mount tracefs itself (root), find it where it is mounted
# elsewhere, and, when not root, say that mounting needs root.
if need_root && unshare --mount --propagation private true 2>/dev/null; then
	ns() { # runs the script $1 in a fresh mount namespace with no tracefs/debugfs; $P is $0 there
		unshare --mount --propagation private bash -c '
for m in $(awk "\$3 == \"tracefs\" || \$3 == \"debugfs\" {print \$2}" /proc/mounts | sort -r); do
	umount -l "$m" || exit 99
done
if grep -qE " (tracefs|debugfs) " /proc/mounts; then exit 98; fi
'"$1" "$P"
	}
	run_capture ns '"$0" list "sched:sched_switch" && awk "\$3 == \"tracefs\" {print \"mount:\", \$2}" /proc/mounts'
	if [ "$RC" -eq 0 ] && grep -q 'sched:sched_switch' "$OUT" && grep -qx 'mount: /sys/kernel/tracing' "$OUT"; then
		ok "tracefs absent: perfscope (root) mounted it at /sys/kernel/tracing and listed tracepoints"
	else
		fail "tracefs absent: exit $RC: $(tr '\n' ' ' <"$OUT" | head -c 300)"
	fi
	run_capture ns 'd=$(mktemp -d); mount -t tracefs nodev "$d" || exit 97
"$0" list "sched:sched_switch"; rc=$?
awk "\$3 == \"tracefs\" {print \"mount:\", \$2}" /proc/mounts; umount "$d"; rmdir "$d"; exit $rc'
	n=$(grep -c '^mount:' "$OUT")
	if [ "$RC" -eq 0 ] && grep -q 'sched:sched_switch' "$OUT" && [ "$n" -eq 1 ] &&
		! grep -q 'mount: /sys/kernel/tracing' "$OUT"; then
		ok "tracefs mounted elsewhere: found through /proc/mounts, nothing mounted again"
	else
		fail "tracefs elsewhere: exit $RC, $n tracefs mounts: $(tr '\n' ' ' <"$OUT" | head -c 300)"
	fi
	if id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null &&
		setpriv --reuid=nobody --regid=nogroup --clear-groups test -x "$P"; then
		run_capture ns 'setpriv --reuid=nobody --regid=nogroup --clear-groups "$0" list "sched:*"'
		if [ "$RC" -eq 1 ] && grep -q 'mounting it needs root' "$ERR"; then
			ok "tracefs absent, not root: exit 1, says mounting needs root"
		else
			fail "not root without tracefs: exit $RC: $(head -2 "$ERR")"
		fi
		run_capture ns 'setpriv --reuid=nobody --regid=nogroup --clear-groups "$0" list "page-*"'
		check "not root without tracefs: the other events are still listed" grep -q '^  page-faults' "$OUT"
		# the library reports ENODEV without advice; the CLI says how to mount it, exit 1
		run_capture ns 'setpriv --reuid=nobody --regid=nogroup --clear-groups "$0" stat -e sched:sched_switch -- true'
		if [ "$RC" -eq 1 ] && grep -q 'tracefs is not mounted' "$ERR" && grep -q 'mount -t tracefs nodev' "$ERR"; then
			ok "stat of a tracepoint without tracefs, not root: exit 1, how to mount it"
		else
			fail "stat without tracefs, not root: exit $RC: $(head -3 "$ERR" | tr '\n' ' ')"
		fi
	else
		for i in 1 2 3; do skip "no user nobody, no setpriv, or $P not executable by nobody"; done
	fi
	check "the machine's own tracefs mounts are untouched" test "$(grep -cE ' (tracefs|debugfs) ' /proc/mounts)" -eq "$mounts_before"
else
	for i in 1 2 3 4 5 6; do skip "needs root and unshare(1) for a private mount namespace"; done
fi

# 23-25: perfscope itself: -v / --version, help for a profiler, an unknown profiler
run_capture "$P" -v
check "perfscope -v prints the version" grep -Eq '^perfscope [0-9]+\.[0-9]+\.[0-9]+ \(libperfscope ' "$OUT"
run_capture "$P" help list
check "perfscope help list prints list's help" grep -q '^usage: perfscope list' "$OUT"
expect_rc "unknown profiler" 2 "$P" lsit
run_capture "$P" -v list cs
check "perfscope -v PROFILER runs the profiler verbosely, not just the version (exit $RC)" \
	sh -c "[ $RC -eq 0 ] && grep -q '^  context-switches OR cs ' '$OUT' && ! grep -q '^perfscope [0-9]' '$OUT'"
expect_rc "--version with arguments" 2 "$P" --version list
run_capture "$P" -vv list cs
check "perfscope -vv PROFILER runs the profiler with -vv (exit $RC)" \
	sh -c "[ $RC -eq 0 ] && grep -q '^  context-switches OR cs ' '$OUT'"
# help and version that cannot be written (a full disk) fail, instead of exiting 0
if [ -w /dev/full ]; then
	"$P" help stat >/dev/full 2>/dev/null; rc_help=$?
	"$P" --version >/dev/full 2>/dev/null; rc_version=$?
	check "help and --version to /dev/full exit 1 (got $rc_help, $rc_version)" \
		test "$rc_help$rc_version" = 11
else
	skip "no /dev/full"
fi
# perf-prof's 'list trace': a plain word that names no event is a part of names; the truth is
# tracefs's events with an id (what perf_event_open takes) and 'trace' in sys:name
if [ -d /sys/kernel/tracing/events/sched ]; then
	run_capture "$P" list --format json trace
	(cd /sys/kernel/tracing/events && for d in */*/; do [ -e "$d/id" ] && echo "${d%/}"; done) |
		tr / : | grep trace | sort -u >"$OUT.want"
	python3 -c 'import json, sys
print("\n".join(sorted({json.loads(l)["name"] for l in open(sys.argv[1]) if json.loads(l)["kind"] == "tracepoint"})))' "$OUT" >"$OUT.got"
	check "list trace: exit 0 and the $(wc -l <"$OUT.want") tracepoints named *trace* ($(head -c 120 "$OUT.got" | tr '\n' ' '))" \
		eval 'test "$RC" -eq 0 && test -s "$OUT.want" && cmp -s "$OUT.want" "$OUT.got"'
	run_capture "$P" list sched:sched_switch
	check "an exact name is still only itself ($(wc -l <"$OUT") lines)" test "$(wc -l <"$OUT")" -eq 1
	rm -f "$OUT.want" "$OUT.got"
else
	skip "no tracefs"; skip "no tracefs"
fi
# perfscope --symbols FILE (perf-prof's): a function's file offset, what a uprobe takes; an
# address's function. The truth: the workload is PIE, its text mapped at its file offset, so nm's
# address of main is its file offset; and perf-prof says the same of libc's malloc
if command -v nm >/dev/null && [ -x "${WORKLOAD:-}" ]; then
	want=$(nm "$WORKLOAD" | awk '$3 == "main" && ($2 == "T" || $2 == "t") {print $1}' | head -1)
	got=$(echo main | "$P" --symbols "$WORKLOAD")
	check "--symbols: main's file offset is nm's 0x$want (got $got)" \
		python3 -c 'import sys; sys.exit(int(sys.argv[1], 16) != int(sys.argv[2], 16))' "$want" "$got"
	got=$("$P" --symbols "$WORKLOAD" "$(printf '%#x' $((0x$want + 4)))" nosuch_function_x 2>/dev/null | tr '\n' ' ')
	check "--symbols ADDR: main+0x4; an unknown name: ?? ($got)" test "$got" = "main+0x4 ?? "
else
	skip "no nm or workload"; skip "no nm or workload"
fi
PP=${PERF_PROF:-${SOURCE_ROOT:-.}/../shared/peers/perf-prof/perf-prof}
if [ -x "$PP" ] && a=$(echo malloc | "$PP" --symbols "$("$P" list --format json 'uprobe:malloc@libc.so.6' | python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["binary"])')" 2>/dev/null) && [ -n "$a" ]; then
	check "--symbols libc.so.6: malloc where perf-prof says ($a)" test "$(echo malloc | "$P" --symbols libc.so.6)" = "$a"
else
	skip "perf-prof not runnable here"
fi
expect_rc "--symbols of no file" 2 "$P" --symbols /nonexistent/bin main
done_testing
