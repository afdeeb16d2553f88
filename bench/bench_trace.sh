#!/bin/bash
# Tracing benchmark: consumer CPU per million events and lost events for perfscope's ring path, perfscope trace, perf record (+ perf script) and bpftrace, all in one run.
#
# usage: bench/bench_trace.sh [-n N] [-p ROUNDTRIPS] [-S] BUILD_DIR     (as root)
#
# Workload 1: bench/gen_events makes exactly N getppid() calls as fast as it can (one thread);
# every consumer traces syscalls:sys_enter_getppid system wide with default buffers (512 KiB per
# CPU). Workload 2: a pipe ping-pong of ROUNDTRIPS round trips traced with sched:sched_switch.
# Each consumer runs alone in the background while the workload runs in the foreground, is
# stopped with SIGINT, and its CPU time (user + system, its own process and threads only: the
# `times` of a subshell that does nothing but wait for it) is divided by the events it saw.
# Then a rate sweep (-S skips it): perf record and perfscope trace --format json, both with
# default buffers, at rising getppid rates, to find the rate at which perf record starts to lose
# events and what perfscope loses there.
# Output: markdown tables on stdout (bench/README.md "Tracing" has a copy); progress on stderr.
set -uo pipefail

N=2000000
PP=200000
SWEEP=1
while getopts n:p:S opt; do
	case $opt in
	n) N=$OPTARG ;;
	p) PP=$OPTARG ;;
	S) SWEEP=0 ;;
	*) echo "usage: bench/bench_trace.sh [-n N] [-p ROUNDTRIPS] [-S] BUILD_DIR" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
