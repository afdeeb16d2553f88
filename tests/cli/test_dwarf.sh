#!/bin/bash
# CLI tests of DWARF unwinding (--call-graph dwarf, --user-callchain=dwarf): a -O2 -fomit-frame-pointer program's main -> a -> b -> leaf, kernel and user parts together, truncated unwinds counted, usage errors, and two-event profilers printing kept samples' stacks later (--than, --detail).
# shellcheck source=tests/cli/tap.sh
source "$(dirname "$0")/tap.sh"
P=${PERFSCOPE:?}
CHAIN=${DWARF_CHAIN:?}
GEN=${BUILD_ROOT:?}/bench/gen_events

plan 20
need_root || skip_all "needs root (perf events of other processes)"
[ -x "$CHAIN" ] || skip_all "tests/dwarf_chain not built"

# share FILE: "reached reached_in_order total" over the JSON events' stacks: samples whose user
# stack holds main, and samples in leaf whose stack is leaf, b, a, main in that order
share() {
	python3 - "$1" <<'PY'
import json, sys
n = main = chain = leafs = 0
for line in open(sys.argv[1]):
    if line.startswith('{"incomplete"'):
        continue  # the stream's note of what it missed
    ev = json.loads(line)
    user = [f["sym"] for f in ev["stack"] if not f["kernel"]]
    n += 1
    main += "main" in user
    if user[:1] == ["leaf"]:
        leafs += 1
        chain += user[:4] == ["leaf", "b", "a", "main"]
print(main, chain, leafs, n)
PY
}

# 1-3: dwarf reaches main (>= 95% of samples), in order; frame pointers do not
run_capture "$P" trace --format json -e cpu-clock -g --call-graph dwarf -- "$CHAIN" 1
read -r main chain leafs n < <(share "$OUT")
diag "dwarf: $main of $n samples reach main; $chain of $leafs leaf samples are leaf;b;a;main"
if [ "$RC" = 0 ] && [ "${n:-0}" -ge 100 ] && [ $((main * 100)) -ge $((n * 95)) ]; then
	ok "--call-graph dwarf: $main of $n samples reach main (>= 95%)"
else fail "--call-graph dwarf: $main of $n samples reach main (exit $RC)"; head -3 "$ERR" | sed 's/^/#   /'; fi
if [ "${leafs:-0}" -gt 0 ] && [ $((chain * 100)) -ge $((leafs * 95)) ]; then
	ok "leaf samples unwound as leaf <- b <- a <- main"
else fail "leaf <- b <- a <- main in $chain of $leafs leaf samples"; head -c 600 "$OUT" | sed 's/^/#   /'; fi
if grep -q "DWARF unwinding: $n user stacks, " "$ERR"; then ok "the unwinding is reported on stderr"
else fail "no unwinding report"; sed 's/^/#   /' "$ERR"; fi

run_capture "$P" trace --format json -e cpu-clock -g -- "$CHAIN" 1
read -r fmain _ _ fn < <(share "$OUT")
diag "frame pointers: $fmain of $fn samples reach main"
if [ "$RC" = 0 ] && [ "${fn:-0}" -ge 100 ] && [ $((fmain * 2)) -lt "$fn" ]; then
	ok "-g (frame pointers) on the same program: $fmain of $fn reach main (why dwarf is needed)"
else fail "-g reached main in $fmain of $fn samples (exit $RC)"; fi

# 5: perf-prof's spelling, user stacks only
run_capture "$P" trace --format json -e cpu-clock --user-callchain=dwarf -- "$CHAIN" 0.5
read -r main _ _ n < <(share "$OUT")
if [ "$RC" = 0 ] && [ "${n:-0}" -ge 50 ] && [ $((main * 100)) -ge $((n * 95)) ] &&
	! grep -q '"kernel":true' "$OUT"; then
	ok "--user-callchain=dwarf: $main of $n reach main, no kernel frames"
else fail "--user-callchain=dwarf: $main of $n reach main (exit $RC)"; fi

