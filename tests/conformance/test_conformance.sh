#!/usr/bin/env bash
# The lifecycle contract every profiler keeps, checked for each row of `perfscope help --table`:
# a profiler is in this suite by being in the table (cli/profilers.c) with its conformance_args.
# shellcheck source=tests/cli/tap.sh
source "$(dirname "$0")/../cli/tap.sh"
P=${PERFSCOPE:?}
SRC=${SOURCE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
HERE=$(cd "$(dirname "$0")" && pwd)
# Bounds on waits (never timings asserted: they only keep a hung profiler from hanging the suite),
# longer under the sanitizers.
SCALE=1
[ "${B_SANITIZE:-none}" != none ] && SCALE=3

# Profilers start with SIGINT and SIGTERM at their defaults, as from a terminal: a background job
# of a script inherits SIGINT ignored, and a COMMAND it launched would then ignore it too.
DFL=()
if env --default-signal true 2>/dev/null; then DFL=(env --default-signal); fi

TMP=$(mktemp -d)
# What the suite started and has not seen end: killed at exit. A pid seen to end is forgotten at
# once, so that a pid the system gave to another process since is never killed.
declare -A LIVE
track() { LIVE[$1]=1; }
forget() { unset "LIVE[$1]"; }
cleanup() {
	local pid
	for pid in "${!LIVE[@]}"; do kill -9 "$pid" 2>/dev/null; done
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# Checks that fail on the current code for a known reason: reported as TODO (not a failure) while
# they fail, and as a plain ok, with a note to drop the entry, once they pass. KEY is NAME:check.
declare -A TODO=(
)

# verdict STATUS KEY DESC [DETAIL-FILE]: one TAP line for a check whose outcome is STATUS (0:
# passed); STATUS comes first so that `verdict $? ...` takes it before DESC's $(...) change it
verdict() {
	local good=$1 key=$2 desc=$3 detail=${4:-}
	if [ "$good" -eq 0 ]; then
		ok "$desc"
		[ -n "${TODO[$key]:-}" ] && diag "$key passes now: drop it from TODO in $0"
	elif [ -n "${TODO[$key]:-}" ]; then
		echo "not ok $((_tap_n + 1)) - $desc # TODO ${TODO[$key]}"
		_tap_n=$((_tap_n + 1))
	else
		fail "$desc"
	fi
	[ "$good" -ne 0 ] && [ -n "$detail" ] && [ -s "$detail" ] && sed 's/^/#   /' "$detail" | head -6
	return 0
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }
# wait_until SECONDS CMD...: polls CMD every 20 ms for at most SECONDS (times SCALE)
wait_until() {
	local end=$(($(now_ms) + $1 * SCALE * 1000))
	shift
	until "$@"; do
		[ "$(now_ms)" -lt "$end" ] || return 1
		sleep 0.02
	done
}
# says_running PID: -v's running line is on stderr (the events run), or PID has ended
says_running() { grep -q '^perfscope [a-z-]*: running (' "$TMP/err" || ! alive "$1"; }
# alive PID: running (a zombie, ours until we wait for it, is not)
alive() {
	local st
	st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null) || return 1
	[ "${st%% *}" != Z ]
}
dead() { ! alive "$1"; }
nonempty() { [ -s "$1" ]; }
grew() { [ "$(stat -c %s "$1")" -gt "$2" ]; }
size() { stat -c %s "$1"; }
# stop_within SECONDS PID: waits for PID, ours, to exit; RC is its status. Kills it and returns 1
# when it is still there after SECONDS.
stop_within() {
	if wait_until "$1" dead "$2"; then
		wait "$2"
		RC=$?
		forget "$2"
		return 0
	fi
	kill -9 "$2" 2>/dev/null
	wait "$2" 2>/dev/null
	forget "$2"
	RC=killed
	return 1
}
# descendants PID: every process below PID
descendants() {
	local c
	for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
		echo "$c"
		descendants "$c"
	done
}
# ready PID: perf events (or BPF objects) open: the profiler has set itself up
ready() {
	local fd line
	for fd in /proc/"$1"/fd/*; do
		case $(readlink "$fd" 2>/dev/null) in 'anon_inode:[perf_event]' | anon_inode:bpf*)
			# events open; running once the session blocks SIGINT for its signalfd (a
			# process that ends while its events are still being opened is another case)
			line=$(grep '^SigBlk:' /proc/"$1"/status 2>/dev/null) || return 1
			(((16#${line##*[[:space:]]} & 2) != 0))
			return ;;
		esac
	done
	return 1
}

# start NAME ARGS...: perfscope in the background, stdout and stderr to $TMP/out, $TMP/err
start() {
	: >"$TMP/out"
	: >"$TMP/err"
	"${DFL[@]}" "$P" "$@" >"$TMP/out" 2>"$TMP/err" &
	PID=$!
	track "$PID"
}

# ---------------------------------------------------------------- session checks (NAME ARGS)

# SIGINT or SIGTERM: exit 0, the end report, no child left behind.
check_stop_signal() {
	local name=$1 sig=$2 event=$3 kids k left o e stream line
	shift 3
	start "$name" "$@"
	if ! wait_until 30 nonempty "$TMP/out"; then
		fail "$name: nothing on stdout within $((30 * SCALE)) s with '$*' (the table's arguments must produce output)"
		sed 's/^/#   stderr: /' "$TMP/err" | head -4
		stop_within 0 "$PID"
		return 1
	fi
	kids=$(descendants "$PID")
	o=$(size "$TMP/out") e=$(size "$TMP/err")
	kill -"$sig" "$PID"
	stop_within 30 "$PID"
	left=
	for k in $kids; do
		wait_until 2 dead "$k" && continue
		left="$left $k"
		kill -9 "$k"
	done
	[ "$RC" = 0 ] && [ -z "$left" ]
	verdict $? "$name:$sig" "$name: SIG$sig: stops, exit 0 (exit $RC), no child left${left:+ (left:$left)}" "$TMP/err"
	# The end report comes after the signal, on stderr, or on stdout when stderr says nothing;
	# it names the event.
	if [ "$RC" = killed ]; then
		skip "$name: SIG$sig: it did not stop, so no end report"
		return
	fi
	if grew "$TMP/err" "$e"; then stream=err; else stream=out; fi
	REPORT_STREAM[$name]=$stream
	# (a line in it, not its last: notes may follow the per-event lines, such as multi-trace's
	# "N events reached their ring more than 2 ms after they happened" on a loaded machine)
	tail -c +$(($(if [ $stream = err ]; then echo "$e"; else echo "$o"; fi) + 1)) "$TMP/$stream" |
		grep -v ' in the last [0-9]' | grep -qF -- "$event"
	verdict $? "$name:$sig:report" "$name: SIG$sig: an end report naming $event on std$stream" "$TMP/err"
	[[ "$line" == *"$event"* ]] || diag "last line on std$stream after the signal: '$line'"
}

# SIGINT with -- COMMAND: passed on to the command, whose status (130: killed by SIGINT) is the
# profiler's, as for any command that ends; the command is not left running on its own.
check_stop_command() {
	local name=$1 cmd gone
	shift
	rm -f "$TMP/cmdpid"
	start "$name" "$@" -- sh -c "echo \$\$ >'$TMP/cmdpid'; exec sleep 30"
	wait_until 30 nonempty "$TMP/cmdpid"
	cmd=$(cat "$TMP/cmdpid" 2>/dev/null)
	[ -n "$cmd" ] && track "$cmd"
	# ready once it prints, or has its events open (a quiet command may give no output)
	wait_until 2 nonempty "$TMP/out" || wait_until 2 ready "$PID"
	kill -INT "$PID"
	stop_within 30 "$PID"
	gone=1
	if [ -n "$cmd" ]; then
		wait_until 30 dead "$cmd" && gone=0
		kill -9 "$cmd" 2>/dev/null
		forget "$cmd"
	fi
	[ "$RC" = 130 ] && [ $gone = 0 ]
	verdict $? "$name:INT:command" "$name: SIGINT with -- COMMAND: the command's status 130 (exit $RC), the command is gone" "$TMP/err"
}

# SIGUSR1: reports on the stream of the end report, naming the event, and goes on.
check_usr1() {
	local name=$1 event=$2 stream=${REPORT_STREAM[$1]:-err} from good=1 line
	shift 2
	start "$name" "$@"
	wait_until 30 nonempty "$TMP/out"
	# what the signal printed, not the output going on anyway: stdout grows by itself
	from=$(size "$TMP/$stream")
	kill -USR1 "$PID"
	if wait_until 30 grew "$TMP/$stream" "$from"; then
		sleep 0.1 # the rest of the report
		line=$(tail -c +$((from + 1)) "$TMP/$stream" | grep -F -- "$event" | head -1)
		[ -n "$line" ] && good=0
	fi
	verdict $good "$name:USR1" "$name: SIGUSR1: prints a report naming $event on std$stream" "$TMP/err"
	from=$(size "$TMP/out")
	alive "$PID" && wait_until 30 grew "$TMP/out" "$from"
	verdict $? "$name:USR1:alive" "$name: SIGUSR1: still running and printing after it" "$TMP/err"
	kill -INT "$PID"
	stop_within 30 "$PID"
}

# | head -1: the reader leaving is no failure: exit 0, promptly.
check_head() {
	local name=$1 pid sub
	shift
	rm -f "$TMP/pid" "$TMP/rc"
	(
		"${DFL[@]}" sh -c 'echo $$ >"$0"; exec "$@"' "$TMP/pid" "$P" "$name" "$@" 2>"$TMP/err" |
			head -1 >"$TMP/out"
		echo "${PIPESTATUS[0]}" >"$TMP/rc"
	) &
	sub=$!
	track $sub
	wait_until 30 nonempty "$TMP/pid" && pid=$(cat "$TMP/pid") && track "$pid"
	if wait_until 30 nonempty "$TMP/rc"; then
		RC=$(cat "$TMP/rc")
	else
		RC=hung
		[ -n "$pid" ] && kill -9 "$pid"
	fi
	wait $sub 2>/dev/null
	forget $sub
	[ -n "$pid" ] && forget "$pid"
	[ "$RC" = 0 ] && [ "$(grep -c . "$TMP/out")" -eq 1 ]
	verdict $? "$name:head" "$name: | head -1: exit 0 (exit $RC) once the reader has left" "$TMP/err"
}

# > /dev/full: exit 1 naming the error.
check_full() {
	local name=$1
	shift
	: >"$TMP/err"
	"${DFL[@]}" "$P" "$name" "$@" >/dev/full 2>"$TMP/err" &
	PID=$!
	track "$PID"
	stop_within 30 "$PID"
	[ "$RC" = 1 ] && grep -qiE 'no space|ENOSPC' "$TMP/err"
	verdict $? "$name:full" "$name: > /dev/full: exit 1 (exit $RC) saying 'No space left on device'" "$TMP/err"
}

# A pipe nobody reads, then SIGINT: stops, and says what was not written.
check_stuck() {
	local name=$1 res
	shift
	res=$(python3 "$HERE/stuck_pipe.py" "$SCALE" "$TMP/err" "$P" "$name" "$@")
	[[ "$res" =~ ^[0-9]+$ ]] && [ "$res" -lt 128 ] && [ "$res" -ne 2 ]
	verdict $? "$name:stuck" "$name: a pipe nobody reads, then SIGINT: stops (exit $res)" "$TMP/err"
	grep -qi 'not written' "$TMP/err"
	verdict $? "$name:stuck:says" "$name: a pipe nobody reads: says what was not written" "$TMP/err"
}

# -o FILE: the output lands in FILE, nothing on stdout.
check_output_file() {
	local name=$1
	shift
	rm -f "$TMP/o.txt"
	start "$name" "$@" -o "$TMP/o.txt"
	wait_until 30 nonempty "$TMP/o.txt"
	kill -INT "$PID"
	stop_within 30 "$PID"
	[ "$RC" = 0 ] && [ -s "$TMP/o.txt" ] && [ ! -s "$TMP/out" ]
	verdict $? "$name:o" "$name: -o FILE: output in FILE ($(wc -l <"$TMP/o.txt" 2>/dev/null || echo 0) lines), stdout empty ($(size "$TMP/out") bytes), exit $RC" "$TMP/err"
}

# -- COMMAND: its exit status is perfscope's.
check_command_status() {
	local name=$1
	shift
	start "$name" "$@" -- sh -c 'exit 3'
	stop_within 30 "$PID"
	[ "$RC" = 3 ]
	verdict $? "$name:cmd3" "$name: -- sh -c 'exit 3': exit 3 (exit $RC)" "$TMP/err"
	start "$name" "$@" -- /nonexistent
	stop_within 30 "$PID"
	[ "$RC" = 127 ] && grep -q /nonexistent "$TMP/err"
	verdict $? "$name:cmd127" "$name: -- /nonexistent: exit 127 (exit $RC), naming it" "$TMP/err"
}

# -p PID: stops by itself, exit 0, when that process exits.
check_pid_exit() {
	local name=$1 target
	shift
	# not our child: a real -p target is reaped by its own parent, not left a zombie
	sh -c "sleep 30 >/dev/null 2>&1 & echo \$! >'$TMP/target'"
	target=$(cat "$TMP/target")
	track "$target"
	# -v's running line: every event is open (an open fd alone is not: memleak's uprobes on a
	# loaded machine were still being opened when the target was killed, ESRCH)
	start "$name" "$@" -v -p "$target"
	wait_until 30 says_running "$PID" ||
		diag "$name -p: no running line after $((30 * SCALE)) s; going on"
	kill "$target"
	wait_until 30 dead "$target" && forget "$target"
	stop_within 30 "$PID"
	[ "$RC" = 0 ]
	verdict $? "$name:p" "$name: -p PID: stops when the process exits, exit 0 (exit $RC)" "$TMP/err"
}

# An ATTR the profiler gives no meaning to: a usage error naming the ATTR and the profiler.
# run until it exits or prints (it took the ATTR), at most 10 s
check_attr() {
	local name=$1 attr=$2 want=$3 i good
	shift 3
	local args=("$@")
	for i in "${!args[@]}"; do
		if [ "${args[$i]}" = -e ] || [ "${args[$i]}" = --event ]; then
			args[i + 1]="sched:sched_switch//$attr/"
		fi
	done
	start "$name" "${args[@]}"
	wait_until 30 eval "dead $PID || nonempty $TMP/out"
	stop_within 0 "$PID" || RC="none: it took the ATTR and ran"
	good=1
	[ "$RC" = 2 ] && grep -qE "$want" "$TMP/err" && grep -q "$name" "$TMP/err" && good=0
	verdict $good "$name:attr:${attr%%=*}" "$name: -e 'sched:sched_switch//$attr/': usage error naming it (exit $RC)" "$TMP/err"
}

# ---------------------------------------------------------------- option checks (every profiler)

check_unknown_option() {
	local name=$1
	start "$name" --no-such-option
	stop_within 30 "$PID"
	[ "$RC" = 2 ] && grep -q -- --no-such-option "$TMP/err" && grep -q help "$TMP/err"
	verdict $? "$name:unknown-option" "$name --no-such-option: exit 2 (exit $RC) naming it, pointing to help" "$TMP/err"
}

# long options of --help (the option column of lines starting with '-') and of the man page's
# OPTIONS (.TP/.TQ headings); --help itself is implied
help_opts() {
	grep -E '^ +-' | sed -E 's/^ +//; s/   .*//' | grep -oE -- '--[a-zA-Z][a-zA-Z0-9.-]*' |
		sed -E 's/[.-]+$//' | grep -vx -- --help | sort -u
}
man_opts() {
	sed -n '/^\.SH OPTIONS/,/^\.SH [^O]/p' "$1" | grep -A1 -E '^\.T[PQ]' | grep -vE '^\.T[PQ]|^--$' |
		sed -E 's/\\-/-/g; s/\\f[BIRP]//g' | grep -oE -- '--[a-zA-Z][a-zA-Z0-9.-]*' |
		sed -E 's/[.-]+$//' | grep -vx -- --help | sort -u
}

check_help() {
	local name=$1 man missing extra
	start "$name" --help
	stop_within 30 "$PID"
	[ "$RC" = 0 ] && [ -s "$TMP/out" ]
	verdict $? "$name:help" "$name --help: exit 0 (exit $RC), usage on stdout" "$TMP/err"
	cp "$TMP/out" "$TMP/help"
	"$P" help "$name" >"$TMP/help2" 2>&1
	cmp -s "$TMP/help" "$TMP/help2"
	verdict $? "$name:help-same" "$name: 'perfscope help $name' prints what --help does"
	man=$SRC/docs/man/perfscope-$name.1
	[ -f "$man" ] || man=$SRC/docs/man/perfscope-$name.8
	if [ ! -f "$man" ]; then
		fail "$name: no man page docs/man/perfscope-$name.1 (or .8)"
		skip "$name: no man page to compare --help with"
		return
	fi
	help_opts <"$TMP/help" >"$TMP/h.opts"
	man_opts "$man" >"$TMP/m.opts"
	missing=$(comm -23 "$TMP/h.opts" "$TMP/m.opts" | paste -sd' ')
	extra=$(comm -13 "$TMP/h.opts" "$TMP/m.opts" | paste -sd' ')
	[ -z "$missing" ] && [ -s "$TMP/h.opts" ]
	verdict $? "$name:help-in-man" "$name: every long option of --help ($(grep -c . "$TMP/h.opts")) is in ${man##*/}${missing:+; missing: $missing}"
	[ -z "$extra" ]
	verdict $? "$name:man-in-help" "$name: every long option of ${man##*/} ($(grep -c . "$TMP/m.opts")) is in --help${extra:+; missing: $extra}"
}

# ---------------------------------------------------------------- the table

declare -A REPORT_STREAM
"$P" help --table >"$TMP/table" 2>"$TMP/err"
rc=$?
if [ $rc -ne 0 ] || [ ! -s "$TMP/table" ]; then
	fail "perfscope help --table: exit $rc, $(grep -c . "$TMP/table") rows"
	echo "1..$_tap_n"
	done_testing
fi
ok "perfscope help --table: $(grep -c . "$TMP/table") profilers"
[ ${#DFL[@]} -eq 0 ] && diag "env --default-signal is missing: profilers started in the background ignore SIGINT"

# CONFORMANCE_SHARD=I/N: the profilers of rows I, I+N, I+2N ... only (the suite split in N tests
# that run side by side: most of its time is waiting on profilers, not CPU); CONFORMANCE_PROFILERS
# (names, comma separated) narrows it to those
shard=${CONFORMANCE_SHARD:-0/1}
row=-1
while IFS=$'\t' read -r -u 3 name args; do
	row=$((row + 1))
	[ $((row % ${shard#*/})) -eq "${shard%/*}" ] || continue
	# CONFORMANCE_PROFILERS=a,b: those profilers only (a new one checked alone)
	[ -z "${CONFORMANCE_PROFILERS:-}" ] || [[ ",$CONFORMANCE_PROFILERS," == *",$name,"* ]] || continue
	started=$(now_ms)
	check_unknown_option "$name"
	check_help "$name"
	if [ -z "$args" ]; then
		diag "$name: no conformance_args in the table (not a streaming or counting session): option and help checks only"
		continue
	fi
	if ! need_root; then
		skip "$name: session checks need root (system-wide events)"
		continue
	fi
	read -r -a argv <<<"$args"
	event=
	for i in "${!argv[@]}"; do
		case ${argv[$i]} in -e | --event) event=${argv[i + 1]} ;; esac
	done
	event=${event%%/*} # reports name the event, not its filter and ATTRs
	diag "$name $args"
	if ! check_stop_signal "$name" INT "${event:-$name}" "${argv[@]}"; then
		skip "$name: the other session checks, since '$args' printed nothing"
		continue
	fi
	check_stop_signal "$name" TERM "${event:-$name}" "${argv[@]}"
	check_stop_command "$name" "${argv[@]}"
	check_usr1 "$name" "${event:-$name}" "${argv[@]}"
	check_head "$name" "${argv[@]}"
	check_full "$name" "${argv[@]}"
	check_stuck "$name" "${argv[@]}"
	# a profiler whose -o names a directory of files (trigger) writes its lines on stdout
	if "$P" "$name" --help 2>/dev/null | grep -qE '^ +-o, --[a-z-]+ DIR'; then
		skip "$name: -o is a directory of captures here, not the output file"
	else
		check_output_file "$name" "${argv[@]}"
	fi
	check_command_status "$name" "${argv[@]}"
	check_pid_exit "$name" "${argv[@]}"
	if [ -n "$event" ]; then
		check_attr "$name" nosuchattr=1 'nosuchattr' "${argv[@]}"
		check_attr "$name" key=nosuchfield "key|nosuchfield" "${argv[@]}"
		check_attr "$name" top-by=bogus "top-by|bogus" "${argv[@]}"
	else
		skip "$name: its arguments have no -e to put an unknown ATTR on"
	fi
	diag "$name: $(($(now_ms) - started)) ms"
done 3<"$TMP/table"

echo "1..$_tap_n"
done_testing
