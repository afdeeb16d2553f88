#!/bin/bash
# hrtimer and irq-off. hrtimer: a program pinned to one CPU makes N close(fd >= 1000000) calls;
# 'sys_enter_close > 0' prints the periods holding them: their counts and the events of the
# periods not judged add up to N. irq-off: a known window with interrupts off made from user space,
# N messages of ~900 bytes at KERN_ERR to /dev/kmsg, which the kernel writes to its serial console
# with interrupts off (console_flush_all, some ms each): N late ticks, each with that stack.
# shellcheck source=tests/cli/tap.sh
source "$(dirname "$0")/tap.sh"
P=${PERFSCOPE:?}
MW=${BUILD_ROOT:?}/tests/mt_workload
N=20000
NK=10

plan 11
if ! need_root; then
	skip_all "needs root (tracepoints and timers on whole CPUs)"
fi
read -r -a CPUS <<<"$(usable_cpus)"
C=${CPUS[-1]}
json_check() { python3 -c "$1" "$2"; }
TMPD=$(mktemp -d)
trap 'rm -rf "$TMPD"' EXIT

# 1-4: hrtimer, perf-prof's form (-e, -C, --period, the condition last)
"$P" hrtimer -v -e 'syscalls:sys_enter_close/fd>=1000000/' -C "$C" --period 5ms --format json \
	'sys_enter_close > 0' >"$TMPD/out" 2>"$TMPD/err" &
HP=$!
if wait_running "$TMPD/err" "$HP"; then
	taskset -c "$C" "$MW" closedup $N
	kill -INT "$HP"
fi
wait "$HP"
check "hrtimer: exit 0" test "$?" -eq 0
check "the periods printed hold close calls, on CPU $C" json_check "
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
t = [x for x in o if 'slot_ns' in x]
sys.exit(not (t and all(x['counts']['sys_enter_close'] > 0 and x['cpu'] == $C for x in t)))" "$TMPD/out"
check "their counts and the events of the periods not judged add up to the $N calls" json_check "
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
t = sum(x['counts']['sys_enter_close'] for x in o if 'slot_ns' in x)
f = [x for x in o if 'periods_printed' in x][0]
ok = t + f['not_judged']['sys_enter_close'] == $N and f['periods_lost'] == 0
if not ok: print('#', t, f)
sys.exit(not ok)" "$TMPD/out"
# CPU C busy meanwhile: this kernel drops the samples taken while a CPU idles (no tick at all
# under ASan once, when C idled through the 0.3 s)
taskset -c "$C" "${WORKLOAD:?}" spin-ms 3000 >/dev/null 2>&1 &
SPIN=$!
run_capture "$P" hrtimer -e sched:sched_switch -C "$C" --period 10ms -g 'period > 0' --duration 0.5
kill "$SPIN" 2>/dev/null
wait "$SPIN" 2>/dev/null
check "-g: a tick's line, its count and its stack" sh -c \
	"grep -q 'hrtimer: cpu-clock [0-9]* ns' '$OUT' && grep -q '^    sched_switch [0-9]' '$OUT' && grep -qE '^	 +[0-9a-f]+ ' '$OUT'"
expect_rc "a name the condition cannot use: a usage error" 2 "$P" hrtimer -e sched:sched_switch \
	-C "$C" sched_swich==0
check "  ... listing the names it may use" grep -q "it may use: period, sched_switch" "$ERR"
expect_rc "-F and --period together: a usage error" 2 "$P" hrtimer -F 100 --period 10ms

# 8-9: irq-off on the serial console's window
KLEVEL=$(cut -f1 /proc/sys/kernel/printk)
if grep -q '^ttyS' /proc/consoles && [ "$KLEVEL" -gt 3 ] && [ -w /dev/kmsg ]; then
	rm -f "$TMPD/err"
	"$P" irq-off -v -C "$C" --period 1ms --than 3ms -g --format json >"$TMPD/out" 2>"$TMPD/err" &
	HP=$!
	if wait_running "$TMPD/err" "$HP"; then
		taskset -c "$C" python3 -c '
import os, sys
fd = os.open("/dev/kmsg", os.O_WRONLY)
for i in range(int(sys.argv[1])):
    os.write(fd, b"<3>perfscope test_hrtimer.sh: a known irq-off window (serial console) " + b"x" * 830 + b"\n")
' $NK
		kill -INT "$HP"
	fi
	wait "$HP"
	check "irq-off: exit 0" test "$?" -eq 0
	check "irq-off: $NK late ticks in the console's writes, each with its stack" json_check "
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
c = [x for x in o if any((f.get('sym') or '') in ('console_flush_all', 'console_unlock',
     'serial8250_console_write') for f in x.get('stack', []))]
ok = len(c) == $NK and all(x['comm'] == 'python3' and x['slot_ns'] > 3000000 for x in c)
if not ok: print('#', [(x['comm'], x['slot_ns']) for x in o])
sys.exit(not ok)" "$TMPD/out"
else
	skip "no serial console printing KERN_ERR here: no known irq-off window to make"
	skip "no serial console printing KERN_ERR here: no known irq-off window to make"
fi
# 10-11: nothing late by a second in half a second; the ticks judged are said
run_capture "$P" irq-off --period 10ms --than 1s --duration 0.5
check "irq-off --than 1s: no tick printed, the ticks judged said" sh -c \
	"[ ! -s '$OUT' ] && grep -qE 'irq-off: 0 of [1-9][0-9]* ticks came more than 1000.000 ms' '$ERR'"
expect_rc "irq-off --than not above --period: a usage error" 2 "$P" irq-off --period 10ms --than 10ms
done_testing
