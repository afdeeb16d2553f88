#!/bin/bash
# CLI tests of usdt list|add|del on Debian's python3.11 (8 SDT probes, each behind a semaphore):
# the list against readelf's, the arguments translated, exact counts of gc collections and of a
# function's calls through the added probes, the errors, and no probe left behind.
# shellcheck source=tests/cli/tap.sh
source "$(dirname "$0")/tap.sh"
P=${PERFSCOPE:?}
: "${SOURCE_ROOT:?}"
PY=/usr/bin/python3.11
TFS=/sys/kernel/tracing

plan 24
need_root || skip_all "needs root (uprobes)"
[ -x $PY ] || skip_all "no $PY (Debian's python3.11, built with SDT probes)"
if [ ! -e $TFS/uprobe_events ]; then
	mount -t tracefs nodev $TFS 2>/dev/null
	[ -e $TFS/uprobe_events ] || skip_all "no uprobe events in this kernel"
fi
# the group is the provider's, as perf-prof names it: someone else's python/ probes are left alone
grep -q '^p:python/' $TFS/uprobe_events && skip_all "python/ uprobes exist already (someone's usdt add)"
added=
cleanup() {
	for p in $added; do echo "-:python/$p" >>$TFS/uprobe_events 2>/dev/null; done
}
trap cleanup EXIT

# 1-2: list: every note readelf shows, in order
want=$(readelf -n $PY | awk '/Provider:/ {p=$2} /Name:/ {print p ":" $2 "@" F}' F=$PY)
run_capture "$P" usdt list $PY
check "list: the $(echo "$want" | wc -l) probes readelf shows (exit $RC)" test "$RC" -eq 0 -a "$(cat "$OUT")" = "$want"
run_capture "$P" usdt list --format json "python:gc*@$PY"
check "list json: 2 probes by glob, semaphores as ref_ctr offsets" python3 -c '
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
assert [x["name"] for x in o] == ["gc__done", "gc__start"], o
assert all(x["semaphore"] != "0x0" and "(0x" in x["uprobe"] for x in o), o' "$OUT"

# 3-5: the SDT arguments as fetch arguments: register widths, memory, signs
run_capture "$P" usdt list -v $PY
check "8@%rbx 8@%r15 -> %bx:u64 %r15:u64" grep -q 'python/audit .* arg1=%bx:u64 arg2=%r15:u64$' "$OUT"
check "-4@112(%rsp) -> +112(%sp):s32" grep -q 'python/gc__start .* arg1=+112(%sp):s32$' "$OUT"
check "8@%rax -4@%edx -> %ax:u64 %dx:s32" grep -q 'python/import__find__load__done .* arg1=%ax:u64 arg2=%dx:s32$' "$OUT"

# 6-7: add; the gc collections of generation 1 counted exactly (automatic ones disabled)
expect_rc "add python:gc__start" 0 "$P" usdt add "python:gc__start@$PY"
added=gc__start
run_capture "$P" trace -e 'python:gc__start/arg1==1/' --format json -- $PY -I -S -c 'import gc; gc.disable(); [gc.collect(1) for _ in range(50)]'
n=$(grep -c '"event":"python:gc__start"' "$OUT")
check "50 gc.collect(1) -> 50 gc__start events, arg1 1 (got $n, exit $RC)" test "$RC" -eq 0 -a "$n" -eq 50

# 8: adding it again is refused, saying why
expect_rc "add again: refused" 1 "$P" usdt add "python:gc__start@$PY"
grep -q "added already" "$ERR" || diag "stderr: $(cat "$ERR")"

