#!/bin/bash
# task-state benchmark: consumer CPU per event and peak memory of perfscope task-state beside
# perf-prof task-state, on the same workload in one run.
#
# usage: bench/bench_task_state.sh [-p ROUNDTRIPS] [-r REPS] BUILD_DIR   (as root)
#
# Workload: bench/gen_events as pscbench_gen, a pipe ping-pong of ROUNDTRIPS round trips (two
# processes waking each other: each round trip is two wakeups and two context switches of each).
# Consumers follow every task's states from sched:sched_switch and sched:sched_wakeup*, filtered on
# the workload's name (--filter pscbench_gen, which both turn into kernel filters). Each consumer
# runs alone in the background, the workload in the foreground; it is stopped with SIGINT, its CPU
# time (user + system, from `times` of a subshell that only waits for it) is divided by the state
# stays it reports (the sum of its calls column) and by the events perfscope counted (the
# workload causes the same events whoever reads them: "ns per workload event" divides each
# consumer's CPU by perfscope's count); its peak RSS is VmHWM just before the stop. perf-prof runs
# with its default ring and with -m 512 (pages per CPU), where it loses nothing.
# REPS runs each, the median by CPU per stay. Output: a markdown table on stdout.
set -uo pipefail

PP=100000
REPS=3
USAGE="usage: bench/bench_task_state.sh [-p ROUNDTRIPS] [-r REPS] BUILD_DIR"
while getopts p:r: opt; do
	case $opt in
	p) PP=$OPTARG ;;
	r) REPS=$OPTARG ;;
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
	[ -x "$f" ] || { echo "bench_task_state: $f not built (ninja -C $B)" >&2; exit 1; }
done
[ "$(id -u)" -eq 0 ] || { echo "bench_task_state: run as root (system-wide tracepoints)" >&2; exit 1; }
HAVE_PPF=0
"$PPF" -V >/dev/null 2>&1 && HAVE_PPF=1

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
GENC=$TMP/pscbench_gen
cp "$GEN" "$GENC"
say() { echo "bench_task_state: $*" >&2; }
times_cpu() {
	sed -n 2p "$1" | awk '{ s = 0; for (i = 1; i <= 2; i++) { split($i, a, "m"); s += a[1] * 60 + a[2] } printf "%.3f", s }'
}
rss_kb() { awk '/^VmHWM:/ { kb = $2 } END { print kb + 0 }' "/proc/$1/status" 2>/dev/null || echo 0; }

# measure NAME CONSUMER...: CONSUMER in the background, the workload in the foreground, SIGINT.
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
	"$GENC" pingpong "$PP" >/dev/null 2>"$TMP/$name.gen"
	sleep 0.5
	rss_kb "$(cat "$TMP/$name.pid")" >"$TMP/$name.rss"
	kill -INT "$(cat "$TMP/$name.pid")" 2>/dev/null
	wait $sub
	times_cpu "$TMP/$name.times" >"$TMP/$name.cpu"
}

# "STAYS EVENTS LOST" of each tool's report
count_ps() { # perfscope: the calls of its state rows, its event lines on stderr
	local stays ev lost
	stays=$(awk '$1 ~ /^(R|RD|[A-Za-z])$/ && $2 ~ /^[0-9]+$/ { s += $2 } END { print s + 0 }' "$TMP/$1.out")
	ev=$(sed -n 's/^perfscope [a-z-]*: [^ ]*: \([0-9]*\) events, \([0-9]*\) lost$/\1/p' "$TMP/$1.err" | awk '{ s += $1 } END { print s + 0 }')
	lost=$(sed -n 's/^perfscope [a-z-]*: [^ ]*: \([0-9]*\) events, \([0-9]*\) lost$/\2/p' "$TMP/$1.err" | awk '{ s += $1 } END { print s + 0 }')
	echo "${stays:-0} $ev $lost"
}
count_ppf() { # perf-prof task-state: the sum of its calls column
	local stays lost
	stays=$(awk '$1 ~ /^(R|RD|[A-Za-z])$/ && $2 ~ /^[0-9]+$/ { s += $2 } END { print s + 0 }' "$TMP/$1.out")
	lost=$(sed -n 's/.*lost \([0-9]*\) events (total).*/\1/p' "$TMP/$1.out" "$TMP/$1.err" | tail -1)
	echo "$stays - ${lost:-0}"
}

ROWS=()
EVENTS=0
bench() {
	local label=$1 key=$2 counter=$3 r stays ev lost cpu
	shift 3
	for ((r = 1; r <= REPS; r++)); do
		measure "$key.$r" "$@"
		read -r stays ev lost <<<"$($counter "$key.$r")"
		cpu=$(cat "$TMP/$key.$r.cpu")
		echo "$(awk -v c="$cpu" -v p="$stays" 'BEGIN { if (p > 0) printf "%.0f", c * 1e9 / p; else print 999999999 }') $cpu $stays $ev $lost $(cat "$TMP/$key.$r.rss")"
	done | sort -n >"$TMP/$key.runs"
	read -r nsp cpu stays ev lost rss <<<"$(sed -n "$(((REPS + 1) / 2))p" "$TMP/$key.runs")"
	[ "$ev" != - ] && EVENTS=$ev
	ROWS+=("$label|$stays|$ev|$lost|$cpu|$nsp|$rss")
}

echo "### task-state: sched_switch + sched_wakeup*, pipe ping-pong of $PP round trips"
echo
bench "perfscope task-state" ps count_ps "$P" task-state --filter pscbench_gen
if [ $HAVE_PPF = 1 ]; then
	bench "perf-prof task-state" ppf count_ppf "$PPF" task-state --filter pscbench_gen
	bench "perf-prof task-state -m 512" ppf512 count_ppf "$PPF" task-state --filter pscbench_gen -m 512
fi
echo "| consumer | stays | events | lost | consumer CPU s | ns per stay | ns per workload event | peak RSS MiB |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for r in "${ROWS[@]}"; do
	IFS='|' read -r label stays ev lost cpu nsp rss <<<"$r"
	# perf-prof's events: the same kernel filter on the same workload, perfscope's count
	[ "$ev" = - ] && ev="~$EVENTS"
	nse=$(awk -v c="$cpu" -v e="${ev#\~}" 'BEGIN { if (e > 0) printf "%.0f", c * 1e9 / e; else print "-" }')
	printf '| %s | %s | %s | %s | %s | %s | %s | %.1f |\n' "$label" "$stays" "$ev" "$lost" "$cpu" \
		"$nsp" "$nse" "$(awk -v k="$rss" 'BEGIN { print k / 1024 }')"
done
echo
say "done"
