#!/bin/bash
# perf-prof's `trace` command lines (its -h examples, docs, README, tests and common options) run with perfscope in its place.
#
# Each check runs one perf-prof command line, spelled as perf-prof's documentation spells it,
# with perfscope in place of perf-prof, and asserts what perf-prof does with it on this kind of
# machine: the events of the right name, filters honoured, -C restricting CPUs, -N stopping
# after N, --order giving time order, -o writing the file... A line with no bound of its own
# runs until a SIGINT after a short window, as a user's Ctrl-C would end it. Substitutions are
# said where made: a process id, a libc path, a loopback address, a narrower syscall wildcard
# (syscalls:sys_enter_* takes 13 s to open and close, in perf-prof as well).
#
# Lines perf-prof cannot run here either (kprobes, --kvmclock without virsh, --python-callchain
# without the USDT probe, -i with --flame-graph which crashes it, --tsc-offset which it no
# longer has, task-state with --order) are not checked. Lines that need what perfscope does not
# have yet are TODO with the reason while they fail, and say so once they pass.
# shellcheck source=tests/cli/tap.sh
source "$(dirname "$0")/tap.sh"
P=${PERFSCOPE:?}
GEN=${BUILD_ROOT:?}/bench/gen_events
CC=${CC:-cc}
WIN=0.6 # seconds a line without a bound of its own runs, once running (ppw), before its SIGINT

plan 98
if ! need_root; then
	skip_all "needs root (tracepoints)"
fi
if [ ! -x "$GEN" ]; then
	skip_all "bench/gen_events not built"
fi
if [ ! -d /sys/kernel/tracing/events/sched ] && [ ! -d /sys/kernel/debug/tracing/events/sched ]; then
	skip_all "no tracefs with sched tracepoints"
fi

