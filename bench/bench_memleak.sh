#!/bin/bash
# memleak's consumer: CPU time per event and peak RSS of `perfscope memleak -p` and of a bpftrace
# script over the same uprobes (malloc entry and return, free), on bench/memleak_load (N
# malloc/free pairs, one block in 1000 leaked); and what the probes cost the workload.
# usage: bench/bench_memleak.sh BUILD_DIR [-n N] [-r REPS]   (as root)
set -u
B=${1:?build dir}; shift
N=200000 REPS=3
while getopts n:r: o; do case $o in n) N=$OPTARG ;; r) REPS=$OPTARG ;; *) exit 2 ;; esac; done
P=$B/cli/perfscope
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -o "$tmp/load" "$(dirname "$0")/memleak_load.c" || exit 1
LIBC=$("$P" list 'uprobe:malloc@libc.so.6' --format json |
	python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["binary"])')

# run_one NAME CMD...: the workload waits for $tmp/go; CMD (with @PID@ for its pid) attaches, then
# the workload runs; prints "consumer_cpu_s max_rss_kib workload_s"
run_one() {
	rm -f "$tmp/go"
	"$tmp/load" "$N" "$tmp/go" &
	local w=$! c
	for _ in $(seq 100); do grep -q libc "/proc/$w/maps" 2>/dev/null && break; sleep 0.02; done
	local args=("${@//@PID@/$w}")
	/usr/bin/time -f "%U %S %M" -o "$tmp/time" "${args[@]}" >"$tmp/out" 2>"$tmp/err" &
	c=$!
	sleep 4 # the probes made and the events open (memleak: 19 probes, ~2 s)
	local t0 t1
	t0=$(date +%s.%N)
	touch "$tmp/go"
	wait "$w"
	t1=$(date +%s.%N)
	sleep 0.5
	# the consumer under /usr/bin/time (perfscope -p has ended with the workload; bpftrace has
	# not): SIGTERM, as a background job ignores SIGINT
	kill -TERM "$(pgrep -P "$c")" 2>/dev/null
	wait "$c"
	read -r u s m < <(tail -1 "$tmp/time")
	echo "$(echo "$u + $s" | bc) $m $(echo "$t1 - $t0" | bc)"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

report() {
	local name=$1 events=$2; shift 2
	local cpu=() rss=() wl=()
	for _ in $(seq "$REPS"); do
		read -r c m w < <(run_one "$@")
		cpu+=("$c") rss+=("$m") wl+=("$w")
	done
	local mc mr mw
	mc=$(printf '%s\n' "${cpu[@]}" | median)
	mr=$(printf '%s\n' "${rss[@]}" | median)
	mw=$(printf '%s\n' "${wl[@]}" | median)
	printf '| %s | %d | %.3f | %.0f | %d | %.3f |\n' "$name" "$events" "$mc" \
		"$(echo "$mc * 1000000000 / $events" | bc)" "$mr" "$mw"
}

EVENTS=$((3 * N)) # malloc entry + return, free: the leaked 1/1000 have no free
EVENTS=$((EVENTS - N / 1000))
base=$( { rm -f "$tmp/go"; touch "$tmp/go"; /usr/bin/time -f "%e" "$tmp/load" "$N" "$tmp/go"; } 2>&1)
echo "workload alone: $N malloc/free pairs in $base s"
echo
echo "| consumer | events | consumer CPU s | ns/event | peak RSS KiB | workload s |"
echo "|---|---:|---:|---:|---:|---:|"
report "perfscope memleak -p (text report)" "$EVENTS" "$P" memleak -q -p @PID@
cat >"$tmp/ml.bt" <<BT
uprobe:$LIBC:malloc /pid == \$1/ { @size[tid] = arg0; @st[tid] = ustack; }
uretprobe:$LIBC:malloc /pid == \$1 && @size[tid]/ { @live[retval] = @size[tid]; @where[retval] = @st[tid]; delete(@size[tid]); delete(@st[tid]); }
uprobe:$LIBC:free /pid == \$1/ { delete(@live[arg0]); delete(@where[arg0]); }
END { clear(@size); clear(@st); clear(@where); }
BT
if command -v bpftrace >/dev/null; then
	report "bpftrace, same uprobes, stacks in maps" "$EVENTS" bpftrace "$tmp/ml.bt" @PID@
fi
tail -3 "$tmp/err" | sed 's/^/# /'