# 6: kernel part from the kernel, user part unwound: a system call's tracepoint
if [ -x "$GEN" ] && "$P" trace -e syscalls:sys_enter_getppid --duration 0.01 >/dev/null 2>&1; then
	run_capture "$P" trace --format json -g --call-graph dwarf -e syscalls:sys_enter_getppid -- "$GEN" -q getppid 8
	if [ "$RC" = 0 ] && python3 - "$OUT" <<'PY'
import json, sys
n = 0
for line in open(sys.argv[1]):
    if line.startswith('{"incomplete"'):
        continue  # the stream's note of what it missed
    st = json.loads(line)["stack"]
    user = [f["sym"] for f in st if not f["kernel"]]
    kern = [f for f in st if f["kernel"]]
    # kernel frames first (when kallsyms is readable), then the unwound user stack
    assert user[:3] == ["gen_call_getppid", "gen_loop", "main"], user
    assert all(f["kernel"] for f in st[:len(kern)]), st
    n += 1
assert n == 8, n
PY
	then ok "-g --call-graph dwarf on a tracepoint: kernel frames, then gen_call_getppid <- gen_loop <- main"
	else fail "kernel + dwarf user stacks of getppid (exit $RC)"; head -c 800 "$OUT" | sed 's/^/#   /'; fi
else skip "no syscalls:sys_enter_getppid or bench/gen_events"; fi

# 7-8: a stack copy too small: every unwind truncated, counted by reason, with advice
run_capture "$P" trace -e cpu-clock --call-graph dwarf,64 -- "$CHAIN" 0.3
if [ "$RC" = 0 ] && grep -Eq 'DWARF unwinding: ([0-9]+) user stacks, 0 complete, \1 truncated \(\1 stack copy too short\)' "$ERR"; then
	ok "dwarf,64: every unwind counted as 'stack copy too short'"
else fail "dwarf,64 truncation not counted (exit $RC)"; sed 's/^/#   /' "$ERR"; fi
if grep -q 'a larger SIZE (--call-graph dwarf,SIZE, at most 65528)' "$ERR"; then ok "the advice names the largest SIZE"
else fail "no advice for truncated stacks"; fi

# 9: folded stacks for flame graphs carry the unwound user part
FOLD=$(mktemp -d)
run_capture "$P" trace -e cpu-clock --call-graph dwarf --flame-graph "$FOLD/chain" -- "$CHAIN" 0.3
if [ "$RC" = 0 ] && grep -q ';main;a;b;leaf [0-9]*$' "$FOLD/chain.folded"; then
	ok "--flame-graph: folded stacks ...;main;a;b;leaf"
else fail "folded stacks without main;a;b;leaf (exit $RC)"; head -3 "$FOLD/chain.folded" | sed 's/^/#   /'; fi
rm -rf "$FOLD"

# 10: through the vDSO (clock_gettime), unwound with the vDSO image perfscope copies from itself
VD=$(mktemp -d)
cat >"$VD/vd.c" <<'C'
#include <stdlib.h>
#include <time.h>
__attribute__((noinline)) long spin_time(long n);
__attribute__((noinline)) long spin_time(long n)
{
	struct timespec t;
	long s = 0;

	for (long i = 0; i < n; i++) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		s += t.tv_nsec;
	}
	return s;
}
volatile long sink;
int main(int argc, char **argv)
{
	sink = spin_time(atol(argv[1]));
	return 0;
}
C
if ${CC:-cc} -O2 -fomit-frame-pointer -o "$VD/vd" "$VD/vd.c" 2>"$VD/cc.err"; then
	run_capture "$P" trace --format json -e cpu-clock --call-graph dwarf -- "$VD/vd" 20000000
	if [ "$RC" = 0 ] && python3 - "$OUT" <<'PY'
import json, sys
n = vdso = vdso_main = 0
for line in open(sys.argv[1]):
    if line.startswith('{"incomplete"'):
        continue  # the stream's note of what it missed
    st = [f for f in json.loads(line)["stack"] if not f["kernel"]]
    n += 1
    if st and st[0]["dso"] == "[vdso]":
        vdso += 1
        vdso_main += any(f["sym"] == "main" for f in st)
