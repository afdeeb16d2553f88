#!/bin/bash
# perfscope profile --bpf: stacks counted in the kernel give the ring path's shares and formats on
# split31 (3:1 between work_a and work_b); usage errors; a build without BPF programs says so.
# shellcheck source=tests/cli/tap.sh
source "$(dirname "$0")/tap.sh"
P=${PERFSCOPE:?}
SRC=${SOURCE_ROOT:?}/tests/cli/split31.c
CC=${CC:-cc}

plan 14
if ! need_root; then
	skip_all "needs root (loading BPF)"
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# Plain flags: no sanitizer in the profiled program (frame pointers at -O0, as test_profile.sh).
# shellcheck disable=SC2086
if ! $CC -O0 -fno-omit-frame-pointer -o "$TMP/split31" "$SRC" 2>"$TMP/cc.err"; then
	sed 's/^/# /' "$TMP/cc.err"
	skip_all "cannot compile tests/cli/split31.c"
fi
ROUNDS=2s # of CPU time, counted by split31 itself

# A build without the BPF programs (-Dbpf=disabled): --bpf says so and exits 1; nothing else here
if [ ! -f "${BUILD_ROOT:?}/bpf/stacks.skel.h" ]; then
	run_capture "$P" profile -F 99 --bpf -- "$TMP/split31" 0.01s
	if [ "$RC" -eq 1 ] && grep -q -- '--bpf is not available: .*-Dbpf=disabled' "$ERR"; then
		ok "a build without BPF programs: --bpf says so ($(head -1 "$ERR")) and exits 1"
	else
		fail "a build without BPF programs: exit $RC: $(head -2 "$ERR")"
	fi
	for _ in $(seq 2 14); do skip "this build has no BPF programs (-Dbpf=disabled)"; done
	done_testing
	exit
fi

# share LEAF FILE: percent of the samples of work_a + work_b whose leaf is LEAF (folded input)
share() {
	awk -v leaf="$1" '{ n = $NF; k = $0; sub(/ [0-9]+$/, "", k);
		c = split(k, fr, ";"); if (fr[c] == "work_a" || fr[c] == "work_b") { t += n;
		if (fr[c] == leaf) s += n } } END { if (t) printf "%.1f\n", 100 * s / t; else print -1 }' "$2"
}
near() { awk -v v="$1" -v want="$2" -v tol="$3" 'BEGIN { d = v - want; exit !(d <= tol && -d <= tol) }'; }
total() { awk '{ t += $NF } END { print t + 0 }' "$1"; }

# 1-3: folded through BPF, then through the ring, on the same program
SPLIT31_SHARE=$TMP/bpf.share run_capture "$P" profile -F 999 --bpf --format folded \
	-o "$TMP/bpf.folded" -- "$TMP/split31" $ROUNDS
if [ "$RC" -ne 0 ] && grep -q 'is not available' "$ERR"; then
	skip_all "BPF refused here: $(head -1 "$ERR")"
fi
a=$(share work_a "$TMP/bpf.folded")
b=$(share work_b "$TMP/bpf.folded")
nb=$(total "$TMP/bpf.folded")
sb=$(cat "$TMP/bpf.share" 2>/dev/null || echo 75)
if [ "$RC" -eq 0 ] && near "$a" "$sb" 5 && near "$b" "$(awk -v r="$sb" 'BEGIN { print 100 - r }')" 5; then
	ok "--bpf folded: work_a $a%, work_b $b% of $nb samples (work_a ran $sb%, within 5 points)"
else
	fail "--bpf folded: work_a $a%, work_b $b% (exit $RC), wanted work_a's $sb%"
	sed 's/^/#   /' "$ERR" | head -5
fi
# two runs: a loaded machine moves each one's split (72.1 and 78.4% once), so each path is judged
# against the split split31 measured in its own run
SPLIT31_SHARE=$TMP/ring.share run_capture "$P" profile -F 999 --format folded \
	-o "$TMP/ring.folded" -- "$TMP/split31" $ROUNDS
ra=$(share work_a "$TMP/ring.folded")
nr=$(total "$TMP/ring.folded")
sr=$(cat "$TMP/ring.share" 2>/dev/null || echo 75)
if [ "$RC" -eq 0 ] && near "$a" "$sb" 5 && near "$ra" "$sr" 5 &&
	[ "$nb" -ge $((nr * 9 / 10)) ] && [ "$nb" -le $((nr * 11 / 10)) ]; then
	ok "same shares as the ring path, each within 5 points of what ran: work_a $a% by BPF (ran $sb%), $ra% by the ring (ran $sr%); $nb and $nr samples"
else
	fail "BPF work_a $a% (ran $sb%) / $nb samples, ring $ra% (ran $sr%) / $nr samples (exit $RC)"
