#!/bin/bash
# CLI tests of `perfscope memleak`: the issue's correctness workload (2,000 blocks allocated and
# freed in churn(), 7 x 4242 bytes lost in lose()) gives exactly 7 allocations and 29,694 bytes
# through lose() and nothing through churn(), as bpftrace over the same uprobes; calloc, realloc
# and posix_memalign; -p; the probes removed; usage errors.
# shellcheck source=tests/cli/tap.sh
source "$(dirname "$0")/tap.sh"
P=${PERFSCOPE:?}
: "${SOURCE_ROOT:?}"
CC=${CC:-cc}
TFS=/sys/kernel/tracing

plan 17
if ! need_root; then
	skip_all "needs root (uprobes)"
fi
[ -e $TFS/uprobe_events ] || mount -t tracefs nodev $TFS 2>/dev/null
[ -e $TFS/uprobe_events ] || skip_all "no uprobe events in this kernel"

tmp=$(mktemp -d)
bgpids=()
cleanup() {
	local p
	for p in "${bgpids[@]}"; do kill -KILL "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
T=$tmp/leak_target
# shellcheck disable=SC2086
if ! $CC -O1 -g -fno-omit-frame-pointer -o "$T" "$SOURCE_ROOT/tests/leak_target.c" 2>"$tmp/cc.log"; then
	sed 's/^/#   /' "$tmp/cc.log"
	skip_all "cannot compile the workload"
fi

# sum FILE FUNC: "count bytes" over the JSON leak groups whose stack goes through FUNC
sum() {
	python3 -c '
import json, sys
c = b = 0
for l in open(sys.argv[1]):
    o = json.loads(l)
    if "stack" in o and sys.argv[2] in o["stack"]:
        c += o["count"]; b += o["bytes"]
print(c, b)' "$1" "$2"
}

# 1-5: the correctness workload
run_report "$P" memleak --format json -- "$T"
check "memleak -- workload: exit 0 (got $RC)" test "$RC" -eq 0
got=$(sum "$OUT" lose)
check "through lose(): 7 allocations, 29694 bytes (got $got)" test "$got" = "7 29694"
got=$(sum "$OUT" churn)
check "through churn(): nothing (got $got)" test "$got" = "0 0"
D="the stack is innermost first: malloc, lose, main"
if python3 -c '
import json, sys
for l in open(sys.argv[1]):
    o = json.loads(l)
    if "lose" in o.get("stack", []):
        s = o["stack"]; i = s.index("lose")
        sys.exit(not (i >= 1 and "malloc" in s[i - 1] and s[i + 1] == "main"))
sys.exit(1)' "$OUT"; then ok "$D"; else
	fail "$D"
	# what the stacks through lose() were, and what stderr said (a loss of side-band records?)
	grep '"lose"' "$OUT" | head -3 | sed 's/^/#   /'
	sed 's/^/#   /' "$ERR" | head -8
fi
check "stderr counts the 2000 frees that paired" grep -q "; 2000 freed;" "$ERR"

# 6: bpftrace over the same uprobes agrees
LIBC=$("$P" list 'uprobe:malloc@libc.so.6' --format json | python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["binary"])')
if command -v bpftrace >/dev/null && [ -n "$LIBC" ]; then
	cat >"$tmp/ml.bt" <<EOF
uprobe:$LIBC:malloc /pid == cpid/ { @size[tid] = arg0; }
uretprobe:$LIBC:malloc /pid == cpid && @size[tid]/ { @live[retval] = @size[tid]; delete(@size[tid]); }
uprobe:$LIBC:free /pid == cpid/ { delete(@live[arg0]); }
END { clear(@size); }
EOF
	bpftrace "$tmp/ml.bt" -c "$T" >"$tmp/bt.out" 2>"$tmp/bt.err"
	bt=$(awk '/^@live\[/ { n++; b += $2 } END { print n + 0, b + 0 }' "$tmp/bt.out")
	check "bpftrace over the same uprobes: $bt" test "$bt" = "7 29694"
else
	skip "no bpftrace"
fi

# 7b: a -O2 -fomit-frame-pointer build, its stacks unwound with --call-graph dwarf (frame pointers
# stop in it): the same 7 blocks through lose(), none through churn()
# shellcheck disable=SC2086
if $CC -O2 -g -fomit-frame-pointer -o "$T.nofp" "$SOURCE_ROOT/tests/leak_target.c" 2>"$tmp/cc.log"; then
	run_report "$P" memleak --call-graph dwarf,4096 -m 8192 --format json -- "$T.nofp"
	got=$(sum "$OUT" lose) churn=$(sum "$OUT" churn)
	check "--call-graph dwarf on a build without frame pointers: lose() $got (7 29694), churn() $churn (exit $RC)" \
		sh -c "[ $RC -eq 0 ] && [ '$got' = '7 29694' ] && [ '$churn' = '0 0' ] && grep -q 'DWARF unwinding' '$ERR'"
else
	skip "cannot build the workload with -fomit-frame-pointer"
fi

# 7: text
run_report "$P" memleak -q -- "$T"
check "text: 7 allocations, 29694 bytes not freed, then the stack" \
	grep -A3 "^7 allocations, 29694 bytes not freed, by leak_target, from:" "$OUT" -q

# 8-11: calloc, realloc, posix_memalign
run_report "$P" memleak --format json -- "$T" variety
total=$(python3 -c '
import json, sys
for l in open(sys.argv[1]):
    o = json.loads(l)
    if o.get("summary"): print(o["count"], o["bytes"])' "$OUT")
check "variety: 10 allocations, 35294 bytes in all (got $total)" test "$total" = "10 35294"
check "... realloc's 5000 bytes through variety" python3 -c '
import json, sys
sys.exit(not any(o.get("bytes") == 5000 and o["stack"][0] == "realloc" and "variety" in o["stack"]
                 for o in map(json.loads, open(sys.argv[1]))))' "$OUT"
check "... calloc's 300 bytes" python3 -c '
import json, sys
sys.exit(not any(o.get("bytes") == 300 and "calloc" in o["stack"][0] for o in map(json.loads, open(sys.argv[1]))))' "$OUT"
check "... posix_memalign's 300 bytes" python3 -c '
import json, sys
sys.exit(not any(o.get("bytes") == 300 and o["stack"][0] == "posix_memalign" for o in map(json.loads, open(sys.argv[1]))))' "$OUT"

# 12-14: -p PID: attached before the workload goes on, reports when it exits
"$T" wait "$tmp/go" &
wpid=$!
bgpids+=("$wpid")
# the workload itself (not the shell before its exec), its C library mapped: memleak -p probes
# the library the process maps
for _ in $(seq 100); do
	[ "$(readlink "/proc/$wpid/exe")" = "$T" ] && grep -q 'libc\.so' "/proc/$wpid/maps" && break
	sleep 0.05
done
"$P" memleak --format json -i 100 -p "$wpid" >"$tmp/p.out" 2>"$tmp/p.err" &
mpid=$!
bgpids+=("$mpid")
# ready once its events are open: its first interval line (-i 100)
for _ in $(seq 200); do grep -q '"summary"' "$tmp/p.out" && break; sleep 0.1; done
touch "$tmp/go"
wait "$mpid"
rc=$?
check "-p: exit 0 when the process exits (got $rc)" test $rc -eq 0
[ $rc -eq 0 ] || grep -v "events, 0 lost" "$tmp/p.err" | sed "s/^/#   /"
# the final report: the lines after the last interval's summary
awk '/"summary"/ { if (!/"final":true/) { n = NR } } { l[NR] = $0 } END { for (i = n + 1; i <= NR; i++) print l[i] }' "$tmp/p.out" >"$tmp/final.out"
got=$(sum "$tmp/final.out" lose)
check "-p: through lose(): 7 allocations, 29694 bytes (got $got)" test "$got" = "7 29694"
if grep -q "^[pr]:perfscope_$mpid/" $TFS/uprobe_events; then fail "probes of $mpid left"; else ok "no probe left after the run"; fi

# 15-16: usage
expect_rc "--top 0" 2 "$P" memleak --top 0 -- true
expect_rc "--libc of no library" 2 "$P" memleak --libc /no/such/libc.so -- true

done_testing