TMP=$(mktemp -d)
declare -a BG_PIDS=()
CGDIR=
cleanup() {
	local pid
	for pid in "${BG_PIDS[@]}"; do kill -9 "$pid" 2>/dev/null; done
	for pid in "${BG_PIDS[@]}"; do wait "$pid" 2>/dev/null; done
	[ -n "$CGDIR" ] && rmdir "$CGDIR"/a "$CGDIR"/b "$CGDIR" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# Checks that fail on today's code for a known reason: TODO while they fail, a plain ok with a
# note to drop the entry once they pass. KEY is the check's first word.
declare -A TODO=(
	[exec1]="exec=EXPR ATTR: no expressions; the ATTR parser also splits at the ',' and '/' inside it"
	[exec2]="exec=EXPR ATTR: no expressions; the ATTR parser also splits at the ',' and '/' inside it"
	[embed1]="profilers as event sources (task-state, page-faults/-N 10/, profile/-F 5000/)"
	[embed2]="profilers as event sources (task-state, page-faults/-N 10/, profile/-F 5000/)"
	[push1]="push=/pull= ATTRs: no event broadcast between perfscope instances"
	[pull1]="push=/pull= ATTRs: no event broadcast between perfscope instances"
	[cglist1]="--cgroups A,B: one cgroup only (perf-prof takes a list)"
)

# verdict KEY DESC STATUS: one TAP line; STATUS 0 passed. DESC starts with the perf-prof line.
verdict() {
	local key=$1 desc=$2 good=$3
	if [ "$good" -eq 0 ]; then
		ok "$key: $desc"
		[ -n "${TODO[$key]:-}" ] && diag "$key passes now: drop it from TODO in $0"
	elif [ -n "${TODO[$key]:-}" ]; then
		_tap_n=$((_tap_n + 1))
		echo "not ok $_tap_n - $key: $desc # TODO ${TODO[$key]}"
	else
		fail "$key: $desc"
		diag "  exit $RC; stdout $(wc -l <"$OUT") lines; first lines of stderr:"
		sed 's/^/#     /' "$ERR" | head -4
	fi
	return 0
}
# check KEY DESC CMD...: verdict on CMD's status
check_pp() {
	local key=$1 desc=$2
	shift 2
	"$@"
	verdict "$key" "$desc" $?
}

# pp SECS ARGS...: perfscope ARGS (a perf-prof command line, perfscope in place of perf-prof),
# sent SIGINT after SECS seconds unless it ended by itself; $OUT, $ERR, $RC
pp() {
	local secs=$1
	shift
	run_capture timeout -s INT -k 10 --preserve-status "$secs" "$P" "$@"
}
# ppw PROFILER ARGS...: a perf-prof line without a bound of its own: run with -v for $WIN s once its
# events run (run_ready), then SIGINT
ppw() { run_ready "$WIN" "$P" "$1" -v "${@:2}"; }

# evs [FILE]: one record per event line of trace's text output (stack lines start with a tab):
# CPU TIME EVENT PID TID COMM FIELDS, tab-separated
evs() {
	sed -nE 's/^ *(.*[^ ]) +([0-9]+)\/([0-9]+) \[([0-9]+)\] ([0-9]+\.[0-9]+): ([^ ]+): ?(.*)$/\4\t\5\t\6\t\2\t\3\t\1\t\7/p' "${1:-$OUT}"
}
nev() { evs "$@" | wc -l; }
# ev_all AWK-CONDITION [FILE]: at least one event, and the condition holds for every one
# ($1 cpu, $2 time, $3 event, $4 pid, $5 tid, $6 comm, $7 fields)
ev_all() { evs "${2:-$OUT}" | awk -F'\t' "BEGIN { n = 0 } { n++; if (!($1)) bad++ } END { exit !(n > 0 && !bad) }"; }
# ev_none_bad: as ev_all, but no event at all passes too (a filter that matched nothing here)
ev_none_bad() { evs "${2:-$OUT}" | awk -F'\t' "{ if (!($1)) bad++ } END { exit bad > 0 }"; }
has_ev() { evs "${2:-$OUT}" | awk -F'\t' -v e="$1" '$3 == e { f = 1 } END { exit !f }'; }
# field NAME: the numeric value of NAME=... in $7 (awk function text)
FIELD='function field(n,   s) { if (!match($7, n "=-?[0-9]+")) return "none"; s = substr($7, RSTART + length(n) + 1, RLENGTH - length(n) - 1); return s + 0 }'
ev_fields_all() { evs | awk -F'\t' "$FIELD { if (!($1)) bad++ } END { exit bad > 0 }"; }
in_order() { evs "${1:-$OUT}" | awk -F'\t' '{ if ($2 + 0 < last) bad++; last = $2 + 0 } END { exit bad > 0 }'; }
# every event line is followed by at least one frame, and by at most MAX
stacks_ok() {
	awk -v max="${1:-1000}" '
		/^\t/ { if (inev) fr++; next }
		{ if (inev && (fr < 1 || fr > max)) bad++; inev = 1; fr = 0; n++ }
		END { if (inev && (fr < 1 || fr > max)) bad++; exit !(n > 0 && !bad) }' "$OUT"
}
rc0() { [ "$RC" -eq 0 ]; }
TP=syscalls:sys_enter_getppid
getppids() { evs | awk -F'\t' -v e=$TP '$3 == e' | wc -l; }

# Workloads: wake-ups on CPU 0 and on CPU 1 (two threads ping-ponging, 300 round trips a second),
# and getppid() at 200 a second in two processes (for -p, -t and the cgroup)
start_bg() {
	"$@" &
	BG_PIDS+=($!)
}
start_bg taskset -c 0 "$GEN" -q -r 300 pingpong 1000000000
start_bg taskset -c 1 "$GEN" -q -r 300 pingpong 1000000000
start_bg "$GEN" -q -r 200 getppid 1000000000
GP1=${BG_PIDS[2]}
start_bg "$GEN" -q -r 200 getppid 1000000000
GP2=${BG_PIDS[3]}
sleep 0.2

# ---- perf-prof trace -h: EXAMPLES ----
ppw trace -e sched:sched_wakeup -C 0 -g
check_pp h1 "perf-prof trace -e sched:sched_wakeup -C 0 -g: wake-ups on CPU 0 only, each with its stack" \
	eval 'rc0 && ev_all "\$1 == 0 && \$3 == \"sched:sched_wakeup\"" && stacks_ok'

mkdir -p "$TMP/fg" && cd "$TMP/fg" || exit 1
ppw trace -e sched:sched_wakeup -g --flame-graph wakeup
check_pp flame1 "perf-prof trace -e sched:sched_wakeup -g --flame-graph wakeup: folded stacks in wakeup.folded" \
	eval 'rc0 && grep -qE "^[^;]+(;[^;]+)+ [0-9]+$" wakeup.folded'
cd - >/dev/null || exit 1

pp 0.5 trace -e 'oom:mark_victim//exec=system("cat /proc/%d/stat", pid)/'
check_pp exec1 "perf-prof trace -e 'oom:mark_victim//exec=system(\"cat /proc/%d/stat\", pid)/': accepted, runs until SIGINT" rc0

mkdir -p "$TMP/ls" && touch "$TMP/ls/perfprof-marker" && cd "$TMP/ls" || exit 1
# (ls alone may never block: a sleep after it makes a switch sure)
pp 20 trace -e sched:sched_wakeup,sched:sched_switch --ptrace -- sh -c 'ls; sleep 0.1'
check_pp h4 "perf-prof trace -e sched:sched_wakeup,sched:sched_switch --ptrace -- ls: ls runs; its tasks' events, theirs only" \
	eval 'rc0 && grep -q "^perfprof-marker$" "$OUT" && ev_all "\$3 ~ /^sched:sched_(wakeup|switch)$/ && \$6 ~ /^(sh|ls|sleep)$/" && evs | grep -q "sched:sched_switch	.*	sleep	"'
cd - >/dev/null || exit 1

# ---- docs/profilers/trace.md ----
ppw trace -e sched:sched_wakeup -C 0
check_pp d1 "perf-prof trace -e sched:sched_wakeup -C 0: wake-ups on CPU 0 only" \
	eval 'rc0 && ev_all "\$1 == 0 && \$3 == \"sched:sched_wakeup\""'

ppw trace -e 'sched:sched_wakeup/prio<10/,sched:sched_switch'
check_pp d2 "perf-prof trace -e 'sched:sched_wakeup/prio<10/,sched:sched_switch': switches, and wake-ups only with prio<10" \
	eval 'rc0 && has_ev sched:sched_switch && ev_fields_all "\$3 != \"sched:sched_wakeup\" || field(\"prio\") < 10"'

cd "$TMP/fg" || exit 1
ppw trace -e sched:sched_wakeup -C 0 -g --flame-graph wakeup.folded
check_pp flame2 "perf-prof trace -e sched:sched_wakeup -C 0 -g --flame-graph wakeup.folded: folded stacks written" \
	eval 'rc0 && grep -qE "^[^;]+(;[^;]+)+ [0-9]+$" wakeup.folded*'
cd - >/dev/null || exit 1

ppw trace -e 'sched:sched_wak*' -C 0
check_pp d4 "perf-prof trace -e 'sched:sched_wak*' -C 0: sched_wakeup and sched_waking, CPU 0 only" \
	eval 'rc0 && ev_all "\$1 == 0 && \$3 ~ /^sched:sched_wak/" && has_ev sched:sched_wakeup && has_ev sched:sched_waking'

# a program calling printf() and malloc() every 10 ms, for the uprobes
cat >"$TMP/probe.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100;
	for (int i = 0; i < n; i++) {
		char *p = malloc(64 + i % 7);
		printf("probe %d %p\n", i, (void *)p);
		fflush(stdout);
		free(p);
		usleep(10000);
	}
	return 0;
}
EOF
LIBC=
if $CC -O1 -o "$TMP/probe" "$TMP/probe.c" 2>"$TMP/cc.err"; then
	LIBC=$(ldd "$TMP/probe" | awk '/libc\.so/ { print $3 }')
