#!/bin/bash
# CLI tests of `perfscope kwork`: N UDP datagrams over loopback, each received at once, make at least
# N NET_RX softirqs (raise -> entry -> exit), seen by perfscope kwork and by Debian's perf kwork
# in the same run; every measure's rows add up to its pairs, every event accounted for.
# shellcheck source=tests/cli/tap.sh
source "$(dirname "$0")/tap.sh"
P=${PERFSCOPE:?}

plan 10
if ! need_root; then
	skip_all "needs root (tracepoints)"
fi
for e in irq/softirq_raise irq/softirq_entry irq/irq_handler_entry workqueue/workqueue_execute_start; do
	if [ ! -d "/sys/kernel/tracing/events/$e" ]; then
		skip_all "no $e tracepoint on this kernel"
	fi
done
TMPD=$(mktemp -d)
trap 'rm -rf "$TMPD"' EXIT
json_check() { python3 -c "$1" "${@:2}"; }
N=2000
cat >"$TMPD/udp.py" <<'PY'
import socket, sys
n = int(sys.argv[1])
r = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
r.bind(("127.0.0.1", 0))
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(n):
    s.sendto(b"x" * 32, r.getsockname())
    r.recv(64)  # each datagram received before the next: one NET_RX softirq each
PY

# 1-2: help, usage errors
check "kwork --help shows examples" sh -c "'$P' kwork --help | grep -q '^Examples'"
run_capture "$P" kwork --class irq,bogus --duration 0.1
check "an unknown class is a usage error (exit $RC)" test "$RC" -eq 2

# the rows of every measure add up to its pairs; every start and end accounted for
sums_py='
import json, sys
a = [json.loads(l) for l in open(sys.argv[1])]
pairs = {x["pair"]: x["outcomes"] for x in a if "pair" in x}
bad = []
for name, o in pairs.items():
    rows = sum(x["count"] for x in a if x.get("table") == name and x.get("final"))
    if rows != o["paired"]:
        bad.append((name, rows, o["paired"]))
print("#", sorted(pairs), bad)
sys.exit(not (pairs and not bad and any(x.get("final") and "coalesced_raises" in x for x in a)))'

# 3-7: N datagrams under perf kwork record, itself under perfscope kwork (whose run covers perf's)
if command -v perf >/dev/null; then
	PERF=(perf kwork -k softirq record -o "$TMPD/perf.data" --)
else
	PERF=()
fi
run_capture "$P" kwork -k softirq --top 0 --format json -- "${PERF[@]}" python3 "$TMPD/udp.py" "$N"
cp "$OUT" "$TMPD/si.json"
check "softirq run: exit 0 (exit $RC)" test "$RC" -eq 0
check "NET_RX: at least $N latencies and $N run times, percentiles ordered" json_check '
import json, sys
n = int(sys.argv[2])
a = [json.loads(l) for l in open(sys.argv[1])]
r = {x["table"]: x for x in a if x.get("name") == "NET_RX" and x.get("final")}
lat, run = r.get("softirq latency"), r.get("softirq runtime")
print("#", lat and lat["count"], run and run["count"])
sys.exit(not (lat and run and lat["count"] >= n and run["count"] >= n and
  run["min_ns"] <= run["p50_ns"] <= run["p99_ns"] <= run["max_ns"]))' "$TMPD/si.json" "$N"
check "softirq: the rows add up to the pairs" json_check "$sums_py" "$TMPD/si.json"
if [ ${#PERF[@]} -eq 0 ]; then
	skip "perf is not installed"
	skip "perf is not installed"
else
	perf kwork -k softirq report -i "$TMPD/perf.data" >"$TMPD/perf.txt" 2>&1
	check "perf kwork report read the run" grep -q 'NET_RX' "$TMPD/perf.txt"
	check "perf kwork counts as many NET_RX runs (at least $N, at most 10% fewer than perfscope, whose run is longer and sees other traffic too)" python3 -c '
import json, re, sys
n = int(sys.argv[3])
pc = sum(int(m.group(1)) for m in re.finditer(r"\(s\)NET_RX:3\s*\|\s*\d+\s*\|\s*[\d.]+ ms\s*\|\s*(\d+)", open(sys.argv[1]).read()))
a = [json.loads(l) for l in open(sys.argv[2])]
sc = [x["count"] for x in a if x.get("name") == "NET_RX" and x.get("table") == "softirq runtime" and x.get("final")][0]
print("# perf kwork: %d NET_RX, perfscope: %d" % (pc, sc))
sys.exit(not (pc >= n and sc >= pc and sc - pc <= 0.1 * n))' "$TMPD/perf.txt" "$TMPD/si.json" "$N"
fi

# 8-9: every class for a moment, a row per CPU: five measures, each adding up
run_capture "$P" kwork --percpu --top 0 --format json --duration 0.5
cp "$OUT" "$TMPD/all.json"
check "all classes: exit 0 (exit $RC)" test "$RC" -eq 0
check "all classes, --percpu: five measures, the rows of each add up to its pairs, each row's CPU" sh -c "
	python3 -c '$sums_py' '$TMPD/all.json' && [ \$(grep -c '\"pair\"' '$TMPD/all.json') -eq 5 ] &&
	! grep '\"table\"' '$TMPD/all.json' | grep -qv '\"cpu\"'"

# 10: text with -i
run_capture "$P" kwork -k softirq,workqueue -i 200 --duration 0.5 -o "$TMPD/text.out"
check "text: the tables' headers, -i's and the end's" sh -c "
	[ \$(grep -c '^softirq runtime *calls *total' '$TMPD/text.out') -ge 2 ] &&
	grep -q '^workqueue latency' '$TMPD/text.out' && grep -q 'outcomes: paired' '$TMPD/text.out'"
done_testing
