#!/bin/bash
# perfscope profile on a program whose CPU time is split 3:1 between work_a and work_b: shares,
# formats, -i slices, truncated stacks without frame pointers, bad input, perf-prof's lines.
# shellcheck source=tests/cli/tap.sh
source "$(dirname "$0")/tap.sh"
P=${PERFSCOPE:?}
SRC=${SOURCE_ROOT:?}/tests/cli/split31.c
CC=${CC:-cc}
WIN=0.6 # seconds a perf-prof line runs once running (run_window), before its SIGINT

plan 48
if ! need_root; then
	skip_all "needs root (system-wide sampling)"
fi

TMP=$(mktemp -d)
declare -a BG_PIDS=()
cleanup() {
	local pid
	for pid in "${BG_PIDS[@]}"; do kill -9 "$pid" 2>/dev/null; done
	for pid in "${BG_PIDS[@]}"; do wait "$pid" 2>/dev/null; done
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# split31: frame pointers everywhere (-O0: gcc drops leaves' frames above it); split31_omit: the
# usual -O2 -fomit-frame-pointer; split31_strip: no symbols at all. Plain flags: no sanitizer.
# shellcheck disable=SC2086
if ! $CC -O0 -fno-omit-frame-pointer -o "$TMP/split31" "$SRC" 2>"$TMP/cc.err" ||
	! $CC -O2 -fomit-frame-pointer -o "$TMP/split31_omit" "$SRC" 2>>"$TMP/cc.err"; then
	sed 's/^/# /' "$TMP/cc.err"
	skip_all "cannot compile tests/cli/split31.c"
fi
cp "$TMP/split31" "$TMP/split31_strip" && strip -s "$TMP/split31_strip"
ROUNDS=2s # of CPU time (split31 counts its own): 999 Hz gives some 2,000 samples

# share LEAF FILE: percent of the samples of work_a + work_b whose leaf is LEAF (folded input)
share() {
	awk -v leaf="$1" '{ n = $NF; split($0, f, " "); k = $0; sub(/ [0-9]+$/, "", k);
		c = split(k, fr, ";"); if (fr[c] == "work_a" || fr[c] == "work_b") { t += n;
		if (fr[c] == leaf) s += n } } END { if (t) printf "%.1f\n", 100 * s / t; else print -1 }' "$2"
}
near() { awk -v v="$1" -v want="$2" -v tol="$3" 'BEGIN { d = v - want; exit !(d <= tol && -d <= tol) }'; }

# ---- folded: 75/25, or the split split31 measured it had (a loaded machine may move it) ----
SPLIT31_SHARE=$TMP/share run_capture "$P" profile -F 999 --format folded -o "$TMP/a.folded" -- \
	"$TMP/split31" $ROUNDS
a=$(share work_a "$TMP/a.folded")
b=$(share work_b "$TMP/a.folded")
ran=$(cat "$TMP/share" 2>/dev/null || echo 75)
if [ "$RC" -eq 0 ] && near "$a" "$ran" 5 && near "$b" "$(awk -v r="$ran" 'BEGIN { print 100 - r }')" 5; then
	ok "folded: work_a $a%, work_b $b% of their samples (work_a ran $ran% of the time, within 5 points)"
else
	fail "folded: work_a $a%, work_b $b% (exit $RC), wanted work_a's $ran% of the CPU time"
	sed 's/^/#   /' "$ERR" | head -5
fi
if grep -qE '^split31;(.*;)?main;work_a [0-9]+$' "$TMP/a.folded" &&
	! grep -vqE '^[^ ;]+(;[^;]+)* [0-9]+$' "$TMP/a.folded"; then
	ok "folded: 'comm;...;main;work_a COUNT' lines, root first, every line well formed"
else
	fail "folded: no 'split31;...;main;work_a N' line or a malformed line"
	head -3 "$TMP/a.folded" | sed 's/^/#   /'
fi
check "folded: stdout empty with -o" test ! -s "$OUT"
# a sample or two may fall in the dynamic loader or in perfscope's child before exec, built
# without frame pointers: at most 1% of them
ns=$(awk '{ t += $NF } END { print t + 0 }' "$TMP/a.folded")
nt=$(sed -n 's/.*: \([0-9]*\) samples have a user stack that stops before main.*/\1/p' "$ERR")
if [ "${nt:-0}" -le $((ns / 100)) ]; then
	ok "frame-pointer build: ${nt:-0} of $ns samples counted as truncated (at most 1%)"
