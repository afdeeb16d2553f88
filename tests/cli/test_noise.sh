#!/usr/bin/env bash
# Issue 19's smaller ones: stderr says once what repeats (events this machine lacks, idle events
# of a wildcard, the exporter's unsupported events) and -v still lists each; a typo in a profiler
# name, a long option, an ATTR or an exporter flag gets "did you mean", with exit status 2.
# shellcheck source=tests/cli/tap.sh
source "$(dirname "$0")/tap.sh"
: "${PERFSCOPE:?}" "${WORKLOAD:?}"
P=$PERFSCOPE
plan 18
TMPD=$(mktemp -d)
EXP_PID=
trap '[ -n "$EXP_PID" ] && kill "$EXP_PID" 2>/dev/null; rm -rf "$TMPD"' EXIT
if ! need_root; then skip_all "needs root (perf events, tracefs)"; fi
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null

# ---- 1-3: a default stat: the hardware events a VM lacks in one line, not one each
run_capture "$P" stat -- true
n=$(grep -c '^perfscope' "$ERR")
if [ "$RC" -eq 0 ] && [ "$n" -le 2 ]; then ok "default stat: $n perfscope lines on stderr besides the report (<= 2)"
else fail "default stat: rc $RC, $n perfscope lines"; grep '^perfscope' "$ERR" | head -6 | sed 's/^/#   /'; fi
unsup=$(sed -n 's/^perfscope stat: not supported on this machine (.*), not counted: \(.*\) (-v: each with its errno)$/\1/p' "$ERR" |
	tr -d ',')
if [ -z "$unsup" ]; then
	skip "stat -v: every default event is supported here (a hardware PMU): nothing summed up"
	skip "stat --format json: nothing unsupported here"
else
	run_capture "$P" stat -v -- true
	missing=
	for e in $unsup; do grep -q "^perfscope: libperfscope: $e: not supported on this machine (" "$ERR" || missing="$missing $e"; done
	if [ -z "$missing" ]; then ok "stat -v: each of$(echo " $unsup" | head -c 80)... with its reason"
	else fail "stat -v lacks the reason for:$missing"; fi
	run_capture "$P" stat --format json -- true
	missing=
	for e in $unsup; do grep -q "\"canonical\":\"$e\",\"supported\":false,\"error\":\"$e: not supported" "$OUT" ||
		missing="$missing $e"; done
	if [ -z "$missing" ]; then ok "stat --format json: each unsupported event with its reason"
	else fail "JSON lacks:$missing"; fi
fi

# ---- 4-6: a wildcard: the idle tracepoints named in one line, the busy ones summed in one
# (sys_enter_set*, 25 tracepoints: all 344 of sys_enter_* take the kernel half a minute to enable)
if [ ! -d /sys/kernel/tracing/events/syscalls ]; then
	skip "no syscalls tracepoints in this kernel (CONFIG_FTRACE_SYSCALLS)"
	skip "no syscalls tracepoints"
	skip "no syscalls tracepoints"
else
	run_capture "$P" trace -e 'syscalls:sys_enter_set*' -- true
	n=$(wc -l <"$ERR")
	idle=$(sed -n 's/^perfscope trace: \([0-9]*\) of [0-9]* events saw nothing: syscalls:sys_enter_.* (-v lists them)$/\1/p' "$ERR")
	if [ "$RC" -eq 0 ] && [ "$n" -le 3 ] && [ "${idle:-0}" -gt 10 ]; then
		ok "trace -e 'syscalls:sys_enter_set*': $n lines on stderr, $idle idle tracepoints named in one"
	else fail "wildcard: rc $RC, $n stderr lines, idle '${idle}'"; head -4 "$ERR" | cut -c1-200 | sed 's/^/#   /'; fi
	if grep -qE '^perfscope trace: [0-9]+ events: [0-9]+ seen, 0 lost \(-v: a line for each\)$' "$ERR"; then
		ok "the tracepoints that saw events summed up in one line"
	else fail "no summed line: $(head -3 "$ERR" | cut -c1-150 | tr '\n' '|')"; fi
	run_capture "$P" trace -v -e 'syscalls:sys_enter_set*' -- true
	n0=$(grep -c '^perfscope trace: syscalls:sys_enter_[a-z0-9_]*: 0 events, 0 lost$' "$ERR")
	# the count of idle ones differs from run to run by a few at most (true's start-up is fixed)
	if [ "$RC" -eq 0 ] && [ "$n0" -gt 10 ] && [ "$((n0 - ${idle:-0}))" -le 5 ] && [ "$((idle - n0))" -le 5 ]; then
		ok "trace -v: a '0 events, 0 lost' line for each idle tracepoint ($n0)"
	else fail "trace -v: rc $RC, $n0 idle lines (vs $idle)"; fi