fi
if [ -n "$LIBC" ]; then
	# (libc is /lib64/libc.so.6 in perf-prof's docs; here $LIBC)
	start_bg sh -c "sleep 0.3; exec '$TMP/probe' 150 >/dev/null"
	pp 1.2 trace -e "uprobe:printf@\"$LIBC\"" -m 64
	check_pp uprobe1 "perf-prof trace -e 'uprobe:printf@\"/lib64/libc.so.6\"' -m 64: the probe program's printf() calls" \
		eval 'rc0 && ev_all "\$3 ~ /^uprobe:printf@/" && evs | grep -q "	probe	"'
	"$TMP/probe" 1000000 >/dev/null &
	BG_PIDS+=($!)
	PROBE=$!
	ppw trace -e "uprobe:malloc@\"$LIBC\"" -p $PROBE
	check_pp uprobe2 "perf-prof trace -e 'uprobe:malloc@\"/lib64/libc.so.6\"' -p PID: that process's malloc() calls" \
		eval 'rc0 && ev_all "\$3 ~ /^uprobe:malloc@/ && \$4 == $PROBE"'
else
	skip "uprobe1: cannot build a program calling printf ($(head -1 "$TMP/cc.err"))"
	skip "uprobe2: cannot build a program calling malloc"
fi

pp 0.5 trace -e 'task-state,page-faults/-N 10/,raw_syscalls:sys_enter' --order
check_pp embed1 "perf-prof trace -e 'task-state,page-faults/-N 10/,raw_syscalls:sys_enter' --order: runs, system calls shown" \
	eval 'rc0 && has_ev raw_syscalls:sys_enter'

ppw trace -e 'sched:sched_wakeup,sched:sched_switch' --overwrite
check_pp overwrite1 "perf-prof trace -e 'sched:sched_wakeup,sched:sched_switch' --overwrite: the last events, printed at the end" \
	eval 'rc0 && ev_all "\$3 ~ /^sched:sched_(wakeup|switch)$/"'

pp 20 trace -e 'sched:sched_wakeup,sched:sched_switch' -C 0 -N 100
check_pp e1 "perf-prof trace -e 'sched:sched_wakeup,sched:sched_switch' -C 0 -N 100: exactly 100 events, CPU 0" \
	eval 'rc0 && [ "$(nev)" -eq 100 ] && ev_all "\$1 == 0"'

cd "$TMP/fg" || exit 1
ppw trace -e 'sched:sched_wakeup/prio<10/' -g --flame-graph high_prio.folded
check_pp flame3 "perf-prof trace -e 'sched:sched_wakeup/prio<10/' -g --flame-graph high_prio.folded: the file is written" \
	eval 'rc0 && [ -e high_prio.folded ] || [ -e high_prio.folded.folded ]'
cd - >/dev/null || exit 1

# (syscalls:sys_enter_* in the docs: 700 events to open and close, 13 s here, for perf-prof too)
ppw trace -e 'syscalls:sys_enter_getp*' -p $GP1 --order
check_pp e3 "perf-prof trace -e 'syscalls:sys_enter_*' -p PID --order: that process's calls, in time order" \
	eval 'rc0 && ev_all "\$4 == $GP1 && \$3 ~ /^syscalls:sys_enter_getp/" && has_ev syscalls:sys_enter_getppid && in_order'

# allocations over 1024 bytes all through the window, however long perfscope takes to start
start_bg sh -c "for i in \$(seq 200); do cat /proc/self/stat; sleep 0.02; done >/dev/null"
ppw trace -e 'kmem:kmalloc/bytes_alloc>1024/stack/' -m 128
check_pp e4 "perf-prof trace -e 'kmem:kmalloc/bytes_alloc>1024/stack/' -m 128: allocations over 1024 bytes, with stacks" \
	eval 'rc0 && ev_fields_all "\$3 == \"kmem:kmalloc\" && field(\"bytes_alloc\") > 1024" && [ "$(nev)" -gt 0 ] && stacks_ok'

ppw trace -e 'irq:*' --overwrite -m 64
check_pp overwrite2 "perf-prof trace -e 'irq:*' --overwrite -m 64: the last irq events, at the end" \
	eval 'rc0 && ev_all "\$3 ~ /^irq:/"'

pp 20 trace -e 'sched:*' -C 0 -N 1000
check_pp t1 "perf-prof trace -e 'sched:*' -C 0 -N 1000: exactly 1000 sched events, CPU 0" \
	eval 'rc0 && [ "$(nev)" -eq 1000 ] && ev_all "\$1 == 0 && \$3 ~ /^sched:/"'