else
	fail "frame-pointer build: $nt of $ns samples counted as truncated"
fi
# perf record on the same program, when it is here: its shares beside ours
if command -v perf >/dev/null &&
	perf record -q -F 999 -g -o "$TMP/perf.data" -- "$TMP/split31" $ROUNDS >/dev/null 2>&1; then
	perf report -i "$TMP/perf.data" --stdio --no-children --sort sym 2>/dev/null |
		awk '/work_[ab]/ { print "# perf record: " $0 }'
	ok "perf record -F 999 -g ran on the same program (its shares above, for comparison)"
else
	skip "perf record not usable here"
fi

# ---- text ----
# work_a's self share of the two functions' samples, against the split split31 measured it ran
# (a loaded machine moves the 75/25, and adds samples elsewhere: seen 67.9% of all samples once)
SPLIT31_SHARE=$TMP/share_text run_capture "$P" profile -F 999 --top 0 -- "$TMP/split31" $ROUNDS
wa=$(awk '$3 == "work_a" { sub(/%/, "", $2); print $2 }' "$OUT")
wb=$(awk '$3 == "work_b" { sub(/%/, "", $2); print $2 }' "$OUT")
ran=$(cat "$TMP/share_text" 2>/dev/null || echo 75)
wab=$(awk -v a="${wa:-0}" -v b="${wb:-0}" 'BEGIN { if (a + b > 0) printf "%.2f", 100 * a / (a + b) }')
if [ "$RC" -eq 0 ] && [ -n "$wab" ] && near "$wab" "$ran" 6; then
	ok "text: work_a self $wa%, work_b $wb%: $wab% of the two (work_a ran $ran% of the time)"
else
	fail "text: work_a self '$wa', work_b '$wb' (exit $RC), wanted work_a's $ran% of the two"
	head -8 "$OUT" | sed 's/^/#   /'
fi
if grep -qE '^# perfscope profile: [0-9]+ samples of (cpu-clock|cycles) at 999 Hz' "$OUT"; then
	ok "text: the header says what was sampled ($(head -1 "$OUT" | grep -oE 'of [a-z-]+ at [0-9]+ Hz'))"
else
	fail "text: header"
	head -2 "$OUT" | sed 's/^/#   /'
fi
if grep -q 'of cycles' "$OUT" || grep -q 'cpu-clock.*(no hardware PMU' "$OUT"; then
	ok "text: cpu-clock is not passed off as cycles (says there is no PMU)"
else
	fail "text: the sampled event is not explained"
fi
check "text: Total/Self header, main's total 100% or near" awk '
	/Total +Self +Function/ { h = 1 } $3 == "main" { sub(/%/, "", $1); m = $1 + 0 }
	END { exit !(h && m >= 95) }' "$OUT"
check "text: goes to stdout, the statistics to stderr" grep -q 'events, 0 lost\|lost' "$ERR"

# ---- json ----
run_capture "$P" profile -F 999 --format json -- "$TMP/split31" 1s
if [ "$RC" -eq 0 ] && python3 - "$OUT" <<'EOF'; then
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 1, lines
d = json.loads(lines[0])
assert d["event"] in ("cpu-clock", "cycles") and d["freq"] == 999
assert d["samples"] == sum(s["count"] for s in d["stacks"]) > 0
top = d["stacks"][0]
assert top["comm"] == "split31" and top["frames"][0]["name"] == "work_a", top
assert [f["name"] for f in top["frames"]][1] == "main"
assert top["frames"][0]["path"].endswith("/split31") and top["frames"][0]["kernel"] is False
fa = [f for f in d["functions"] if f["name"] == "work_a"][0]
assert 0.69 < fa["self"] / d["samples"] < 0.81, fa
EOF
	ok "json: one object; samples = sum of stacks; frames innermost first (work_a, main); work_a self near 75%"
else
	fail "json: schema or shares (exit $RC)"
	head -c 300 "$OUT" | sed 's/^/#   /'
fi