if [ $# -ne 1 ]; then
	echo "usage: bench/bench_trace.sh [-n N] [-p ROUNDTRIPS] [-S] BUILD_DIR" >&2
	exit 2
fi
B=$1
P=$B/cli/perfscope
GEN=$B/bench/gen_events
RING=$B/bench/bench_ring
TP=syscalls:sys_enter_getppid
SW=sched:sched_switch
for f in "$P" "$GEN" "$RING"; do
	[ -x "$f" ] || { echo "bench_trace: $f not built (ninja -C $B)" >&2; exit 1; }
done
[ "$(id -u)" -eq 0 ] || { echo "bench_trace: run as root (system-wide tracepoints)" >&2; exit 1; }
HAVE_PERF=0; command -v perf >/dev/null && HAVE_PERF=1
HAVE_BPFTRACE=0; command -v bpftrace >/dev/null && HAVE_BPFTRACE=1

TMP=$(mktemp -d)
SHM=$(mktemp -d /dev/shm/bench_trace.XXXXXX) # tmpfs: perf.data never touches a disk
trap 'rm -rf "$TMP" "$SHM"' EXIT
WORK=()

say() { echo "bench_trace: $*" >&2; }

# CPU seconds (children user + system) from the second line of bash's `times`.
times_cpu() {
	sed -n 2p "$1" | awk '{ s = 0; for (i = 1; i <= 2; i++) { split($i, a, "m"); s += a[1] * 60 + a[2] } printf "%.3f", s }'
}

# measure NAME CONSUMER...: runs CONSUMER in the background, the workload in WORK in the
# foreground, stops CONSUMER with SIGINT and leaves NAME.out/.err/.cpu/.gen in $TMP.
measure() {
	local name=$1 i
	shift
	say "$name: $*"
	(
		"$@" >"$TMP/$name.out" 2>"$TMP/$name.err" &
		echo $! >"$TMP/$name.pid"
		wait $!
		times >"$TMP/$name.times"
	) &
	local sub=$!
	# ready: bpftrace says when it attaches; the others are up well within a second
	for ((i = 0; i < 100; i++)); do
		[ -s "$TMP/$name.pid" ] && break
		sleep 0.05
	done
	if [ "$1" = bpftrace ]; then
		for ((i = 0; i < 200; i++)); do
			grep -q Attaching "$TMP/$name.out" 2>/dev/null && break
			sleep 0.1
		done
	fi
	sleep 1
	"${WORK[@]}" 2>"$TMP/$name.gen" >/dev/null
	sleep 0.5 # let the consumer catch up before it is told to stop
	kill -INT "$(cat "$TMP/$name.pid")" 2>/dev/null
	wait $sub
	times_cpu "$TMP/$name.times" >"$TMP/$name.cpu"
}

# The workload's own rate from gen_events' summary line.
gen_rate() { sed -n 's/.*(\([0-9]*\)\/s)$/\1/p' "$TMP/$1.gen"; }

# events and lost as each tool reports them -> "EVENTS LOST"
ev_ring() { awk '{ print $3, $5 }' "$TMP/$1.out"; }
ev_trace() { sed -n "s/^perfscope trace: $2: \([0-9]*\) events, \([0-9]*\) lost$/\1 \2/p" "$TMP/$1.err" | tail -1; }
ev_bpftrace() { echo "$(sed -n 's/^@n: \([0-9]*\)$/\1/p' "$TMP/$1.out") 0"; }
# perf record to a file: samples from its summary, lost from the per-event LOST_SAMPLES stats
ev_perf_file() {
	local ev lost
	ev=$(sed -n 's/.*(\([0-9]*\) samples).*/\1/p' "$TMP/$1.err")
	lost=$(perf report -i "$2" --stats 2>/dev/null |
		awk -v e="$3 stats:" '$0 ~ e { s = 1 } s && /LOST_SAMPLES events:/ { n = $3 } END { print n + 0 }')
	echo "${ev:-0} $lost"
}

ROWS=()
# row LABEL EVENTS LOST CPU RATE
row() { ROWS+=("$1|$2|$3|$4|$5"); }

table() {
	local bare=$1 r label ev lost cpu rate nse
	echo "| consumer | events seen | lost | consumer CPU s | CPU s per M events | ns/event | × bare floor | workload calls/s |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|"
	for r in "${ROWS[@]}"; do
		IFS='|' read -r label ev lost cpu rate <<<"$r"
		if [ "${ev:-0}" -gt 0 ] 2>/dev/null; then
			nse=$(awk -v c="$cpu" -v e="$ev" 'BEGIN { printf "%.0f", c * 1e9 / e }')
			printf '| %s | %s | %s | %s | %.3f | %s | %s | %s |\n' "$label" "$ev" "$lost" "$cpu" \
				"$(awk -v c="$cpu" -v e="$ev" 'BEGIN { print c * 1e6 / e }')" "$nse" \
				"$(awk -v n="$nse" -v b="$bare" 'BEGIN { if (b > 0) printf "%.1f", n / b; else print "-" }')" "${rate:--}"
		else
			printf '| %s | %s | %s | %s | - | - | - | %s |\n' "$label" "${ev:--}" "${lost:--}" "$cpu" "${rate:--}"
		fi
	done
	ROWS=()
}

nsper() { awk -v c="$1" -v e="$2" 'BEGIN { if (e > 0) printf "%.0f", c * 1e9 / e; else print 0 }'; }

# run_set NAME TRACEPOINT: every consumer on the workload in WORK
run_set() {
	local s=$1 tp=$2 ev lost bare_ns pr_ns ps_cpu j_ns
	measure "$s-bare" "$RING" bare "$tp"
	read -r ev lost <<<"$(ev_ring "$s-bare")"
	bare_ns=$(nsper "$(cat "$TMP/$s-bare.cpu")" "$ev")
	row "bare mmap loop (floor), bench_ring bare" "$ev" "$lost" "$(cat "$TMP/$s-bare.cpu")" "$(gen_rate "$s-bare")"
	measure "$s-ring" "$RING" ring "$tp"
	read -r ev lost <<<"$(ev_ring "$s-ring")"
	row "perfscope ring path + decoding, no formatting (bench_ring ring)" "$ev" "$lost" "$(cat "$TMP/$s-ring.cpu")" "$(gen_rate "$s-ring")"
	RING_NS=$(nsper "$(cat "$TMP/$s-ring.cpu")" "$ev")
	measure "$s-sess" "$RING" session "$tp"
	read -r ev lost <<<"$(ev_ring "$s-sess")"
	row "perfscope session loop, no formatting (bench_ring session)" "$ev" "$lost" "$(cat "$TMP/$s-sess.cpu")" "$(gen_rate "$s-sess")"
	measure "$s-sesso" "$RING" -o session "$tp"
	read -r ev lost <<<"$(ev_ring "$s-sesso")"
	row "perfscope session loop + --order merge (bench_ring -o session)" "$ev" "$lost" "$(cat "$TMP/$s-sesso.cpu")" "$(gen_rate "$s-sesso")"
	measure "$s-json" sh -c "exec '$P' trace --format json -e $tp > /dev/null"
	read -r ev lost <<<"$(ev_trace "$s-json" "$tp")"
	row "perfscope trace --format json > /dev/null" "$ev" "$lost" "$(cat "$TMP/$s-json.cpu")" "$(gen_rate "$s-json")"
	j_ns=$(nsper "$(cat "$TMP/$s-json.cpu")" "$ev")
	measure "$s-text" sh -c "exec '$P' trace -e $tp > /dev/null"
	read -r ev lost <<<"$(ev_trace "$s-text" "$tp")"
	row "perfscope trace (text) > /dev/null" "$ev" "$lost" "$(cat "$TMP/$s-text.cpu")" "$(gen_rate "$s-text")"
	if [ $HAVE_PERF = 1 ]; then
		measure "$s-prnull" perf record -e "$tp" -a -o /dev/null
		row "perf record -o /dev/null (events: the workload's count²)" "$WORK_N" "n/a" "$(cat "$TMP/$s-prnull.cpu")" "$(gen_rate "$s-prnull")"
		measure "$s-prfile" perf record -e "$tp" -a -o "$SHM/perf.data"
		read -r ev lost <<<"$(ev_perf_file "$s-prfile" "$SHM/perf.data" "$tp")"
		pr_cpu=$(cat "$TMP/$s-prfile.cpu")
		row "perf record -o tmpfs" "$ev" "$lost" "$pr_cpu" "$(gen_rate "$s-prfile")"
		say "$s: perf script"
		(perf script -i "$SHM/perf.data" >/dev/null 2>&1; times >"$TMP/$s-ps.times")
		ps_cpu=$(times_cpu "$TMP/$s-ps.times")
		row "perf script of that file" "$ev" "" "$ps_cpu" ""
		row "perf record -o tmpfs + perf script" "$ev" "$lost" "$(awk -v a="$pr_cpu" -v b="$ps_cpu" 'BEGIN { printf "%.3f", a + b }')" ""
		PRPS_NS=$(nsper "$(awk -v a="$pr_cpu" -v b="$ps_cpu" 'BEGIN { print a + b }')" "$ev")
		rm -f "$SHM/perf.data"
	fi
	if [ $HAVE_BPFTRACE = 1 ]; then
		local probe="tracepoint:$tp"
		measure "$s-bpf" bpftrace -e "$probe { @n = count(); }"
		read -r ev lost <<<"$(ev_bpftrace "$s-bpf")"
		row "bpftrace count (in-kernel map)³" "$ev" "0" "$(cat "$TMP/$s-bpf.cpu")" "$(gen_rate "$s-bpf")"
	fi
	BARE_NS=$bare_ns
	JSON_NS=$j_ns
}

echo "## Tracing: $(uname -r), $(nproc) CPUs, $(date -u +%Y-%m-%d)"
echo
echo "### syscalls:sys_enter_getppid, $N calls from one thread as fast as it goes"
echo
WORK=("$GEN" getppid "$N")
WORK_N=$N
BARE_NS=0 RING_NS=0 JSON_NS=0 PRPS_NS=0
run_set gp $TP
table "$BARE_NS"
echo
echo "Ratios: perfscope ring path / bare floor = $(awk -v a="$RING_NS" -v b="$BARE_NS" 'BEGIN { printf "%.2f", b ? a / b : 0 }')×;" \
	"perfscope trace --format json / (perf record + perf script) = $(awk -v a="$JSON_NS" -v b="$PRPS_NS" 'BEGIN { printf "%.2f", b ? a / b : 0 }')×."
echo
echo "### sched:sched_switch, pipe ping-pong of $PP round trips (system wide: other tasks' switches count too)"
echo
WORK=("$GEN" pingpong "$PP")
WORK_N=$((PP * 2))
run_set pp $SW
table "$BARE_NS"
echo
echo "Ratios: perfscope ring path / bare floor = $(awk -v a="$RING_NS" -v b="$BARE_NS" 'BEGIN { printf "%.2f", b ? a / b : 0 }')×;" \
	"perfscope trace --format json / (perf record + perf script) = $(awk -v a="$JSON_NS" -v b="$PRPS_NS" 'BEGIN { printf "%.2f", b ? a / b : 0 }')×."
echo

if [ $SWEEP = 1 ] && [ $HAVE_PERF = 1 ]; then
	echo "### Lost events with default buffers as the getppid rate rises (2 s per step)"
	echo
	echo "| workload | calls | perf record -o tmpfs: lost | perfscope trace --format json: lost |"
	echo "|---|---:|---:|---:|"
	first=""
	for step in "100000 1" "200000 1" "400000 1" "0 1" "0 2"; do
		read -r rate thr <<<"$step"
		if [ "$rate" = 0 ]; then n=$((N / thr)); label="flat out, $thr thread(s)"; else n=$((rate * 2)); label="$rate/s"; fi
		WORK=("$GEN" -r "$rate" -j "$thr" getppid "$n")
		measure "sw-perf-$rate-$thr" perf record -e $TP -a -o "$SHM/perf.data"
		read -r _ plost <<<"$(ev_perf_file "sw-perf-$rate-$thr" "$SHM/perf.data" $TP)"
		rm -f "$SHM/perf.data"
		measure "sw-ps-$rate-$thr" sh -c "exec '$P' trace --format json -e $TP > /dev/null"
		read -r _ slost <<<"$(ev_trace "sw-ps-$rate-$thr" $TP)"
		echo "| $label | $((n * thr)) | $plost | $slost |"
		if [ -z "$first" ] && [ "${plost:-0}" -gt 0 ]; then first="$label: perf record lost $plost, perfscope trace --format json lost $slost"; fi
	done
	echo
	echo "First step where perf record loses: ${first:-none (perf record lost nothing at any step)}."
	echo
fi
echo "² perf record -o /dev/null cannot say how many events it wrote or lost; CPU per event uses the workload's count."
echo "³ bpftrace counts in a kernel map: its CPU time is start-up and map reads, the per-event cost falls on the traced task (see its workload calls/s)."