ppw trace -e 'sched:sched_wakeup/target_cpu==0 && prio<10/stack/max-stack=16/' -C 0
check_pp t5 "perf-prof trace -e 'sched:sched_wakeup/target_cpu==0 && prio<10/stack/max-stack=16/' -C 0: filter held, at most 16 frames" \
	eval 'rc0 && ev_fields_all "\$1 == 0 && field(\"target_cpu\") == 0 && field(\"prio\") < 10" && { [ "$(nev)" -eq 0 ] || stacks_ok 16; }'

ppw trace -e 'sched:sched_stat_runtime//exec=printf("runtime: %llu us\n", runtime/1000)/' -C 0
check_pp exec2 "perf-prof trace -e 'sched:sched_stat_runtime//exec=printf(\"runtime: %llu us\\n\", runtime/1000)/' -C 0: a runtime line per event" \
	eval 'rc0 && [ "$(nev)" -gt 0 ] && [ "$(grep -c "^runtime: [0-9]* us$" "$OUT")" -eq "$(nev)" ]'

# (192.168.1.100 in the docs: loopback here)
PORT=$((20000 + $$ % 20000))
pp 0.5 trace -e "sched:sched_wakeup//push=127.0.0.1:$PORT/" -C 0
check_pp push1 "perf-prof trace -e 'sched:sched_wakeup//push=IP:PORT/' -C 0: accepted, serves the events until SIGINT" rc0
pp 0.5 trace -e "sched:sched_wakeup//pull=127.0.0.1:$PORT/" --order
check_pp pull1 "perf-prof trace -e 'sched:sched_wakeup//pull=IP:PORT/' --order: accepted (no server: its own events)" \
	eval 'rc0 && ev_all "\$3 == \"sched:sched_wakeup\""'

# (syscalls:sys_enter_* and ./myapp in the docs: a narrower wildcard, 100 getppid calls)
pp 20 trace -e 'syscalls:sys_enter_getp*' --ptrace -- "$GEN" -q getppid 100
check_pp t9 "perf-prof trace -e 'syscalls:sys_enter_*' --ptrace -- ./myapp: exactly the program's 100 calls" \
	eval 'rc0 && [ "$(getppids)" -eq 100 ]'

ppw trace -e sched:sched_wakeup --tsc -C 0
check_pp tsc1 "perf-prof trace -e 'sched:sched_wakeup' --tsc -C 0: runs, wake-ups on CPU 0" \
	eval 'rc0 && ev_all "\$1 == 0"'

ppw trace -e 'sched:sched_wakeup/comm=="gen_events"/' -g
check_pp c2 "perf-prof trace -e 'sched:sched_wakeup/comm==\"myapp\"/' -g: only that comm's wake-ups, with stacks" \
	eval 'rc0 && ev_fields_all "\$7 ~ /^comm=gen_events /" && [ "$(nev)" -gt 0 ] && stacks_ok'

run_capture bash -c "timeout -s INT -k 10 20 '$P' trace -e 'sched:sched_wakeup,sched:sched_switch' --order | head -100; exit \${PIPESTATUS[0]}"
check_pp c3 "perf-prof trace -e 'sched:sched_wakeup,sched:sched_switch' --order | head -100: 100 lines in time order, exit 0" \
	eval 'rc0 && [ "$(wc -l <"$OUT")" -eq 100 ] && [ "$(nev)" -eq 100 ] && in_order'

pp 20 trace -e sched:sched_wakeup -g -N 1000
check_pp c4 "perf-prof trace -e 'sched:sched_wakeup' -g -N 1000: exactly 1000 wake-ups, each with its stack" \
	eval 'rc0 && [ "$(nev)" -eq 1000 ] && stacks_ok'

# ---- README ----
pp 1.3 trace -e sched:sched_wakeup,sched:sched_switch -i 1000
check_pp r1 "perf-prof trace -e sched:sched_wakeup,sched:sched_switch -i 1000: both events; standard output has only events" \
	eval 'rc0 && has_ev sched:sched_wakeup && has_ev sched:sched_switch && [ "$(nev)" -eq "$(wc -l <"$OUT")" ]'

pp 1.3 trace -e 'sched:sched_wakeup/prio<10/' -i 1000
check_pp r2 "perf-prof trace -e \"sched:sched_wakeup/prio<10/\" -i 1000: only prio<10" \
	eval 'rc0 && ev_fields_all "field(\"prio\") < 10"'

ppw trace -e 'sched:sched_wakeup/pid>1000/'
check_pp r3 "perf-prof trace -e \"sched:sched_wakeup/pid>1000/\": only pid>1000" \
	eval 'rc0 && ev_fields_all "field(\"pid\") > 1000" && [ "$(nev)" -gt 0 ]'

ppw trace -e 'sched:sched_wakeup/comm=="java"/'
check_pp r4 "perf-prof trace -e 'sched:sched_wakeup/comm==\"java\"/': no java here, no events, exit 0" \
	eval 'rc0 && [ "$(nev)" -eq 0 ]'

# (comm~"pyth*" in the README: the workload's name here)
ppw trace -e 'sched:sched_wakeup/comm~"gen_ev*"/'
check_pp r5 "perf-prof trace -e 'sched:sched_wakeup/comm~\"pyth*\"/': only the glob's comms" \
	eval 'rc0 && ev_fields_all "\$7 ~ /^comm=gen_ev/" && [ "$(nev)" -gt 0 ]'

