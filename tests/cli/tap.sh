# TAP helpers for CLI tests: source it, call plan N, then ok/fail/skip/check; finish with done_testing.
# shellcheck shell=bash
_tap_n=0
_tap_failed=0
_tap_plan=0
plan() { _tap_plan=$1; echo "1..$1"; }
ok() { _tap_n=$((_tap_n + 1)); echo "ok $_tap_n - $*"; }
fail() { _tap_n=$((_tap_n + 1)); _tap_failed=1; echo "not ok $_tap_n - $*"; }
skip() { _tap_n=$((_tap_n + 1)); echo "ok $_tap_n # SKIP $*"; }
diag() { echo "# $*"; }
# todo_check REASON DESC CMD...: as check, but a failure is reported "not ok # TODO REASON" (known,
# not hidden, not failing the suite): for a check seen to fail erratically whose cause is open
todo_check() {
	local why=$1 d=$2
	shift 2
	if "$@"; then ok "$d"; else _tap_n=$((_tap_n + 1)); echo "not ok $_tap_n - $d # TODO $why"; fi
}
# check DESC CMD...: ok when CMD succeeds
check() { local d=$1; shift; if "$@"; then ok "$d"; else fail "$d"; fi; }
# run_capture: runs "$@" with stdout/stderr to $OUT/$ERR, status in $RC (never aborts the script)
run_capture() {
	OUT=$(mktemp) ERR=$(mktemp)
	_tap_tmpfiles+=("$OUT" "$ERR")
	"$@" >"$OUT" 2>"$ERR"
	RC=$?
}
# expect_rc DESC RC_WANTED CMD...: checks the exit status and that stderr says something
expect_rc() {
	local d=$1 want=$2; shift 2
	run_capture "$@"
	if [ "$RC" -eq "$want" ]; then ok "$d (exit $RC)"; else
		fail "$d: exit $RC, wanted $want"; sed 's/^/#   stderr: /' "$ERR" | head -5; fi
}
_tap_tmpfiles=()
done_testing() {
	rm -f "${_tap_tmpfiles[@]}" 2>/dev/null
	exit $_tap_failed
}
# skip_all REASON: skips every test of the plan not yet run and ends the script
skip_all() {
	while [ "$_tap_n" -lt "$_tap_plan" ]; do skip "$1"; done
	done_testing
}
need_root() { [ "$(id -u)" -eq 0 ]; }
# _alive PID: a child still running (not exited, nor a zombie waiting for its wait)
_alive() { [ -r "/proc/$1/stat" ] && [ "$(sed 's/.*) \(.\).*/\1/' "/proc/$1/stat" 2>/dev/null)" != Z ]; }
# run_ready SECS CMD...: runs CMD, a perfscope line given -v, in the background; once it says it is
# running (its events enabled: setup under ASan on a loaded machine can take seconds) lets it run
# SECS more, then sends SIGINT (a user's Ctrl-C). Sets OUT, ERR and RC as run_capture. The wait
# for the line ends when CMD exits, or after 60 s (then the SIGINT comes anyway); a CMD still there
# 30 s after its SIGINT is killed (RC 137), a hang failing its check, not the suite.
run_ready() {
	OUT=$(mktemp) ERR=$(mktemp)
	_tap_tmpfiles+=("$OUT" "$ERR")
	run_ready_to "$OUT" "$ERR" "$@"
	RC=$?
}
# run_ready_to OUTFILE ERRFILE SECS CMD...: the same, into those files; returns CMD's status (to
# run in the background: `run_ready_to ... &` then `wait $!`)
run_ready_to() {
	local out=$1 err=$2 secs=$3 pid i
	shift 3
	"$@" >"$out" 2>"$err" &
	pid=$!
	for ((i = 0; i < 1200; i++)); do
		grep -q '^perfscope [a-z-]*: running (' "$err" && break
		_alive "$pid" || break
		sleep 0.05
	done
	if _alive "$pid"; then
		sleep "$secs"
		kill -INT "$pid" 2>/dev/null
		for ((i = 0; i < 600; i++)); do
			_alive "$pid" || break
			sleep 0.05
		done
		kill -KILL "$pid" 2>/dev/null
	fi
	wait "$pid"
}
# wait_running ERRFILE [PID [SECS]]: waits until ERRFILE (the stderr of a perfscope run with -v)
# holds its "running (" line: its events are on. A hang guard of SECS (default 60, x3 under ASan)
# only; fails when it runs out or PID ends first. ERRFILE must not hold an earlier run's lines: the
# shell truncates a reused file only once the new process has forked, so the old running line can
# be read first (remove it before starting, or use a new file).
wait_running() {
	local err=$1 pid=${2:-} secs=${3:-60} i
	case ${B_SANITIZE:-} in *address*) secs=$((secs * 3)) ;; esac
	for ((i = 0; i < secs * 20; i++)); do
		grep -q '^perfscope [a-z-]*: running (' "$err" 2>/dev/null && return 0
		[ -n "$pid" ] && ! _alive "$pid" && return 1
		sleep 0.05
	done
	return 1
}
# usable_cpus: the CPUs this process may run on, in order, space-separated
usable_cpus() { python3 -c 'import os; print(" ".join(map(str, sorted(os.sched_getaffinity(0)))))'; }
# idle_ok_cpu PERFSCOPE MT_WORKLOAD: prints the first online CPU whose idle-time events reach perf's
# rings: a task napping there is seen woken and switched in 10 times out of 10, in 3 runs out of 3.
# Some VM kernels drop, silently, samples taken while a given vCPU idles (a Firecracker 6.18
# guest's CPU 1, in most runs but not all: the wakeups are counted but never written, the
# switch-ins from idle not even counted; see common/loop/kdrop.h); a test that counts a napping task's
# wakeups pins it to a CPU printed here. Prints nothing when no CPU delivers them.
idle_ok_cpu() {
	local p=$1 w=$2 c n d good _
	d=$(mktemp -d)
	cp "$w" "$d/idleprobe$$"
	for c in $(usable_cpus); do
		good=1
		for _ in 1 2 3; do
			n=$("$p" trace -C "$c" -e "sched:sched_wakeup/comm==\"idleprobe$$\"/" \
				-e "sched:sched_switch/next_comm==\"idleprobe$$\"/" -- \
				taskset -c "$c" "$d/idleprobe$$" naps 10 3 2>/dev/null | wc -l)
			if [ "$n" -lt 20 ]; then good=0; break; fi
		done
		if [ "$good" -eq 1 ]; then
			rm -rf "$d"
			echo "$c"
			return 0
		fi
	done
	rm -rf "$d"
}
# pin_idle_ok PERFSCOPE MT_WORKLOAD: sets IDLE_OK_CPU (idle_ok_cpu's answer) and PIN, the words
# that run a command there ("${PIN[@]}" CMD...: taskset, which execs CMD: $! is CMD's pid), empty
# when no CPU delivers
# shellcheck disable=SC2034 # IDLE_OK_CPU and PIN are for the caller
pin_idle_ok() {
	IDLE_OK_CPU=$(idle_ok_cpu "$1" "$2")
	PIN=()
	if [ -n "$IDLE_OK_CPU" ]; then PIN=(taskset -c "$IDLE_OK_CPU"); fi
}
# watch_end: waits for WPID (a background profiler) to end by itself, a hang guard of 60 s (x3
# under ASan) then SIGKILL (RC 137); RC its status
watch_end() {
	local secs=60 i
	case ${B_SANITIZE:-} in *address*) secs=$((secs * 3)) ;; esac
	for ((i = 0; i < secs * 20; i++)); do
		_alive "$WPID" || break
		sleep 0.05
	done
	kill -KILL "$WPID" 2>/dev/null
	wait "$WPID"
	RC=$?
}
# idle_check DESC CMD...: check, for a run that counts every wakeup of a task run with "${PIN[@]}"
# (pin_idle_ok); a skip saying why when no CPU here delivers the events taken while it idles, or
# when the run itself measured drops (RUN_KDROP, its kernel_dropped, when the test sets it): the
# probe's CPU then did not deliver this time, and the drops are counted, not lost silently
idle_check() {
	if [ -z "${IDLE_OK_CPU:-}" ]; then
		skip "$1: no CPU of this machine delivers the events taken while it idles (kdrop.h)"
	elif [ "${RUN_KDROP:-0}" -gt 0 ]; then
		skip "$1: CPU $IDLE_OK_CPU dropped $RUN_KDROP events this run (kernel_dropped, kdrop.h)"
	else
		check "$@"
	fi
}
# run_report CMD...: as run_capture, for a summary profiler (perfscope help: syscalls, top ...):
# given a COMMAND, and neither -o nor --format json, it writes its text report to stderr (the
# COMMAND's output has stdout), so then OUT is the stderr file and CMDOUT the stdout one.
run_report() {
	local a moved=0 cmd=0
	run_capture "$@"
	CMDOUT=$OUT
	for a in "$@"; do
		case $a in
		--) cmd=1; break ;;
		-o | -o* | --output* | json | --format=json) moved=1 ;;
		esac
	done
	if [ "$cmd" -eq 1 ] && [ "$moved" -eq 0 ]; then OUT=$ERR; fi
}
