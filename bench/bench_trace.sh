#!/bin/bash
# Tracing benchmark: consumer CPU per million events, peak memory and lost events for perfscope's ring path, perfscope trace, perf record (+ perf script) and bpftrace, all in one run; with -B, perfscope before a change beside it; and the loss targets of issue 9.
#
# usage: bench/bench_trace.sh [-n N] [-p ROUNDTRIPS] [-r REPS] [-S] [-T] [-B BASE_BUILD_DIR] BUILD_DIR
#        (as root)
#
# Workload 1: bench/gen_events, copied as pscbench_gen, makes exactly N getppid() calls as fast
# as it can (one thread); every consumer traces syscalls:sys_enter_getppid system wide with its
# default buffers, filtered in the kernel on comm == "pscbench_gen" (other users of getppid on a
# shared machine would count too otherwise; the filter runs in the workload's context, not the
# consumer's). Workload 2: a pipe ping-pong of ROUNDTRIPS round trips traced with sched:sched_switch.
# Each consumer runs alone in the background while the workload runs in the foreground, is
# stopped with SIGINT, and its CPU time (user + system, its own process and threads only: the
# `times` of a subshell that does nothing but wait for it) is divided by the events it saw; its
# peak RSS is VmHWM from /proc/PID/status just before it is stopped (perf script's: GNU time's %M).
# Then a rate sweep (-S skips it): perf record and perfscope trace --format json, both with
# default buffers, at rising getppid rates, to find the rate at which perf record starts to lose
# events and what perfscope loses there. Between the two, perfscope's rows again on N calls paced
# at RATE per second (-R, 500,000 by default; 0 skips), a rate every perfscope consumer keeps up
# with, so that before and after compare what each event costs when neither loses nor holds
# anything back. Then the loss targets (-T skips them): page-faults -g
# on 16,000 pages, 200,000 getppid events as JSON into a pipe read a second late, 3,000,000
# getppid calls flat out with default options, each for perfscope (before and after with -B)
# and perf record, REPS runs each; -t runs them alone.
# -B BASE_BUILD_DIR: a build of perfscope before a change (e.g. `git worktree add` or `git
# archive` of the older commit, built the same way): its trace and session rows run beside.
# Output: markdown tables on stdout (bench/README.md "Tracing" has a copy); progress on stderr.
set -uo pipefail

N=2000000
PP=100000
REPS=3
SWEEP=1
TARGETS=1
BASE=
PACE=500000
ONLY_TARGETS=0
USAGE="usage: bench/bench_trace.sh [-n N] [-p ROUNDTRIPS] [-r REPS] [-R RATE] [-S] [-T|-t] [-B BASE_BUILD_DIR] BUILD_DIR"
while getopts n:p:r:R:STtB: opt; do
	case $opt in
	t) ONLY_TARGETS=1 ;;
	R) PACE=$OPTARG ;;
	n) N=$OPTARG ;;
	p) PP=$OPTARG ;;
	r) REPS=$OPTARG ;;
	S) SWEEP=0 ;;
	T) TARGETS=0 ;;
	B) BASE=$OPTARG ;;
	*) echo "$USAGE" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