ppw trace -e 'sched:sched_wakeup/pid>1000 && prio<10/'
check_pp r6 "perf-prof trace -e \"sched:sched_wakeup/pid>1000 && prio<10/\": both conditions held" \
	eval 'rc0 && ev_fields_all "field(\"pid\") > 1000 && field(\"prio\") < 10"'

pp 5 trace -e sched:sched_wakeup help
check_pp help1 "perf-prof trace -e sched:sched_wakeup help: the event's help with its fields, exit 0" \
	eval 'rc0 && grep -q "sched:sched_wakeup" "$OUT" && grep -q "target_cpu" "$OUT"'
pp 5 trace -e sched:sched_wakeup,sched:sched_switch help
check_pp help2 "perf-prof trace -e sched:sched_wakeup,sched:sched_switch help: both events' help" \
	eval 'rc0 && grep -q "target_cpu" "$OUT" && grep -q "prev_comm" "$OUT"'

pp 5 trace -h
check_pp r9 "perf-prof trace -h: the usage, exit 0 (perf-prof exits 129)" \
	eval 'rc0 && grep -q -- "-e, --event" "$OUT" && grep -q -- "--exit-N" "$OUT"'

# ---- perf-prof's tests/test_trace.py ----
ppw trace -e sched:sched_wakeup -C 0 -m 64
check_pp p1 "perf-prof trace -e sched:sched_wakeup -C 0 -m 64: wake-ups on CPU 0" \
	eval 'rc0 && ev_all "\$1 == 0 && \$3 == \"sched:sched_wakeup\""'
pp 20 trace -e sched:sched_wakeup -C 0 -m 64 --tsc -N 20
check_pp tsc2 "perf-prof trace -e sched:sched_wakeup -C 0 -m 64 --tsc -N 20: exactly 20 events" \
	eval 'rc0 && [ "$(nev)" -eq 20 ]'
cd "$TMP/fg" || exit 1
ppw trace -e sched:sched_wakeup -C 0 -m 64 -g --flame-graph wakeup2
check_pp flame4 "perf-prof trace -e sched:sched_wakeup -C 0 -m 64 -g --flame-graph wakeup: wakeup.folded written" \
	eval 'rc0 && grep -qE "^[^;]+(;[^;]+)+ [0-9]+$" wakeup2.folded'
cd - >/dev/null || exit 1
ppw trace -e sched:sched_wakeup,sched:sched_switch -m 1 --overwrite
check_pp overwrite3 "perf-prof trace -e sched:sched_wakeup,sched:sched_switch -m 1 --overwrite: the last events at the end" \
	eval 'rc0 && ev_all "\$3 ~ /^sched:sched_(wakeup|switch)$/"'
pp 20 trace -e 'task-state,page-faults/-N 10/,raw_syscalls:sys_enter,profile/-F 5000 -N 10/' --order -- cat /proc/self/maps
check_pp embed2 "perf-prof trace -e 'task-state,page-faults/-N 10/,raw_syscalls:sys_enter,profile/-F 5000 -N 10/' --order -- cat /proc/self/maps: cat's maps and its system calls" \
	eval 'rc0 && grep -q "\[stack\]" "$OUT" && has_ev raw_syscalls:sys_enter'

# ---- the common options, with trace ----

pp 20 trace -e $TP -- "$GEN" -q getppid 100
check_pp cmd1 "perf-prof trace -e $TP -- CMD: exactly its 100 calls, its status" eval 'rc0 && [ "$(getppids)" -eq 100 ]'
pp 20 trace -e $TP "$GEN" -q getppid 100
check_pp cmd2 "perf-prof trace -e $TP CMD (no --): exactly its 100 calls" eval 'rc0 && [ "$(getppids)" -eq 100 ]'

pp 20 trace -e $TP -p $GP1 -N 5
check_pp p-pid "perf-prof trace -e $TP -p PID -N 5: 5 events of PID" eval 'rc0 && [ "$(nev)" -eq 5 ] && ev_all "\$4 == $GP1"'
pp 20 trace -e $TP --pids $GP1 -N 5
check_pp pids "perf-prof trace -e $TP --pids PID -N 5: 5 events of PID" eval 'rc0 && [ "$(nev)" -eq 5 ] && ev_all "\$4 == $GP1"'
pp 20 trace -e $TP -p $GP1,$GP2 -N 20
check_pp pidlist1 "perf-prof trace -e $TP -p PID1,PID2 -N 20: events of both, none else" \
	eval 'rc0 && ev_all "\$4 == $GP1 || \$4 == $GP2" && evs | grep -q "	$GP1	" && evs | grep -q "	$GP2	"'
pp 20 trace -e $TP -t $GP1 -N 5
check_pp t-tid "perf-prof trace -e $TP -t TID -N 5: 5 events of TID" eval 'rc0 && [ "$(nev)" -eq 5 ] && ev_all "\$5 == $GP1"'
pp 20 trace -e $TP --tids $GP1 -N 5
check_pp tids "perf-prof trace -e $TP --tids TID -N 5: 5 events of TID" eval 'rc0 && [ "$(nev)" -eq 5 ] && ev_all "\$5 == $GP1"'
pp 20 trace -e $TP -t $GP1,$GP2 -N 20
check_pp tidlist1 "perf-prof trace -e $TP -t TID1,TID2 -N 20: events of both" \
	eval 'rc0 && ev_all "\$5 == $GP1 || \$5 == $GP2" && evs | grep -q "	$GP2	"'
