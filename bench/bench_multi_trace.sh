#!/bin/bash
# Two-event benchmark: consumer CPU per pair and per event, peak memory and losses of perfscope
# multi-trace (wakeup -> switch) and syscalls beside perf-prof's, on the same workloads in one run.
#
# usage: [PERF_PROF=PATH|none] bench/bench_multi_trace.sh [-n N] [-p ROUNDTRIPS] [-r REPS] [-R RATE] BUILD_DIR
#        (as root; REPS 5 by default)
#
# Workload 1: bench/gen_events as pscbench_gen, a pipe ping-pong of ROUNDTRIPS round trips (two
# processes waking each other); consumers pair sched:sched_wakeup (key pid) with
# sched:sched_switch (key next_pid), both filtered in the kernel on the workload's name, with time
# order (perf-prof needs --order to pair across CPUs; perfscope orders by default).
# Workload 2: N getppid() calls from one thread at RATE per second (0: flat out); consumers pair
# raw_syscalls:sys_enter with sys_exit of the same thread (the syscalls presets), filtered on the
# workload's name. Each consumer runs alone in the background, the workload in the foreground;
# it is stopped with SIGINT, its CPU time (user + system, from `times` of a subshell that only
# waits for it, less what it had used when the workload started: start-up is left out) is
# divided by the pairs it reports (calls) and by the events perfscope counted;
# its peak RSS is VmHWM just before the stop. REPS rounds, each running perfscope then perf-prof
# (A B A B ...: on a shared machine a slow spell then hits both alike); per tool the median and
# the spread (min-max) of ns per pair, the ratio of the medians and the ratio per round.
# perf-prof: $PERF_PROF, else ../shared/peers/perf-prof/perf-prof beside the repository (or beside
# the main worktree of a git worktree); a missing one is an error, PERF_PROF=none leaves it out.
# Output: markdown tables on stdout (bench/README.md "Two-event analysis" has a copy).
set -uo pipefail

N=1000000
PP=100000
REPS=5
RATE=200000
USAGE="usage: bench/bench_multi_trace.sh [-n N] [-p ROUNDTRIPS] [-r REPS] [-R RATE] BUILD_DIR"
while getopts n:p:r:R: opt; do
	case $opt in
	n) N=$OPTARG ;;
	p) PP=$OPTARG ;;
	r) REPS=$OPTARG ;;
	R) RATE=$OPTARG ;;
	*) echo "$USAGE" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || { echo "$USAGE" >&2; exit 2; }
B=$1
P=$B/cli/perfscope
GEN=$B/bench/gen_events
for f in "$P" "$GEN"; do
	[ -x "$f" ] || { echo "bench_multi_trace: $f not built (ninja -C $B)" >&2; exit 1; }
done
[ "$(id -u)" -eq 0 ] || { echo "bench_multi_trace: run as root (system-wide tracepoints)" >&2; exit 1; }
[ "$REPS" -ge 1 ] 2>/dev/null || { echo "$USAGE" >&2; exit 2; }

# perf-prof beside the repository: ../shared/peers/perf-prof; a git worktree looks beside its
# main worktree too. Not found is an error: a comparison that silently drops its peer misleads.
find_ppf() {
	local repo common c
	repo=$(cd "$(dirname "$0")/.." && pwd)
	common=$(git -C "$repo" rev-parse --path-format=absolute --git-common-dir 2>/dev/null)
	for c in "$repo/../shared/peers/perf-prof/perf-prof" \
		${common:+"$(dirname "$common")/../shared/peers/perf-prof/perf-prof"}; do
		[ -x "$c" ] && { echo "$c"; return 0; }
	done
	echo "$repo/../shared/peers/perf-prof/perf-prof"
}
PPF=${PERF_PROF:-$(find_ppf)}
HAVE_PPF=0
if [ "$PPF" != none ]; then
	if ! "$PPF" -V >/dev/null 2>&1; then
		echo "bench_multi_trace: perf-prof not found or not runnable: $PPF" >&2
		echo "bench_multi_trace: set PERF_PROF=/path/to/perf-prof, or PERF_PROF=none to leave it out" >&2
		exit 1
	fi
	HAVE_PPF=1
fi

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
GENC=$TMP/pscbench_gen
cp "$GEN" "$GENC"
F='comm=="pscbench_gen"'
say() { echo "bench_multi_trace: $*" >&2; }
times_cpu() {
	sed -n 2p "$1" | awk '{ s = 0; for (i = 1; i <= 2; i++) { split($i, a, "m"); s += a[1] * 60 + a[2] } printf "%.3f", s }'
}
rss_kb() { awk '/^VmHWM:/ { kb = $2 } END { print kb + 0 }' "/proc/$1/status" 2>/dev/null || echo 0; }
# CPU seconds PID's threads ran so far (schedstat: ns, exact; not ticks)
sched_cpu() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%.6f", s / 1e9 }'; }

