#!/bin/bash
# CLI tests of DWARF unwinding (--call-graph dwarf, --user-callchain=dwarf): a -O2 -fomit-frame-pointer program's main -> a -> b -> leaf, kernel and user parts together, truncated unwinds counted, usage errors.
# shellcheck source=tests/cli/tap.sh
source "$(dirname "$0")/tap.sh"
P=${PERFSCOPE:?}
CHAIN=${DWARF_CHAIN:?}
GEN=${BUILD_ROOT:?}/bench/gen_events

plan 13
need_root || skip_all "needs root (perf events of other processes)"
[ -x "$CHAIN" ] || skip_all "tests/dwarf_chain not built"

# share FILE: "reached reached_in_order total" over the JSON events' stacks: samples whose user
# stack holds main, and samples in leaf whose stack is leaf, b, a, main in that order
share() {
	python3 - "$1" <<'PY'
import json, sys
n = main = chain = leafs = 0
for line in open(sys.argv[1]):
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
int main(int argc, char **argv) { return (int)spin_time(atol(argv[1])) & 1; }
C
if ${CC:-cc} -O2 -fomit-frame-pointer -o "$VD/vd" "$VD/vd.c" 2>"$VD/cc.err"; then
	run_capture "$P" trace --format json -e cpu-clock --call-graph dwarf -- "$VD/vd" 20000000
	if [ "$RC" = 0 ] && python3 - "$OUT" <<'PY'
import json, sys
n = vdso = vdso_main = 0
for line in open(sys.argv[1]):
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

# 11-13: usage errors name the limit and the modes
expect_rc "dwarf,65536: over the kernel's limit" 2 "$P" trace -e cpu-clock --call-graph dwarf,65536 -- "$CHAIN" 0.1
if grep -q 65528 "$ERR"; then ok "the error says the kernel's limit (65528)"; else fail "limit not said"; sed 's/^/#   /' "$ERR"; fi
expect_rc "--call-graph=lbr: not a mode here" 2 "$P" trace -e cpu-clock --call-graph=lbr -- "$CHAIN" 0.1
done_testing
