#!/bin/bash
# Lock contention benchmark: consumer CPU per event of perfscope lock beside Debian's perf lock
# (record, then contention -i: without BPF, perf has no live mode), on the same workload in one run.
#
# usage: bench/bench_lock.sh [-r REPS] [-s SECS] [-t THREADS] BUILD_DIR   (as root; REPS 5)
#
# Workload: tests/cli/lock_load.c, THREADS threads doing flock(LOCK_EX)/flock(LOCK_UN) on one file
# for SECS seconds (a spinlock of the file's lock context contended: tens of thousands of
# lock:contention_begin/end a second), started once the consumer is running (perfscope: its -v
# running line; perf: enabled through --control, acknowledged), its threads there before (-p
# finds the threads at its start). Each consumer follows the
# workload's pid (-p) and ends with it. Its CPU time (user + system, from wait4) less what it had
# used when the workload started (/proc/PID/stat: start-up left out) is divided by the events it
# took (perfscope: begins + ends of its JSON; perf: the samples perf record wrote). perf's cost is
# perf lock record's plus perf lock contention -i's (the report is part of getting the answer).
# REPS rounds, each running perfscope, perf, perfscope -g (a slow spell hits all alike); per
# tool the median and the spread of ns per event, the ratio of the medians and the ratio per round.
# Output: markdown on stdout (bench/README.md "Lock contention" has a copy).
set -uo pipefail

REPS=5
SECS=2
THREADS=2
USAGE="usage: bench/bench_lock.sh [-r REPS] [-s SECS] [-t THREADS] BUILD_DIR"
while getopts r:s:t: opt; do
	case $opt in
	r) REPS=$OPTARG ;;
	s) SECS=$OPTARG ;;
	t) THREADS=$OPTARG ;;
	*) echo "$USAGE" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || { echo "$USAGE" >&2; exit 2; }
B=$1
P=$B/cli/perfscope
[ -x "$P" ] || { echo "bench_lock: $P not built (ninja -C $B)" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "bench_lock: run as root (tracepoints)" >&2; exit 1; }
command -v perf >/dev/null || { echo "bench_lock: perf is not installed (apt-get install linux-perf)" >&2; exit 1; }
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
SRC=$(cd "$(dirname "$0")/.." && pwd)
${CC:-cc} -O2 -pthread -o "$D/lock_load" "$SRC/tests/cli/lock_load.c" || exit 1

exec python3 - "$P" "$D" "$REPS" "$SECS" "$THREADS" <<'PY'
import json, os, re, statistics, subprocess, sys, time
P, D, REPS, SECS, THREADS = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
HZ = os.sysconf("SC_CLK_TCK")

def cpu_now(pid):  # user + system seconds so far, all threads
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / HZ

def waited(p):  # wait4's user + system seconds
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return ru.ru_utime + ru.ru_stime

def load(tag):
    go = f"{D}/{tag}.go"
    w = subprocess.Popen([f"{D}/lock_load", "flock", THREADS, SECS, go], stdout=subprocess.DEVNULL)
    wait_for(lambda: os.path.exists(go + ".ready"), "the workload's threads")  # before -p
    return w, go

def wait_for(cond, what, guard=60):
    end = time.time() + guard
    while not cond():
        if time.time() > end:
            sys.exit(f"bench_lock: {what} never came")
        time.sleep(0.02)

def run_perfscope(r, extra):
    w, go = load(f"ps{r}{len(extra)}")
    err = open(f"{D}/ps.err", "w")
    c = subprocess.Popen([P, "lock"] + extra + ["-p", str(w.pid), "-v", "--format", "json", "-o", f"{D}/ps.json"],
                         stderr=err)
    wait_for(lambda: "running (" in open(f"{D}/ps.err").read(), "perfscope's running line")
    base = cpu_now(c.pid)
    open(go, "w").close()
    w.wait()
    cpu = waited(c) - base
    fin = [json.loads(l) for l in open(f"{D}/ps.json") if '"begins"' in l][-1]
    return cpu, fin["begins"] + fin["ends"]

def run_perf(r):
    w, go = load(f"pf{r}")
    for f in ("ctl", "ack"):
        if os.path.exists(f"{D}/{f}"):
            os.unlink(f"{D}/{f}")
        os.mkfifo(f"{D}/{f}")
    out = open(f"{D}/perf.out", "w")
    c = subprocess.Popen(["perf", "lock", "record", "-o", f"{D}/perf.data", "-D", "-1", "--control",
                          f"fifo:{D}/ctl,{D}/ack", "-p", str(w.pid)], stdout=out, stderr=out)
    ctl = os.open(f"{D}/ctl", os.O_RDWR)
    ack = os.open(f"{D}/ack", os.O_RDWR)
    os.write(ctl, b"enable\n")
    if not os.read(ack, 16).startswith(b"ack"):  # "ack\n\0"
        w.kill(); c.kill()
        sys.exit("bench_lock: perf did not acknowledge enable")
    base = cpu_now(c.pid)
    open(go, "w").close()
    w.wait()
    cpu = waited(c) - base
    os.close(ctl)
    os.close(ack)
    m = re.search(r"\((\d+) samples\)", open(f"{D}/perf.out").read())
    rep = subprocess.Popen(["perf", "lock", "contention", "-i", f"{D}/perf.data"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rcpu = waited(rep)
    return cpu, rcpu, int(m.group(1)) if m else 0

rows = []
for r in range(REPS):
    ps_cpu, ps_ev = run_perfscope(r, [])
    pf_cpu, pf_rep, pf_ev = run_perf(r)
    g_cpu, g_ev = run_perfscope(r, ["-g"])
    rows.append((ps_cpu * 1e9 / max(ps_ev, 1), ps_ev, pf_cpu * 1e9 / max(pf_ev, 1),
                 (pf_cpu + pf_rep) * 1e9 / max(pf_ev, 1), pf_ev, g_cpu * 1e9 / max(g_ev, 1), g_ev))

print(f"flock by {THREADS} threads for {SECS} s, {REPS} rounds (perfscope, perf, perfscope -g each round)\n")
print("| round | perfscope events | perfscope ns/event | perfscope -g events | perfscope -g ns/event | perf events | perf record ns/event | perf record+report ns/event | ratio | ratio -g |")
print("|---|---|---|---|---|---|---|---|---|---|")
for i, (a, ae, b, c, ce, g, ge) in enumerate(rows):
    print(f"| {i + 1} | {ae} | {a:.0f} | {ge} | {g:.0f} | {ce} | {b:.0f} | {c:.0f} | {a / c:.2f} | {g / c:.2f} |")
med = lambda k: statistics.median(x[k] for x in rows)
spread = lambda k: f"{min(x[k] for x in rows):.0f}-{max(x[k] for x in rows):.0f}"
print(f"\nmedian ns/event: perfscope lock {med(0):.0f} ({spread(0)}), perf lock record {med(2):.0f} "
      f"({spread(2)}), perf lock record + contention {med(3):.0f} ({spread(3)})")
print(f"perfscope lock -g (stacks, as perf lock record always takes): {med(5):.0f} ({spread(5)})")
print(f"ratio of medians perfscope / perf (record + report): {med(0) / med(3):.2f}, with -g "
      f"{med(5) / med(3):.2f}; "
      f"perfscope / perf record alone: {med(0) / med(2):.2f}")
PY
