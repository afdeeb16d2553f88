#!/bin/bash
# Frame names in every writer (issue 19): kernel frames "_[k]" in folded output and blue in
# perfscope flamegraph; unsymbolized user frames "[module+0xOFF]", the same in every process;
# no raw address, "0x0" or "<...>" frame; two processes of one binary both symbolized, also when
# they started before a system-wide profile and exit before its report; profile's user-only
# fallback for an unprivileged user when perf_event_paranoid forbids the kernel.
# shellcheck source=tests/cli/tap.sh
source "$(dirname "$0")/tap.sh"
P=${PERFSCOPE:?}
HERE=$(cd "$(dirname "$0")" && pwd)
CC=${CC:-cc}
CHECK=("python3" "$HERE/flame_check.py")

plan 26
if ! need_root; then
	skip_all "needs root (sampling, and setpriv to an unprivileged user)"
fi

TMP=$(mktemp -d)
chmod 755 "$TMP" # nobody runs the program in it (the fallback checks)
para=/proc/sys/kernel/perf_event_paranoid
old_para=$(cat $para)
declare -a BG_PIDS=()
cleanup() {
	local pid
	for pid in "${BG_PIDS[@]}"; do kill -9 "$pid" 2>/dev/null; done
	for pid in "${BG_PIDS[@]}"; do wait "$pid" 2>/dev/null; done
	echo "$old_para" >$para
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# frames_prog: frame pointers (-O0); frames_strip: the same without any symbol. Plain flags.
# shellcheck disable=SC2086
if ! $CC -O0 -fno-omit-frame-pointer -o "$TMP/frames_prog" "$HERE/frames_prog.c" 2>"$TMP/cc.err"; then
	sed 's/^/# /' "$TMP/cc.err"
	skip_all "cannot compile tests/cli/frames_prog.c"
fi
cp "$TMP/frames_prog" "$TMP/frames_strip" && strip -s "$TMP/frames_strip"
chmod 755 "$TMP/frames_prog" "$TMP/frames_strip"

# frames FILE: every frame of a folded file, one a line (the root and the count left out)
frames() { sed -E 's/ [0-9]+$//; s/^[^;]*;?//' "$1" | tr ';' '\n' | sed '/^$/d'; }
# no_bad_frames FILE: no frame (the root included) is a raw address, 0x0 or "<...>"
no_bad_frames() { ! sed -E 's/ [0-9]+$//' "$1" | tr ';' '\n' | grep -qE '^(0x[0-9a-f]+|<\.\.\.>)(_\[k\])?$'; }
# kernel_tail FILE: true when, in every line, the frames after the first "_[k]" one are all
# kernel frames (the kernel part is the leaf end of a stack, after its user part)
kernel_tail() {
	sed -E 's/ [0-9]+$//' "$1" | awk -F';' '{ k = 0; for (i = 1; i <= NF; i++) {
		if ($i ~ /_\[k\]$/) k = 1; else if (k) { print "user after kernel: " $0; bad = 1 } } }
		END { exit bad }'
}

# ---- 1-8: profile's folded output, and perfscope flamegraph drawing it ----
run_capture "$P" profile -F 999 --format folded -o "$TMP/a.folded" -- "$TMP/frames_prog" 1500
check "profile --format folded -- frames_prog: exit 0, a folded file (exit $RC)" \
	sh -c "[ $RC -eq 0 ] && [ -s '$TMP/a.folded' ]"
check "kernel frames marked _[k]: the system call path under main" \
	grep -qE '^frames_prog;(.*;)?main;(.*;)?do_syscall_64_\[k\](;| )' "$TMP/a.folded"
check "user frames unmarked: main, hot_user" \
	sh -c "grep -qE ';main;hot_user [0-9]+\$' '$TMP/a.folded' && ! grep -qE '(main|hot_user)_\[k\]' '$TMP/a.folded'"
check "in every stack the kernel frames are its leaf end" kernel_tail "$TMP/a.folded"
check "no frame is a raw address, 0x0 or <...>" no_bad_frames "$TMP/a.folded"
run_capture "$P" flamegraph "$TMP/a.folded" -o "$TMP/a.svg"
"${CHECK[@]}" frames "$TMP/a.svg" >"$TMP/a.frames" 2>/dev/null
check "flamegraph: the kernel frames named without _[k] (exit $RC)" \
	sh -c "[ $RC -eq 0 ] && grep -q '^do_syscall_64	' '$TMP/a.frames' && ! grep -q '_\[k\]' '$TMP/a.frames'"
