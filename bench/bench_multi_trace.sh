#!/bin/bash
# Two-event benchmark: consumer CPU per pair and per event, peak memory and losses of perfscope
# multi-trace (wakeup -> switch) and syscalls beside perf-prof's, on the same workloads in one run.
#
# usage: bench/bench_multi_trace.sh [-n N] [-p ROUNDTRIPS] [-r REPS] [-R RATE] BUILD_DIR   (as root)
#
# Workload 1: bench/gen_events as pscbench_gen, a pipe ping-pong of ROUNDTRIPS round trips (two
# processes waking each other); consumers pair sched:sched_wakeup (key pid) with
# sched:sched_switch (key next_pid), both filtered in the kernel on the workload's name, with time
# order (perf-prof needs --order to pair across CPUs; perfscope orders by default).
# Workload 2: N getppid() calls from one thread at RATE per second (0: flat out); consumers pair
# raw_syscalls:sys_enter with sys_exit of the same thread (the syscalls presets), filtered on the
# workload's name. Each consumer runs alone in the background, the workload in the foreground;
# it is stopped with SIGINT, its CPU time (user + system, from `times` of a subshell that only
# waits for it) is divided by the pairs it reports (calls) and by the events perfscope counted;
# its peak RSS is VmHWM just before the stop. REPS runs each, the median by CPU per pair.
# Output: markdown tables on stdout (bench/README.md "Two-event analysis" has a copy).
set -uo pipefail

N=1000000
PP=100000
REPS=3
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
PPF=${PERF_PROF:-$(dirname "$0")/../../shared/peers/perf-prof/perf-prof}
for f in "$P" "$GEN"; do
	[ -x "$f" ] || { echo "bench_multi_trace: $f not built (ninja -C $B)" >&2; exit 1; }
done
[ "$(id -u)" -eq 0 ] || { echo "bench_multi_trace: run as root (system-wide tracepoints)" >&2; exit 1; }
HAVE_PPF=0
"$PPF" -V >/dev/null 2>&1 && HAVE_PPF=1

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
	"${WORK[@]}" >/dev/null 2>"$TMP/$name.gen"
	sleep 0.5
	rss_kb "$(cat "$TMP/$name.pid")" >"$TMP/$name.rss"
	kill -INT "$(cat "$TMP/$name.pid")" 2>/dev/null
	wait $sub
	times_cpu "$TMP/$name.times" >"$TMP/$name.cpu"
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
	lost=$(sed -n 's/.*lost \([0-9]*\) events (total).*/\1/p' "$TMP/$1.out" "$TMP/$1.err" | tail -1)
	echo "$pairs - ${lost:-0}"
}
count_ppf_sc() { # perf-prof syscalls: the sum of its calls column
	local pairs lost
	pairs=$(awk '/^[a-z_0-9]+\([0-9]+\) / { s += $2 } END { print s + 0 }' "$TMP/$1.out")
	lost=$(sed -n 's/.*lost \([0-9]*\) events (total).*/\1/p' "$TMP/$1.out" "$TMP/$1.err" | tail -1)
	echo "$pairs - ${lost:-0}"
}

ROWS=()
# bench LABEL KEY COUNTER CONSUMER...: REPS runs, the median by CPU per pair
bench() {
	local label=$1 key=$2 counter=$3 r pairs ev lost cpu
	shift 3
	for ((r = 1; r <= REPS; r++)); do
		measure "$key.$r" "$@"
		read -r pairs ev lost <<<"$($counter "$key.$r")"
		cpu=$(cat "$TMP/$key.$r.cpu")
		echo "$(awk -v c="$cpu" -v p="$pairs" 'BEGIN { if (p > 0) printf "%.0f", c * 1e9 / p; else print 999999999 }') $cpu $pairs $ev $lost $(cat "$TMP/$key.$r.rss")"
	done | sort -n >"$TMP/$key.runs"
	read -r nsp cpu pairs ev lost rss <<<"$(sed -n "$(((REPS + 1) / 2))p" "$TMP/$key.runs")"
	ROWS+=("$label|$pairs|$ev|$lost|$cpu|$nsp|$rss")
}

table() {
	local r label pairs ev lost cpu nsp rss nse
	echo "| consumer | pairs | events | lost | consumer CPU s | ns per pair | ns per event | peak RSS MiB |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|"
	for r in "${ROWS[@]}"; do
		IFS='|' read -r label pairs ev lost cpu nsp rss <<<"$r"
		nse=-
		[ "$ev" != - ] && [ "${ev:-0}" -gt 0 ] && nse=$(awk -v c="$cpu" -v e="$ev" 'BEGIN { printf "%.0f", c * 1e9 / e }')
		printf '| %s | %s | %s | %s | %s | %s | %s | %.1f |\n' "$label" "$pairs" "$ev" "$lost" "$cpu" \
			"$nsp" "$nse" "$(awk -v k="$rss" 'BEGIN { print k / 1024 }')"
	done
	ROWS=()
}

echo "### multi-trace: sched_wakeup -> sched_switch, pipe ping-pong of $PP round trips"
echo
WORK=("$GENC" pingpong "$PP")
bench "perfscope multi-trace" ps_mt count_ps "$P" multi-trace -e "sched:sched_wakeup/$F/key=pid/" \
	-e "sched:sched_switch/next_$F/key=next_pid/"
if [ $HAVE_PPF = 1 ]; then
	bench "perf-prof multi-trace --order" ppf_mt count_ppf_mt "$PPF" multi-trace -e "sched:sched_wakeup/$F/key=pid/" \
		-e "sched:sched_switch/next_$F/key=next_pid/" --order
fi
table
echo
echo "### syscalls: raw_syscalls enter -> exit, $N getppid() calls at $RATE/s (0: flat out)"
echo
WORK=("$GENC" -r "$RATE" getppid "$N")
bench "perfscope syscalls" ps_sc count_ps "$P" syscalls -e "raw_syscalls:sys_enter/$F/" -e "raw_syscalls:sys_exit/$F/"
if [ $HAVE_PPF = 1 ]; then
	bench "perf-prof syscalls" ppf_sc count_ppf_sc "$PPF" syscalls -e "raw_syscalls:sys_enter/$F/" \
		-e "raw_syscalls:sys_exit/$F/"
fi
table
echo
say "done"
