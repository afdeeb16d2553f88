#!/bin/bash
# perfscope profile's in-kernel sample filters (--exclude_pid, --prio, --sched_policy,
# --irqs_disabled, --tif_need_resched, --nr_running_min/max) on named spinners: what each keeps and
# drops, the drop counts in text and JSON, with --bpf too; usage errors; a build without BPF.
# shellcheck source=tests/cli/tap.sh
source "$(dirname "$0")/tap.sh"
P=${PERFSCOPE:?}
CC=${CC:-cc}

plan 20
if ! need_root; then
	skip_all "needs root (loading BPF)"
fi
TMP=$(mktemp -d)
PIDS=()
stop_spinners() {
	for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null; done
	for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null; done
	PIDS=()
}
trap 'stop_spinners; rm -rf "$TMP"' EXIT

# 1-5: usage errors first: they need no BPF
expect_rc "--prio above 139 is a usage error" 2 "$P" profile --prio 140 --duration 1
expect_rc "--prio N-M with N > M is a usage error" 2 "$P" profile --prio 125-120 --duration 1
expect_rc "--sched_policy 4 (no such policy) is a usage error" 2 "$P" profile --sched_policy 4 --duration 1
expect_rc "--irqs_disabled=2 is a usage error" 2 "$P" profile --irqs_disabled=2 --duration 1
expect_rc "--nr_running_min above --nr_running_max is a usage error" 2 \
	"$P" profile --nr_running_min 3 --nr_running_max 2 --duration 1

# A build without the BPF programs (-Dbpf=disabled): the filters say they are unavailable, exit 1
if [ ! -f "${BUILD_ROOT:?}/bpf/filter.skel.h" ]; then
	run_capture "$P" profile -F 99 --exclude_pid 1 --duration 1
	if [ "$RC" -eq 1 ] && grep -q 'sample filters are unavailable.*-Dbpf=disabled' "$ERR"; then
		ok "a build without BPF programs: the filters say so ($(head -1 "$ERR")) and exit 1"
	else
		fail "a build without BPF programs: exit $RC: $(head -2 "$ERR")"
	fi
	skip_all "this build has no BPF programs (-Dbpf=disabled)"
fi
ok "this build has the filter program (the -Dbpf=disabled case is checked by such builds)"
expect_rc "a filter on a tracepoint event is a usage error" 2 \
	"$P" profile -e sched:sched_switch --exclude_pid 1 --duration 1

# Spinners with names of their own: their comm is the root frame of folded output.
printf 'int main(void) { for (;;) __asm__ volatile(""); }\n' >"$TMP/spin.c"
# shellcheck disable=SC2086
if ! $CC -O0 -o "$TMP/spin_a" "$TMP/spin.c" 2>"$TMP/cc.err"; then
	sed 's/^/# /' "$TMP/cc.err"
	skip_all "cannot compile a spinner"
fi
cp "$TMP/spin_a" "$TMP/spin_b"
cp "$TMP/spin_a" "$TMP/spin_c"
# spin NAME [launcher...]: starts a spinner, its PID in $SPID
spin() {
	local name=$1; shift
	"$@" "$TMP/$name" &
	SPID=$!
	PIDS+=("$SPID")
}
# samples FILE COMM: the samples whose root frame is COMM in folded FILE
samples() { awk -v c="$2" '{ split($0, f, ";"); if (f[1] == c) n += $NF } END { print n + 0 }' "$1"; }

# 8-10: --exclude_pid drops exactly the process's samples; the drops are counted in the header
spin spin_a; A=$SPID
spin spin_b nice -n 5
sleep 0.2
run_capture "$P" profile -F 499 -a --exclude_pid "$A" --format folded -o "$TMP/x.folded" --duration 1
if [ "$RC" -ne 0 ] && grep -q 'filter' "$ERR"; then
	skip_all "BPF refused here: $(head -1 "$ERR")"
fi
na=$(samples "$TMP/x.folded" spin_a)
nb=$(samples "$TMP/x.folded" spin_b)
if [ "$RC" -eq 0 ] && [ "$na" -eq 0 ] && [ "$nb" -gt 0 ]; then
	ok "--exclude_pid $A: spin_a has no sample, spin_b $nb"
