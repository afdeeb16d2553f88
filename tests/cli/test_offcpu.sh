#!/bin/bash
# perfscope offcpu on a program that blocks 200, 300 and 400 ms per cycle in block_a, block_b and
# block_c and spins 100 ms: each function's off-CPU time against what the program measured itself,
# the shares, user stacks, every format, --waker, --wall, -p, bad input.
# shellcheck source=tests/cli/tap.sh
source "$(dirname "$0")/tap.sh"
P=${PERFSCOPE:?}
SRC=${SOURCE_ROOT:?}/tests/cli/offcpu_prog.c
CC=${CC:-cc}

plan 24
if ! need_root; then
	skip_all "needs root (system-wide sched_switch)"
fi
TMP=$(mktemp -d)
BG=
cleanup() {
	[ -n "$BG" ] && kill -9 "$BG" 2>/dev/null && wait "$BG" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
# shellcheck disable=SC2086
if ! $CC -O1 -fno-omit-frame-pointer -o "$TMP/ocprog" "$SRC" 2>"$TMP/cc.err"; then
	sed 's/^/# /' "$TMP/cc.err"
	skip_all "cannot compile tests/cli/offcpu_prog.c"
fi

# truth FUNC FILE: what the program measured (ns)
truth() { awk -v f="$1" '$1 == f { print $2 }' "$2"; }
# folded_ns FUNC FILE: the time of the folded stacks through FUNC
folded_ns() { awk -v f=";$1;" 'index($0, f) { t += $NF } END { print t + 0 }' "$2"; }
# within A B PCT: |A - B| <= PCT% of B
within() { awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= b * p / 100) }'; }

# ---- folded: each function's off-CPU time within 2% of the program's own measure ----
run_capture nice -n -5 "$P" offcpu --format folded -o "$TMP/off.folded" --flame-graph "$TMP/fg" -- \
	"$TMP/ocprog" 2 "$TMP/truth"
if [ "$RC" -eq 0 ] && [ -s "$TMP/off.folded" ] && [ -s "$TMP/truth" ]; then
	ok "offcpu -o off.folded -- ocprog: exit 0, a profile and the program's truth"
else
	fail "offcpu -o off.folded: exit $RC"
	sed 's/^/#   /' "$ERR" | head -5
fi
for f in block_a block_b block_c; do
	got=$(folded_ns "$f" "$TMP/off.folded")
	want=$(truth "$f" "$TMP/truth")
	if within "$got" "$want" 2; then
		ok "folded: $f off-CPU $got ns, the program measured $want ns (within 2%)"
	else
		fail "folded: $f off-CPU $got ns, the program measured $want ns (not within 2%)"
	fi
done
a=$(folded_ns block_a "$TMP/off.folded")
b=$(folded_ns block_b "$TMP/off.folded")
c=$(folded_ns block_c "$TMP/off.folded")
# the shares of the blocked time: the program's (about 2:3:4; a loaded machine wakes it late)
ta=$(truth block_a "$TMP/truth")
tb=$(truth block_b "$TMP/truth")
tc=$(truth block_c "$TMP/truth")
if awk -v a="$a" -v b="$b" -v c="$c" -v x="$ta" -v y="$tb" -v z="$tc" 'BEGIN { t = a + b + c;
	u = x + y + z; exit !(t > 0 && u > 0 && (a / t - x / u)^2 < (0.02 * x / u)^2 &&
	(b / t - y / u)^2 < (0.02 * y / u)^2 && (c / t - z / u)^2 < (0.02 * z / u)^2) }'; then
	ok "folded: block_a:block_b:block_c's shares of the blocked time each within 2% of the program's ($ta:$tb:$tc)"
else
	fail "folded: shares $a:$b:$c, not within 2% of the program's $ta:$tb:$tc"