# ---- svg and pprof ----
run_capture "$P" profile -F 999 -o "$TMP/a.svg" -- "$TMP/split31" 1s
if [ "$RC" -eq 0 ] && python3 - "$TMP/a.svg" <<'EOF'; then
import re, sys, xml.dom.minidom
doc = xml.dom.minidom.parse(sys.argv[1])  # well-formed XML
titles = [t.firstChild.data for t in doc.getElementsByTagName("title") if t.firstChild]
share = {}
for t in titles:
    # a function may sit under more than one parent (a stack cut short by load): its boxes add up
    m = re.match(r"(work_[ab]) \(([0-9,]+) samples?, ([0-9.]+)%\)", t)
    if m:
        share[m.group(1)] = share.get(m.group(1), 0) + float(m.group(3))
assert set(share) == {"work_a", "work_b"}, titles[:12]
assert abs(share["work_a"] / (share["work_a"] + share["work_b"]) - 0.75) < 0.06, (share, titles[:12])
EOF
	ok "svg: well-formed XML naming work_a and work_b, 75/25 within 6 points (format from -o's name)"
else
	fail "svg (exit $RC)"
	head -c 300 "$TMP/a.svg" | sed 's/^/#   /'
fi
if command -v go >/dev/null && go tool pprof -h >/dev/null 2>&1; then
	run_capture "$P" profile -F 999 --format pprof -o "$TMP/a.pb.gz" -- "$TMP/split31" $ROUNDS
	go tool pprof -top "$TMP/a.pb.gz" >"$TMP/top.txt" 2>&1
	pa=$(awk '$NF == "work_a" { sub(/%/, "", $2); print $2 }' "$TMP/top.txt")
	pb=$(awk '$NF == "work_b" { sub(/%/, "", $2); print $2 }' "$TMP/top.txt")
	if [ "$RC" -eq 0 ] && [ -n "$pa" ] && [ -n "$pb" ] &&
		near "$(awk -v a="$pa" -v b="$pb" 'BEGIN { print 100 * a / (a + b) }')" 75 5; then
		ok "pprof: go tool pprof -top reads it: work_a $pa%, work_b $pb% flat"
	else
		fail "pprof: go tool pprof -top (exit $RC): work_a '$pa' work_b '$pb'"
		head -12 "$TMP/top.txt" | sed 's/^/#   /'
	fi
	go tool pprof -raw "$TMP/a.pb.gz" >"$TMP/raw.txt" 2>&1
	bid=$(readelf -n "$TMP/split31" | awk '/Build ID/ { print $3 }')
	if grep -q "comm:\[split31\] pid:\[[0-9]*\]" "$TMP/raw.txt" &&
		grep -qE "/split31 $bid" "$TMP/raw.txt" && grep -q '^PeriodType: cpu nanoseconds' "$TMP/raw.txt"; then
		ok "pprof: comm and pid labels, the binary's mapping with its build-id ($bid), cpu/nanoseconds"
	else
		fail "pprof: -raw lacks labels, build-id or period type"
		sed 's/^/#   /' "$TMP/raw.txt" | head -20
	fi
else
	skip "go tool pprof not installed"
	skip "go tool pprof not installed"
fi

# ---- -i: one profile per interval ----
run_capture "$P" profile -F 999 -i 300 --format json -- "$TMP/split31" 1.5s
n=$(grep -c '"profile":' "$OUT")
if [ "$RC" -eq 0 ] && [ "$n" -ge 3 ] && python3 -c '
import json, sys
ps = [json.loads(l)["profile"] for l in open(sys.argv[1])]
assert ps == list(range(1, len(ps) + 1)), ps' "$OUT"; then
	ok "-i 300 json: $n objects numbered 1..$n"
else
	fail "-i 300 json: $n objects (exit $RC)"
fi
run_capture "$P" profile -F 999 -i 300 -o "$TMP/s.folded" -- "$TMP/split31" 1.5s
nf=$(find "$TMP" -name 's.0*.folded' | wc -l)
if [ "$RC" -eq 0 ] && [ "$nf" -ge 3 ] && [ -s "$TMP/s.0001.folded" ] && [ -s "$TMP/s.0002.folded" ] &&
	[ ! -e "$TMP/s.folded" ]; then
	ok "-i 300 -o s.folded: $nf files s.0001.folded ... (format from the name)"
else
	fail "-i 300 -o s.folded: $nf files (exit $RC)"
	ls "$TMP" | sed 's/^/#   /'