if [ $# -ne 1 ]; then
	echo "$USAGE" >&2
	exit 2
fi
B=$1
P=$B/cli/perfscope
GEN=$B/bench/gen_events
RING=$B/bench/bench_ring
WL=$B/tests/workload
TP=syscalls:sys_enter_getppid
SW=sched:sched_switch
for f in "$P" "$GEN" "$RING" "$WL"; do
	[ -x "$f" ] || { echo "bench_trace: $f not built (ninja -C $B)" >&2; exit 1; }
done
if [ -n "$BASE" ]; then
	PB=$BASE/cli/perfscope
	RINGB=$BASE/bench/bench_ring
	for f in "$PB" "$RINGB"; do
		[ -x "$f" ] || { echo "bench_trace: $f not built (ninja -C $BASE)" >&2; exit 1; }
	done
fi
[ "$(id -u)" -eq 0 ] || { echo "bench_trace: run as root (system-wide tracepoints)" >&2; exit 1; }
HAVE_PERF=0; command -v perf >/dev/null && HAVE_PERF=1
HAVE_BPFTRACE=0; command -v bpftrace >/dev/null && HAVE_BPFTRACE=1

TMP=$(mktemp -d)
SHM=$(mktemp -d /dev/shm/bench_trace.XXXXXX) # tmpfs: perf.data never touches a disk
trap 'rm -rf "$TMP" "$SHM"' EXIT
WORK=()
# the getppid workload under a name of its own, for the filter
GENC=$TMP/pscbench_gen
cp "$GEN" "$GENC"
FILT='comm == "pscbench_gen"'

say() { echo "bench_trace: $*" >&2; }

# CPU seconds (children user + system) from the second line of bash's `times`.
times_cpu() {
	sed -n 2p "$1" | awk '{ s = 0; for (i = 1; i <= 2; i++) { split($i, a, "m"); s += a[1] * 60 + a[2] } printf "%.3f", s }'
}

# measure NAME CONSUMER...: runs CONSUMER in the background, the workload in WORK in the
# foreground, stops CONSUMER with SIGINT and leaves NAME.out/.err/.cpu/.gen/.rss (kB) in $TMP.
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
	sleep 0.7
	"${WORK[@]}" 2>"$TMP/$name.gen" >/dev/null
	sleep 0.5 # let the consumer catch up before it is told to stop
	rss_kb "$(cat "$TMP/$name.pid")" >"$TMP/$name.rss"
	kill -INT "$(cat "$TMP/$name.pid")" 2>/dev/null
	wait $sub
	times_cpu "$TMP/$name.times" >"$TMP/$name.cpu"
}

# Peak resident memory of PID so far, in kB (VmHWM); 0 when it is gone.
rss_kb() { awk '/^VmHWM:/ { kb = $2 } END { print kb + 0 }' "/proc/$1/status" 2>/dev/null || echo 0; }
mib() { awk -v k="${1:-0}" 'BEGIN { if (k > 0) printf "%.1f", k / 1024; else print "-" }'; }

# The workload's own rate from gen_events' summary line.
gen_rate() { sed -n 's/.*(\([0-9]*\)\/s)$/\1/p' "$TMP/$1.gen"; }

# events and lost as each tool reports them -> "EVENTS LOST"
ev_ring() { awk '{ print $3, $5 }' "$TMP/$1.out"; }
ev_trace() { sed -n "s/^perfscope trace: $2: \([0-9]*\) events, \([0-9]*\) lost$/\1 \2/p" "$TMP/$1.err" | tail -1; }
ev_bpftrace() { echo "$(sed -n 's/^@n: \([0-9]*\)$/\1/p' "$TMP/$1.out") 0"; }
# perf record to a file: samples from its summary, lost from the per-event LOST_SAMPLES stats;
# when the workload's own count is known (EXACT_N: the filtered getppid calls), what is missing
# from it, if more (perf's LOST_SAMPLES come from PERF_FORMAT_LOST, read at its end, and were
# seen to say 6 where 59,584 samples were missing)
EXACT_N=0
ev_perf_file() {
	local ev lost
	ev=$(sed -n 's/.*(\([0-9]*\) samples).*/\1/p' "$TMP/$1.err")
	lost=$(perf report -i "$2" --stats 2>/dev/null |
		awk -v e="$3 stats:" '$0 ~ e { s = 1 } s && /LOST_SAMPLES events:/ { n = $3 } END { print n + 0 }')
	if [ "$EXACT_N" -gt 0 ] && [ $((EXACT_N - ${ev:-0})) -gt "$lost" ]; then lost=$((EXACT_N - ${ev:-0})); fi
	echo "${ev:-0} $lost"
}

