#!/bin/bash
# DWARF unwinding benchmark: CPU per sample unwinding and symbolizing, and the share of samples
# whose stack reaches main, for perfscope trace --call-graph dwarf beside perf record --call-graph
# dwarf + perf script on the same program in the same run.
#
# usage: bench/bench_unwind.sh [-s SECONDS] [-r REPS] [-z SIZE] BUILD_DIR   (as root)
#
# The program is tests/dwarf_chain (main -> a -> b -> leaf, -O2 -fomit-frame-pointer), sampled
# with cpu-clock at 1000 Hz for SECONDS (default 3), REPS times (default 3) each:
#  - perfscope trace -e cpu-clock -g --call-graph dwarf,SIZE --format json: its end-of-run line
#    gives the CPU time spent unwinding and symbolizing per stack (CLOCK_THREAD_CPUTIME_ID around
#    each), and the whole process's CPU time (GNU time; attached with -p so that the program's
#    own CPU is not counted) per sample is given too;
#  - perfscope trace -g (frame pointers), for the share reaching main without DWARF;
#  - perf record -e cpu-clock -F 1000 --call-graph dwarf,SIZE, then perf script: perf script's
#    CPU time per sample (it reads, unwinds and symbolizes every sample; its own unwinder, libdw
#    or libunwind as Debian's perf is built) and the share of its stacks reaching main.
# Output: a markdown table on stdout (bench/README.md "DWARF unwinding" has a copy).
set -uo pipefail

SECONDS_RUN=3
REPS=3
SIZE=8192
while getopts "s:r:z:" o; do
	case $o in
	s) SECONDS_RUN=$OPTARG ;;
	r) REPS=$OPTARG ;;
	z) SIZE=$OPTARG ;;
	*) echo "usage: $0 [-s SECONDS] [-r REPS] [-z SIZE] BUILD_DIR" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
B=${1:?usage: $0 [-s SECONDS] [-r REPS] [-z SIZE] BUILD_DIR}
P=$B/cli/perfscope
CHAIN=$B/tests/dwarf_chain
[ -x "$P" ] && [ -x "$CHAIN" ] || { echo "build $B first (perfscope, tests/dwarf_chain)" >&2; exit 2; }
command -v perf >/dev/null || { echo "perf is not installed" >&2; exit 2; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# main_share FILE: "reaching total" of perfscope's JSON events
main_share() {
	python3 - "$1" <<'PY'
import json, sys
n = m = 0
for line in open(sys.argv[1]):
    ev = json.loads(line)
    n += 1
    m += any(f["sym"] == "main" and not f["kernel"] for f in ev["stack"])
print(m, n)
PY
}

# perf_share FILE: "reaching total" of perf script's samples (blocks separated by blank lines)
perf_share() {
	awk 'BEGIN { n = 0; m = 0; in_s = 0; hit = 0 }
	     /^dwarf_chain/ { if (in_s) { n++; m += hit } in_s = 1; hit = 0; next }
	     / main\+0x| main$| main \(/ { hit = 1 }
	     END { if (in_s) { n++; m += hit } print m, n }' "$1"
}

cpu_of() { awk '{ printf "%.3f", $2 + $3 }' "$1"; }

echo "| run | tool | samples | reach main | unwind us/stack | symbolize us/stack | CPU us/sample (whole process) |"
echo "|---|---|---:|---:|---:|---:|---:|"
for r in $(seq 1 "$REPS"); do
	echo "run $r/$REPS ..." >&2
	# attached with -p, so that GNU time counts perfscope alone, not the spinning program
	"$CHAIN" "$SECONDS_RUN" &
	pid=$!
	/usr/bin/time -f "%e %U %S" -o "$TMP/t1" "$P" trace -e cpu-clock -g --call-graph "dwarf,$SIZE" \
		--format json -p "$pid" >"$TMP/ps.json" 2>"$TMP/ps.err"
	wait "$pid"
	read -r m n < <(main_share "$TMP/ps.json")
	line=$(grep 'DWARF unwinding:' "$TMP/ps.err")
	uw=$(sed -E 's/.* ([0-9.]+) us unwinding.*/\1/' <<<"$line")
	sy=$(sed -E 's/.* ([0-9.]+) us symbolizing.*/\1/' <<<"$line")
	cpu=$(cpu_of "$TMP/t1")
	echo "| $r | perfscope trace --call-graph dwarf,$SIZE | $n | $(awk -v m="$m" -v n="$n" 'BEGIN { printf "%.1f%%", n ? 100 * m / n : 0 }') | $uw | $sy | $(awk -v c="$cpu" -v n="$n" 'BEGIN { printf "%.1f", n ? c * 1e6 / n : 0 }') |"

	"$CHAIN" "$SECONDS_RUN" &
	pid=$!
	/usr/bin/time -f "%e %U %S" -o "$TMP/t3" "$P" trace -e cpu-clock -g --format json -p "$pid" \
		>"$TMP/fp.json" 2>/dev/null
	wait "$pid"
	read -r m n < <(main_share "$TMP/fp.json")
	cpu=$(cpu_of "$TMP/t3")
	echo "| $r | perfscope trace -g (frame pointers) | $n | $(awk -v m="$m" -v n="$n" 'BEGIN { printf "%.1f%%", n ? 100 * m / n : 0 }') | - | - | $(awk -v c="$cpu" -v n="$n" 'BEGIN { printf "%.1f", n ? c * 1e6 / n : 0 }') |"

	perf record -q -e cpu-clock -F 1000 --call-graph "dwarf,$SIZE" -o "$TMP/perf.data" -- \
		"$CHAIN" "$SECONDS_RUN" >/dev/null 2>"$TMP/rec.err"
	/usr/bin/time -f "%e %U %S" -o "$TMP/t2" perf script -i "$TMP/perf.data" >"$TMP/script.txt" 2>/dev/null
	read -r m n < <(perf_share "$TMP/script.txt")
	cpu=$(cpu_of "$TMP/t2")
	echo "| $r | perf record --call-graph dwarf,$SIZE + perf script | $n | $(awk -v m="$m" -v n="$n" 'BEGIN { printf "%.1f%%", n ? 100 * m / n : 0 }') | - | - | $(awk -v c="$cpu" -v n="$n" 'BEGIN { printf "%.1f", n ? c * 1e6 / n : 0 }') (perf script) |"
done
