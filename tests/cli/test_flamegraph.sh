#!/usr/bin/env bash
# perfscope flamegraph: folded files of any tool to a well-formed interactive SVG whose frames name
# the known functions with widths proportional to their counts; --reverse, --diff, 10,000+
# stacks within a bounded size, bad input said clearly. The SVG's own script runs under node.
# shellcheck source=tests/cli/tap.sh
source "$(dirname "$0")/tap.sh"
P=${PERFSCOPE:?}
HERE=$(cd "$(dirname "$0")" && pwd)
CHECK=("python3" "$HERE/flame_check.py")

plan 34

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# A profile with known shares: hot_a 30, hot_b 10 under work; a kernel path of 5, an unknown of 2;
# a blank line, a CRLF line and a bad line.
printf '%s\n' 'prog;main;work;hot_a 20' 'prog;main;work;hot_b 10' '' \
	'prog;main;[unknown];0x1234 2' 'prog;main;sys_read_[k];do_syscall_64_[k] 5' \
	'this line has no count' >"$T/known.folded"
printf 'prog;main;work;hot_a 10\r\n' >>"$T/known.folded"

run_capture "$P" flamegraph "$T/known.folded" -o "$T/known.svg"
check "known profile: exit 0 (exit $RC)" [ "$RC" -eq 0 ]
check "the SVG is well-formed XML (python3 xml.etree)" "${CHECK[@]}" frames "$T/known.svg" >/dev/null
check "its frames name the known functions, without the _[k] suffix" \
	"${CHECK[@]}" names "$T/known.svg" all prog main work hot_a hot_b sys_read do_syscall_64 '[unknown]' 0x1234
check "every frame's width is its count times one scale" sh -c "'${CHECK[0]}' '${CHECK[1]}' proportional '$T/known.svg' >/dev/null"
"${CHECK[@]}" frames "$T/known.svg" >"$T/known.frames"
wa=$(awk -F'\t' '$1 == "hot_a" {print $5}' "$T/known.frames")
wb=$(awk -F'\t' '$1 == "hot_b" {print $5}' "$T/known.frames")
check "hot_a is 3 times as wide as hot_b (30:10; $wa vs $wb px)" \
	awk -v a="$wa" -v b="$wb" 'BEGIN { exit !(b > 0 && a / b > 2.99 && a / b < 3.01) }'
check "counts in the titles: hot_a 30 (the CRLF line added), all 47" \
	grep -qE '^hot_a	30	.*' "$T/known.frames"
check "... all 47" grep -qE '^all	47	' "$T/known.frames"
# kernel frames blue (b > r), user warm (r > b), unknown grey (r, g, b within 10)
check "kernel frames are blue, user frames warm, unknown grey" awk -F'\t' '
	{ split(substr($6, 5), c, /[,)]/) }
	$1 == "do_syscall_64" && !(c[3] > c[1]) { bad = 1 }
	$1 == "hot_a" && !(c[1] > c[3]) { bad = 1 }
	$1 == "0x1234" && (c[1] - c[3] > 10 || c[3] - c[1] > 10) { bad = 1 }
	END { exit bad }' "$T/known.frames"
check "the bad line is reported with its number and why (stderr)" \
	grep -q "skipped 1 of 7 lines that are not 'STACK COUNT' (the first, line 6: " "$ERR"
check "the summary line names the output, samples and stacks" grep -q "known.svg: 47 samples in 4 stacks" "$ERR"
check "the SVG is self-contained: no external reference (href, src, http other than the namespace)" \
	sh -c "! sed 's|http://www.w3.org/2000/svg||g' '$T/known.svg' | grep -qiE 'href|src=|https?:'"
check "the subtitle has the counts and says how many frames were left out" \
	sh -c "'${CHECK[0]}' '${CHECK[1]}' subtitle '$T/known.svg' | grep -q '47 samples, 4 stacks; 10 frames drawn, 0 narrower than 0.1 px elided'"

# -v: blank lines and zero counts said too
run_capture "$P" flamegraph -v "$T/known.folded" -o "$T/v.svg"
check "-v: 1 blank line and 0 zero counts said" grep -q "1 blank lines and 0 stacks counted 0" "$ERR"

# the script: hover, click to zoom, reset, search share, under node with a minimal DOM
if command -v node >/dev/null; then
	if node "$HERE/flame_js.js" "$T/known.svg" >"$T/js.out" 2>&1; then
		ok "the SVG's script: hover details, zoom, reset, search share ($(cat "$T/js.out"))"
	else
		fail "the SVG's script under node"; sed 's/^/#   /' "$T/js.out" | head -5
	fi
else
	skip "node is not installed: the SVG's script is not run"
fi

# standard input, title, subtitle; markup and invalid UTF-8 in names stay well-formed
printf 'a&b;<c>;"d";\xff\xfe bad utf8;\x01ctl 3\n' | "$P" flamegraph --title 'T <&> "x"' \
	--subtitle 'sub & more' - >"$T/esc.svg" 2>"$T/esc.err"
check "stdin, markup and invalid UTF-8 in names: well-formed XML" "${CHECK[@]}" names "$T/esc.svg" 'a&b' '<c>' '"d"'
check "... the title and subtitle escaped" grep -q 'T &lt;&amp;&gt; &quot;x&quot;' "$T/esc.svg"

