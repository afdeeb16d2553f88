#!/bin/bash
# CLI tests of `perfscope num-dist` on distributions known in advance: dd's write sizes (100 of
# 512 bytes, 50 of 4096), percentiles, the log2 histogram, --perins, key=, --than, --heatmap,
# JSON, usage errors.
# shellcheck source=tests/cli/tap.sh
source "$(dirname "$0")/tap.sh"
P=${PERFSCOPE:?}
GEN=${BUILD_ROOT:?}/bench/gen_events
TP=syscalls:sys_enter_write

plan 14
if ! need_root; then
	skip_all "needs root (tracepoints)"
fi
if ! "$P" trace -e $TP --duration 0.01 >/dev/null 2>&1; then
	skip_all "no $TP tracepoint on this kernel"
fi
TMPD=$(mktemp -d)
trap 'rm -rf "$TMPD"' EXIT
TWO_DD="dd if=/dev/zero of=/dev/null bs=512 count=100 status=none; dd if=/dev/zero of=/dev/null bs=4096 count=50 status=none"

# 1-5: 150 writes to fd 1: 100 of 512 bytes, 50 of 4096
run_report "$P" num-dist -e "$TP/fd==1/num=count/" -- bash -c "$TWO_DD"
check "two dd: exit 0 (exit $RC)" test "$RC" -eq 0
check "count 150, min 512, mean 1706.7, max 4096" \
	grep -q "^$TP: count 150  min 512  mean 1706.7  max 4096$" "$OUT"
# percentiles are their bucket's midpoint, within 1/64 of the value; the max is exact
check "p50 within 1.6% of 512; p90 p95 p99 p99.9 4096" \
	awk '$1 == "p50" { f = ($2 >= 504 && $2 <= 520 && $4 == 4096 && $6 == 4096 && $8 == 4096 && $10 == 4096) } END { exit !f }' "$OUT"
check "log2 histogram: 100 in [512, 1K)" grep -qE '^\[512, 1K\) +100 \|@+ *\|$' "$OUT"
check "log2 histogram: 50 in [4K, 8K)" grep -qE '^\[4K, 8K\) +50 \|@+ *\|$' "$OUT"

# 6-7: key=: one distribution per value
run_report "$P" num-dist -e "$TP/fd==1/num=count/key=count>1000/" -- bash -c "$TWO_DD"
check "key=count>1000: key 0 has 100 values of 512" grep -q "^$TP key 0: count 100  min 512  mean 512.0  max 512$" "$OUT"
check "key=count>1000: key 1 has 50 values of 4096" grep -q "^$TP key 1: count 50  min 4096  mean 4096.0  max 4096$" "$OUT"

# 8: --perins with a command: per thread
run_report "$P" num-dist -e "$TP/fd==1/num=count/" --perins -- bash -c "$TWO_DD"
check "--perins with a COMMAND: one distribution per thread (two dd)" \
	test "$(grep -c "^$TP tid dd/[0-9]*: count" "$OUT")" -eq 2

# 9-10: JSON with the histogram's members
run_report "$P" num-dist -e "$TP/fd==1/num=count/alias=size/" --format json -- bash -c "$TWO_DD"
check "json: count, min, max, p50, p99 and final" python3 -c '
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
sys.exit(not (len(o) == 1 and o[0]["event"] == "size" and o[0]["count"] == 150 and o[0]["min"] == 512
  and o[0]["max"] == 4096 and abs(o[0]["p50"] - 512) <= 8 and o[0]["p99"] == 4096 and o[0]["final"]))' "$OUT"
run_report "$P" num-dist -e sched:sched_switch//num=prev_prio/ -i 100 --duration 0.35 --format json
check "json with -i: interval objects, then final ones" python3 -c '
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])]
sys.exit(not (any(not x.get("final") for x in o) and o[-1]["final"]))' "$OUT"

# 11: --than prints only the events above it
run_report "$P" num-dist -e "$TP/fd==1/num=count/" --than 1000 -- bash -c "$TWO_DD"
check "--than 1000: the 50 writes of 4096 printed" test "$(grep -c '^  num 4096 > 1000$' "$OUT")" -eq 50

# 12: --heatmap writes an SVG
run_report "$P" num-dist -e "$TP/fd==1/num=count/" --heatmap "$TMPD/h.svg" -- bash -c "$TWO_DD"
check "--heatmap: a valid SVG document" python3 -c '
import sys, xml.etree.ElementTree as E
sys.exit(not E.parse(sys.argv[1]).getroot().tag.endswith("svg"))' "$TMPD/h.svg"

# 13-14: usage errors
run_report "$P" num-dist -e $TP
check "no num=: exit 2 saying so (exit $RC)" bash -c "[ $RC -eq 2 ] && grep -q 'num=EXPR' '$ERR'"
run_report "$P" num-dist -e "$TP//num=count/" --than 10xs
check "--than 10xs: exit 2 (exit $RC)" test "$RC" -eq 2
done_testing