print("#   %d samples, %d in the vDSO, %d of them reach main" % (n, vdso, vdso_main))
assert vdso >= 10 and vdso_main * 100 >= vdso * 95
PY
	then ok "stacks from inside the vDSO reach main"
	else fail "vDSO stacks (exit $RC)"; head -c 600 "$OUT" | sed 's/^/#   /'; fi
else skip "no C compiler for the vDSO program: $(head -1 "$VD/cc.err")"; fi
rm -rf "$VD"

# 11-12: no .eh_frame for the program's code, only .debug_frame: in the binary, then in a
# separate debug file found by .gnu_debuglink
DF=$(mktemp -d)
if ${CC:-cc} -O2 -fomit-frame-pointer -fno-asynchronous-unwind-tables -fno-unwind-tables -g \
	-o "$DF/chain" "$SOURCE_ROOT/tests/dwarf_chain.c" 2>"$DF/cc.err"; then
	run_capture "$P" trace --format json -e cpu-clock --call-graph dwarf -- "$DF/chain" 0.5
	read -r main _ _ n < <(share "$OUT")
	if [ "$RC" = 0 ] && [ "${n:-0}" -ge 50 ] && [ $((main * 100)) -ge $((n * 95)) ]; then
		ok ".debug_frame only (no .eh_frame): $main of $n reach main"
	else fail ".debug_frame only: $main of $n reach main (exit $RC)"; sed 's/^/#   /' "$ERR"; fi
	if command -v objcopy >/dev/null && objcopy --only-keep-debug "$DF/chain" "$DF/chain.debug" &&
		objcopy --strip-debug --add-gnu-debuglink="$DF/chain.debug" "$DF/chain"; then
		run_capture "$P" trace --format json -e cpu-clock --call-graph dwarf -- "$DF/chain" 0.5
		read -r main _ _ n < <(share "$OUT")
		if [ "$RC" = 0 ] && [ "${n:-0}" -ge 50 ] && [ $((main * 100)) -ge $((n * 95)) ]; then
			ok ".debug_frame in a separate file (.gnu_debuglink): $main of $n reach main"
		else fail "separate .debug_frame: $main of $n reach main (exit $RC)"; sed 's/^/#   /' "$ERR"; fi
	else skip "no objcopy to split the debug file"; fi
else
	skip "no C compiler: $(head -1 "$DF/cc.err")"
	skip "no C compiler"
fi
rm -rf "$DF"

# 13-15: usage errors name the limit and the modes
expect_rc "dwarf,65536: over the kernel's limit" 2 "$P" trace -e cpu-clock --call-graph dwarf,65536 -- "$CHAIN" 0.1
if grep -q 65528 "$ERR"; then ok "the error says the kernel's limit (65528)"; else fail "limit not said"; sed 's/^/#   /' "$ERR"; fi
expect_rc "--call-graph=lbr: not a mode here" 2 "$P" trace -e cpu-clock --call-graph=lbr -- "$CHAIN" 0.1
# 16-20: two-event profilers keep samples past their ring round (a pair's start, printed when
# its end makes it an outlier; --detail's backlog) and unwind them later: the kept copy owns the
# user stack and registers (perf-prof's own multi-trace and rundelay lines once died in
# memory_read reading a stack copy that was not kept). Each run: exit 0, no crash, no sanitizer
# report.
SAN='AddressSanitizer|LeakSanitizer|runtime error:|Segmentation|core dumped'
clean() { [ "$RC" = 0 ] && ! grep -Eq "$SAN" "$ERR"; }
said() { sed 's/^/#   /' "$ERR" | grep -Ev ': (running|[^ ]*: [0-9]+ events, 0 lost)' | head -${1:-8}; }
if [ -x "$GEN" ] && "$P" trace -e syscalls:sys_enter_getppid --duration 0.01 >/dev/null 2>&1; then
	# --than 1ns: every one of the 40 system calls is an outlier, its start printed from the
	# copy, its stack unwound to main (start and end: 80 stacks)
	run_report "$P" multi-trace -e syscalls:sys_enter_getppid//stack/ \
		-e syscalls:sys_exit_getppid//stack/ --user-callchain=dwarf --than 1ns -- "$GEN" -q getppid 40
	nlat=$(grep -c ': latency ' "$OUT")
	nmain=$(grep -Ec '^\s+[0-9a-f]+ main\+0x[0-9a-f]+ \(gen_events\)$' "$OUT")
	if clean && [ "$nlat" = 40 ] && [ "$nmain" = 80 ]; then
		ok "multi-trace --than with dwarf stacks: 40 outliers, their kept starts unwound to main"
	else fail "multi-trace --than dwarf: exit $RC, $nlat outliers, $nmain stacks reach main"; said; fi
	# --detail: the window comes from the backlog's copies
	run_report "$P" multi-trace -e syscalls:sys_enter_getppid//stack/ \
		-e syscalls:sys_exit_getppid//stack/ --user-callchain=dwarf --than 1ns --detail \
		-- "$GEN" -q getppid 40
	nlat=$(grep -c '^latency .*, key ' "$OUT")
	nmain=$(grep -Ec '^\s+[0-9a-f]+ main\+0x[0-9a-f]+ \(gen_events\)$' "$OUT")
	if clean && [ "$nlat" = 40 ] && [ "$nmain" -ge 80 ]; then
		ok "multi-trace --detail with dwarf stacks: 40 windows from the backlog, unwound to main"
	else fail "multi-trace --detail dwarf: exit $RC, $nlat windows, $nmain stacks reach main"; said; fi
