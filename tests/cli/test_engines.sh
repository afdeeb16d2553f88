#!/bin/bash
# The engines without the skeleton (issue 20): examples/engines.c drives the session loop, the event
# printer, the pair engine and the stack pipeline on a command that naps a known number of times;
# its report must account for every nap, its folded file hold the nap's stack.
# shellcheck source=tests/cli/tap.sh
source "$(dirname "$0")/tap.sh"
P=${PERFSCOPE:?}
W=${BUILD_ROOT:?}/tests/mt_workload
E=$BUILD_ROOT/examples/example_engines
NAPS=20

plan 14
if [ ! -d "$BUILD_ROOT/examples" ]; then
	skip_all "examples are not built here (-Dexamples=false)"
fi
if ! need_root; then
	skip_all "needs root (system-wide tracepoints)"
fi
if ! "$P" trace -e sched:sched_switch --duration 0.01 >/dev/null 2>&1; then
	skip_all "no sched tracepoints on this kernel"
fi
# the napper runs on a CPU whose idle-time events reach the rings (tap.sh idle_ok_cpu)
pin_idle_ok "$P" "$W"
TMPD=$(mktemp -d)
trap 'rm -rf "$TMPD"' EXIT
# REPORT KEY: the number after "KEY " in the report ("pair paired 20", "stacks: 21 folded")
num() { awk -v k="$1" 'index($0, k " ") == 1 { print $(split(k, _, " ") + 1) + 0; f = 1 }
	END { if (!f) print -1 }' "$OUT"; }

# 1: the run; the command is its own hang guard (NAPS naps of 5 ms), timeout only for a hang
run_capture timeout -s INT -k 10 300 "$E" -n 5 -o "$TMPD/naps.folded" -- \
	"${PIN[@]}" "$W" naps "$NAPS" 5 "$TMPD/nvcsw"
check "exit 0 (exit $RC)" test "$RC" -eq 0
[ "$RC" -eq 0 ] || sed 's/^/#   stderr: /' "$ERR" | head -5
paired=$(num "pair paired") lost=$(num "pair lost") replaced=$(num "pair replaced")
open=$(num "pair open") evicted=$(num "pair evicted")
kdrop=$(awk '/^session:/ { for (i = 1; i < NF; i++) if ($(i + 1) == "kernel_dropped") print $i }' "$OUT")
klost=$(awk '/^session:/ { for (i = 1; i < NF; i++) if ($(i + 1) == "lost") print $i }' "$OUT")
nvcsw=$(cat "$TMPD/nvcsw" 2>/dev/null || echo -1)
folded=$(num "stacks:")
diag "paired $paired lost $lost replaced $replaced open $open evicted $evicted;" \
	"kernel: lost $klost dropped $kdrop; switched out $nvcsw times; $folded stacks folded"

# 2: evprint's text lines, the first 5 events of the command: its wakeups and switches
check "5 event lines, each a wakeup or a switch of the command" awk '
	/ sched:sched_(wakeup|switch): / { n++
		if ($0 !~ /(comm|prev_comm|next_comm)=(mt_workload|taskset|example_engines) /) bad++ }
	END { exit !(n == 5 && !bad) }' "$OUT"

# 3: every outcome of the pair engine, by its name
check "the report names the 9 pair outcomes" awk '
	$1 == "pair" && $2 ~ /^(paired|replaced|no_start|open|evicted|lost|reversed|nomem|unwound)$/ &&
	$3 ~ /^[0-9]+$/ { n++ } END { exit n != 9 }' "$OUT"

# 4-6: each nap is a wakeup then a switch-in. On any CPU: paired, lost (a loss invalidates the
# starts before it), or its wakeup dropped by the kernel before the ring (kdrop.h: counted as
# kernel_dropped) or its switch-in dropped (the wakeup left replaced or open). On a CPU that
# delivers idle-time events, every wakeup reaches the engine. The switches the kernel counted for
# the command (getrusage, each ended by a switch-in) bound what paired from above.
check "paired + lost + replaced + open + evicted + kernel_dropped >= $NAPS" \
	test $((paired + lost + replaced + open + evicted + kdrop)) -ge "$NAPS"
RUN_KDROP=$kdrop idle_check "on CPU ${IDLE_OK_CPU:-?}: every wakeup reached the engine, some paired" \
	test $((paired + lost + replaced + open + evicted)) -ge "$NAPS" -a "$paired" -ge 1
check "paired + lost <= the command's switches ($nvcsw)" \
	test "$nvcsw" -ge 0 -a $((paired + lost)) -le "$nvcsw"

# 7: the latencies summed are those of the pairs
check "run delay: one per pair, a mean above 0" awk -v p="$paired" '
	/^run delay:/ { f = 1; ok = $3 == p && (p == 0 || ($6 > 0 && $7 == "us")) }
	END { exit !(f && ok) }' "$OUT"

# 8-9: the stack pipeline: the naps' stack, folded under the command's name, written; every
# switch out of the command counted there (its samples are taken in its own context)
check "folded file: 'STACK COUNT' lines, a mt_workload;...nanosleep...;schedule stack" awk '
	{ stack = substr($0, 1, length($0) - length($NF) - 1) }
	NF < 2 || $NF !~ /^[0-9]+$/ { bad++ }
	stack ~ /^mt_workload;/ && stack ~ /nanosleep/ && stack ~ /;_*schedule_\[k\]/ { nap += $NF }
	END { exit !(NR > 0 && !bad && nap > 0) }' "$TMPD/naps.folded"
total=$(awk '{ n += $NF } END { print n + 0 }' "$TMPD/naps.folded")
check "the file counts the $folded stacks folded, at least one per nap or lost ($total)" \
	test "$total" -eq "$folded" -a $((folded + klost + kdrop)) -ge "$NAPS"

# 10-12: usage errors
expect_rc "no command: usage error" 2 "$E"
expect_rc "-n with letters: usage error" 2 "$E" -n abc -- true
expect_rc "an unknown option: usage error" 2 "$E" --bogus -- true
# 13-14: runtime failures, said before anything runs
expect_rc "an unwritable -o FILE: runtime error" 1 "$E" -o "$TMPD/no/such/dir/f" -- true
expect_rc "a command that does not exist: runtime error" 1 "$E" -- "$TMPD/no-such-command"

done_testing