fi
if grep -qE '^ocprog;(.*;)?main;block_a;nap;(.*;)?\[off-cpu S\] [0-9]+$' "$TMP/off.folded"; then
	ok "folded: 'ocprog;...;main;block_a;nap;...kernel...;[off-cpu S] NS' lines, root first"
else
	fail "folded: no 'ocprog;...;main;block_a;nap;...;[off-cpu S]' line"
	head -3 "$TMP/off.folded" | cut -c1-300 | sed 's/^/#   /'
fi
if cmp -s "$TMP/off.folded" "$TMP/fg.folded"; then
	ok "--flame-graph fg: fg.folded holds the same stacks as -o"
else
	fail "--flame-graph fg: fg.folded differs from -o's profile or is missing"
fi

# ---- JSON: states, user stacks, losses ----
run_capture "$P" offcpu --format json -- "$TMP/ocprog" 2 "$TMP/truth2"
if [ "$RC" -eq 0 ] && python3 - "$OUT" "$TMP/truth2" >"$TMP/json.txt" 2>&1 <<'EOF'; then
import json, sys
d = json.loads(open(sys.argv[1]).readline())
truth = dict(l.split() for l in open(sys.argv[2]))
S = [s for s in d["states"] if s["state"] == "S"][0]
blocked = sum(int(truth[f]) for f in ("block_a", "block_b", "block_c"))
assert S["count"] >= 6, S
assert abs(S["total_ns"] - blocked) <= 0.02 * blocked, (S, blocked)
assert d["user_stack_ns"] >= 0.95 * d["total_ns"], (d["user_stack_ns"], d["total_ns"])
funcs = {f["name"]: f["total_ns"] for f in d["functions"]}
for f in ("block_a", "block_b", "block_c"):
    assert abs(funcs[f] - int(truth[f])) <= 0.02 * int(truth[f]), (f, funcs[f], truth[f])
for k in ("ring_lost", "no_start", "replaced", "lost", "truncated", "kernel_dropped"):
    assert k in d["lost"], k
st = [s for s in d["stacks"] if any(fr.get("name") == "block_c" for fr in s["frames"])]
assert st and st[0]["state"] == "S", st[:1]
print("S %d switches %d ns of %d blocked; %.1f%% with a user stack" % (
    S["count"], S["total_ns"], blocked, 100.0 * d["user_stack_ns"] / d["total_ns"]))
EOF
	ok "json: S state's time within 2% of the blocked time, >= 95% with a user stack, functions, losses named ($(cat "$TMP/json.txt"))"
else
	fail "json: exit $RC"
	sed 's/^/#   /' "$TMP/json.txt" | tail -3
fi

# ---- text ----
run_capture "$P" offcpu -- "$TMP/ocprog" 1
if [ "$RC" -eq 0 ] && grep -q "^S " "$OUT" && grep -qE ' block_c$' "$OUT" && grep -q '^lost: ' "$OUT"; then
	ok "text: the S row, block_c's line, the lost line"
else
	fail "text: exit $RC, no S row, block_c or lost line"
	sed 's/^/#   /' "$ERR" | head -5
fi

# ---- SVG and pprof ----
run_capture "$P" offcpu -o "$TMP/off.svg" -- "$TMP/ocprog" 1
check "svg: an SVG flame graph with block_c and the state frame" \
	grep -q 'block_c.*off-cpu S\|off-cpu S.*block_c' <(tr -d '\n' <"$TMP/off.svg")
check "svg: ends with </svg>" grep -q '</svg>' "$TMP/off.svg"
run_capture "$P" offcpu -o "$TMP/off.pb.gz" -- "$TMP/ocprog" 1
if [ "$RC" -eq 0 ] && gzip -t "$TMP/off.pb.gz" && zcat "$TMP/off.pb.gz" | grep -qa 'off-cpu' &&
	zcat "$TMP/off.pb.gz" | grep -qa 'block_b'; then
	ok "pprof: gzipped profile.proto with the off-cpu nanoseconds type and block_b"
