#!/usr/bin/env bash
# The exporter's always-on profile collector (--collector.profile, 19 Hz) beside `perf record -F 19
# -a -g` and beside the exporter without it, on a busy machine: one CPU-bound process per CPU
# walking 16^4 distinct stacks (bench/stacks_load.c). Run as root from the repository root after a
# build:   bench/bench_exporter_profile.sh [BUILD_DIR [SECONDS [ROUNDS]]]
# Each round runs the three side by side in turn (interleaved), SECONDS each, and reads their CPU
# time (utime + stime, /proc/PID/stat) and RSS (VmRSS at the end, VmHWM the peak). The exporter
# with profiles also serves one profile of min(SECONDS, 60) - 2 seconds at the end of each round:
# its build time and bytes from its own metrics. Medians over the rounds.
set -u
build=${1:-build}
secs=${2:-60}
rounds=${3:-5}
P=$build/cli/perfscope
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
ncpu=$(getconf _NPROCESSORS_ONLN)
tck=$(getconf CLK_TCK)
cc -O1 -fno-omit-frame-pointer -o "$tmp/load" bench/stacks_load.c || exit 1
for ((c = 0; c < ncpu; c++)); do
	"$tmp/load" $((secs * rounds * 4 + 60)) 4 &
	pids+=($!)
done
port=$(python3 tests/cli/exporter_client.py free-port)

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
status_kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }

# measure NAME PID: CPU % of one CPU over secs, RSS and peak in KiB, into $tmp/NAME.rows
measure() {
	local name=$1 pid=$2 t0 t1
	sleep 2 # started: what follows is its steady state
	t0=$(cpu_ticks "$pid")
	sleep "$secs"
	t1=$(cpu_ticks "$pid")
	echo "$(awk -v a="$t0" -v b="$t1" -v s="$secs" -v h="$tck" 'BEGIN { printf "%.3f", (b - a) * 100 / h / s }') $(status_kb "$pid" VmRSS) $(status_kb "$pid" VmHWM)" >>"$tmp/$name.rows"
}

for r in $(seq 1 "$rounds"); do
	"$P" exporter --web.listen-address=127.0.0.1:"$port" --collector.profile 2>"$tmp/exp.log" &
	e=$!
	measure profile "$e"
	ps=$((secs < 60 ? secs - 2 : 58))
	curl -s -o "$tmp/p.pb.gz" "http://127.0.0.1:$port/debug/pprof/profile?seconds=$ps"
	curl -s "http://127.0.0.1:$port/metrics" >"$tmp/m"
	echo "$(awk '/^perfscope_exporter_profile_build_seconds_total/ { print $2 }' "$tmp/m") $(stat -c %s "$tmp/p.pb.gz") $(go tool pprof -raw "$tmp/p.pb.gz" 2>/dev/null | awk '/^Samples:/ { s = 1; next } /^Locations/ { s = 0 } s && /^ +[0-9]+ +[0-9]+:/ { n++ } END { print n + 0 }') $(awk '/^perfscope_exporter_profile_stacks / { print $2 }' "$tmp/m")" >>"$tmp/scrape.rows"
	kill "$e"
	wait "$e"

	"$P" exporter --web.listen-address=127.0.0.1:"$port" 2>/dev/null &
	e=$!
	measure metrics_only "$e"
	kill "$e"
	wait "$e"

	perf record -F 19 -a -g -o "$tmp/perf.data" -q 2>/dev/null &
	e=$!
	measure perf_record "$e"
	kill -INT "$e"
	wait "$e"
	echo "round $r done" >&2
done

med() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
echo "busy machine: $ncpu CPUs, one stacks_load per CPU; $rounds rounds of ${secs} s; medians"
printf "%-28s %10s %10s %10s\n" what "CPU %" "RSS MiB" "peak MiB"
for n in profile metrics_only perf_record; do
	c=$(awk '{ print $1 }' "$tmp/$n.rows" | med)
	m=$(awk '{ print $2 / 1024 }' "$tmp/$n.rows" | med)
	h=$(awk '{ print $3 / 1024 }' "$tmp/$n.rows" | med)
	printf "%-28s %10.3f %10.1f %10.1f\n" "$n" "$c" "$m" "$h"
	awk '{ printf "    round: %s%% %.1f MiB %.1f MiB\n", $1, $2 / 1024, $3 / 1024 }' "$tmp/$n.rows"
done
echo "one scrape of a $((secs < 60 ? secs - 2 : 58)) s profile: build seconds (cumulative per exporter = this one), gzipped bytes, distinct samples, window entries:"
cat "$tmp/scrape.rows"