ROWS=()
# row LABEL EVENTS LOST CPU RATE RSS_KB
row() { ROWS+=("$1|$2|$3|$4|$5|${6:-0}"); }

table() {
	local bare=$1 r label ev lost cpu rate rss nse
	echo "| consumer | events seen | lost | consumer CPU s | CPU s per M events | ns/event | × bare floor | peak RSS MiB | workload calls/s |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
	for r in "${ROWS[@]}"; do
		IFS='|' read -r label ev lost cpu rate rss <<<"$r"
		if [ "${ev:-0}" -gt 0 ] 2>/dev/null; then
			nse=$(awk -v c="$cpu" -v e="$ev" 'BEGIN { printf "%.0f", c * 1e9 / e }')
			printf '| %s | %s | %s | %s | %.3f | %s | %s | %s | %s |\n' "$label" "$ev" "$lost" "$cpu" \
				"$(awk -v c="$cpu" -v e="$ev" 'BEGIN { print c * 1e6 / e }')" "$nse" \
				"$(awk -v n="$nse" -v b="$bare" 'BEGIN { if (b > 0) printf "%.1f", n / b; else print "-" }')" \
				"$(mib "$rss")" "${rate:--}"
		else
			printf '| %s | %s | %s | %s | - | - | - | %s | %s |\n' "$label" "${ev:--}" "${lost:--}" "$cpu" "$(mib "$rss")" "${rate:--}"
		fi
	done
	ROWS=()
}

nsper() { awk -v c="$1" -v e="$2" 'BEGIN { if (e > 0) printf "%.0f", c * 1e9 / e; else print 0 }'; }

# bench LABEL KEY PARSER CONSUMER...: REPS runs; the row of the median CPU per event; sets NS.
# PARSER KEY TP prints "EVENTS LOST" for one run.
bench() {
	local label=$1 key=$2 parser=$3 r ev lost cpu
	shift 3
	for ((r = 1; r <= REPS; r++)); do
		measure "$key.$r" "$@"
		read -r ev lost <<<"$($parser "$key.$r" "$CUR_TP")"
		cpu=$(cat "$TMP/$key.$r.cpu")
		echo "$(nsper "$cpu" "${ev:-0}") $cpu ${ev:-0} ${lost:-0} $(gen_rate "$key.$r") $(cat "$TMP/$key.$r.rss")"
	done | sort -n >"$TMP/$key.runs"
	read -r NS cpu ev lost rate rss <<<"$(sed -n "$(((REPS + 1) / 2))p" "$TMP/$key.runs")"
	row "$label" "$ev" "$lost" "$cpu" "$rate" "$rss"
}

ev_workload() { echo "$WORK_N n/a"; }

# perf record to tmpfs, then perf script of its file, REPS times; rows for each and the sum.
bench_perf_file() {
	local key=$1 r ev lost pr ps prss psrss
	shift
	for ((r = 1; r <= REPS; r++)); do
		measure "$key.$r" perf record -e "$CUR_TP" "$@" -a -o "$SHM/perf.data"
		read -r ev lost <<<"$(ev_perf_file "$key.$r" "$SHM/perf.data" "$CUR_TP")"
		say "$key.$r: perf script"
		if [ -x /usr/bin/time ]; then
			(/usr/bin/time -f %M -o "$TMP/$key.$r.ps.rss" perf script -i "$SHM/perf.data" >/dev/null 2>&1
				times >"$TMP/$key.$r.ps.times")
		else
			(perf script -i "$SHM/perf.data" >/dev/null 2>&1; times >"$TMP/$key.$r.ps.times")
			echo 0 >"$TMP/$key.$r.ps.rss"
		fi
		rm -f "$SHM/perf.data"
		pr=$(cat "$TMP/$key.$r.cpu")
		ps=$(times_cpu "$TMP/$key.$r.ps.times")
		echo "$(nsper "$(awk -v a="$pr" -v b="$ps" 'BEGIN { print a + b }')" "${ev:-0}") $pr $ps ${ev:-0} ${lost:-0} $(gen_rate "$key.$r") $(cat "$TMP/$key.$r.rss") $(tail -1 "$TMP/$key.$r.ps.rss")"
	done | sort -n >"$TMP/$key.runs"
	read -r NS pr ps ev lost rate prss psrss <<<"$(sed -n "$(((REPS + 1) / 2))p" "$TMP/$key.runs")"
	row "perf record -o tmpfs" "$ev" "$lost" "$pr" "$rate" "$prss"
	row "perf script of that file" "$ev" "" "$ps" "" "$psrss"
	row "perf record -o tmpfs + perf script" "$ev" "$lost" "$(awk -v a="$pr" -v b="$ps" 'BEGIN { printf "%.3f", a + b }')" "" \
		"$(( ${prss:-0} > ${psrss:-0} ? ${prss:-0} : ${psrss:-0} ))"
}

