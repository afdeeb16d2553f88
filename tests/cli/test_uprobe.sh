#!/bin/bash
# CLI tests of uprobe:/uretprobe:/kprobe: events: exact hit counts, arguments by register and return
# values, filters, stacks, a library by name, list uprobe:BINARY, and the probes removed after a
# normal exit, SIGINT, SIGTERM, and (at the next start) SIGKILL.
# shellcheck source=tests/cli/tap.sh
source "$(dirname "$0")/tap.sh"
P=${PERFSCOPE:?}
: "${SOURCE_ROOT:?}"
CC=${CC:-cc}
TFS=/sys/kernel/tracing

plan 28
if ! need_root; then
	skip_all "needs root (uprobes)"
fi
if [ ! -e $TFS/uprobe_events ]; then
	mount -t tracefs nodev $TFS 2>/dev/null
	[ -e $TFS/uprobe_events ] || skip_all "no uprobe events in this kernel"
fi

tmp=$(mktemp -d)
bgpid=
cleanup() {
	[ -n "$bgpid" ] && kill -KILL "$bgpid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
T=$tmp/uprobe_target
# shellcheck disable=SC2086
# -O0: work() pushes %rbp, so the kernel finds its caller from the stack at the entry
if ! $CC -O0 -g -fno-omit-frame-pointer -o "$T" "$SOURCE_ROOT/tests/cli/uprobe_target.c" 2>"$tmp/cc.log"; then
	sed 's/^/#   /' "$tmp/cc.log"
	skip_all "cannot compile the target program"
fi

# has_group PID: the probes of perfscope process PID are in the kernel
has_group() { grep -q "^[pr]:perfscope_$1/" $TFS/uprobe_events; }
# wait_group PID: until they are (the process is making them), at most 10 s
wait_group() {
	for _ in $(seq 100); do has_group "$1" && return 0; sleep 0.1; done
	return 1
}

# 1-2: one event per call, exactly; the stats say so
run_capture "$P" trace -e "uprobe:work@$T" -- "$T" 1000
check "1000 calls -> 1000 events (exit $RC)" test "$RC" -eq 0 -a "$(grep -c 'uprobe:work@' "$OUT")" -eq 1000
check "stderr: 1000 events, 0 lost" grep -q "^perfscope trace: uprobe:work@$T: 1000 events, 0 lost$" "$ERR"

# 3-4: the arguments by register, in order: work(i, 2, 3, 4, 5, 6)
run_capture "$P" trace -e "uprobe:work@$T" --format json -- "$T" 5
args=$(python3 -c '
import json, sys
for l in open(sys.argv[1]):
    f = json.loads(l)["fields"]
    print(" ".join(str(f["arg%d" % i]) for i in range(1, 7)))' "$OUT" | tr '\n' ';')
check "arg1..arg6 by register: $args" test "$args" = "0 2 3 4 5 6;1 2 3 4 5 6;2 2 3 4 5 6;3 2 3 4 5 6;4 2 3 4 5 6;"
check "events are named as written" \
	python3 -c 'import json,sys; sys.exit(any(json.loads(l)["event"] != "uprobe:work@"+sys.argv[2] for l in open(sys.argv[1])))' "$OUT" "$T"

# 5: the return value
run_capture "$P" trace -e "uretprobe:work@$T" --format json -- "$T" 4
rets=$(python3 -c '
import json, sys
print(" ".join(str(json.loads(l)["fields"]["ret"]) for l in open(sys.argv[1])))' "$OUT")
check "uretprobe ret = i*100+38: $rets" test "$rets" = "38 138 238 338"

# 6: entry and return together, in order
run_capture "$P" trace -e "uprobe:work@$T,uretprobe:work@$T" -- "$T" 3
order=$(sed -n 's/.*\(u[a-z]*probe\):work.*/\1/p' "$OUT" | tr '\n' ' ')
check "entry then return, 3 times: $order" test "$order" = "uprobe uretprobe uprobe uretprobe uprobe uretprobe "

# 7: the kernel filter on a fetched argument; the binary quoted
run_capture "$P" trace -e "uprobe:work@\"$T\"/arg1==7/" -- "$T" 20
check "filter arg1==7 -> 1 event" test "$(grep -c 'arg1=0x7 ' "$OUT")" -eq 1 -a "$(wc -l <"$OUT")" -eq 1

# 8: a filter on the return value
run_capture "$P" trace -e "uretprobe:work@\"$T\"/ret>200/" -- "$T" 5
check "filter on ret: 3 of 5" test "$(wc -l <"$OUT")" -eq 3

# 9: stacks through main
run_capture "$P" trace -e "uprobe:work@$T//stack/" -- "$T" 1
check "stack ATTR: the user stack goes through main" grep -q " main+" "$OUT"

# 10: a library by name, found as ld.so finds it
run_capture "$P" trace -e "uprobe:malloc@libc.so.6" -- ls /
check "uprobe:malloc@libc.so.6 on ls: events (exit $RC)" test "$RC" -eq 0 -a "$(grep -c 'uprobe:malloc@libc.so.6' "$OUT")" -gt 0

# 11: stat counts them too
run_capture "$P" stat -e "uprobe:work@$T" -- "$T" 777
check "stat: 777 hits" grep -Eq '^ +777 +uprobe:work@' "$ERR"

# 12-13: removed after a normal exit (the process's own group)
"$P" trace -e "uprobe:work@$T" -- "$T" 3 >/dev/null 2>&1 &
pid=$!
wait $pid
rc=$?
check "normal run exits 0" test $rc -eq 0
if has_group $pid; then fail "probes of $pid left after a normal exit"; else ok "no probe left after a normal exit"; fi

# 14-16: SIGINT while tracing system-wide
"$P" trace -e "uprobe:work@$T" -a >/dev/null 2>"$tmp/int.err" &
bgpid=$!
if wait_group $bgpid; then ok "probes made in group perfscope_$bgpid"; else fail "no group perfscope_$bgpid"; fi
kill -INT $bgpid
wait $bgpid
rc=$?
pid=$bgpid bgpid=
check "SIGINT: exit 0 (got $rc)" test $rc -eq 0
if has_group $pid; then fail "probes left after SIGINT"; else ok "no probe left after SIGINT"; fi

# 17-18: SIGTERM
"$P" trace -e "uretprobe:work@$T" -a >/dev/null 2>&1 &
bgpid=$!
wait_group $bgpid
kill -TERM $bgpid
wait $bgpid
rc=$?
pid=$bgpid bgpid=
check "SIGTERM: exit 0 (got $rc)" test $rc -eq 0
if has_group $pid; then fail "probes left after SIGTERM"; else ok "no probe left after SIGTERM"; fi

# 19-21: SIGKILL leaves them; the next start removes them (and says so with -v)
"$P" trace -e "uprobe:work@$T" -a >/dev/null 2>&1 &
bgpid=$!
wait_group $bgpid
kill -KILL $bgpid
wait $bgpid 2>/dev/null
pid=$bgpid bgpid=
check "SIGKILL: its probes are still there" has_group $pid
run_capture "$P" trace -v -e "uprobe:work@$T" -- "$T" 1
if has_group $pid; then fail "stale probes of $pid not removed at the next start"; else ok "stale probes removed at the next start"; fi
check "the next start says it removed them" grep -q "removed [0-9]* probes left by perfscope processes that are gone" "$ERR"

# 22-23: kprobes, where the kernel has none: a clear error, exit 1
if [ -e /sys/bus/event_source/devices/kprobe ]; then
	run_capture "$P" trace -e "kprobe:do_sys_openat2" -- true
	check "kprobe on a kernel with kprobes (exit $RC)" test "$RC" -eq 0
	skip "this kernel has kprobes"
else
	expect_rc "kprobe: this kernel has none" 1 "$P" trace -e "kprobe:do_sys_openat2" -- true
	check "kprobe: says the kernel has none" grep -q "this kernel has no kprobes" "$ERR"
fi

# 24-25: usage errors point at the part
expect_rc "unknown function" 2 "$P" trace -e "uprobe:wrok@$T" -- true
check "... with a suggestion and the list hint" grep -q "did you mean 'work'" "$ERR"

# 26-28: list uprobe:BINARY
run_capture "$P" list "uprobe:$T"
check "list uprobe:BIN shows work" grep -q "uprobe:work@$T" "$OUT"
run_capture "$P" list 'uprobe:*alloc@libc.so.6' --format json
check "list uprobe:GLOB@libc.so.6 --format json has malloc" \
	python3 -c 'import json,sys; n=[json.loads(l)["function"] for l in open(sys.argv[1])]; sys.exit("malloc" not in n)' "$OUT"
expect_rc "list uprobe: of a missing binary" 1 "$P" list uprobe:/no/such/binary

done_testing
