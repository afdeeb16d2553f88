#!/usr/bin/env bash
# profile --bpf beside the ring path: perfscope's own CPU per sample, system wide, over two
# CPU-bound loops (tests/cli/split31.c); run as root from the repository root after a build.
#   bench/bench_profile_bpf.sh [BUILD_DIR [HZ [ROUNDS]]]
# Each mode runs for 1 s and for 9 s; (CPU_9 - CPU_1) / (samples_9 - samples_1) is the cost of
# one more sample without the fixed costs (start, BPF load and map allocation, symbol tables).
set -u
build=${1:-build}
hz=${2:-4999}
rounds=${3:-3}
P=$build/cli/perfscope
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
cc -O0 -fno-omit-frame-pointer -o "$tmp/split31" tests/cli/split31.c || exit 1
for _ in 1 2; do
	"$tmp/split31" 100000 &
	pids+=($!)
done
sleep 0.5
run() { # MODE SECONDS -> "samples cpu_s"
	local extra=()
	[ "$1" = bpf ] && extra=(--bpf)
	/usr/bin/time -f "%U %S" -o "$tmp/time" "$P" profile -F "$hz" -a "${extra[@]}" --format folded \
		-o "$tmp/p.folded" --duration "$2" 2>/dev/null
	awk '{ t += $NF } END { printf "%d ", t }' "$tmp/p.folded"
	awk '{ printf "%.2f\n", $1 + $2 }' "$tmp/time"
}
for r in $(seq 1 "$rounds"); do
	for mode in ring bpf; do
		read -r n1 c1 <<<"$(run $mode 1)"
		read -r n9 c9 <<<"$(run $mode 9)"
		awk -v m=$mode -v r="$r" -v n1="$n1" -v c1="$c1" -v n9="$n9" -v c9="$c9" 'BEGIN {
			printf "%s round %d: 1 s %d samples %.2f cpu_s, 9 s %d samples %.2f cpu_s: %.2f us per sample\n",
				m, r, n1, c1, n9, c9, (c9 - c1) * 1e6 / (n9 - n1) }'
	done
done
