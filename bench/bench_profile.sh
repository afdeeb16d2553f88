#!/bin/bash
# Overhead of perfscope profile beside perf record: the slowdown of a CPU-bound workload on every
# CPU while each samples the whole machine with stacks, in interleaved rounds of the same run.
#
# usage (root): bench/bench_profile.sh [-b BUILD] [-r ROUNDS] [-F "99 999"] [-t SECONDS | -n WORK]
#   Each round runs the workload (tests/cli/split31.c, -O2 with frame pointers, one copy per
#   online CPU, WORK rounds each; by default WORK is sized so that a copy takes SECONDS of CPU,
#   3 by default, from a timed calibration run: a fixed count is 0.3 s on one CPU and 3 s on
#   another, and a fraction of a second is too short for an overhead figure) three ways in turn: alone, under `perfscope profile -F HZ -a -g`
#   and under `perf record -F HZ -a -g`; the profiler starts before the workload and is stopped
#   (SIGINT) after it, and only the workload's wall time counts. Prints per mode the median wall
#   time and the CPU time the workload used (user+sys of all copies), each against the median
#   alone, the profiler's own CPU time (user+sys, from
#   /proc/PID/stat just before the stop) and, for perfscope, the samples and lost samples it said.
#
#        bench/bench_profile.sh -M SECONDS [-b BUILD] [-- PROFILE ARGS...]
#   Memory instead: runs `perfscope profile -F 999 -a -g -o FILE.folded` (or PROFILE ARGS) for
#   SECONDS and prints its resident set (KiB) and CPU time every 10 seconds, then what it said.
set -u
MEMORY=0
BUILD=build
ROUNDS=7
FREQS="99 999"
WORK= # rounds of split31 -n; empty: sized by SECS
SECS=3 # CPU seconds per copy of the workload
while getopts "b:r:F:n:t:M:" o; do
	case $o in
	M) MEMORY=$OPTARG ;;
	b) BUILD=$OPTARG ;;
	r) ROUNDS=$OPTARG ;;
	F) FREQS=$OPTARG ;;
	n) WORK=$OPTARG ;;
	t) SECS=$OPTARG ;;
	*) exit 2 ;;
	esac
done
SRC=$(cd "$(dirname "$0")/.." && pwd)
P=$SRC/$BUILD/cli/perfscope
[ -x "$P" ] || { echo "no $P: build first" >&2; exit 2; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
shift $((OPTIND - 1))
if [ "$MEMORY" != 0 ]; then
	[ $# -gt 0 ] || set -- -F 999 -a -g -o "$TMP/m.folded"
	"$P" profile "$@" --duration "$MEMORY" 2>"$TMP/m.err" &
	pid=$!
	echo "# perfscope profile $* --duration $MEMORY; load $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "# s  RSS_KiB  CPU_s"
	t=0
	while kill -0 "$pid" 2>/dev/null; do
		awk -v t=$t '/VmRSS/ { r = $2 } END { printf "%4d %8d ", t, r }' "/proc/$pid/status" 2>/dev/null
		awk '{ printf "%6.2f\n", ($14 + $15) / 100 }' "/proc/$pid/stat" 2>/dev/null
		sleep 10
		t=$((t + 10))
	done
	wait "$pid"
	echo "# exit $?"
	sed 's/^/# /' "$TMP/m.err"
	exit 0
fi
command -v perf >/dev/null || { echo "perf is not installed" >&2; exit 2; }
cc -O2 -fno-omit-frame-pointer -o "$TMP/split31" "$SRC/tests/cli/split31.c" || exit 1
NCPU=$(nproc)
# WORK by time: rounds of a calibration run that takes at least 0.2 s, scaled to SECS
if [ -z "$WORK" ]; then
	cal=100
	while :; do
		/usr/bin/time -f "%U %S" -o "$TMP/cal" "$TMP/split31" -n "$cal" || exit 1
		t=$(awk '{ print $1 + $2 }' "$TMP/cal")
		if awk -v t="$t" 'BEGIN { exit !(t >= 0.2) }' || [ "$cal" -ge 100000000 ]; then
			break
		fi
		cal=$((cal * 4))
	done
	WORK=$(awk -v c="$cal" -v t="$t" -v s="$SECS" 'BEGIN { w = c * s / (t > 0 ? t : 0.01); printf "%d", w < 1 ? 1 : w }')
	echo "# workload: split31 -n $WORK per copy (calibrated: $cal rounds took ${t} s of CPU; -t $SECS)"
fi

now() { date +%s.%N; }
# workload: one copy per CPU; prints its wall time and the CPU time (user+sys) of all copies,
# in seconds. On a shared machine the wall time carries the other jobs' noise; the CPU time the
# workload itself used is what sampling adds to (interrupts, stack walks, cache disturbance).
workload() {
	local t0 t1 pids=() i cpu
	t0=$(now)
	for ((i = 0; i < NCPU; i++)); do
		/usr/bin/time -f "%U %S" -o "$TMP/time.$i" "$TMP/split31" -n "$WORK" &
		pids+=($!)
	done
	wait "${pids[@]}"
	t1=$(now)
	cpu=$(cat "$TMP"/time.* | awk '{ t += $1 + $2 } END { printf "%.2f", t }')
	echo "$(echo "$t1 - $t0" | bc -l) $cpu"
}
cpu_of() { awk '{ printf "%.2f", ($14 + $15) / 100 }' "/proc/$1/stat" 2>/dev/null; }

# one run of MODE at HZ: "wall cpu samples lost"
run() {
	local mode=$1 hz=$2 pid wall cpu=0 s=- l=-
	case $mode in
	alone)
		wall=$(workload)
		echo "$wall 0 - -"  # wall, workload CPU, profiler CPU, samples, lost
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
	echo "$wall $cpu ${s:--} ${l:--}"  # wall, workload CPU, profiler CPU, samples, lost
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
	basec=$(cut -d' ' -f2 "$TMP/alone" | median)
	printf "%-5s Hz %-10s %8s %8s %10s %8s %11s %9s %6s\n" "$hz" mode "wall s" slower "work CPU s" slower \
		"its CPU s" samples lost
	for mode in alone perfscope perf; do
		w=$(cut -d' ' -f1 "$TMP/$mode" | median)
		wc=$(cut -d' ' -f2 "$TMP/$mode" | median)
		c=$(cut -d' ' -f3 "$TMP/$mode" | median)
		s=$(cut -d' ' -f4 "$TMP/$mode" | awk '$1 != "-"' | median)
		l=$(cut -d' ' -f5 "$TMP/$mode" | awk '$1 != "-" { t += $1; n++ } END { print n ? t : "-" }')
		printf "%-5s Hz %-10s %8.3f %7.2f%% %10.2f %7.2f%% %11s %9s %6s\n" "$hz" "$mode" "$w" \
			"$(echo "100 * ($w / $base - 1)" | bc -l)" "$wc" \
			"$(echo "100 * ($wc / $basec - 1)" | bc -l)" "$c" "${s:--}" "$l"
	done
done
