#!/bin/bash
# CLI tests of `perfscope trace` stacks: known user functions and kernel entry symbols, max-stack, C++ and Rust demangling, debuglink and .gnu_debugdata.
# shellcheck source=tests/cli/tap.sh
source "$(dirname "$0")/tap.sh"
P=${PERFSCOPE:?}
GEN=${BUILD_ROOT:?}/bench/gen_events
TP=syscalls:sys_enter_getppid
N=8

plan 14
need_root || skip_all "needs root (tracepoints)"
[ -x "$GEN" ] || skip_all "bench/gen_events not built"
"$P" trace -e $TP --duration 0.01 >/dev/null 2>&1 || skip_all "no $TP tracepoint on this kernel"

# The system call number of getppid, as the kernel reports it (raw_syscalls are filtered on it).
run_capture "$P" trace --format json -e $TP -- "$GEN" -q getppid 1
NR=$(python3 -c 'import json, sys; print(json.loads(open(sys.argv[1]).readline())["fields"]["__syscall_nr"])' "$OUT" 2>/dev/null)
[ -n "$NR" ] || skip_all "cannot read __syscall_nr from $TP"

# check_stacks FILE COUNT PYTHON-CONDITION: every JSON event's "stack" (list of frames) passes it
check_stacks() {
	python3 - "$1" "$2" "$3" <<'EOF'
import json, sys
path, want, cond = sys.argv[1], int(sys.argv[2]), sys.argv[3]
n = 0
for line in open(path):
    if line.startswith('{"incomplete"'):
        continue  # the stream's note of what it missed
    ev = json.loads(line)
    stack = ev["stack"]
    user = [f["sym"] for f in stack if not f["kernel"]]
    kern = [f["sym"] for f in stack if f["kernel"]]
    if not eval(cond):
        print("#   bad stack:", json.dumps(stack)[:600])
        sys.exit(1)
    n += 1
if n != want:
    print("#   %d events, want %d" % (n, want))
    sys.exit(1)
EOF
}

# 1-3: kernel and user sides of one call path (raw_syscalls fire inside the kernel's syscall path)
run_capture "$P" trace --format json -g -e "raw_syscalls:sys_enter/id==$NR/" -- "$GEN" -q getppid $N
if check_stacks "$OUT" $N 'user[:3] == ["gen_call_getppid", "gen_loop", "main"]'; then
	ok "user stack: gen_call_getppid <- gen_loop <- main"
else fail "user stack of gen_events (exit $RC)"; sed 's/^/#   /' "$ERR" | head -3; fi
kallsyms_ok=$(awk '$1 !~ /^0+$/ { n++ } END { print (n > 0) }' /proc/kallsyms)
if [ "$kallsyms_ok" != 1 ]; then
	skip "kernel addresses hidden (kptr_restrict) even to root"
elif check_stacks "$OUT" $N 'stack[0]["kernel"] and any(s and ("syscall" in s or "svc" in s) for s in kern)'; then
	ok "kernel stack first, with the system call entry (e.g. do_syscall_64)"
else fail "no kernel syscall entry frame"; fi
run_capture "$P" trace -g -e "raw_syscalls:sys_enter/id==$NR/" -- "$GEN" -q getppid 2
if grep -q 'gen_call_getppid+0x[0-9a-f]* (gen_events)' "$OUT" && grep -q 'gen_loop+0x[0-9a-f]* (gen_events)' "$OUT" &&
	grep -q '(\[kernel.kallsyms\])' "$OUT"; then ok "text stacks: SYM+OFF (DSO), kernel and user"
else fail "text stacks"; head -12 "$OUT" | sed 's/^/#   /'; fi

# 4: //stack/ on a syscall tracepoint, threads started after the trace began (their maps come
# from MMAP2/FORK records)
run_capture "$P" trace --format json -e "$TP//stack/" -- "$GEN" -q -j 2 getppid $N
if check_stacks "$OUT" $((2 * N)) 'user[:2] == ["gen_call_getppid", "gen_loop"]'; then
	ok "//stack/: user stacks of 2 new threads"
else fail "//stack/ on threads"; fi

# 5: max-stack=N caps the frames
run_capture "$P" trace --format json -e "raw_syscalls:sys_enter/id==$NR/stack/max-stack=2/" -- "$GEN" -q getppid $N
if check_stacks "$OUT" $N '0 < len(stack) <= 2'; then ok "max-stack=2: at most 2 frames"; else fail "max-stack=2"; fi

