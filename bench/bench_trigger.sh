#!/bin/bash
# perfscope trigger: standby CPU cost (its own process, and the sampling it causes) and reaction
# time (condition true -> capture start), beside coolbpf's approach (poll /proc/stat every 3 s,
# then record 3 s).
#
# usage: bench/bench_trigger.sh [-d SECONDS] [-n TRIALS] BUILD_DIR   (as root, 2+ CPUs)
#
# Standby: perfscope trigger waits (--sys 99 --for 3600: never fires) for SECONDS; its CPU time
# is the sum over its threads of /proc/PID/task/*/schedstat (ns on CPU, exact) read at the end,
# for the defaults (200 ms, recorder at 10 Hz), --period 100, --standby-hz 49 and --before 0
# (no recorder). The sampling's own cost, charged to the interrupted tasks rather than to
# perfscope, is the kernel's time per cpu-clock sample with a callchain (measured here as the
# slowdown of a pinned loop under 1000 Hz sampling) times the recorder's rate.
# Reaction: a SCHED_FIFO loop of read(/dev/zero) on CPU 1 (sys ~100% within a tick) starts at t0;
# the capture's "start" (when it fired) minus t0 is the delay, --for (1 s) of it by design; TRIALS times, with
# the defaults and with coolbpf's 3 s poll (--period 3000). Output: markdown on stdout.
set -uo pipefail
D=30
N=5
while getopts d:n: o; do
	case $o in
	d) D=$OPTARG ;;
	n) N=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
B=${1:?usage: bench_trigger.sh [-d S] [-n N] BUILD_DIR}
P=$B/cli/perfscope
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

cat >"$TMP/w.c" <<'C'
#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
static char buf[65536];
int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2;
	int fd = open("/dev/zero", O_RDONLY);
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		for (int i = 0; i < 64; i++)
			if (read(fd, buf, sizeof(buf)) < 0)
				return 1;
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9 < secs);
	return 0;
}
C
cat >"$TMP/spin.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
/* iterations of an empty loop in SECONDS of CPU time: the share the kernel took is what is missing */
int main(int argc, char **argv)
{
	double secs = atof(argv[1]);
	struct timespec a, b;
	unsigned long long n = 0;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		for (volatile int i = 0; i < 100000; i++)
			;
		n++;
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9 < secs);
	printf("%llu\n", n);
	return 0;
}
C
cc -O2 -o "$TMP/w" "$TMP/w.c" && cc -O1 -o "$TMP/spin" "$TMP/spin.c" || exit 1

cpu_ns() { # PID: ns on CPU of all its threads so far
	local s=0 t v
	for t in /proc/"$1"/task/*/schedstat; do
		read -r v _ <"$t" 2>/dev/null && s=$((s + v))
	done
	echo $s
}

standby() { # LABEL ARGS...: one row, the steady state (after 3 s of start-up)
	local label=$1 pid a b
	shift
	"$P" trigger --sys 99 --for 3600 -q -o "$TMP/cap" "$@" >/dev/null 2>&1 &
	pid=$!
	sleep 3
	a=$(cpu_ns $pid)
	sleep "$D"
	b=$(cpu_ns $pid)
	# SIGTERM: a background job of a script has SIGINT ignored
	kill -TERM $pid
	wait $pid
	awk -v l="$label" -v a="$a" -v b="$b" -v d="$D" \
		'BEGIN { printf "| %s | %.1f ms | %.1f ms | %.3f%% |\n", l, a / 1e6, (b - a) / 1e6, 100 * (b - a) / 1e9 / d }'
}

echo "### Standby cost: perfscope's own CPU time ($(nproc) CPUs, $(uname -r), load $(cut -d' ' -f1 /proc/loadavg))"
echo
echo "| options | start-up (3 s) | next $D s | share of one CPU |"
echo "|---|---|---|---|"
standby "defaults (--period 200, --standby-hz 10)"
standby "--period 100" --period 100
standby "--standby-hz 49" --standby-hz 49
standby "--before 0 (no flight recorder)" --before 0
standby "--period 3000 --before 0 (coolbpf's poll)" --period 3000 --before 0
echo

# the kernel's cost per sample: a pinned loop with and without 1000 Hz cpu-clock sampling of it
echo "### Kernel time per recorder sample (cpu-clock with a callchain), on CPU 1"
echo
# SCHED_FIFO: the loop is not shared with other work on CPU 1, only the sampling takes from it
RT="chrt -f 1"
$RT true 2>/dev/null || RT=
base=$($RT taskset -c 1 "$TMP/spin" 5)
"$P" trigger --sys 99 --for 3600 -q -C 1 --standby-hz 1000 -o "$TMP/cap" >/dev/null 2>&1 &
pid=$!
sleep 1
loaded=$($RT taskset -c 1 "$TMP/spin" 5)
kill -TERM $pid
wait $pid
awk -v a="$base" -v b="$loaded" 'BEGIN {
	loss = (a - b) / a; if (loss < 0) loss = 0
	printf "loop iterations in 5 s: %d alone, %d under 1000 Hz sampling: %.2f%% slower, about %.1f us per sample;\n", a, b, 100 * loss, loss * 1e6 / 1000
	printf "at the recorder'"'"'s 10 Hz that is %.4f%% of each CPU\n", loss * 1e6 / 1000 * 10 / 1e4 }'
echo

reaction() { # LABEL ARGS...: N trials; the delay from t0 to the first capture fired after it
	local label=$1 i t0 start out=$TMP/r.out pid list=""
	shift
	: >"$out"
	"$P" trigger --sys 50 --for 1 --capture 1 --cooldown 3 -C 1 -q --format json \
		-o "$TMP/cap" "$@" >"$out" 2>/dev/null &
	pid=$!
	sleep 2
	for i in $(seq "$N"); do
		t0=$(date +%s%N)
		chrt -f 1 taskset -c 1 "$TMP/w" 4 2>/dev/null || taskset -c 1 "$TMP/w" 4
		sleep 3 # the capture written, the cooldown over, CPU 1 quiet again
		start=
		for s in $(sed -n 's/.*"start":"\([^"]*\)".*/\1/p' "$out"); do
			ns=$(date -d "$s" +%s%N)
			if [ "$ns" -ge "$t0" ]; then
				start=$ns
				break
			fi
		done
		if [ -n "$start" ]; then
			list="$list $(awk -v s="$start" -v t="$t0" 'BEGIN { printf "%.2f", (s - t) / 1e9 }')"
		else
			list="$list none"
		fi
	done
	kill -TERM $pid
	wait $pid
	echo "| $label | $list |"
}

echo "### Reaction time: condition true -> capture start (s) with --for 1, $N trials"
echo
echo "| options | trials |"
echo "|---|---|"
reaction "defaults (--period 200)"
reaction "--period 100" --period 100
reaction "--period 3000 (coolbpf's poll)" --period 3000