# run_set NAME TRACEPOINT [FILTER]: every consumer on the workload in WORK; sets BARE_NS RING_NS
# JSON_NS PRPS_NS
run_set() {
	local s=$1 f=${3:-} ev rf=() pf=() bf=""
	CUR_TP=$2
	ev=$CUR_TP
	if [ -n "$f" ]; then
		ev="$CUR_TP/$f/"
		rf=(-f "$f")
		pf=(--filter "$f")
		bf="/$f/ "
	fi
	bench "bare mmap loop (floor), bench_ring bare" "$s-bare" ev_ring "$RING" "${rf[@]}" bare "$CUR_TP"
	BARE_NS=$NS
	bench "perfscope ring path + decoding, no formatting (bench_ring ring)" "$s-ring" ev_ring "$RING" "${rf[@]}" ring "$CUR_TP"
	RING_NS=$NS
	bench "perfscope session loop, no formatting (bench_ring session)" "$s-sess" ev_ring "$RING" "${rf[@]}" session "$CUR_TP"
	bench "perfscope session loop + time order (bench_ring -o session)" "$s-sesso" ev_ring "$RING" "${rf[@]}" -o session "$CUR_TP"
	if [ -n "$BASE" ]; then
		bench "before: perfscope session loop (bench_ring session)" "$s-bsess" ev_ring "$RINGB" "${rf[@]}" session "$CUR_TP"
		bench "before: perfscope session loop + time order (bench_ring -o session)" "$s-bsesso" ev_ring "$RINGB" "${rf[@]}" -o session "$CUR_TP"
	fi
	bench "perfscope trace --format json > /dev/null" "$s-json" ev_trace "$P" trace --format json -e "$ev" -o /dev/null
	JSON_NS=$NS
	bench "perfscope trace (text) > /dev/null" "$s-text" ev_trace "$P" trace -e "$ev" -o /dev/null
	if [ -n "$BASE" ]; then
		bench "before: perfscope trace --format json > /dev/null" "$s-bjson" ev_trace "$PB" trace --format json -e "$ev" -o /dev/null
		bench "before: perfscope trace (text) > /dev/null" "$s-btext" ev_trace "$PB" trace -e "$ev" -o /dev/null
	fi
	[ "${PERFSCOPE_ONLY:-0}" = 1 ] && return
	if [ $HAVE_PERF = 1 ]; then
		bench "perf record -o /dev/null (events: the workload's count²)" "$s-prnull" ev_workload perf record -e "$CUR_TP" "${pf[@]}" -a -o /dev/null
		bench_perf_file "$s-prfile" "${pf[@]}"
		PRPS_NS=$NS
	fi
	if [ $HAVE_BPFTRACE = 1 ]; then
		bench "bpftrace count (in-kernel map)³" "$s-bpf" ev_bpftrace bpftrace -e "tracepoint:$CUR_TP $bf{ @n = count(); }"
	fi
}

