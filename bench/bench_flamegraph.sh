#!/bin/bash
# Flame graph and pprof writers: CPU time, peak memory and output size for folded files of 10,000
# and 100,000 distinct stacks (bench/gen_folded.py, seeded), rendered by perfscope flamegraph
# (plain, --reverse, --diff against another seed) and written as pprof by bench/bench_pprof;
# flamegraph.pl beside it when it is on PATH (Debian 12 does not package it).
#
# usage: bench/bench_flamegraph.sh [-r REPS] BUILD_DIR       (any user)
# Output: a markdown table on stdout (bench/README.md "Flame graphs" has a copy).
set -uo pipefail

REPS=3
while getopts r: o; do
	case $o in r) REPS=$OPTARG ;; *) exit 2 ;; esac
done
shift $((OPTIND - 1))
B=${1:?usage: bench_flamegraph.sh [-r REPS] BUILD_DIR}
P=$B/cli/perfscope
HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# best of REPS: "cpu_s rss_kb" of a command (GNU time: user + system, max RSS)
measure() {
	local best="" rss="" line
	for _ in $(seq "$REPS"); do
		/usr/bin/time -f '%U %S %M' -o "$T/time" "$@" >/dev/null 2>"$T/err" || {
			echo "failed: $*" >&2; sed 's/^/  /' "$T/err" >&2; return 1; }
		line=$(awk '{ printf "%.2f %d", $1 + $2, $3 }' "$T/time")
		if [ -z "$best" ] || awk -v a="${line% *}" -v b="$best" 'BEGIN { exit !(a < b) }'; then
			best=${line% *} rss=${line#* }
		fi
	done
	echo "$best $rss"
}

echo "| input | tool | CPU s (best of $REPS) | peak RSS MB | output bytes | frames drawn / left out |"
echo "|---|---|---:|---:|---:|---|"
for n in 10000 100000; do
	echo "generating $n stacks" >&2
	python3 "$HERE/gen_folded.py" "$n" 1 >"$T/a.folded"
	python3 "$HERE/gen_folded.py" "$n" 2 >"$T/b.folded"
	in="$n stacks ($(($(stat -c %s "$T/a.folded") / 1024)) KiB)"
	for mode in plain reverse diff; do
		case $mode in
		plain) args=("$T/a.folded") ;;
		reverse) args=(--reverse "$T/a.folded") ;;
		diff) args=(--diff "$T/b.folded" "$T/a.folded") ;;
		esac
		read -r cpu rss < <(measure "$P" flamegraph "${args[@]}" -o "$T/out.svg") || continue
		drawn=$(grep -oE '[0-9]+ frames drawn, [0-9]+ narrower than [0-9.e+-]+ px' "$T/out.svg" | head -1)
		echo "| $in | perfscope flamegraph $mode | $cpu | $((rss / 1024)) | $(stat -c %s "$T/out.svg") | $drawn |"
	done
	if command -v flamegraph.pl >/dev/null; then
		read -r cpu rss < <(measure sh -c "flamegraph.pl '$T/a.folded' > '$T/pl.svg'") &&
			echo "| $in | flamegraph.pl | $cpu | $((rss / 1024)) | $(stat -c %s "$T/pl.svg") | |"
	fi
	read -r cpu rss < <(measure "$B/bench/bench_pprof" "$T/a.folded" "$T/out.pb.gz") &&
		echo "| $in | pprof (bench_pprof: parse, add, write) | $cpu | $((rss / 1024)) | $(stat -c %s "$T/out.pb.gz") | $("$B/bench/bench_pprof" "$T/a.folded" "$T/out.pb.gz" | sed 's/^[0-9]* stacks: //') |"
done
command -v flamegraph.pl >/dev/null || echo "flamegraph.pl is not on PATH (not packaged in Debian 12): perfscope's rows only" >&2