# measure NAME CONSUMER...: CONSUMER in the background, WORK in the foreground, then SIGINT.
measure() {
	local name=$1 i
	shift
	say "$name: $*"
	(
		"$@" >"$TMP/$name.out" 2>"$TMP/$name.err" &
		echo $! >"$TMP/$name.pid"
		wait $!
		times >"$TMP/$name.times"
	) &
	local sub=$!
	for ((i = 0; i < 100; i++)); do
		[ -s "$TMP/$name.pid" ] && break
		sleep 0.05
	done
	sleep 1
	# what the start-up cost (reading /proc for every task's name, tracefs formats, opening the
	# events) varies with the machine's other processes, not with the events: left out
	sched_cpu "$(cat "$TMP/$name.pid")" >"$TMP/$name.cpu0"
	"${WORK[@]}" >/dev/null 2>"$TMP/$name.gen"
	sleep 0.5
	rss_kb "$(cat "$TMP/$name.pid")" >"$TMP/$name.rss"
	kill -INT "$(cat "$TMP/$name.pid")" 2>/dev/null
	wait $sub
	awk -v t="$(times_cpu "$TMP/$name.times")" -v s="$(cat "$TMP/$name.cpu0")" \
		'BEGIN { printf "%.3f", t - s }' >"$TMP/$name.cpu"
}

# pairs and events each tool reports -> "PAIRS EVENTS LOST"
count_ps() { # perfscope: the pair's "all" row, its event lines on stderr
	local pairs ev lost
	pairs=$(awk '$1 == "all" { print $2; exit }' "$TMP/$1.out")
	ev=$(sed -n 's/^perfscope [a-z-]*: [^ ]*: \([0-9]*\) events, \([0-9]*\) lost$/\1/p' "$TMP/$1.err" | awk '{ s += $1 } END { print s + 0 }')
	lost=$(sed -n 's/^perfscope [a-z-]*: [^ ]*: \([0-9]*\) events, \([0-9]*\) lost$/\2/p' "$TMP/$1.err" | awk '{ s += $1 } END { print s + 0 }')
	echo "${pairs:-0} $ev $lost"
}
count_ppf_mt() { # perf-prof multi-trace: the calls column of its row
	local pairs lost
	pairs=$(awk '/=>/ && $4 ~ /^[0-9]+$/ { p = $4 } END { print p + 0 }' "$TMP/$1.out")
	lost=$(ppf_lost "$1")
	echo "$pairs - ${lost:-0}"
}
# perf-prof prints a line per loss episode, "lost N events (total)": the run's losses are their sum
ppf_lost() {
	sed -n 's/.*lost \([0-9]*\) events (total).*/\1/p' "$TMP/$1.out" "$TMP/$1.err" | awk '{ s += $1 } END { print s + 0 }'
}
count_ppf_sc() { # perf-prof syscalls: the sum of its calls column
	local pairs lost
	pairs=$(awk '/^[a-z_0-9]+\([0-9]+\) / { s += $2 } END { print s + 0 }' "$TMP/$1.out")
	lost=$(ppf_lost "$1")
	echo "$pairs - ${lost:-0}"
}

# one_run KEY R COUNTER CONSUMER...: a run, appended to $TMP/KEY.runs as
# "NS_PER_PAIR CPU PAIRS EVENTS LOST RSS_KB"; a tool that does not count events (perf-prof) gets
# the events perfscope counted in the same round: both read the same filtered tracepoints, so
# the workload causes the same events whoever reads them (and perf-prof's per pair leaves out
# what it lost)
one_run() {
	local key=$1 r=$2 counter=$3 pairs ev lost cpu
	shift 3
	measure "$key.$r" "$@"
	read -r pairs ev lost <<<"$($counter "$key.$r")"
	[ "$ev" = - ] && [ -s "$TMP/$EVKEY.runs" ] && ev="~$(tail -1 "$TMP/$EVKEY.runs" | cut -d' ' -f4)"
	cpu=$(cat "$TMP/$key.$r.cpu")
	echo "$(awk -v c="$cpu" -v p="$pairs" 'BEGIN { if (p > 0) printf "%.0f", c * 1e9 / p; else print 999999999 }') $cpu $pairs $ev $lost $(cat "$TMP/$key.$r.rss")" >>"$TMP/$key.runs"
}