# GP1 runs on CPU 1 for this line: the scheduler may keep it on another CPU for seconds
taskset -pc 1 "$GP1" >/dev/null
pp 20 trace -e $TP -p $GP1 -C 1 -N 5
taskset -pc "$(usable_cpus | tr ' ' ,)" "$GP1" >/dev/null
check_pp pidcpu1 "perf-prof trace -e $TP -p PID -C 1 -N 5: accepted; events of PID, none off CPU 1" \
	eval 'rc0 && ev_all "\$4 == $GP1 && \$1 == 1"'

CG2=$(findmnt -n -t cgroup2 -o TARGET | head -1)
if [ -n "$CG2" ] && mkdir -p "$CG2/psc_perfprof_$$/a" "$CG2/psc_perfprof_$$/b" 2>/dev/null; then
	CGDIR=$CG2/psc_perfprof_$$
	start_bg "$GEN" -q -r 200 getppid 1000000000
	CGA=$!
	start_bg "$GEN" -q -r 200 getppid 1000000000
	CGB=$!
	echo $CGA >"$CGDIR/a/cgroup.procs" && echo $CGB >"$CGDIR/b/cgroup.procs"
	pp 20 trace -e $TP --cgroups psc_perfprof_$$/a -N 5
	check_pp cgroups "perf-prof trace -e $TP --cgroups CGROUP -N 5: 5 events of the cgroup's process" \
		eval 'rc0 && [ "$(nev)" -eq 5 ] && ev_all "\$4 == $CGA"'
	pp 20 trace -e $TP --cgroups psc_perfprof_$$/a,psc_perfprof_$$/b -N 20
	check_pp cglist1 "perf-prof trace -e $TP --cgroups A,B -N 20: events of both cgroups' processes" \
		eval 'rc0 && ev_all "\$4 == $CGA || \$4 == $CGB" && evs | grep -q "	$CGB	"'
else
	skip "cgroups: no cgroup2 mount to make a cgroup in"
	skip "cglist1: no cgroup2 mount to make a cgroup in"
fi

pp 20 trace -e $TP --cpus 1 -N 5
check_pp cpus "perf-prof trace -e $TP --cpus 1 -N 5: 5 events on CPU 1" eval 'rc0 && [ "$(nev)" -eq 5 ] && ev_all "\$1 == 1"'
pp 20 trace -e $TP -C 0-1 -N 5
check_pp cpurange "perf-prof trace -e $TP -C 0-1 -N 5: 5 events" eval 'rc0 && [ "$(nev)" -eq 5 ]'

pp 20 trace -e $TP --exit-N 5 -p $GP1
check_pp exitN "perf-prof trace -e $TP --exit-N 5: stops after 5" eval 'rc0 && [ "$(nev)" -eq 5 ]'
pp 20 trace -e $TP -N5 -p $GP1
check_pp N5 "perf-prof trace -e $TP -N5: stops after 5" eval 'rc0 && [ "$(nev)" -eq 5 ]'
pp 20 trace -e $TP --exit-N=5 -p $GP1
check_pp exitNeq "perf-prof trace -e $TP --exit-N=5: stops after 5" eval 'rc0 && [ "$(nev)" -eq 5 ]'
pp 20 trace -e $TP -N 0 -- "$GEN" -q getppid 100
check_pp N0 "perf-prof trace -e $TP -N 0 -- CMD: no limit (perf-prof's default), all 100" eval 'rc0 && [ "$(getppids)" -eq 100 ]'

pp 20 trace -e $TP -o "$TMP/o.txt" -- "$GEN" -q getppid 100
check_pp o "perf-prof trace -e $TP -o FILE -- CMD: the 100 events in FILE, none on standard output" \
	eval 'rc0 && [ ! -s "$OUT" ] && [ "$(nev "$TMP/o.txt")" -eq 100 ]'
pp 20 trace -e $TP --output "$TMP/o2.txt" -C 1 -N 5
check_pp output "perf-prof trace -e $TP --output FILE -C 1 -N 5: 5 events on CPU 1 in FILE" \
	eval 'rc0 && [ "$(nev "$TMP/o2.txt")" -eq 5 ] && ev_all "\$1 == 1" "$TMP/o2.txt"'

pp 20 trace -e $TP --watermark 50 -- "$GEN" -q getppid 100
check_pp wm50 "perf-prof trace -e $TP --watermark 50 -- CMD: all 100" eval 'rc0 && [ "$(getppids)" -eq 100 ]'
pp 20 trace -e $TP --watermark 0 -- "$GEN" -q getppid 100
check_pp wm0 "perf-prof trace -e $TP --watermark 0 -- CMD: all 100" eval 'rc0 && [ "$(getppids)" -eq 100 ]'
pp 20 trace -e $TP -m 4 -- "$GEN" -q getppid 100
check_pp m4 "perf-prof trace -e $TP -m 4 -- CMD: all 100" eval 'rc0 && [ "$(getppids)" -eq 100 ]'
pp 20 trace -e $TP --mmap-pages 64 -- "$GEN" -q getppid 100
check_pp mmap64 "perf-prof trace -e $TP --mmap-pages 64 -- CMD: all 100" eval 'rc0 && [ "$(getppids)" -eq 100 ]'

pp 20 trace -e $TP -i 200 -- "$GEN" -q -r 1000 getppid 600
check_pp i200 "perf-prof trace -e $TP -i 200 -- CMD: all 600 events, nothing but events on standard output" \
	eval 'rc0 && [ "$(getppids)" -eq 600 ] && [ "$(wc -l <"$OUT")" -eq 600 ]'
