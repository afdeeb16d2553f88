#!/bin/bash
# The session loop's cost per event against the bare ring reader (its floor), in interleaved runs.
#
# usage: bench/bench_session.sh [-n N] [-r REPS] [-R RATE] [-m PAGES] [-B BASE_BUILD] BUILD_DIR
#        (as root)
#
# bench_ring (bench/bench_ring.c) traces syscalls:sys_enter_getppid on every CPU with a kernel
# filter on the workload's name, three ways: "bare" (a hand-written mmap loop that only counts
# records: the floor), "session" (common/loop/session.c with a hook that counts) and "-o session"
# (the same with cross-CPU time order). Each runs alone in the background while
# `gen_events -r RATE getppid N` runs as pscbench_gen (RATE 0: flat out), then gets SIGINT; its
# CPU time (user + system, its own getrusage) is divided by the events it saw. REPS rounds of
# bare, session, session+order in turn (a slow spell of the shared machine hits all three), then
# per mode the median and the spread (min-max) of ns per event, and the ratios of the medians to
# the floor's; also user-space ns per event (the system part, mostly wakeups, is alike in all;
# an older bench_ring prints no user time: 0).
# Defaults: N 8000000 (the issue's figure), REPS 5, RATE 0, PAGES 128.
# -B BASE_BUILD: BASE_BUILD/bench/bench_ring's session and time-order loops run in the same rounds
# (a build before a change, beside the build after it).
set -uo pipefail

N=8000000
REPS=5
RATE=0
PAGES=128
BASE=
USAGE="usage: bench/bench_session.sh [-n N] [-r REPS] [-R RATE] [-m PAGES] [-B BASE_BUILD] BUILD_DIR"
while getopts n:r:R:m:B: opt; do
	case $opt in
	n) N=$OPTARG ;;
	r) REPS=$OPTARG ;;
	R) RATE=$OPTARG ;;
	m) PAGES=$OPTARG ;;
	B) BASE=$OPTARG ;;
	*) echo "$USAGE" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || { echo "$USAGE" >&2; exit 2; }
B=$1
RING=$B/bench/bench_ring
GEN=$B/bench/gen_events
for f in "$RING" "$GEN" ${BASE:+"$BASE/bench/bench_ring"}; do
	[ -x "$f" ] || { echo "bench_session: $f not built (ninja -C $B)" >&2; exit 1; }
done
[ "$(id -u)" -eq 0 ] || { echo "bench_session: run as root (system-wide tracepoints)" >&2; exit 1; }
[ "$REPS" -ge 1 ] 2>/dev/null || { echo "$USAGE" >&2; exit 2; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cp "$GEN" "$TMP/pscbench_gen"
TP=syscalls:sys_enter_getppid
MODES=(bare session order)
[ -n "$BASE" ] && MODES+=(base_session base_order)

# run MODE R: one run; appends "NS_PER_EVENT EVENTS LOST CPU_S USER_NS_PER_EVENT" to $TMP/MODE.runs
run() {
	local mode=$1 args=() pid i line ev lost cpu ring=$RING
	case $mode in
	bare) args=(bare) ;;
	session) args=(session) ;;
	order) args=(-o session) ;;
	base_session) args=(session) ring=$BASE/bench/bench_ring ;;
	base_order) args=(-o session) ring=$BASE/bench/bench_ring ;;
	esac
	"$ring" -m "$PAGES" -f 'comm == "pscbench_gen"' "${args[@]}" "$TP" >"$TMP/out" 2>"$TMP/err" &
	pid=$!
	sleep 1 # opened and enabled
	"$TMP/pscbench_gen" -r "$RATE" getppid "$N" >/dev/null
	sleep 0.3
	kill -INT "$pid"
	wait "$pid"
	line=$(cat "$TMP/out")
	# "MODE events N lost L cpu_s S user_s U"
	read -r _ _ ev _ lost _ cpu _ user <<<"$line"
	if [ -z "${ev:-}" ] || [ "$ev" -eq 0 ]; then
		echo "bench_session: $mode saw no events: $line $(cat "$TMP/err")" >&2
		exit 1
	fi
	echo "$(awk -v c="$cpu" -v e="$ev" 'BEGIN { printf "%.1f", c * 1e9 / e }') $ev $lost $cpu $(awk -v c="${user:-0}" -v e="$ev" 'BEGIN { printf "%.1f", c * 1e9 / e }')" >>"$TMP/$mode.runs"
	echo "bench_session: round $2 $mode: $line" >&2
}

# med MODE [FIELD]: the median of a field of MODE's runs (1: ns per event, 5: user ns per event)
med() { cut -d' ' -f"${2:-1}" "$TMP/$1.runs" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

for m in "${MODES[@]}"; do : >"$TMP/$m.runs"; done
for ((r = 1; r <= REPS; r++)); do
	for m in "${MODES[@]}"; do run "$m" "$r"; done
done

FLOOR=$(med bare)
echo "bench_ring -m $PAGES -f 'comm == \"pscbench_gen\"' over $N getppid() at ${RATE}/s (0: flat out);" \
	"$REPS interleaved rounds; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| consumer | events (median run) | lost, all runs | ns per event, median | min-max | runs | × floor (medians) | user ns per event, median | min-max |"
echo "|---|---:|---:|---:|---:|---|---:|---:|---:|"
for m in "${MODES[@]}"; do
	case $m in
	bare) label="bare mmap loop (floor), bench_ring bare" ;;
	session) label="session loop, bench_ring session" ;;
	order) label="session loop + time order, bench_ring -o session" ;;
	base_session) label="before ($BASE): session loop" ;;
	base_order) label="before ($BASE): session loop + time order" ;;
	esac
	printf '| %s | %s | %s | %s | %s-%s | %s | %.2f | %s | %s-%s |\n' "$label" \
		"$(sort -g "$TMP/$m.runs" | sed -n "$(((REPS + 1) / 2))p" | cut -d' ' -f2)" \
		"$(awk '{ s += $3 } END { print s + 0 }' "$TMP/$m.runs")" "$(med "$m")" \
		"$(cut -d' ' -f1 "$TMP/$m.runs" | sort -g | head -1)" \
		"$(cut -d' ' -f1 "$TMP/$m.runs" | sort -g | tail -1)" \
		"$(cut -d' ' -f1 "$TMP/$m.runs" | paste -sd' ')" \
		"$(awk -v a="$(med "$m")" -v b="$FLOOR" 'BEGIN { print a / b }')" "$(med "$m" 5)" \
		"$(cut -d' ' -f5 "$TMP/$m.runs" | sort -g | head -1)" \
		"$(cut -d' ' -f5 "$TMP/$m.runs" | sort -g | tail -1)"
done