# 6: kernel addresses hidden from the tracing process (here: an unprivileged user with CAP_PERFMON
# only): raw kernel addresses, and one warning saying why and how to fix it
AS_NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=+perfmon --ambient-caps=+perfmon)
if ! command -v setpriv >/dev/null || ! "${AS_NOBODY[@]}" test -x "$P" -a -x "$GEN" 2>/dev/null; then
	skip "setpriv cannot drop to nobody with CAP_PERFMON here, or nobody cannot run the build's binaries"
elif ! "${AS_NOBODY[@]}" awk '$3 == "_stext" { exit $1 !~ /^0+$/ }' /proc/kallsyms; then
	skip "kernel addresses are visible to unprivileged users here (kernel.perf_event_paranoid <= 1)"
else
	run_capture "${AS_NOBODY[@]}" "$P" trace -g -e page-faults -- "$GEN" -q getppid 1
	if [ "$RC" -eq 0 ] && [ "$(grep -c 'read as 0' "$ERR")" -eq 1 ] && grep -q 'to fix' "$ERR" &&
		grep -q '^	 *ffff[0-9a-f]* \[unknown\] (\[kernel.kallsyms\])$' "$OUT"; then
		ok "kallsyms hidden: raw kernel addresses, one warning with the reason and the fix"
	else fail "kallsyms hidden (exit $RC)"; sed 's/^/#   /' "$ERR" | head -3; fi
fi

# 7: processes that exit are forgotten (a long system-wide -g trace must not keep every process
# it ever saw): 40 short-lived processes, then a second for the session to go through a few
# rounds (an exited process is dropped a round after its exit is read), and at most a few are
# left at the end (-v says how many)
run_capture "$P" trace -v -g -e $TP -- sh -c "for i in \$(seq 40); do '$GEN' -q getppid 1; done; sleep 1"
held=$(sed -n 's/^perfscope trace: symbols: \([0-9]*\) processes .*/\1/p' "$ERR")
if [ "$RC" -eq 0 ] && [ "$(wc -l <"$OUT")" -ge 40 ] && [ -n "$held" ] && [ "$held" -le 5 ]; then
	ok "40 processes traced with stacks, $held still held at the end"
else fail "exited processes: exit $RC, held '${held}'"; tail -2 "$ERR" | sed 's/^/#   /'; fi

# 8-9: Rust names demangled, legacy (_ZN..17h<hash>E) and v0 (_R...) manglings
RUSTC=$(command -v rustc || true)
if [ -z "$RUSTC" ]; then
	skip "no rustc"
	skip "no rustc"
else
	RD=$(mktemp -d)
	_tap_tmpfiles+=("$RD")
	cat >"$RD/r.rs" <<'EOF'
// Known Rust names for the stack tests: a generic method making getppid calls through a frame.
mod inner {
    extern "C" {
        fn getppid() -> i32;
    }
    #[inline(never)]
    fn enter_kernel() -> u64 {
        unsafe { getppid() as u64 }
    }
    pub struct Poke<T>(pub T);
    impl<T: Copy + Into<u64>> Poke<T> {
        #[inline(never)]
        pub fn poke_getppid(&self) -> u64 {
            enter_kernel() + std::hint::black_box(self.0).into()
        }
    }
}
fn main() {
    let p = inner::Poke(1u32);
    let mut s = 0;
    for _ in 0..3 {
        s += std::hint::black_box(&p).poke_getppid();
    }
    std::process::exit((s == 0) as i32);
}
EOF
	# rust_case NAME WANTED-SYMBOL RUSTC-FLAGS...: the 2nd user frame (above enter_kernel's caller
	# of the frameless libc getppid) is poke_getppid, demangled
	rust_case() {
		local name=$1 want=$2
		shift 2
		if ! "$RUSTC" -O -C force-frame-pointers=yes "$@" -o "$RD/r_$name" "$RD/r.rs" 2>"$RD/rc.err"; then
			skip "rustc cannot build the $name test program: $(head -1 "$RD/rc.err")"
			return
		fi
		run_capture "$P" trace --format json -e "$TP//stack/" -- "$RD/r_$name"
		if check_stacks "$OUT" 3 "user[1:2] == ['$want']"; then ok "Rust $name symbol demangled: $want"
		else fail "Rust $name: want $want"; fi
	}
	# legacy is rustc's default (naming it needs -Z on stable)
	rust_case legacy 'r::inner::Poke<T>::poke_getppid'
	rust_case v0 '<r::inner::Poke<u32>>::poke_getppid' -C symbol-mangling-version=v0