pp 20 trace -e $TP --interval 200 -- "$GEN" -q -r 1000 getppid 600
check_pp interval "perf-prof trace -e $TP --interval 200 -- CMD: all 600" eval 'rc0 && [ "$(getppids)" -eq 600 ]'

pp 20 trace -e $TP --order -- "$GEN" -q -j 2 getppid 1000
check_pp order "perf-prof trace -e $TP --order -- CMD (2 threads): all 2000 calls, in time order" \
	eval 'rc0 && [ "$(getppids)" -eq 2000 ] && in_order'
pp 20 trace -e $TP --inherit -- sh -c "'$GEN' -q getppid 100"
check_pp inherit "perf-prof trace -e $TP --inherit -- sh -c CMD: the child's 100 calls" \
	eval 'rc0 && [ "$(evs | awk -F"\t" "\$6 == \"gen_events\"" | wc -l)" -eq 100 ]'
pp 20 trace -e $TP --ptrace -- "$GEN" -q -j 2 getppid 100
check_pp ptrace "perf-prof trace -e $TP --ptrace -- CMD (2 threads): all 200 calls" eval 'rc0 && [ "$(getppids)" -eq 200 ]'

T0=$(python3 -c 'import time; print("%.6f" % time.monotonic())')
pp 20 trace -e $TP --monotonic -N 3 -p $GP1
T1=$(python3 -c 'import time; print("%.6f" % time.monotonic())')
check_pp monotonic "perf-prof trace -e $TP --monotonic -N 3: CLOCK_MONOTONIC times" \
	eval 'rc0 && [ "$(nev)" -eq 3 ] && ev_all "\$2 + 0 >= $T0 && \$2 + 0 <= $T1"'
pp 20 trace -e $TP --clock-offset 1000 -N 3 -p $GP1
check_pp clockoff1 "perf-prof trace -e $TP --clock-offset 1000 -N 3: runs" eval 'rc0 && [ "$(nev)" -eq 3 ]'

pp 1.2 trace -e $TP --usage-self 500 -p $GP1
check_pp usage1 "perf-prof trace -e $TP --usage-self 500 -p PID: perfscope's own CPU use every 500 ms" \
	eval 'rc0 && [ "$(nev)" -gt 0 ] && cat "$OUT" "$ERR" | grep -Eiq "(usr|sys|cpu).*%|%.*(usr|sys|cpu)"'
# perf-prof 1.9's trace prints every event with --sampling-limit; perfscope keeps to it and
# counts the rest as dropped, as its help says
pp 20 trace -e $TP --sampling-limit 10 -- "$GEN" -q -r 2000 getppid 1000
check_pp sampling "perf-prof trace -e $TP --sampling-limit 10 -- CMD: printed + dropped = 1000, some dropped" \
	eval 'rc0 && d=$(sed -n "s/.* \([0-9]*\) events dropped by --sampling-limit.*/\1/p" "$ERR") && [ -n "$d" ] && [ "$d" -gt 0 ] && [ $(($(getppids) + d)) -eq 1000 ]'
pp 20 trace -e $TP --perfeval-cpus 0 --perfeval-pids $GP1 -N 3 -p $GP1
check_pp perfeval1 "perf-prof trace -e $TP --perfeval-cpus 0 --perfeval-pids PID -N 3 -p PID: runs" eval 'rc0 && [ "$(nev)" -eq 3 ]'

pp 5 trace -V
check_pp version1 "perf-prof trace -V: the version, exit 0" eval 'rc0 && grep -q "[0-9]\.[0-9]" "$OUT"'
pp 20 trace -e $TP -v -N 3 -p $GP1
check_pp verbose "perf-prof trace -e $TP -v -N 3: 3 events" eval 'rc0 && [ "$(nev)" -eq 3 ]'
pp 20 trace -e $TP -q -N 3 -p $GP1
check_pp quiet "perf-prof trace -e $TP -q -N 3: 3 events, no statistics" eval 'rc0 && [ "$(nev)" -eq 3 ] && [ ! -s "$ERR" ]'

# stacks: a system call tracepoint has the user stack (gen_call_getppid) and no kernel one
user_frames() { grep -c "gen_call_getppid" "$OUT"; }
pp 20 trace -e $TP -g -N 2 -p $GP1
check_pp g "perf-prof trace -e $TP -g -N 2: user stacks through gen_call_getppid" eval 'rc0 && [ "$(user_frames)" -eq 2 ] && stacks_ok'
pp 20 trace -e $TP --call-graph -N 2 -p $GP1
check_pp callgraph "perf-prof trace -e $TP --call-graph -N 2: user stacks" eval 'rc0 && [ "$(user_frames)" -eq 2 ]'
pp 20 trace -e $TP -g --user-callchain -N 2 -p $GP1
check_pp ucc "perf-prof trace -e $TP -g --user-callchain -N 2: user stacks" eval 'rc0 && [ "$(user_frames)" -eq 2 ]'
pp 20 trace -e $TP -g --user-callchain=fp -N 2 -p $GP1
check_pp uccfp "perf-prof trace -e $TP -g --user-callchain=fp -N 2: user stacks" eval 'rc0 && [ "$(user_frames)" -eq 2 ]'
pp 20 trace -e $TP -g --user-callchain=dwarf -N 2 -p $GP1
check_pp dwarf1 "perf-prof trace -e $TP -g --user-callchain=dwarf -N 2: user stacks" eval 'rc0 && [ "$(user_frames)" -eq 2 ]'
pp 20 trace -e $TP -g --no-user-callchain -N 2 -p $GP1
check_pp nucc "perf-prof trace -e $TP -g --no-user-callchain -N 2: no user frames" eval 'rc0 && [ "$(nev)" -eq 2 ] && [ "$(user_frames)" -eq 0 ]'
pp 20 trace -e sched:sched_switch -g --no-kernel-callchain -- "$GEN" -q pingpong 20
check_pp nkcc "perf-prof trace -e sched:sched_switch -g --no-kernel-callchain -- CMD: no kernel frames" \
	eval 'rc0 && [ "$(nev)" -gt 0 ] && ! grep -q "kernel.kallsyms" "$OUT"'
