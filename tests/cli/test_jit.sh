#!/usr/bin/env bash
# JIT symbols from /tmp/perf-PID.map wherever stacks are symbolized: a program runs code it
# copied into anonymous executable memory and names it in its perf map, inside a container (its
# own pid and mount namespaces, a private /tmp: the map is found only through /proc/PID/root
# under its pid there). The exporter's endpoint names jit_alpha; after the program appends
# jit_beta to its map (the map grew), the next profile names both at their 3:1 shares; and
# `perfscope profile -p` names them too. The same from a jitdump (jit-PID.dump, mapped executable
# by the program, as perf's jitdump protocol has it) in place of the perf map.
# shellcheck source=tests/cli/exporter_lib.sh
source "$(dirname "$0")/exporter_lib.sh"
exporter_setup 7 "system-wide CPU sampling, namespaces"
RAW=(python3 "$(dirname "$0")/pprof_raw.py")
if [ "$(uname -m)" != x86_64 ]; then skip_all "the JIT program's code is x86-64"; fi
if ! command -v go >/dev/null; then skip_all "needs go (golang-go) for go tool pprof"; fi
if ! unshare --fork --pid --mount --mount-proc true 2>/dev/null; then
	skip_all "cannot make pid and mount namespaces here (unshare)"
fi
export PPROF_TMPDIR=$TMP/pprof HOME=$TMP
PROG=$TMP/jit_prog
# shellcheck disable=SC2086  # CC may be a command with arguments
${CC:-cc} -O1 -g -fno-omit-frame-pointer -o "$PROG" "$(dirname "$0")/jit_prog.c"

# check RAWFILE PID WHAT ALPHA: jit_alpha at ALPHA of the samples and jit_beta at the rest,
# within 4 standard deviations of a binomial draw of that many (+3%, 10% at least)
check() {
	local s total a b
	s=$("${RAW[@]}" shares "$1" "$2" jit_alpha jit_beta)
	read -r total a b <<<"$s"
	if [ "${total:-0}" -ge 10 ] && awk -v a="$a" -v b="$b" -v n="$total" -v e="$4" 'BEGIN {
		d = 4 * sqrt(e * (1 - e) / n) + 0.03
		if (d < 0.1) d = 0.1 # its start may be in the first second
		exit !(a >= e - d && a <= e + d && b >= 1 - e - d && b <= 1 - e + d && a + b > 0.9) }'; then
		ok "$3: jit_alpha $a, jit_beta $b of $total samples"
	else
		fail "$3: samples, jit_alpha, jit_beta: '$s'"
		grep -E 'anon|jit' "$1" | head -3 | sed 's/^/#   /'
	fi
}

start_exporter jit --collector.profile || fail "exporter did not start"
EXP_PID=$PID
# the binary is opened before the private /tmp hides it, and run from its fd
unshare --fork --pid --mount --mount-proc sh -c 'exec 3<"$0"; mount -t tmpfs none /tmp && exec /proc/self/fd/3 40' "$PROG" >"$TMP/jit.out" &
U=$!
for _ in $(seq 100); do grep -q '^phase1' "$TMP/jit.out" && break; sleep 0.1; done
J=$(pgrep -P "$U")
# unshare ends when its child does: that one is stopped at the end
if [ -n "$J" ]; then PIDS+=("$J"); else PIDS+=("$U"); fi
NSPID=$(awk '/^phase1/ { print $2 }' "$TMP/jit.out")
if [ -n "$J" ] && [ -e "/proc/$J/root/tmp/perf-$NSPID.map" ] && [ ! -e "/tmp/perf-$NSPID.map" ] && [ "$J" != "$NSPID" ]; then
	ok "the program (pid $J, $NSPID in its namespace) wrote /tmp/perf-$NSPID.map in its own /tmp"
else
	fail "program pid '$J', its pid '$NSPID', map: $(ls "/proc/$J/root/tmp/" 2>&1)"
fi

go tool pprof -raw "$URL/debug/pprof/profile?seconds=3" >"$TMP/p1.raw" 2>"$TMP/p1.err"
check "$TMP/p1.raw" "$J" "the container's map, through /proc/PID/root" 1
kill -USR1 "$J"
for _ in $(seq 100); do grep -q '^phase2' "$TMP/jit.out" && break; sleep 0.1; done
# a second's turn after the line was appended: the next profile's window starts after it
sleep 1
go tool pprof -raw "$URL/debug/pprof/profile?seconds=3" >"$TMP/p2.raw" 2>"$TMP/p2.err"
check "$TMP/p2.raw" "$J" "the map grew: jit_beta read from the appended line" 0.75

# ---- the same from a jitdump
"$PROG" 40 dump >"$TMP/dump.out" &
D=$!
PIDS+=("$D")
for _ in $(seq 100); do grep -q '^phase1' "$TMP/dump.out" && break; sleep 0.1; done
go tool pprof -raw "$URL/debug/pprof/profile?seconds=3" >"$TMP/d1.raw" 2>"$TMP/d1.err"
check "$TMP/d1.raw" "$D" "jit-$D.dump, found by its executable mapping" 1
kill -USR1 "$D"
for _ in $(seq 100); do grep -q '^phase2' "$TMP/dump.out" && break; sleep 0.1; done
sleep 1
go tool pprof -raw "$URL/debug/pprof/profile?seconds=3" >"$TMP/d2.raw" 2>"$TMP/d2.err"
check "$TMP/d2.raw" "$D" "the jitdump grew: jit_beta's JIT_CODE_LOAD read" 0.75
kill "$D" 2>/dev/null
wait "$D" 2>/dev/null
rm -f "/tmp/jit-$D.dump"
stop "$EXP_PID"

# ---- perfscope profile names them as well
run_capture "$P" profile -F 199 -p "$J" --duration 3 --format folded
a=$(grep -c 'jit_alpha' "$OUT")
b=$(grep -c 'jit_beta' "$OUT")
if [ "$RC" -eq 0 ] && [ "$a" -ge 1 ] && [ "$b" -ge 1 ]; then ok "perfscope profile -p: jit_alpha and jit_beta in its folded stacks"; else
	fail "profile: rc $RC, stacks with jit_alpha $a, jit_beta $b; $(head -c 300 "$OUT") $(tail -2 "$ERR")"; fi
unnamed=$(grep -c 'anon' "$OUT")
if [ "$unnamed" -eq 0 ]; then ok "no JIT frame left unnamed"; else fail "$unnamed stacks with an unnamed anonymous frame"; fi
kill "$J" 2>/dev/null
wait "$U" 2>/dev/null