# 9-10: arguments of one's own: the function's name as a string, its calls counted (this build
# of 3.11 fires function__entry on the path a profile function takes: one is set)
expect_rc "add function__entry with func=+0(%s):string" 0 "$P" usdt add "python:function__entry@$PY file=+0(%s):string func=+0(%s):string"
added="$added function__entry"
run_capture "$P" trace -e 'python:function__entry' --format json -- $PY -I -S -c 'import sys
sys.setprofile(lambda *a: None)
def usdt_f(x): pass
for i in range(30): usdt_f(i)'
n=$(python3 -c 'import json, sys; print(sum(json.loads(l)["fields"]["func"] == "usdt_f" for l in open(sys.argv[1]) if l.startswith("{")))' "$OUT")
check "30 calls of usdt_f -> 30 events named so (got $n, exit $RC)" test "$RC" -eq 0 -a "$n" -eq 30

# 11-13: del removes them; nothing is left; a second del says they are gone
expect_rc "del gc__start" 0 "$P" usdt del "python:gc__start@$PY"
expect_rc "del function__entry" 0 "$P" usdt del "function__entry@$PY"
if ! grep -q "^p:python/" $TFS/uprobe_events; then ok "no python/ probe left"; added=; else fail "probes left: $(grep python/ $TFS/uprobe_events)"; fi
expect_rc "del again: not added" 1 "$P" usdt del "python:gc__start@$PY"

# 14-17: usdt:PROVIDER:NAME@BINARY as an event: made for the run, counted exactly, removed after
run_capture "$P" trace -e "usdt:python:gc__start@\"$PY\"/arg1==1/" --format json -- $PY -I -S -c 'import gc; gc.disable(); [gc.collect(1) for _ in range(30)]'
n=$(grep -c '"event":"usdt:python:gc__start@/usr/bin/python3.11"' "$OUT")
check "usdt: event: 30 gc.collect(1) -> 30 events (got $n, exit $RC)" test "$RC" -eq 0 -a "$n" -eq 30
check "usdt: event: its probe removed at exit" test "$(grep -c "python_gc__start" $TFS/uprobe_events)" -eq 0
expect_rc "usdt: event: an unknown probe" 2 "$P" trace -e "usdt:python:gc__nope@$PY" -- true
check "  ... names the probes there are" grep -q "it has python:audit, python:gc__done" "$ERR"

# 18-20: a program of our own: memory arguments, no semaphore, every hit and value
T=$(mktemp -d)
trap 'cleanup; rm -rf "$T"' EXIT
if ${CC:-cc} -O0 -o "$T/usdt_prog" "$SOURCE_ROOT/tests/cli/usdt_prog.c" 2>"$T/cc.log"; then
	run_capture "$P" usdt list -v "$T/usdt_prog"
	# the frame offset is the compiler's: gcc -16(%rbp), clang -32(%rbp)
	sdt=$(sed -n 's/^ *Arguments: -4@%eax 8@\(-[0-9]*\)(%rbp)$/\1/p' "$OUT")
	check "-4@%eax 8@${sdt:-?}(%rbp) -> %ax:s32 ${sdt:-?}(%bp):u64, no semaphore" grep -q "p:test/tick $T/usdt_prog:0x[0-9a-f]* arg1=%ax:s32 arg2=${sdt:-?}(%bp):u64\$" "$OUT"
	run_capture "$P" trace -e "usdt:test:tick@$T/usdt_prog" --format json -- "$T/usdt_prog" 200
	check "200 ticks -> 200 events (exit $RC)" test "$RC" -eq 0 -a "$(grep -c '"event":"usdt:test:tick@' "$OUT")" -eq 200
	check "each tick's arguments: i, 1000 + i" python3 -c '
import json, sys
v = [json.loads(l)["fields"] for l in open(sys.argv[1]) if l.startswith("{")]
assert [(f["arg1"], f["arg2"]) for f in v] == [(i, 1000 + i) for i in range(200)], v[:3]' "$OUT"
else
	sed 's/^/#   /' "$T/cc.log"
	skip "cannot compile usdt_prog.c"; skip "cannot compile"; skip "cannot compile"
fi

# 21-24: errors
expect_rc "usage: an unknown action" 2 "$P" usdt frob $PY
expect_rc "no such binary" 1 "$P" usdt list /nonexistent/bin
expect_rc "no probe matches" 1 "$P" usdt list "python:nosuch@$PY"
done_testing
