#!/bin/bash
# Overhead of perfscope profile beside perf record: the slowdown of a CPU-bound workload on every
# CPU while each samples the whole machine with stacks, in interleaved rounds of the same run.
#
# usage (root): bench/bench_profile.sh [-b BUILD] [-r ROUNDS] [-F "99 999"] [-n WORK]
#   Each round runs the workload (tests/cli/split31.c, -O2 with frame pointers, one copy per
#   online CPU, WORK rounds each) three ways in turn: alone, under `perfscope profile -F HZ -a -g`
#   and under `perf record -F HZ -a -g`; the profiler starts before the workload and is stopped
#   (SIGINT) after it, and only the workload's wall time counts. Prints per mode the median wall
#   time, the slowdown against the median alone, the profiler's own CPU time (user+sys, from
#   /proc/PID/stat just before the stop) and, for perfscope, the samples and lost samples it said.
set -u
BUILD=build
ROUNDS=7
FREQS="99 999"
WORK=300
while getopts "b:r:F:n:" o; do
	case $o in
	b) BUILD=$OPTARG ;;
	r) ROUNDS=$OPTARG ;;
	F) FREQS=$OPTARG ;;
	n) WORK=$OPTARG ;;
	*) exit 2 ;;
	esac
done
SRC=$(cd "$(dirname "$0")/.." && pwd)
P=$SRC/$BUILD/cli/perfscope
[ -x "$P" ] || { echo "no $P: build first" >&2; exit 2; }
command -v perf >/dev/null || { echo "perf is not installed" >&2; exit 2; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cc -O2 -fno-omit-frame-pointer -o "$TMP/split31" "$SRC/tests/cli/split31.c" || exit 1
NCPU=$(nproc)

now() { date +%s.%N; }
# workload: one copy per CPU; prints its wall time in seconds
workload() {
	local t0 t1 pids=() i
	t0=$(now)
	for ((i = 0; i < NCPU; i++)); do
		"$TMP/split31" "$WORK" &
		pids+=($!)
	done
	wait "${pids[@]}"
	t1=$(now)
	echo "$t1 - $t0" | bc -l
}
cpu_of() { awk '{ printf "%.2f", ($14 + $15) / 100 }' "/proc/$1/stat" 2>/dev/null; }

# one run of MODE at HZ: "wall cpu samples lost"
run() {
	local mode=$1 hz=$2 pid wall cpu=0 s=- l=-
	case $mode in
	alone)
		wall=$(workload)
		echo "$wall 0 - -"
		return
		;;
	perfscope)
		"$P" profile -F "$hz" -a -g -o "$TMP/p.folded" 2>"$TMP/p.err" &
		pid=$!
		;;
	perf)
		perf record -q -F "$hz" -a -g -o "$TMP/perf.data" 2>"$TMP/perf.err" &
		pid=$!
		;;
	esac
	sleep 1 # opened and enabled
	wall=$(workload)
	cpu=$(cpu_of "$pid")
	kill -INT "$pid"
	wait "$pid"
	if [ "$mode" = perfscope ]; then
		s=$(sed -n 's/.*: \([0-9]*\) events, \([0-9]*\) lost.*/\1/p' "$TMP/p.err" | head -1)
		l=$(sed -n 's/.*: \([0-9]*\) events, \([0-9]*\) lost.*/\2/p' "$TMP/p.err" | head -1)
	fi
	echo "$wall $cpu ${s:--} ${l:--}"
}

median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

echo "# $NCPU CPUs, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg), perfscope $(git -C "$SRC" rev-parse --short HEAD), $(perf --version)"
for hz in $FREQS; do
	: >"$TMP/alone" ; : >"$TMP/perfscope" ; : >"$TMP/perf"
	for ((r = 0; r < ROUNDS; r++)); do
		for mode in alone perfscope perf; do
			run "$mode" "$hz" >>"$TMP/$mode"
		done
	done
	base=$(cut -d' ' -f1 "$TMP/alone" | median)
	printf "%-5s Hz %-10s %10s %9s %12s %14s %8s\n" "$hz" mode "wall s" slowdown "its CPU s" samples lost
	for mode in alone perfscope perf; do
		w=$(cut -d' ' -f1 "$TMP/$mode" | median)
		c=$(cut -d' ' -f2 "$TMP/$mode" | median)
		s=$(cut -d' ' -f3 "$TMP/$mode" | tr '\n' ' ')
		l=$(cut -d' ' -f4 "$TMP/$mode" | awk '$1 != "-" { t += $1; n++ } END { print n ? t : "-" }')
		printf "%-5s Hz %-10s %10.3f %8.2f%% %12s %14s %8s\n" "$hz" "$mode" "$w" \
			"$(echo "100 * ($w / $base - 1)" | bc -l)" "$c" "$(echo "$s" | awk '{ print $1 }')" "$l"
	done
done