check "flamegraph: kernel frames blue, user frames warm" awk -F'\t' '
	{ split(substr($6, 5), c, /[,)]/) }
	$1 == "do_syscall_64" { k = 1; if (!(c[3] > c[1])) bad = 1 }
	$1 == "hot_user" { u = 1; if (!(c[1] > c[3])) bad = 1 }
	END { exit bad || !k || !u }' "$TMP/a.frames"
run_capture "$P" profile -F 999 --format json -- "$TMP/frames_prog" 300
check "JSON frames have the same names (do_syscall_64, hot_user)" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
names = {f["name"] for s in d["stacks"] for f in s["frames"]}
assert "hot_user" in names and "do_syscall_64" in names, sorted(names)[:20]
assert not any(n.startswith("0x") for n in names), [n for n in names if n.startswith("0x")]' "$OUT"

# ---- 9-14: a binary without symbols: [module+0xOFF] frames, the same in two processes ----
run_capture "$P" profile -F 999 --per-pid --format folded -o "$TMP/s.folded" -- \
	sh -c "'$TMP/frames_strip' 1500 & '$TMP/frames_strip' 1500; wait"
check "stripped, two processes: exit 0 (exit $RC)" [ "$RC" -eq 0 ]
check "stripped: user frames as [frames_strip+0xOFF]" grep -qE ';\[frames_strip\+0x[0-9a-f]+\]' "$TMP/s.folded"
check "stripped: no frame is a raw address, 0x0 or <...>" no_bad_frames "$TMP/s.folded"
# the two processes' frames under their roots (comm-PID): the same names, ASLR or not
pids=$(grep -oE '^[^;]*-[0-9]+;' "$TMP/s.folded" | grep -oE '[0-9]+;$' | tr -d ';' | sort -u)
np=$(echo "$pids" | grep -c .)
same=$(for pid in $pids; do grep -E "^[^;]*-$pid;" "$TMP/s.folded" | frames /dev/stdin |
	grep -E '^\[frames_strip\+0x' | sort -u; done | sort | uniq -d | grep -c .)
check "stripped: both processes sampled ($np pids) with the same [frames_strip+0xOFF] frames ($same shared)" \
	sh -c "[ '$np' -ge 2 ] && [ '$same' -ge 2 ]"
# The child's exec and mmaps (its CPU's ring) were read before its FORK (the parent's) in some
# runs, and the FORK gave it the shell's maps: raw addresses. Short runs, several of them.
races=""
for r in 1 2 3 4 5; do
	"$P" profile -F 999 --per-pid --format folded -o "$TMP/r$r.folded" -- \
		sh -c "'$TMP/frames_prog' 400 & '$TMP/frames_prog' 400; wait" 2>/dev/null
	n=$(grep -E ';main;hot_user [0-9]+$' "$TMP/r$r.folded" | grep -oE '^[^;]*-[0-9]+;' | grep -oE '[0-9]+;$' | sort -u | grep -c .)
	{ [ "$n" -eq 2 ] && no_bad_frames "$TMP/r$r.folded"; } || races="$races run $r: $n symbolized;"
done
check "5 runs of two processes of one binary: both symbolized in each${races:+ ($races)}" test -z "$races"
run_capture "$P" profile -F 999 --format pprof -o "$TMP/s.pb.gz" -- "$TMP/frames_strip" 500
check "pprof: functions named as in folded ([frames_strip+0xOFF], kernel names) (exit $RC)" \
	sh -c "[ $RC -eq 0 ] && gzip -dc '$TMP/s.pb.gz' | grep -aqE '\[frames_strip\+0x[0-9a-f]+\]' &&
		gzip -dc '$TMP/s.pb.gz' | grep -aq do_syscall_64"