fi
total=$(cat "$TMP"/s.0*.folded | awk '{ t += $NF } END { print t + 0 }')
check "-i slices: together they hold the samples of the run ($total)" test "$total" -ge 1000
run_capture "$P" profile -F 999 -i 300 -o "$TMP/s.svg" -- "$TMP/split31" 1s
check "-i 300 -o s.svg: s.0001.svg, s.0002.svg (exit $RC)" test -s "$TMP/s.0001.svg" -a -s "$TMP/s.0002.svg"
expect_rc "-i with --format folded and no -o: usage error" 2 "$P" profile -i 100 --format folded --duration 1
run_capture "$P" profile -F 499 -i 200 --duration 1
n=$(grep -c '^# perfscope profile:' "$OUT")
check "-i 200 text over 1 s: $n reports" test "$n" -ge 4

# ---- stacks without frame pointers ----
run_capture "$P" profile -F 999 --format json -- "$TMP/split31_omit" 1.5s
tr=$(python3 -c 'import json,sys; d=json.loads(open(sys.argv[1]).readline()); print(d["truncated"], d["samples"])' "$OUT")
read -r t s <<<"$tr"
if [ "$RC" -eq 0 ] && [ "${s:-0}" -gt 0 ] && [ $((t * 100 / s)) -ge 50 ]; then
	ok "-fomit-frame-pointer: $t of $s samples counted as truncated"
else
	fail "-fomit-frame-pointer: truncated '$tr' (exit $RC)"