fi
# the same stacks, frame for frame: the ring path's main;work_a line is in the BPF output
if grep -qE '^split31;(.*;)?main;work_a [0-9]+$' "$TMP/bpf.folded" &&
	line=$(grep -oE '^split31;(.*;)?main;work_a ' "$TMP/ring.folded" | head -1) &&
	grep -qF "$line" "$TMP/bpf.folded"; then
	ok "the ring path's stack '${line% }' is in the BPF profile"
else
	fail "the stacks differ: $(head -2 "$TMP/bpf.folded" | tr '\n' '|') vs $(head -2 "$TMP/ring.folded" | tr '\n' '|')"
fi

# 4-5: no sample through the ring, and the count said
run_capture "$P" profile -F 999 --bpf -- "$TMP/split31" 0.5s
if [ "$RC" -eq 0 ] && grep -qE 'cpu-clock: 0 events, 0 lost' "$ERR" &&
	grep -qE -- '--bpf: [1-9][0-9]* samples counted in the kernel, none through the ring' "$ERR"; then
	ok "no sample crosses the ring: $(grep -- '--bpf:' "$ERR")"
else
	fail "ring events or the count: exit $RC: $(tr '\n' '|' <"$ERR")"
fi
if head -1 "$OUT" | grep -q 'counted in the kernel (BPF)' && grep -qE '^ +[0-9.]+% +[0-9.]+%  work_a ' "$OUT"; then
	ok "text: the header says BPF, work_a listed"
else
	fail "text: $(head -3 "$OUT" | tr '\n' '|')"
fi

# 6-8: json with the drop fields; svg and pprof from the same counts
run_capture "$P" profile -F 999 --bpf --format json -- "$TMP/split31" 0.5s
if [ "$RC" -eq 0 ] && python3 -c '
import json, sys
o = json.loads(open(sys.argv[1]).readline())
assert o["samples"] > 0 and "bpf_keys_full" in o and "bpf_ustack_lost" in o, o.keys()
' "$OUT" 2>"$TMP/py.err"; then
	ok "json: samples and the bpf_* drop fields"
else
	fail "json: exit $RC: $(tail -1 "$TMP/py.err")"
fi
run_capture "$P" profile -F 999 --bpf -o "$TMP/cpu.svg" -- "$TMP/split31" 0.5s
check "svg: a flame graph naming work_a (exit $RC)" sh -c "[ $RC -eq 0 ] && grep -q 'work_a' '$TMP/cpu.svg'"
run_capture "$P" profile -F 999 --bpf -o "$TMP/cpu.pb.gz" -- "$TMP/split31" 0.5s
check "pprof: a gzipped profile (exit $RC)" sh -c "[ $RC -eq 0 ] && gzip -t '$TMP/cpu.pb.gz'"

# 9: -i slices: each slice holds only its own samples (cleared as read), and together they are
# every sample the program counted in that run, the last partial slice included
run_capture "$P" profile -F 999 --bpf -i 400 --format folded -o "$TMP/sl.folded" -- "$TMP/split31" $ROUNDS
n1=$(total "$TMP/sl.0001.folded" 2>/dev/null)
n2=$(total "$TMP/sl.0002.folded" 2>/dev/null)
sum=$(cat "$TMP"/sl.*.folded | awk '{ t += $NF } END { print t + 0 }')
kern=$(sed -n 's/.*--bpf: \([0-9]*\) samples counted in the kernel.*/\1/p' "$ERR")
if [ "$RC" -eq 0 ] && [ "${n1:-0}" -gt 0 ] && [ "${n1:-0}" -lt $((nb * 3 / 4)) ] && [ "${n2:-0}" -gt 0 ] &&
	[ "$sum" -eq "${kern:--1}" ]; then
	ok "-i 400: slices of $n1, $n2 ... samples, $sum in all, as many as the program counted"
else
	fail "-i 400: exit $RC, slices $n1 $n2, sum $sum, counted in the kernel '$kern'"
fi

# 10-14: usage errors, exit 2, before anything runs
usage() { # DESC PATTERN ARGS...
	local d=$1 pat=$2
	shift 2
	run_capture "$P" profile "$@"
	if [ "$RC" -eq 2 ] && grep -q -- "$pat" "$ERR"; then ok "$d"; else fail "$d: exit $RC: $(head -1 "$ERR")"; fi
}
usage "--bpf with --than: usage error" '--than judges each sample' -F 99 --bpf --than 30 --duration 1
usage "--bpf with -N: usage error" '-N counts samples as they come' -F 99 --bpf -N 5 --duration 1
usage "--bpf with --sampling-limit: usage error" '--sampling-limit drops samples' -F 99 --bpf --sampling-limit 10 --duration 1
usage "--bpf on a tracepoint: usage error naming it" 'a tracepoint does not take: -e sched:sched_switch' --bpf -e sched:sched_switch --duration 1
usage "--bpf-stacks without --bpf: usage error" '--bpf-stacks sizes' -F 99 --bpf-stacks 1024 --duration 1
done_testing