else
	skip "no syscalls:sys_enter_getppid or bench/gen_events"
	skip "no syscalls:sys_enter_getppid or bench/gen_events"
fi
# rundelay: wakeups in the write()s of a paced ping-pong (no ring loss) start pairs
if [ -x "$GEN" ]; then
	run_report "$P" rundelay -e 'sched:sched_wakeup*//stack/,sched:sched_switch//stack/' \
		-e sched:sched_switch//stack/ -m 256 --than 1ns --user-callchain=dwarf -- "$GEN" -r 1000 pingpong 300
	nlat=$(grep -c ': latency ' "$OUT")
	nmain=$(grep -Ec '^\s+[0-9a-f]+ main\+0x[0-9a-f]+ \(gen_events\)$' "$OUT")
	if clean && [ "$nlat" -ge 1 ] && [ "$nmain" -ge 1 ]; then
		ok "rundelay --than with dwarf stacks: $nlat outliers, $nmain gen_events stacks unwound to main"
	else fail "rundelay --than dwarf: exit $RC, $nlat outliers, $nmain stacks reach main"; said; fi
else skip "bench/gen_events not built"; fi
# perf-prof's documented lines as they are, system wide, stopped by SIGINT: a CPU-bound program
# (timer softirqs taken in its user context) and a ping-pong (wakeups from write()) meanwhile
"$CHAIN" 30 >/dev/null 2>&1 &
HOG=$!
if [ -x "$GEN" ]; then "$GEN" -r 2000 pingpong 60000 >/dev/null 2>&1 & PONG=$!; fi
run_ready 1.5 "$P" multi-trace -e irq:softirq_entry/vec==1/stack/ -e irq:softirq_exit/vec==1/stack/ \
	-i 1000 --user-callchain=dwarf -m 512 --than 10us -v
if clean; then ok "perf-prof's multi-trace softirq line with --user-callchain=dwarf ends cleanly on SIGINT"
else fail "multi-trace softirq dwarf line: exit $RC"; said; fi
run_ready 1.5 "$P" rundelay -e 'sched:sched_wakeup*//stack/,sched:sched_switch//stack/' \
	-e sched:sched_switch//stack/ -i 1000 -m 256 --than 1ms --user-callchain=dwarf -v
if clean; then ok "perf-prof's rundelay line with --user-callchain=dwarf ends cleanly on SIGINT"
else fail "rundelay dwarf line: exit $RC"; said; fi
kill "$HOG" ${PONG:+"$PONG"} 2>/dev/null
wait "$HOG" ${PONG:+"$PONG"} 2>/dev/null
done_testing