else
	fail "--exclude_pid $A: spin_a $na, spin_b $nb samples (exit $RC)"
	sed 's/^/#   /' "$ERR" | head -5
fi
d=$(sed -n 's/.*sample filters: [0-9]* passed, dropped: exclude_pid \([0-9]*\).*/\1/p' "$ERR")
if [ -n "$d" ] && [ "$d" -gt 0 ]; then
	ok "the run's drops said on stderr: exclude_pid $d"
else
	fail "no exclude_pid drops on stderr: $(grep filters "$ERR")"
fi
run_capture "$P" profile -F 499 -a --exclude_pid "$A" --duration 1
if [ "$RC" -eq 0 ] && grep -qE '^# filters: [0-9]+ samples passed, dropped: exclude_pid [1-9][0-9]*$' "$OUT"; then
	ok "text header: $(grep '^# filters' "$OUT")"
else
	fail "text header without the filter counts (exit $RC): $(head -3 "$OUT" | tr '\n' '|')"
fi

# 11: JSON carries them too
run_capture "$P" profile -F 499 -a --exclude_pid "$A" --format json --duration 1
if [ "$RC" -eq 0 ] && jq -e '.filter_passed > 0 and .filter_dropped.exclude_pid > 0' "$OUT" >/dev/null; then
	ok "JSON: $(jq -c '{filter_passed, filter_dropped}' "$OUT")"
else
	fail "JSON without the filter counts (exit $RC): $(head -c 300 "$OUT")"
fi

# 12: --prio 125 keeps the nice 5 spinner only (prio = 120 + nice)
run_capture "$P" profile -F 499 -a --prio 125 --format folded -o "$TMP/p.folded" --duration 1
na=$(samples "$TMP/p.folded" spin_a)
nb=$(samples "$TMP/p.folded" spin_b)
if [ "$RC" -eq 0 ] && [ "$na" -eq 0 ] && [ "$nb" -gt 0 ]; then
	ok "--prio 125: spin_b (nice 5) $nb samples, spin_a (nice 0) none"
else
	fail "--prio 125: spin_a $na, spin_b $nb samples (exit $RC)"
fi

# 13: --bpf runs the same filters in its own program
run_capture "$P" profile -F 499 -a --bpf --exclude_pid "$A" --format folded -o "$TMP/b.folded" --duration 1
na=$(samples "$TMP/b.folded" spin_a)
nb=$(samples "$TMP/b.folded" spin_b)
if [ "$RC" -eq 0 ] && [ "$na" -eq 0 ] && [ "$nb" -gt 0 ] &&
	grep -qE 'sample filters: [0-9]+ passed, dropped: exclude_pid [1-9]' "$ERR"; then
	ok "--bpf --exclude_pid: spin_a none, spin_b $nb samples, drops counted"
else
	fail "--bpf --exclude_pid: spin_a $na, spin_b $nb samples (exit $RC): $(grep filters "$ERR")"
fi

# 14-15: --irqs_disabled=0 keeps user-space samples (interrupts are always on there); =1 drops them
run_capture "$P" profile -F 499 -a --irqs_disabled=0 --format folded -o "$TMP/i.folded" --duration 1
na=$(samples "$TMP/i.folded" spin_a)
if [ "$RC" -eq 0 ] && [ "$na" -gt 0 ]; then
	ok "--irqs_disabled=0: spin_a (user space) keeps $na samples"
else
	fail "--irqs_disabled=0: spin_a $na samples (exit $RC): $(head -2 "$ERR")"
fi
run_capture "$P" profile -F 499 -a --irqs_disabled --format json --duration 1
if [ "$RC" -eq 0 ] && jq -e '.filter_dropped.irqs_disabled > 0' "$OUT" >/dev/null; then
	ok "--irqs_disabled: samples with interrupts on dropped: $(jq -c .filter_dropped "$OUT")"
