#!/bin/bash
# bench: what profile's in-kernel sample filters cost per sample, as the kernel accounts the BPF
# programs' run time (kernel.bpf_stats_enabled): the filter program alone (ring path) with one
# test and with all six, and profile --bpf's program without and with the six tests.
# usage: sudo bash bench/bench_profile_filter.sh [BUILD_DIR [HZ [SECONDS]]]
set -u
B=${1:-build}
HZ=${2:-4999}
S=${3:-3}
P=$B/cli/perfscope
old=$(sysctl -n kernel.bpf_stats_enabled)
SPIN=$(mktemp)
printf 'int main(void) { for (;;) __asm__ volatile(""); }\n' | cc -O0 -x c -o "$SPIN" - || exit 1
"$SPIN" & s1=$!
"$SPIN" & s2=$!
trap 'kill $s1 $s2; sysctl -qw kernel.bpf_stats_enabled=$old; rm -f "$SPIN"' EXIT
sysctl -qw kernel.bpf_stats_enabled=1
ALL="--exclude_pid 1 --nr_running_max 100000 --irqs_disabled=0 --tif_need_resched=0 --sched_policy 0 --prio 0-139"

# one PROG ARGS...: profile -a at HZ for S seconds; the program's ns per run just before it ends
one() {
	local prog=$1 pid j
	shift
	"$P" profile -F "$HZ" -a "$@" --duration "$S" >/dev/null 2>&1 &
	pid=$!
	sleep "$(echo "$S - 0.5" | bc)"
	j=$(bpftool -j prog show name "$prog" 2>/dev/null)
	wait $pid
	# this run's program: the newest of that name (bpftool here lists no owner pids)
	echo "$j" | jq -r --arg a "$*" '[if type == "array" then .[] else . end] | max_by(.id) |
		"\($a): \(.run_cnt) runs, \(.run_time_ns / .run_cnt | floor) ns per run"'
}
echo "# $(uname -r), $(nproc) CPUs, -F $HZ -a for $S s, two spinners"
one filter_sample --exclude_pid 1
# shellcheck disable=SC2086
one filter_sample $ALL
one count_stack --bpf
# shellcheck disable=SC2086
one count_stack --bpf $ALL