echo "## Tracing: $(uname -r), $(nproc) CPUs, $(date -u +%Y-%m-%d)"
echo
echo "Default rings: perfscope trace $("$P" trace -v -e $TP --duration 0.01 -o /dev/null 2>&1 | sed -n 's/.*rings of \([0-9]*\) pages.*/\1/p' | head -1) pages per CPU (session_default_ring_pages), perf record and bench_ring 128 pages."
echo
if [ $ONLY_TARGETS = 1 ]; then
	SWEEP=0 PACE=0 TARGETS=1
fi
if [ $ONLY_TARGETS = 0 ]; then
echo "### syscalls:sys_enter_getppid, $N calls from one thread as fast as it goes"
echo
WORK=("$GENC" getppid "$N")
WORK_N=$N
EXACT_N=$N
BARE_NS=0 RING_NS=0 JSON_NS=0 PRPS_NS=0
run_set gp $TP "$FILT"
EXACT_N=0
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
fi

if [ "$PACE" -gt 0 ]; then
	echo "### syscalls:sys_enter_getppid, $N calls at $PACE per second: perfscope alone"
	echo
	WORK=("$GENC" -r "$PACE" getppid "$N")
	PERFSCOPE_ONLY=1 run_set gr $TP "$FILT"
	table "$BARE_NS"
	echo
fi

if [ $SWEEP = 1 ] && [ $HAVE_PERF = 1 ]; then
	echo "### Lost events with default buffers as the getppid rate rises"
	echo
	echo "Each step runs $REPS times per tool (2 s at a set rate, $N calls flat out); lost events summed over the runs, and in how many runs any were lost."
	echo
	if [ -n "$BASE" ]; then
		echo "| workload | calls per run | perf record -o tmpfs: lost (runs) | perfscope trace --format json: lost (runs) | before: lost (runs) |"
		echo "|---|---:|---:|---:|---:|"
	else
		echo "| workload | calls per run | perf record -o tmpfs: lost (runs) | perfscope trace --format json: lost (runs) |"
		echo "|---|---:|---:|---:|"
	fi
	first=""
	for step in "100000 1" "200000 1" "400000 1" "0 1" "0 2"; do
		read -r rate thr <<<"$step"
		if [ "$rate" = 0 ]; then n=$((N / thr)); label="flat out, $thr thread(s)"; else n=$((rate * 2)); label="$rate/s"; fi
		WORK=("$GENC" -r "$rate" -j "$thr" getppid "$n")
		EXACT_N=$((n * thr))
		pl=0 pr=0 sl=0 sr=0 bl=0 br=0
		for ((r = 1; r <= REPS; r++)); do
			measure "sw-perf-$rate-$thr.$r" perf record -e $TP --filter "$FILT" -a -o "$SHM/perf.data"
			read -r _ lost <<<"$(ev_perf_file "sw-perf-$rate-$thr.$r" "$SHM/perf.data" $TP)"
			rm -f "$SHM/perf.data"
			pl=$((pl + ${lost:-0})); [ "${lost:-0}" -gt 0 ] && pr=$((pr + 1))
			measure "sw-ps-$rate-$thr.$r" "$P" trace --format json -e "$TP/$FILT/" -o /dev/null
			read -r _ lost <<<"$(ev_trace "sw-ps-$rate-$thr.$r" $TP)"
			sl=$((sl + ${lost:-0})); [ "${lost:-0}" -gt 0 ] && sr=$((sr + 1))
			if [ -n "$BASE" ]; then
				measure "sw-pb-$rate-$thr.$r" "$PB" trace --format json -e "$TP/$FILT/" -o /dev/null
				read -r _ lost <<<"$(ev_trace "sw-pb-$rate-$thr.$r" $TP)"
				bl=$((bl + ${lost:-0})); [ "${lost:-0}" -gt 0 ] && br=$((br + 1))
			fi
		done
		if [ -n "$BASE" ]; then
			echo "| $label | $((n * thr)) | $pl ($pr of $REPS) | $sl ($sr of $REPS) | $bl ($br of $REPS) |"
		else
			echo "| $label | $((n * thr)) | $pl ($pr of $REPS) | $sl ($sr of $REPS) |"
		fi
		if [ -z "$first" ] && [ "$pl" -gt 0 ]; then first="$label: perf record lost $pl events in $pr of $REPS runs, perfscope trace --format json $sl in $sr"; fi
	done
	EXACT_N=0
	echo
	echo "First step where perf record loses: ${first:-none (perf record lost nothing at any step)}."
	echo