# --reverse: the leaf functions are the root's children, drawn top-down
run_capture "$P" flamegraph --reverse "$T/known.folded" -o "$T/rev.svg"
"${CHECK[@]}" frames "$T/rev.svg" >"$T/rev.frames" 2>&1
check "--reverse: exit 0, well-formed (exit $RC)" test "$RC" -eq 0 -a -s "$T/rev.frames"
ya=$(awk -F'\t' '$1 == "all" {print $4}' "$T/rev.frames")
yh=$(awk -F'\t' '$1 == "hot_a" {print $4}' "$T/rev.frames")
yp=$(awk -F'\t' '$1 == "prog" {print $4; exit}' "$T/rev.frames")
check "--reverse: all on top, hot_a right under it, prog (the root) at the bottom ($ya < $yh < $yp)" \
	awk -v a="$ya" -v h="$yh" -v p="$yp" 'BEGIN { exit !(a < h && h - a == 16 && h < p) }'
check "--reverse: the titled view is the callers' icicle" grep -q 'Icicle Graph (callers)' "$T/rev.svg"
check "--reverse: main appears once per leaf path (callers of hot_a, hot_b, ...)" \
	test "$(grep -c '^main	' "$T/rev.frames")" -eq 4

# --diff: before has hot_a 10 / hot_b 30, after (known) 30 / 10: hot_a grew (red), hot_b shrank
printf '%s\n' 'prog;main;work;hot_a 10' 'prog;main;work;hot_b 30' 'prog;main;gone 7' >"$T/before.folded"
run_capture "$P" flamegraph --diff "$T/before.folded" "$T/known.folded" -o "$T/diff.svg"
"${CHECK[@]}" frames "$T/diff.svg" >"$T/diff.frames" 2>&1
check "--diff: exit 0, well-formed (exit $RC)" test "$RC" -eq 0 -a -s "$T/diff.frames"
check "--diff: hot_a red (grew), hot_b blue (shrank), widths from AFTER" awk -F'\t' '
	{ split(substr($6, 5), c, /[,)]/) }
	$1 == "hot_a" { a = (c[1] == 255 && c[3] < 255 && $2 == 30) }
	$1 == "hot_b" { b = (c[3] == 255 && c[1] < 255 && $2 == 10) }
	END { exit !(a && b) }' "$T/diff.frames"
check "--diff: hover text says before and the change in points" \
	grep -qE 'hot_a \(30 samples, 63.83%; before 10, 21.28%; \+42.55 points\)' "$T/diff.svg"
check "--diff: a frame found only before is counted in the subtitle" \
	grep -q '1 only before (no width to draw)' "$T/diff.svg"

# 10,000+ distinct stacks: rendered within the frame budget and a bounded size
python3 - "$T/big.folded" <<'EOF'
import random, sys
random.seed(7)
seen = set()
with open(sys.argv[1], 'w') as f:
    while len(seen) < 20000:
        st = ['app', 'main'] + ['f%d' % int(random.paretovariate(1.1) * 3) for _ in range(random.randint(2, 30))]
        s = ';'.join(st)
        if s not in seen:
            seen.add(s)
            f.write('%s %d\n' % (s, random.randint(1, 50)))
EOF
run_capture "$P" flamegraph "$T/big.folded" -o "$T/big.svg"
size=$(stat -c %s "$T/big.svg" 2>/dev/null || echo 0)
check "20,000 stacks: exit 0 (exit $RC)" [ "$RC" -eq 0 ]
n=$("${CHECK[@]}" proportional "$T/big.svg" 2>&1)
check "20,000 stacks: well-formed, widths proportional, at most 25000 frames drawn ($n)" \
	test "$n" -le 25000 -a "$n" -gt 1000
check "20,000 stacks: under 4 MB ($size bytes)" test "$size" -lt 4000000
check "20,000 stacks: the subtitle says how many frames were left out" \
	grep -qE 'frames drawn, [1-9][0-9]* narrower than' "$T/big.svg"
run_capture "$P" flamegraph --max-frames 500 "$T/big.folded" -o "$T/small.svg"
n=$("${CHECK[@]}" proportional "$T/small.svg" 2>&1)
check "--max-frames 500: at most 500 drawn ($n)" test "$n" -le 500 -a "$n" -gt 100

# errors
expect_rc "no FILE: usage error" 2 "$P" flamegraph -o "$T/x.svg"
expect_rc "a missing file: runtime error" 1 "$P" flamegraph "$T/nope.folded" -o "$T/x.svg"
check "... naming it" grep -q "cannot read '$T/nope.folded'" "$ERR"
printf 'garbage\n\nmore garbage\n' >"$T/junk.folded"
expect_rc "a file without a stack: runtime error" 1 "$P" flamegraph "$T/junk.folded" -o "$T/x.svg"
check "... saying what it should hold" grep -q "holds no stack to draw (3 lines, 2 not 'STACK COUNT')" "$ERR"
expect_rc "--width 5: usage error" 2 "$P" flamegraph --width 5 "$T/known.folded" -o "$T/x.svg"
expect_rc "an unwritable -o: runtime error, nothing left" 1 "$P" flamegraph "$T/known.folded" -o /nonexistent/dir/x.svg

done_testing