pp 20 trace -e sched:sched_switch -g --kernel-callchain -- "$GEN" -q pingpong 20
check_pp kcc "perf-prof trace -e sched:sched_switch -g --kernel-callchain -- CMD: kernel frames" \
	eval 'rc0 && grep -q "kernel.kallsyms" "$OUT"'

cd "$TMP/fg" || exit 1
pp 20 trace -e $TP -g --flame-graph "$TMP/fg/cmd" -- "$GEN" -q getppid 100
check_pp flame5 "perf-prof trace -e $TP -g --flame-graph FILE -- CMD: FILE.folded has gen_events;...;gen_call_getppid 100" \
	eval 'rc0 && grep -qE "^gen_events;.*gen_call_getppid 100$" "$TMP/fg/cmd.folded"'
cd - >/dev/null || exit 1

# ATTRs and filters
pp 20 trace -e "$TP//stack/" -N 2 -p $GP1
check_pp stack "perf-prof trace -e '$TP//stack/' -N 2: each with its stack" eval 'rc0 && [ "$(nev)" -eq 2 ] && stacks_ok'
pp 20 trace -e "$TP//stack/max-stack=2/" -N 2 -p $GP1
check_pp maxstack "perf-prof trace -e '$TP//stack/max-stack=2/' -N 2: at most 2 frames" eval 'rc0 && [ "$(nev)" -eq 2 ] && stacks_ok 2'
# perf-prof's trace prints the tracepoint's name; perfscope prints the alias
pp 20 trace -e "$TP//alias=gp/" -N 2 -p $GP1
check_pp alias "perf-prof trace -e '$TP//alias=gp/' -N 2: 2 events (perfscope names them gp)" \
	eval 'rc0 && [ "$(nev)" -eq 2 ] && ev_all "\$3 == \"gp\" || \$3 == \"$TP\""'
# getppid calls certain to run on CPU 1 (GP1 and GP2 may both be on CPU 0 for the whole window
# on a loaded machine): for the cpus=1 and _cpu==1 lines
start_bg taskset -c 1 "$GEN" -q -r 200 getppid 1000000000
pp 20 trace -e "$TP//cpus=1/" -N 5
check_pp cpusattr1 "perf-prof trace -e '$TP//cpus=1/' -N 5: 5 events on CPU 1" eval 'rc0 && [ "$(nev)" -eq 5 ] && ev_all "\$1 == 1"'
pp 20 trace -e "$TP/common_pid==$GP1/" -N 5
check_pp commpid "perf-prof trace -e '$TP/common_pid==PID/' -N 5: 5 events of PID" eval 'rc0 && [ "$(nev)" -eq 5 ] && ev_all "\$4 == $GP1"'
pp 20 trace -e "$TP/_pid==$GP1/" -N 5
check_pp pidvar1 "perf-prof trace -e '$TP/_pid==PID/' -N 5: 5 events of PID" eval 'rc0 && [ "$(nev)" -eq 5 ] && ev_all "\$4 == $GP1"'
pp 20 trace -e "$TP/_cpu==1/" -N 5
check_pp cpuvar1 "perf-prof trace -e '$TP/_cpu==1/' -N 5: 5 events on CPU 1" eval 'rc0 && [ "$(nev)" -eq 5 ] && ev_all "\$1 == 1"'
kill "${BG_PIDS[-1]}" 2>/dev/null
pp 20 trace -e "$TP/common_pid>0/" -- "$GEN" -q getppid 100
check_pp filter "perf-prof trace -e '$TP/common_pid>0/' -- CMD: all 100" eval 'rc0 && [ "$(getppids)" -eq 100 ]'
pp 20 trace -e 'syscalls:sys_enter_getpp*' -- "$GEN" -q getppid 100
check_pp glob "perf-prof trace -e 'syscalls:sys_enter_getpp*' -- CMD: all 100" eval 'rc0 && [ "$(getppids)" -eq 100 ]'
pp 20 trace -e $TP,syscalls:sys_exit_getppid -N 4 -p $GP1
check_pp list "perf-prof trace -e $TP,syscalls:sys_exit_getppid -N 4: both events" \
	eval 'rc0 && [ "$(nev)" -eq 4 ] && has_ev $TP && has_ev syscalls:sys_exit_getppid'
pp 20 trace -e $TP --event syscalls:sys_exit_getppid -N 4 -p $GP1
check_pp event2 "perf-prof trace -e $TP --event syscalls:sys_exit_getppid -N 4: both events" \
	eval 'rc0 && [ "$(nev)" -eq 4 ] && has_ev $TP && has_ev syscalls:sys_exit_getppid'
pp 20 trace -e $TP --overwrite -m 1 -- "$GEN" -q getppid 100
check_pp overwrite4 "perf-prof trace -e $TP --overwrite -m 1 -- CMD: the last of the 100 calls, at the end" \
	eval 'rc0 && [ "$(getppids)" -gt 0 ] && [ "$(getppids)" -le 100 ]'

done_testing