else
	fail "pprof: exit $RC or not a gzipped profile with off-cpu and block_b"
fi

# ---- --waker: the waker's stack above each sleep ----
# a nap's wakeup is a timer's interrupt on any CPU: a VM kernel may drop it silently on an idle one
run_capture "$P" offcpu --waker --format folded -- "$TMP/ocprog" 2
if [ "$RC" -eq 0 ] && grep -qE ';block_[abc];nap;(.*;)?\[off-cpu S\];--;.*try_to_wake_up_\[k\]' "$OUT"; then
	ok "--waker: '...;block_X;nap;...;[off-cpu S];--;...try_to_wake_up...' (bcc offwaketime's layout)"
elif [ "$RC" -eq 0 ] && grep -q 'sleeps without their wakeup seen' "$ERR" &&
	grep -q 'sched_wakeup: the kernel counted .* never reached the ring' "$ERR"; then
	skip "--waker: this kernel dropped the naps' wakeups silently (said, and counted as no_wakeup)"
else
	fail "--waker: no '[off-cpu S];--;...try_to_wake_up' line (exit $RC)"
	grep block_a "$OUT" | head -2 | cut -c1-300 | sed 's/^/#   /'
fi

# ---- --wall: on-CPU samples at the same weight ----
run_capture "$P" offcpu --wall -F 999 --format json -- "$TMP/ocprog" 2 "$TMP/truth3"
if [ "$RC" -eq 0 ] && python3 - "$OUT" "$TMP/truth3" >"$TMP/wall.txt" 2>&1 <<'EOF'; then
import json, sys
d = json.loads(open(sys.argv[1]).readline())
truth = dict(l.split() for l in open(sys.argv[2]))
on = [s for s in d["states"] if s["state"] == "on-CPU"][0]
wall = int(truth["wall"])
# on-CPU time is sampled (1 ms of cpu-clock), off-CPU time measured: on a loaded machine the
# samples of a task preempted often are an estimate (seen 5% short of the whole): 20% and 10%
assert abs(on["total_ns"] - int(truth["spin"])) <= 0.2 * int(truth["spin"]) + 5e6, (d["states"], truth)
# and measured, switch-in to switch-out: the spin's CPU time, and a little more
assert abs(d["oncpu_measured_ns"] - int(truth["spin"])) <= 0.05 * int(truth["spin"]) + 5e6, (d["oncpu_measured_ns"], truth)
# running + off-CPU: the program's whole wall time
assert abs(d["total_ns"] - wall) <= 0.1 * wall, (d["total_ns"], wall, d["states"])
print("on-CPU %d ns sampled, %d measured (spun %s), total %d ns of %d" % (on["total_ns"],
      d["oncpu_measured_ns"], truth["spin"], d["total_ns"], wall))
EOF
	ok "--wall: on-CPU time within 20% of the spin's CPU time sampled, 5% measured, total within 10% of the wall time ($(cat "$TMP/wall.txt"))"
else
	fail "--wall: exit $RC"
	sed 's/^/#   /' "$TMP/wall.txt" | tail -3
fi

# ---- -p: a process already running ----
"$TMP/ocprog" 3 >/dev/null 2>&1 &
BG=$!
run_capture "$P" offcpu -p "$BG" --format folded --duration 1.5
kill "$BG" 2>/dev/null
wait "$BG" 2>/dev/null
BG=
if [ "$RC" -eq 0 ] && grep -q ';block_' "$OUT" && ! grep -qv '^ocprog;' "$OUT"; then
	ok "-p PID: only that process's stacks, its block_* functions among them"
else
	fail "-p PID: exit $RC, or other processes' stacks"
	grep -v '^ocprog;' "$OUT" | head -2 | cut -c1-200 | sed 's/^/#   /'