if "$P" trace -e syscalls:sys_enter_getppid --duration 0.01 >/dev/null 2>&1; then
	run_capture "$P" trace -e syscalls:sys_enter_getppid -g --flame-graph "$TMP/tr" -- "$TMP/frames_strip" 300
	tr_ok() { [ "$RC" -eq 0 ] && grep -qE ';\[frames_strip\+0x[0-9a-f]+\](;| )' "$TMP/tr.folded" &&
		no_bad_frames "$TMP/tr.folded"; }
	check "trace --flame-graph: user frames [frames_strip+0xOFF], none raw (exit $RC)" tr_ok
	run_capture "$P" trace -e syscalls:sys_enter_getppid -g -N 5 -- "$TMP/frames_strip" 300
	check "trace's stack text: [frames_strip+0xOFF] (frames_strip), no 0x0 frame (exit $RC)" \
		sh -c "[ $RC -eq 0 ] && grep -qE '^	 +[0-9a-f]+ \[frames_strip\+0x[0-9a-f]+\] \(frames_strip\)\$' '$OUT' &&
			! grep -qE '^	 +0 ' '$OUT'"
else
	skip "no syscalls:sys_enter_getppid tracepoint on this kernel"
	skip "no syscalls:sys_enter_getppid tracepoint on this kernel"
fi

# ---- 15-18: two processes of one binary that started before a system-wide profile and exit
# before its report: both symbolized (their maps read while they ran, not at the report) ----
STOP=$TMP/stop
"$TMP/frames_prog" 60000 "$STOP" &
w1=$!
"$TMP/frames_prog" 60000 "$STOP" &
w2=$!
BG_PIDS+=("$w1" "$w2")
"$P" profile -v -a -F 999 --per-pid --format folded -o "$TMP/w.folded" 2>"$TMP/w.err" &
pp=$!
BG_PIDS+=("$pp")
for ((i = 0; i < 1200; i++)); do
	grep -q '^perfscope profile: running (' "$TMP/w.err" && break
	_alive "$pp" || break
	sleep 0.05
done
check "profile -a: running" grep -q '^perfscope profile: running (' "$TMP/w.err"
sleep 1 # the two processes are sampled for a second, then exit before the report
touch "$STOP"
wait "$w1" "$w2"
kill -INT "$pp" 2>/dev/null
for ((i = 0; i < 600; i++)); do _alive "$pp" || break; sleep 0.05; done
wait "$pp"
rc=$?
check "profile -a: exit 0 on SIGINT (exit $rc)" [ "$rc" -eq 0 ]
for w in "$w1" "$w2"; do
	check "pid $w (exited before the report): its stacks symbolized (main;hot_user)" \
		grep -qE "^frames_prog-$w;(.*;)?main;hot_user [0-9]+\$" "$TMP/w.folded"
done

# ---- 19-24: an unprivileged user, perf_event_paranoid 2: user space sampled, said once ----
if id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null &&
	setpriv --reuid=nobody --regid=nogroup --clear-groups test -x "$P" &&
	setpriv --reuid=nobody --regid=nogroup --clear-groups test -x "$TMP/frames_prog"; then
	echo 2 >$para
	as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
	run_capture as_nobody "$P" profile -F 999 --format folded -- "$TMP/frames_prog" 800
	check "paranoid 2, not root, own command: profiled (exit $RC)" \
		sh -c "[ $RC -eq 0 ] && grep -qE '^frames_prog;(.*;)?main;hot_user [0-9]+\$' '$OUT'"
	check "... user space only: no kernel frame" sh -c "! grep -q '_\[k\]' '$OUT'"
	check "... the fallback said once on stderr" \
		test "$(grep -c 'sampling user space only' "$ERR")" -eq 1
	run_capture as_nobody "$P" profile -F 999 -- "$TMP/frames_prog" 300
	check "... the text header says it (exit $RC)" grep -q 'user space only' "$OUT"
	run_capture as_nobody "$P" profile -F 999 --format json -- "$TMP/frames_prog" 300
	check "... JSON says user_only (exit $RC)" \
		python3 -c 'import json, sys; assert json.load(open(sys.argv[1]))["user_only"] is True' "$OUT"
	run_capture as_nobody "$P" profile -a -F 99 --duration 0.2
	check "... -a (whole CPUs) still refused, naming perf_event_paranoid (exit $RC)" \
		sh -c "[ $RC -eq 1 ] && grep -q 'perf_event_paranoid' '$ERR' && ! grep -q 'sampling user space only' '$ERR'"
	echo "$old_para" >$para
else
	for i in 1 2 3 4 5 6; do skip "needs user nobody, setpriv, and $P executable by nobody"; done
fi
done_testing