fi

# The loss targets of issue 9, each consumer alone, REPS runs: "events/lost" per run.
# perf record's figures come from its file's per-event stats (its LOST_SAMPLES are PERF_FORMAT_LOST
# counts); perfscope's from its statistics line.
target_row() { # LABEL, then one "events/lost" cell per run
	local label=$1
	shift
	echo "| $label | $(IFS='|'; echo "$*" | sed 's/|/ | /g') |"
}
trace_runs() { # KEY EVENT CMD...: perfscope trace ... REPS times -> cells
	local key=$1 ev=$2 r cells=()
	shift 2
	for ((r = 1; r <= REPS; r++)); do
		say "$key.$r: $*"
		"$@" >/dev/null 2>"$TMP/$key.$r.err"
		read -r e l <<<"$(sed -n "s/^perfscope trace: $ev: \([0-9]*\) events, \([0-9]*\) lost$/\1 \2/p" "$TMP/$key.$r.err" | tail -1)"
		cells+=("${e:-?}/${l:-?}")
	done
	CELLS=("${cells[@]}")
}
perf_runs() { # KEY EVENT CMD... (writing $SHM/perf.data) -> cells
	local key=$1 ev=$2 r cells=() e l
	shift 2
	for ((r = 1; r <= REPS; r++)); do
		say "$key.$r: $*"
		"$@" >/dev/null 2>"$TMP/$key.$r.err"
		perf report -i "$SHM/perf.data" --stats 2>/dev/null >"$TMP/$key.$r.stats"
		e=$(awk -v s="$ev stats:" '$0 ~ s { on = 1; next } / stats:$/ { on = 0 } on && /^ *SAMPLE events:/ { print $3 }' "$TMP/$key.$r.stats")
		l=$(awk -v s="$ev stats:" '$0 ~ s { on = 1; next } / stats:$/ { on = 0 } on && /LOST_SAMPLES events:/ { n = $3 } END { print n + 0 }' "$TMP/$key.$r.stats")
		rm -f "$SHM/perf.data"
		cells+=("${e:-0}/${l:-0}")
	done
	CELLS=("${cells[@]}")
}