else
	fail "--irqs_disabled (exit $RC): $(head -c 200 "$OUT") $(head -2 "$ERR")"
fi

# 16: --tif_need_resched loads (this kernel's bit) and counts
run_capture "$P" profile -F 499 -a --tif_need_resched=0 --format json --duration 1
if [ "$RC" -eq 0 ] && jq -e '.filter_passed > 0 and (.filter_dropped | has("tif_need_resched"))' "$OUT" >/dev/null; then
	ok "--tif_need_resched=0: $(jq -c '{filter_passed, filter_dropped}' "$OUT")"
else
	fail "--tif_need_resched=0 (exit $RC): $(head -c 200 "$OUT") $(head -2 "$ERR")"
fi
stop_spinners

# 17: --sched_policy BATCH keeps the SCHED_BATCH spinner only
spin spin_a; spin spin_c chrt -b 0
sleep 0.2
run_capture "$P" profile -F 499 -a --sched_policy BATCH --format folded -o "$TMP/s.folded" --duration 1
na=$(samples "$TMP/s.folded" spin_a)
nc=$(samples "$TMP/s.folded" spin_c)
if [ "$RC" -eq 0 ] && [ "$na" -eq 0 ] && [ "$nc" -gt 0 ]; then
	ok "--sched_policy BATCH: spin_c (SCHED_BATCH) $nc samples, spin_a none"
else
	fail "--sched_policy BATCH: spin_a $na, spin_c $nc samples (exit $RC)"
fi
stop_spinners

# 18-20: two spinners pinned on CPU 1 keep its runqueue at 2 or more while either runs
if [ "$(nproc)" -lt 2 ]; then
	skip_all "one CPU: nothing to pin on CPU 1"
fi
spin spin_a taskset -c 1; spin spin_b taskset -c 1
sleep 0.2
run_capture "$P" profile -F 499 -C 1 --nr_running_min 2 --format folded -o "$TMP/n2.folded" --duration 1
na=$(samples "$TMP/n2.folded" spin_a)
nb=$(samples "$TMP/n2.folded" spin_b)
if [ "$RC" -eq 0 ] && [ "$na" -gt 0 ] && [ "$nb" -gt 0 ]; then
	ok "two spinners on CPU 1, --nr_running_min 2: both kept ($na, $nb samples)"
else
	fail "two spinners, --nr_running_min 2: spin_a $na, spin_b $nb (exit $RC): $(head -2 "$ERR")"
fi
run_capture "$P" profile -F 499 -C 1 --nr_running_max 1 --format folded -o "$TMP/n1.folded" --duration 1
na=$(samples "$TMP/n1.folded" spin_a)
nb=$(samples "$TMP/n1.folded" spin_b)
if [ "$RC" -eq 0 ] && [ "$na" -eq 0 ] && [ "$nb" -eq 0 ] &&
	grep -qE 'dropped: nr_running_min/max [1-9]' "$ERR"; then
	ok "two spinners on CPU 1, --nr_running_max 1: none of their samples, drops counted"
else
	fail "two spinners, --nr_running_max 1: spin_a $na, spin_b $nb (exit $RC): $(grep filters "$ERR")"
fi
stop_spinners
spin spin_a taskset -c 1
sleep 0.2
run_capture "$P" profile -F 499 -C 1 --nr_running_max 1 --format folded -o "$TMP/n0.folded" --duration 1
na=$(samples "$TMP/n0.folded" spin_a)
passed=$(sed -n 's/.*sample filters: \([0-9]*\) passed.*/\1/p' "$ERR")
if [ "$RC" -eq 0 ] && [ "$na" -gt 0 ]; then
	ok "one spinner on CPU 1, --nr_running_max 1: its samples kept ($na; two spinners: none)"
elif [ "$RC" -eq 0 ] && [ "${passed:-1}" -eq 0 ]; then
	skip "CPU 1 never had a runqueue of one task in that second (other work on this machine)"
else
	fail "one spinner, --nr_running_max 1: spin_a $na samples (exit $RC): $(grep filters "$ERR")"
fi
stop_spinners
done_testing