fi
check "-fomit-frame-pointer: stderr advises --call-graph dwarf" grep -q 'stops before main.*--call-graph dwarf' "$ERR"
run_capture "$P" profile -F 999 --call-graph dwarf --format folded -- "$TMP/split31_omit" 1s
reach=$(awk '/;work_[ab]( |$)/ { t += $NF; if ($0 ~ /;main;work_[ab] [0-9]+$/) m += $NF }
	END { printf "%d %d\n", m, t }' "$OUT")
read -r m t <<<"$reach"
if [ "$RC" -eq 0 ] && [ "${t:-0}" -gt 0 ] && [ $((m * 100)) -ge $((t * 95)) ]; then
	ok "-fomit-frame-pointer with --call-graph dwarf: $m of $t work_a/work_b samples reach main"
else
	fail "--call-graph dwarf: $m of $t samples reach main (exit $RC)"
	sort -k2nr "$OUT" | head -3 | sed 's/^/#   /'
fi
run_capture "$P" profile -F 999 -- "$TMP/split31_omit" 1s
check "-fomit-frame-pointer: the text report says it too" grep -q '^# [0-9]* samples (.*%) have a user stack that stops before main' "$OUT"

# ---- bad input ----
max=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
expect_rc "-F above kernel.perf_event_max_sample_rate: usage error" 2 "$P" profile -F $((max + 1)) --duration 1
check "-F too high: says the limit ($max)" grep -q "perf_event_max_sample_rate = $max" "$ERR"
expect_rc "-o in a directory that does not exist: runtime error" 1 "$P" profile -o "$TMP/no/such/x.folded" -- touch "$TMP/ran"
check "-o unwritable: said before anything ran (the command never started)" test ! -e "$TMP/ran"
check "-o unwritable: names the file" grep -q "$TMP/no/such/x.folded" "$ERR"
run_capture "$P" profile -F 999 --format folded -- "$TMP/split31_strip" 0.5s
if [ "$RC" -eq 0 ] && grep -qE '^split31_strip;.*\[split31_strip\+0x[0-9a-f]+\] [0-9]+$' "$OUT"; then
	ok "stripped binary: frames as [split31_strip+0xOFFSET], exit 0"
else
	fail "stripped binary (exit $RC)"
	sort -k2nr "$OUT" | head -3 | sed 's/^/#   /'
fi
expect_rc "--format with an unknown name: usage error" 2 "$P" profile --format flame --duration 1
expect_rc "-F and -c together: usage error" 2 "$P" profile -F 99 -c 1000 --duration 1
expect_rc "--exclude-user with --exclude-kernel: usage error" 2 "$P" profile --exclude-user --exclude-kernel --duration 1

# ---- roots, events, filters ----
run_capture "$P" profile -F 999 --per-pid --format folded -- "$TMP/split31" 0.3s
check "--per-pid: root frame comm-PID" grep -qE '^split31-[0-9]+;' "$OUT"
run_capture "$P" profile -F 999 --per-thread --format folded -- "$TMP/split31" 0.3s
check "--per-thread: root frame comm-PID/TID" grep -qE '^split31-[0-9]+/[0-9]+;' "$OUT"
run_capture "$P" profile -F 999 --exclude-user --format json -a -- "$TMP/split31" 0.5s
if python3 -c '
import json, sys
d = json.loads(open(sys.argv[1]).readline())
assert d["samples"] > 0
assert all(s["frames"][0]["kernel"] for s in d["stacks"]), "a user leaf"' "$OUT"; then
	ok "--exclude-user: every sample's leaf is in the kernel"
else
	fail "--exclude-user"
fi
run_capture "$P" profile -e page-faults --format json -- "$TMP/split31" 0.05s
check "-e page-faults: sampled and named page-faults" python3 -c '
import json, sys
d = json.loads(open(sys.argv[1]).readline())
assert d["event"] == "page-faults" and d["samples"] > 0, d["event"]' "$OUT"

run_capture "$P" profile -c 1000000 --format json -- "$TMP/split31" 0.5s
check "-c 1000000: sampled by period, said in the JSON" python3 -c '
import json, sys
d = json.loads(open(sys.argv[1]).readline())
assert d["period"] == 1000000 and "freq" not in d and d["samples"] > 50, d' "$OUT"
run_capture "$P" profile -e sched:sched_switch --duration 0.3
check "-e sched:sched_switch: '(every event)', not a frequency it does not have" \
	grep -q '^# perfscope profile: [0-9]* samples of sched:sched_switch (every event)' "$OUT"
expect_rc "--than with a tracepoint sampled every event: usage error" 2 \
	"$P" profile -e sched:sched_switch --than 30 --duration 0.3

# ---- perf-prof's profile command lines (its -h examples and docs) ----
# run_window profile ARGS...: runs perfscope profile with perf-prof's arguments (and -v, whose
# line says when the events run) in $TMP for $WIN seconds once running, then SIGINT
run_window() {
	run_ready "$WIN" env -C "$TMP" "$P" "$1" -v "${@:2}"
}
"$TMP/split31" 100000 & # killed below
busy=$!
BG_PIDS+=("$busy")
run_window profile -F 997 -p "$busy" -g --flame-graph cpu
check "perf-prof: profile -F 997 -p PID -g --flame-graph cpu: cpu.folded with work_a (exit $RC)" \
	grep -q ';work_a [0-9]*$' "$TMP/cpu.folded"
WIN=1.5 # a second's window judged at least once
run_window profile -F 997 -C 0-1 --than 30 -g --flame-graph cpu2
WIN=0.6
check "perf-prof: profile -F 997 -C 0-3 --than 30 -g --flame-graph cpu (as 0-1): hot lines (exit $RC)" \
	grep -q '^hot: cpu [01] [0-9]*% busy' "$OUT"
run_window profile -F 997 --exclude-user -g --flame-graph kernel
if [ "$RC" -eq 0 ] && [ -s "$TMP/kernel.folded" ]; then
	ok "perf-prof: profile -F 997 --exclude-user -g --flame-graph kernel: kernel.folded"
else
	fail "perf-prof: --exclude-user --flame-graph kernel (exit $RC)"
	head -2 "$OUT" "$ERR" | sed 's/^/#   /'
fi
run_window profile -F 100 -C 0 -g --exclude-user --than 30
check "perf-prof: profile -F 100 -C 0 -g --exclude-user --than 30: exit 0 (exit $RC)" test "$RC" -eq 0
run_window profile -F 997 -g -i 300 --flame-graph sliced
check "perf-prof: profile -F 997 -g -i 300 --flame-graph sliced: sliced.0001.folded" test -s "$TMP/sliced.0001.folded"
kill "$busy" 2>/dev/null
wait "$busy" 2>/dev/null
run_capture "$P" profile -F 997 -m 64 --watermark 50 -g --duration 0.5
check "perf-prof: profile -F 997 -m 64 --watermark 50 -g: a report (exit $RC)" grep -q '^# perfscope profile: [1-9]' "$OUT"
run_capture "$P" profile -F 997 --exclude-guest -g --duration 0.5
check "perf-prof: profile -F 997 --exclude-guest -g: a report (exit $RC)" grep -q '^# perfscope profile: [1-9]' "$OUT"
run_capture "$P" profile -F 997 -N 50 -g
check "perf-prof: -N 50 stops after 50 samples (exit $RC)" grep -qE '^# perfscope profile: 50 samples' "$OUT"

done_testing
