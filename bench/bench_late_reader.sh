#!/bin/bash
# A reader 1 s late: N getppid events as JSON (perfscope trace) or perf.data (perf record -o -)
# piped into `(sleep 1; cat > FILE)`; for each tool the events that reach FILE, the share missing,
# and peak RSS (/usr/bin/time -v). As root. Usage:
#   bench/bench_late_reader.sh PERFSCOPE PROG [N] [EXTRA perfscope options...]
# PROG is tests/lines_prog from a build (N getppid calls, then one line of its own).
set -u
P=${1:?perfscope binary}
PROG=${2:?tests/lines_prog}
N=${3:-2000000}
shift 3 2>/dev/null || shift $#
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# row NAME SEEN ERRFILE
row() {
	local rss el
	rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$3")
	el=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$3")
	printf '| %s | %d | %d | %.1f%% | %d MiB | %s |\n' "$1" "$2" $((N - $2)) \
		"$(echo "scale=3; 100 * ($N - $2) / $N" | bc)" $((rss / 1024)) "$el"
}

echo "| tool | events in FILE | missing | missing % | peak RSS | wall |"
echo "|---|---:|---:|---:|---:|---:|"
/usr/bin/time -v "$P" trace -e syscalls:sys_enter_getppid --format json "$@" -- "$PROG" "$N" "$N" \
	2>"$T/ps.err" | (sleep 1; cat >"$T/ps.json")
row "perfscope trace --format json $*" "$(grep -c '"event":"syscalls:sys_enter_getppid"' "$T/ps.json")" "$T/ps.err"
grep '^perfscope' "$T/ps.err" | sed 's/^/    /' >&2
if command -v perf >/dev/null; then
	/usr/bin/time -v perf record -q -e syscalls:sys_enter_getppid -o - -- "$PROG" "$N" "$N" \
		2>"$T/perf.err" | (sleep 1; cat >"$T/perf.data")
	row "perf record -o -" "$(perf script -i "$T/perf.data" 2>/dev/null | grep -c sys_enter_getppid)" "$T/perf.err"
fi