fi
# ---- --state, --than ----
run_capture "$P" offcpu --state R+ --format folded -- "$TMP/ocprog" 1
check "--state R+: no sleep left ([off-cpu S])" test "$RC" -eq 0 -a -n "$(cat "$TMP/truth" 2>/dev/null)" -a \
	"$(grep -c 'off-cpu S' "$OUT")" -eq 0
run_capture "$P" offcpu --than 250ms --format folded -- "$TMP/ocprog" 1
if [ "$RC" -eq 0 ] && ! grep -q ';block_a;' "$OUT" && grep -q ';block_c;' "$OUT"; then
	ok "--than 250ms: block_a's 200 ms naps left out, block_c's 400 ms kept"
else
	fail "--than 250ms: exit $RC, or block_a kept / block_c missing"
fi

# ---- -i: a profile per interval, each in its own file ----
run_capture "$P" offcpu -i 400 -o "$TMP/slice.folded" -- "$TMP/ocprog" 1
n=$(find "$TMP" -name 'slice.0*.folded' | wc -l)
tot=$(cat "$TMP"/slice.0*.folded 2>/dev/null | awk -F';' 'index($0, ";block_c;") { n = split($0, a, " "); t += a[n] } END { print t + 0 }')
if [ "$RC" -eq 0 ] && [ "$n" -ge 2 ] && [ ! -e "$TMP/slice.folded" ] && within "$tot" 400000000 5; then
	ok "-i 400: $n files slice.0001.folded ..., block_c's 400 ms nap split across them ($tot ns)"
elif [ "$RC" -eq 0 ] && grep -q '^perfscope offcpu: lost: ' "$ERR"; then
	skip "-i 400: events lost on this loaded machine, said: $(grep '^perfscope offcpu: lost: ' "$ERR")"
else
	fail "-i 400: exit $RC, $n slice files, block_c $tot ns over them"
	for f in "$TMP"/slice.0*.folded; do
		diag "$(basename "$f"): block_c $(folded_ns block_c "$f") ns"
	done
	sed 's/^/#   /' "$ERR" | head -5
fi

# ---- stacks cut short: a build without frame pointers, then DWARF ----
# shellcheck disable=SC2086
if $CC -O2 -fomit-frame-pointer -o "$TMP/ocprog_nofp" "$SRC" 2>/dev/null; then
	run_capture "$P" offcpu --format folded -- "$TMP/ocprog_nofp" 1
	cut=$(sed -n 's/.*: [0-9]* stacks (\([0-9.]*\) s) have a user stack that stops before main.*/\1/p' "$ERR")
	if [ "$RC" -eq 0 ] && awk -v c="${cut:-0}" 'BEGIN { exit !(c >= 0.8) }'; then
		ok "no frame pointers: ${cut} s of blocked time counted as cut short, said with the advice"
	else
		fail "no frame pointers: exit $RC, '${cut:-nothing}' s said cut short (wanted >= 0.8 s)"
	fi
	# -t: the kernel samples that thread's switches alone (8 KiB of stack copied with each)
	"$TMP/ocprog_nofp" 3 >/dev/null 2>&1 &
	BG=$!
	run_capture "$P" offcpu -t "$BG" --call-graph dwarf --format folded --duration 1.5
	kill "$BG" 2>/dev/null
	wait "$BG" 2>/dev/null
	BG=
	check "--call-graph dwarf -t TID: the same build's stacks reach main;block_X;nap" \
		grep -qE '(^|;)main;block_[abc];nap;' "$OUT"
else
	skip "cannot build ocprog without frame pointers"
	skip "cannot build ocprog without frame pointers"
fi

# ---- bad input ----
expect_rc "--format bogus: a usage error" 2 "$P" offcpu --format bogus -- true
expect_rc "--state Q: a usage error" 2 "$P" offcpu --state Q -- true
expect_rc "-F without --wall: a usage error" 2 "$P" offcpu -F 99 -- true
expect_rc "-o in a missing folder: a runtime error, said before running" 1 \
	"$P" offcpu -o "$TMP/none/x.svg" -- true
done_testing