if [ $TARGETS = 1 ]; then
	echo "### Loss targets: events seen / lost, each run"
	echo
	hdr="| target, consumer |"; sep="|---|"
	for ((r = 1; r <= REPS; r++)); do hdr+=" run $r |"; sep+="---:|"; done
	echo "$hdr"
	echo "$sep"
	# 1. the documented example on a program touching 16,000 pages
	trace_runs t1 page-faults "$P" trace -e page-faults -g -o /dev/null -- "$WL" faults 16000
	target_row "page-faults -g, 16,000 pages: perfscope trace -e page-faults -g -- CMD" "${CELLS[@]}"
	if [ -n "$BASE" ]; then
		trace_runs t1b page-faults "$PB" trace -e page-faults -g -o /dev/null -- "$WL" faults 16000
		target_row "page-faults -g, 16,000 pages: before" "${CELLS[@]}"
	fi
	if [ $HAVE_PERF = 1 ]; then
		perf_runs t1p page-faults perf record -g -c 1 -e page-faults -o "$SHM/perf.data" -- "$WL" faults 16000
		target_row "page-faults -g, 16,000 pages: perf record -g -c 1 -e page-faults -- CMD" "${CELLS[@]}"
	fi
	# 2. 200,000 getppid calls flat out as JSON into a pipe read a second late: what arrived
	late() { # KEY PERFSCOPE -> cells "arrived/lost"
		local key=$1 ps=$2 r cells=() a l
		for ((r = 1; r <= REPS; r++)); do
			say "$key.$r: late reader"
			a=$("$ps" trace --format json -e "$TP" -- "$GENC" -q getppid 200000 2>"$TMP/$key.$r.err" | (sleep 1; grep -c .))
			read -r _ l <<<"$(sed -n "s/^perfscope trace: $TP: \([0-9]*\) events, \([0-9]*\) lost$/\1 \2/p" "$TMP/$key.$r.err" | tail -1)"
			cells+=("${a:-0}/${l:-?}")
		done
		CELLS=("${cells[@]}")
	}
	late t2 "$P"
	target_row "200,000 getppid flat out as JSON into a pipe read 1 s late, \\| (sleep 1; grep -c .): arrived/lost" "${CELLS[@]}"
	if [ -n "$BASE" ]; then
		late t2b "$PB"
		target_row "the same, before" "${CELLS[@]}"
	fi
	if [ $HAVE_PERF = 1 ]; then
		cells=()
		for ((r = 1; r <= REPS; r++)); do
			say "t2p.$r: perf record -o - | late reader"
			perf record -q -e $TP -o - -- "$GENC" -q getppid 200000 2>/dev/null | (sleep 1; cat >"$SHM/perf.data")
			# (perf report --stats refuses this pipe-mode file here: count what perf script reads)
			e=$(perf script -i - <"$SHM/perf.data" 2>/dev/null | grep -c "$TP")
			rm -f "$SHM/perf.data"
			cells+=("${e:-0}/$((200000 - ${e:-0}))")
		done
		target_row "the same, perf record -o - into that pipe (samples in the stream/missing)" "${cells[@]}"
	fi
	# 3. 3,000,000 calls flat out, default options, system wide (filtered on the workload)
	WORK=("$GENC" getppid 3000000)
	EXACT_N=3000000
	for who in after before perf; do
		[ $who = before ] && [ -z "$BASE" ] && continue
		[ $who = perf ] && [ $HAVE_PERF = 0 ] && continue
		cells=() cpus=() rsss=()
		for ((r = 1; r <= REPS; r++)); do
			case $who in
			after) measure "t3.$r" "$P" trace -e "$TP/$FILT/" -o /dev/null
				read -r e l <<<"$(ev_trace "t3.$r" $TP)" ;;
			before) measure "t3.$r" "$PB" trace -e "$TP/$FILT/" -o /dev/null
				read -r e l <<<"$(ev_trace "t3.$r" $TP)" ;;
			perf) measure "t3.$r" perf record -e $TP --filter "$FILT" -a -o "$SHM/perf.data"
				read -r e l <<<"$(ev_perf_file "t3.$r" "$SHM/perf.data" $TP)"
				rm -f "$SHM/perf.data" ;;
			esac
			cells+=("${e:-0}/${l:-0} ($(nsper "$(cat "$TMP/t3.$r.cpu")" "${e:-0}") ns/event, $(mib "$(cat "$TMP/t3.$r.rss")") MiB, $(gen_rate "t3.$r")/s)")
		done
		case $who in
		after) target_row "3,000,000 getppid flat out, default options: perfscope trace" "${cells[@]}" ;;
		before) target_row "the same, before" "${cells[@]}" ;;
		perf) target_row "the same, perf record -a -o tmpfs" "${cells[@]}" ;;
		esac
	done
	EXACT_N=0
	echo
fi
echo "² perf record -o /dev/null cannot say how many events it wrote or lost; CPU per event uses the workload's count."
echo "³ bpftrace counts in a kernel map: its CPU time is start-up and map reads, the per-event cost falls on the traced task (see its workload calls/s)."