fi

# 10-14: C++ names demangled, from the symbol table, a debuglink file and .gnu_debugdata
CXX_BIN=$(command -v g++ || command -v c++ || true)
if [ -z "$CXX_BIN" ]; then
	skip_all "no C++ compiler (g++)"
fi
D=$(mktemp -d)
_tap_tmpfiles+=("$D")
cat >"$D/w.cc" <<'EOF'
// Known C++ names for the stack tests: a template member function making getppid calls.
#include <sys/syscall.h>
#include <unistd.h>
namespace psc_test {
template <typename T> struct Widget {
	__attribute__((noinline)) long poke(T n);
};
__attribute__((noinline)) static long enter_kernel() { return syscall(SYS_getppid); }
template <typename T> __attribute__((noinline)) long Widget<T>::poke(T n)
{
	long r = 0;
	for (T i = 0; i < n; i++)
		r += enter_kernel();
	return r;
}
template struct Widget<int>;
}
int main() { psc_test::Widget<int> w; return w.poke(3) < 0; }
EOF
# frame pointers, no sibling calls (enter_kernel keeps its frame, so poke is found above libc's
# frameless syscall()), no sanitizers
if ! "$CXX_BIN" -O1 -fno-omit-frame-pointer -fno-optimize-sibling-calls -o "$D/w" "$D/w.cc" 2>"$D/cc.err"; then
	skip_all "$CXX_BIN cannot build the test program: $(head -1 "$D/cc.err")"
fi
POKE='psc_test::Widget<int>::poke(int)'
cxx_case() { # cxx_case BINARY DESCRIPTION
	run_capture "$P" trace --format json -e "$TP//stack/" -- "$1"
	if check_stacks "$OUT" 3 "user[1:3] == ['$POKE', 'main']"; then ok "$2"; else fail "$2"; fi
}
cxx_case "$D/w" "C++ symbol demangled: $POKE"
run_capture "$P" trace -e "$TP//stack/" -- "$D/w"
if grep -qF "$POKE+0x" "$OUT"; then ok "C++ name in text stacks"; else fail "no $POKE in text"; fi

# stripped, symbols in a separate file found through .gnu_debuglink
objcopy --only-keep-debug "$D/w" "$D/w.debug" && strip --strip-all -o "$D/wl" "$D/w" &&
	(cd "$D" && objcopy --add-gnu-debuglink=w.debug wl)
cxx_case "$D/wl" "stripped binary: names from its .gnu_debuglink file"
rm -f "$D/w.debug"
run_capture "$P" trace --format json -e "$TP//stack/" -- "$D/wl"
if check_stacks "$OUT" 3 "'$POKE' not in user"; then ok "debug file removed: the name is gone (it came from the debuglink)"
else fail "symbols found without the debug file"; fi

# MiniDebugInfo: an xz-compressed symbol table in .gnu_debugdata, as Fedora ships binaries
if ! command -v xz >/dev/null; then
	skip "no xz to build a .gnu_debugdata section"
else
	nm -D "$D/w" --format=posix --defined-only | awk '{ print $1 }' | sort >"$D/dyn"
	nm "$D/w" --format=posix --defined-only | awk '$2 ~ /^[TtWw]$/ { print $1 }' | sort >"$D/funcs"
	comm -13 "$D/dyn" "$D/funcs" >"$D/keep"
	objcopy --only-keep-debug "$D/w" "$D/mini.full" &&
		objcopy -S --remove-section .gdb_index --remove-section .comment \
			--keep-symbols="$D/keep" "$D/mini.full" "$D/mini" &&
		xz -f "$D/mini" && strip --strip-all -o "$D/wm" "$D/w" &&
		objcopy --add-section .gnu_debugdata="$D/mini.xz" "$D/wm"
	cxx_case "$D/wm" "stripped binary: names from .gnu_debugdata"
fi

done_testing