fi

# ---- 7-8: the exporter: the events this machine lacks in one warning; debug lists each
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
start_exp() {
	"$P" exporter --web.listen-address=127.0.0.1:"$port" "$@" 2>"$TMPD/exp.log" &
	EXP_PID=$!
	for _ in $(seq 600); do
		grep -q 'msg="listening on' "$TMPD/exp.log" && break
		_alive "$EXP_PID" || break
		sleep 0.1
	done
	kill -TERM "$EXP_PID" 2>/dev/null
	wait "$EXP_PID"
	EXP_PID=
}
start_exp
nw=$(grep -c 'level=warn' "$TMPD/exp.log")
summed=$(sed -n 's/.*level=warn msg="\([0-9]*\) perf events are not supported on this machine.*/\1/p' "$TMPD/exp.log")
if grep -q 'msg="listening on' "$TMPD/exp.log" && [ "$nw" -le 2 ]; then
	ok "exporter: $nw warnings at start (${summed:-no} unsupported events in one)"
else fail "exporter: $nw warnings"; head -5 "$TMPD/exp.log" | cut -c1-200 | sed 's/^/#   /'; fi
if [ -z "$summed" ]; then skip "exporter --log.level=debug: every event is supported here"; else
	start_exp --log.level=debug
	nd=$(grep -c 'level=debug msg="[a-z]* event .* cannot be counted on CPU .*: not supported on this machine' "$TMPD/exp.log")
	if [ "$nd" -eq "$summed" ]; then ok "exporter --log.level=debug: a line with its reason for each of the $summed"
	else fail "exporter debug: $nd lines for $summed events"; fi
fi

# ---- 9-18: "did you mean", exit 2, saying what was wrong and how to go on
dym() { # DESC WANTED CMD...: exit 2 and stderr holds WANTED
	local d=$1 want=$2
	shift 2
	run_capture "$@"
	if [ "$RC" -eq 2 ] && grep -qF -- "$want" "$ERR"; then ok "$d: $want"; else
		fail "$d: rc $RC: $(head -2 "$ERR" | tr '\n' '|')"; fi
}
dym "profiler name" "'mutli-trace' is not a profiler; did you mean 'multi-trace'?" "$P" mutli-trace -e x
dym "long option" "unknown option '--intervall'; did you mean '--interval'?" "$P" stat --intervall 100 -- true
dym "long option with =" "unknown option '--freqq=99'; did you mean '--freq'?" "$P" profile --freqq=99 -- true
dym "ATTR" "ATTR 'stak' on sched:sched_switch means nothing to trace; did you mean 'stack'? trace takes:" \
	"$P" trace -e 'sched:sched_switch//stak/' -- true
dym "ATTR with a value" "did you mean 'max-stack'?" "$P" trace -e 'sched:sched_switch//max-stak=4/' -- true
dym "a profiler's own ATTR" "did you mean 'role'?" "$P" multi-trace -e 'sched:sched_wakeup//rol=1/' \
	-e 'sched:sched_switch//key=next_pid/' -- true
dym "top's ATTR" "did you mean 'top-by'?" "$P" top -e 'sched:sched_switch//top-bi=prev_pid/' -- true
dym "an ATTR one slash early" "unknown field 'stak'; if the ATTR 'stack' was meant, it goes after the filter: sys:name//stack/" \
	"$P" trace -e 'sched:sched_switch/stak/' -- true
dym "... with its value" "if the ATTR 'key' was meant, it goes after the filter: sys:name//key=pid/" \
	"$P" multi-trace -e 'sched:sched_wakeup/kye=pid/' -e 'sched:sched_switch//key=next_pid/' -- true
dym "exporter flag" "unknown option '--web.listen-adress=:1'; did you mean '--web.listen-address'?" \
	"$P" exporter --web.listen-adress=:1
done_testing
