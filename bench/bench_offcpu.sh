#!/bin/bash
# offcpu benchmark: the slowdown of a sched_switch-heavy workload under perfscope offcpu beside
# perf record -e sched:sched_switch -g (Debian's perf), on the same workload in one run.
#
# usage: bench/bench_offcpu.sh [-s SECONDS] [-r REPS] BUILD_DIR   (as root)
#
# Workload: bench/offcpu_pingpong, two threads bouncing a byte through two pipes for SECONDS (each
# round trip blocks and wakes each thread once: two switch-outs with a stack, two switch-ins), which
# prints its round trips per second. Each round runs it bare, under perfscope offcpu (-- COMMAND:
# the switches system wide, filtered on its process; each switch-out's kernel and user stack), under
# perf record -e sched:sched_switch -g (per task, inherited: what perf records for a command) and
# under perf record -a (system wide, as perfscope reads them), in that order, REPS rounds
# interleaved so that a change of the machine's load falls on all alike. Slowdown = the bare
# median / the tool's median. perf writes perf.data to a temporary directory. Output: a markdown
# table on stdout.
set -uo pipefail

SECS=2
REPS=5
USAGE="usage: bench/bench_offcpu.sh [-s SECONDS] [-r REPS] BUILD_DIR"
while getopts s:r: opt; do
	case $opt in
	s) SECS=$OPTARG ;;
	r) REPS=$OPTARG ;;
	*) echo "$USAGE" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || { echo "$USAGE" >&2; exit 2; }
B=$1
P=$B/cli/perfscope
W=$B/bench/offcpu_pingpong
for f in "$P" "$W"; do
	[ -x "$f" ] || { echo "bench_offcpu: $f not built (ninja -C $B)" >&2; exit 1; }
done
[ "$(id -u)" -eq 0 ] || { echo "bench_offcpu: run as root (system-wide tracepoints)" >&2; exit 1; }
HAVE_PERF=0
perf version >/dev/null 2>&1 && HAVE_PERF=1

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
say() { echo "bench_offcpu: $*" >&2; }

# run KEY CMD...: CMD's last stdout line (the workload's rate) appended to KEY.rates, stderr kept
run() {
	local key=$1 rate
	shift
	rate=$("$@" 2>"$TMP/$key.err" | tail -1)
	echo "${rate:-0}" >>"$TMP/$key.rates"
	cat "$TMP/$key.err" >>"$TMP/$key.errs"
}
median() { sort -n "$1" | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

for ((r = 1; r <= REPS; r++)); do
	say "round $r of $REPS"
	run bare "$W" "$SECS"
	run ps "$P" offcpu -o "$TMP/ps.folded" -- "$W" "$SECS"
	if [ $HAVE_PERF = 1 ]; then
		run perf perf record -e sched:sched_switch -g -o "$TMP/perf.data" -- "$W" "$SECS"
		run perfa perf record -a -e sched:sched_switch -g -o "$TMP/perfa.data" -- "$W" "$SECS"
	fi
done

BARE=$(median "$TMP/bare.rates")
echo "### offcpu: pipe ping-pong between two threads, $SECS s a run, median of $REPS interleaved rounds"
echo
echo "| run | round trips/s (median) | runs | slowdown | events | lost |"
echo "|---|---:|---|---:|---:|---:|"
row() { # LABEL KEY EVENTS LOST
	local m
	m=$(median "$TMP/$2.rates")
	printf '| %s | %s | %s | %s | %s | %s |\n' "$1" "$m" "$(sort -n "$TMP/$2.rates" | tr '\n' ' ' | sed 's/ $//')" \
		"$(awk -v b="$BARE" -v m="$m" 'BEGIN { if (m > 0) printf "%.2fx", b / m; else print "-" }')" "$3" "$4"
}
row "bare" bare - -
# perfscope: its event line per run ("sched:sched_switch: N events, M lost"), the last run's
ev=$(sed -n 's/.*sched:sched_switch: \([0-9]*\) events, \([0-9]*\) lost$/\1/p' "$TMP/ps.errs" | tail -1)
lost=$(sed -n 's/.*sched:sched_switch: \([0-9]*\) events, \([0-9]*\) lost$/\2/p' "$TMP/ps.errs" | tail -1)
row "perfscope offcpu -- CMD" ps "${ev:-?}" "${lost:-?}"
if [ $HAVE_PERF = 1 ]; then
	# perf: "(N samples)" of its last run; a loss is "Lost N chunks" or "... lost ..."
	for k in perf perfa; do
		ev=$(sed -n 's/.*(\([0-9]*\) samples).*/\1/p' "$TMP/$k.errs" | tail -1)
		lost=$(grep -ciE 'lost [0-9]+ (chunks|events|samples)' "$TMP/$k.errs")
		if [ $k = perf ]; then
			row "perf record -e sched:sched_switch -g -- CMD" perf "${ev:-?}" "$lost runs with losses"
		else
			row "perf record -a -e sched:sched_switch -g -- CMD" perfa "${ev:-?}" "$lost runs with losses"
		fi
	done
else
	say "perf not found: perfscope alone"
fi
echo
say "done"