# pair LABEL_A KEY_A COUNTER_A CMD_A... -- LABEL_B KEY_B COUNTER_B CMD_B...: REPS rounds of A
# then B (B left out without perf-prof), then the table of both.
pair() {
	local a=() b=() in_b=0 x r
	for x in "$@"; do
		if [ "$x" = -- ] && [ $in_b = 0 ]; then in_b=1; continue; fi
		if [ $in_b = 0 ]; then a+=("$x"); else b+=("$x"); fi
	done
	: >"$TMP/${a[1]}.runs"
	: >"$TMP/${b[1]}.runs"
	EVKEY=${a[1]}
	for ((r = 1; r <= REPS; r++)); do
		one_run "${a[1]}" "$r" "${a[2]}" "${a[@]:3}"
		[ $HAVE_PPF = 1 ] && one_run "${b[1]}" "$r" "${b[2]}" "${b[@]:3}"
	done
	echo "| consumer | pairs | events | lost | consumer CPU s | ns per pair, median | min-max | ns per event (~: perfscope's count) | peak RSS MiB |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
	row "${a[0]}" "${a[1]}"
	[ $HAVE_PPF = 1 ] && row "${b[0]}" "${b[1]}"
	echo
	echo "Runs of ${a[0]} (ns per pair, in round order): $(cut -d' ' -f1 "$TMP/${a[1]}.runs" | paste -sd' ')"
	if [ $HAVE_PPF = 1 ]; then
		echo "Runs of ${b[0]}: $(cut -d' ' -f1 "$TMP/${b[1]}.runs" | paste -sd' ')"
		echo "Ratio per round: $(paste -d' ' "$TMP/${a[1]}.runs" "$TMP/${b[1]}.runs" | awk '{ printf "%s%.2f", (NR > 1 ? " " : ""), $1 / $7 }')"
		echo "Ratio of the medians, perfscope / perf-prof: **$(awk -v a="$(med "${a[1]}")" -v b="$(med "${b[1]}")" 'BEGIN { printf "%.2f", a / b }')** per pair," \
			"$(awk -v a="$(med_ev "${a[1]}")" -v b="$(med_ev "${b[1]}")" 'BEGIN { printf "%.2f", a / b }') per workload event (CPU / the events perfscope counted in the round)"
	fi
}

# med KEY: median ns per pair of KEY's runs (the middle one; even REPS: the mean of the two)
med() {
	cut -d' ' -f1 "$TMP/$1.runs" | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# med_ev KEY: median CPU ns per workload event of KEY's runs
med_ev() {
	awk '{ e = $4; sub(/^~/, "", e); if (e > 0) print $2 * 1e9 / e }' "$TMP/$1.runs" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# row LABEL KEY: the median run's figures (by ns per pair), the spread over all runs
row() {
	local label=$1 key=$2 nsp cpu pairs ev lost rss nse lo hi
	read -r nsp cpu pairs ev lost rss <<<"$(sort -n "$TMP/$key.runs" | sed -n "$(((REPS + 1) / 2))p")"
	lo=$(cut -d' ' -f1 "$TMP/$key.runs" | sort -n | head -1)
	hi=$(cut -d' ' -f1 "$TMP/$key.runs" | sort -n | tail -1)
	nse=-
	[ "$ev" != - ] && [ "${ev#\~}" -gt 0 ] 2>/dev/null && nse=$(awk -v c="$cpu" -v e="${ev#\~}" 'BEGIN { printf "%.0f", c * 1e9 / e }')
	printf '| %s | %s | %s | %s | %s | %s | %s-%s | %s | %.1f |\n' "$label" "$pairs" "$ev" "$lost" "$cpu" \
		"$(med "$key")" "$lo" "$hi" "$nse" "$(awk -v k="$rss" 'BEGIN { print k / 1024 }')"
}

echo "perfscope $P, perf-prof $([ $HAVE_PPF = 1 ] && echo "$PPF" || echo "left out (PERF_PROF=none)");" \
	"$REPS interleaved rounds; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "### multi-trace: sched_wakeup -> sched_switch, pipe ping-pong of $PP round trips"
echo
WORK=("$GENC" pingpong "$PP")
pair "perfscope multi-trace" ps_mt count_ps "$P" multi-trace -e "sched:sched_wakeup/$F/key=pid/" \
	-e "sched:sched_switch/next_$F/key=next_pid/" -- \
	"perf-prof multi-trace --order" ppf_mt count_ppf_mt "$PPF" multi-trace \
	-e "sched:sched_wakeup/$F/key=pid/" -e "sched:sched_switch/next_$F/key=next_pid/" --order
echo
echo "### syscalls: raw_syscalls enter -> exit, $N getppid() calls at $RATE/s (0: flat out)"
echo
WORK=("$GENC" -r "$RATE" getppid "$N")
pair "perfscope syscalls" ps_sc count_ps "$P" syscalls -e "raw_syscalls:sys_enter/$F/" \
	-e "raw_syscalls:sys_exit/$F/" -- \
	"perf-prof syscalls" ppf_sc count_ppf_sc "$PPF" syscalls -e "raw_syscalls:sys_enter/$F/" \
	-e "raw_syscalls:sys_exit/$F/"
echo
say "done"
