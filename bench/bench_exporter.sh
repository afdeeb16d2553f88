#!/usr/bin/env bash
# Benchmark: perfscope exporter vs Debian's node_exporter (perf collector only), side by side in one
# run: server CPU per scrape, scrape latency (median, p99), RSS, and each one's collector time.
#
# usage: bench/bench_exporter.sh [BUILD_DIR] [SCRAPES]      (as root; BUILD_DIR default build-expo)
#
# Both serve the same events (every hardware, software and cache event of the perf collector; on
# a machine without a hardware PMU that leaves the five software events) on every online CPU. One
# client scrapes them in turn, A B A B ..., over a kept-alive connection each, with the headers
# Prometheus 2.x sends (OpenMetrics preferred, gzip), so drift of the machine hits both alike.
#   server CPU per scrape = (utime + stime of the server process over the run) / SCRAPES, from
#                           /proc/PID/stat, scrapes back to back so idle time is nothing;
#   latency               = request sent to last byte received, at the client;
#   collector time        = the server's own node_scrape_collector_duration_seconds{collector="perf"};
#   RSS                   = VmRSS (and the peak VmHWM) from /proc/PID/status after the run.
# A second perfscope figure, "perfscope 1 CPU", restricts both to CPU 0 (--collector.perf.cpus=0):
# reading a counter bound to another CPU makes the kernel interrupt that CPU (an IPI) and wait,
# which dominates the collector time on virtual machines; bench_exporter_collect (built next to
# perfscope) then times the collector alone, reading counters on its own CPU and on another one.
set -euo pipefail

BUILD=${1:-/work/build-expo}
N=${2:-2000}
P=$BUILD/cli/perfscope
NE=$(command -v prometheus-node-exporter || command -v node_exporter || true)
[ "$(id -u)" -eq 0 ] || { echo "bench_exporter: run as root (system-wide perf events)" >&2; exit 2; }
[ -x "$P" ] || { echo "bench_exporter: $P not built; meson setup/ninja first" >&2; exit 2; }
[ -n "$NE" ] || { echo "bench_exporter: install prometheus-node-exporter (scripts/install-deps.sh)" >&2; exit 2; }

TMP=$(mktemp -d)
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	rm -rf "$TMP"
}
trap cleanup EXIT

port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_up() { for _ in $(seq 100); do curl -s -o /dev/null "$1" && return 0; sleep 0.1; done; echo "bench_exporter: $1 did not come up" >&2; exit 1; }

# run_pair LABEL EXTRA_PERFSCOPE_ARGS EXTRA_NODE_EXPORTER_ARGS
run_pair() {
	local label=$1 pargs=$2 nargs=$3 pp np ppid npid
	pp=$(port)
	np=$(port)
	# shellcheck disable=SC2086
	"$P" exporter --web.listen-address=127.0.0.1:"$pp" --log.level=error $pargs 2>"$TMP/p.log" &
	ppid=$!
	PIDS+=("$ppid")
	# shellcheck disable=SC2086
	"$NE" --collector.disable-defaults --collector.perf --web.listen-address=127.0.0.1:"$np" \
		--log.level=error $nargs 2>"$TMP/ne.log" &
	npid=$!
	PIDS+=("$npid")
	wait_up "http://127.0.0.1:$pp/metrics"
	wait_up "http://127.0.0.1:$np/metrics"
	python3 - "$label" "$N" "$pp" "$ppid" "$np" "$npid" <<'EOF'
import gzip, http.client, os, re, statistics, sys, time

label, n = sys.argv[1], int(sys.argv[2])
servers = [("perfscope", int(sys.argv[3]), int(sys.argv[4])),
           ("node_exporter", int(sys.argv[5]), int(sys.argv[6]))]
HEADERS = {"Accept": "application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
           "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
           "Accept-Encoding": "gzip", "User-Agent": "Prometheus/2.42.0"}
TICK = os.sysconf("SC_CLK_TCK")
DUR = re.compile(rb'^node_scrape_collector_duration_seconds\{collector="perf"\} (\S+)$', re.M)

def cpu_s(pid):
    f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / TICK  # utime, stime

def status(pid, key):
    for line in open("/proc/%d/status" % pid):
        if line.startswith(key + ":"):
            return int(line.split()[1])  # kB

conns = {name: http.client.HTTPConnection("127.0.0.1", port, timeout=10) for name, port, _ in servers}
lat = {name: [] for name, _, _ in servers}
coll = {name: [] for name, _, _ in servers}
size = {}

def scrape(name):
    c = conns[name]
    t0 = time.perf_counter()
    c.request("GET", "/metrics", headers=HEADERS)
    r = c.getresponse()
    body = r.read()
    t1 = time.perf_counter()
    if r.status != 200:
        sys.exit("%s answered %d" % (name, r.status))
    if r.getheader("Content-Encoding") == "gzip":
        size[name] = (len(body), len(gzip.decompress(body)))
        body = gzip.decompress(body)
    m = DUR.search(body)
    return t1 - t0, float(m.group(1)) if m else float("nan")

for _ in range(50):  # warm-up: connections, allocator, Go runtime
    for name, _, _ in servers:
        scrape(name)
cpu0 = {name: cpu_s(pid) for name, _, pid in servers}
for _ in range(n):
    for name, _, _ in servers:
        l, d = scrape(name)
        lat[name].append(l)
        coll[name].append(d)
cpu1 = {name: cpu_s(pid) for name, _, pid in servers}

def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]

res = {}
for name, _, pid in servers:
    res[name] = dict(cpu=(cpu1[name] - cpu0[name]) / n * 1e6,
                     med=pct(lat[name], 50) * 1e6, p99=pct(lat[name], 99) * 1e6,
                     coll=statistics.median(coll[name]) * 1e6, coll99=pct(coll[name], 99) * 1e6,
                     rss=status(pid, "VmRSS") / 1024, hwm=status(pid, "VmHWM") / 1024,
                     size=size.get(name, (0, 0)))
print("\n### %s: %d scrapes each, interleaved\n" % (label, n))
print("| | perfscope | node_exporter | ratio |")
print("|---|---:|---:|---:|")
rows = [("server CPU per scrape (µs)", "cpu", "%.0f"),
        ("latency median (µs)", "med", "%.0f"), ("latency p99 (µs)", "p99", "%.0f"),
        ("collector time median (µs)", "coll", "%.1f"), ("collector time p99 (µs)", "coll99", "%.1f"),
        ("RSS after the run (MiB)", "rss", "%.1f"), ("peak RSS (MiB)", "hwm", "%.1f")]
a, b = res["perfscope"], res["node_exporter"]
for title, k, f in rows:
    print("| %s | %s | %s | %.2f |" % (title, f % a[k], f % b[k], a[k] / b[k] if b[k] else float("nan")))
print("| response size gzip/plain (bytes) | %d / %d | %d / %d | |" % (*a["size"], *b["size"]))
EOF
	kill "$ppid" "$npid"
	wait "$ppid" "$npid" 2>/dev/null || true
}

echo "## bench_exporter: $(uname -r), $(getconf _NPROCESSORS_ONLN) CPUs, $("$NE" --version 2>&1 | head -1 | awk '{ print $1, $3 }'), $("$P" -v 2>/dev/null | head -1)"
run_pair "every online CPU" "" ""
run_pair "CPU 0 only (--collector.perf.cpus=0)" "--collector.perf.cpus=0" "--collector.perf.cpus=0"
if [ -x "$BUILD/bench/bench_exporter_collect" ]; then
	echo
	echo "### the collector alone (bench_exporter_collect), reading from CPU 0"
	echo
	"$BUILD/bench/bench_exporter_collect" 20000
fi
if [ -x "$BUILD/bench/bench_exporter_remote" ]; then
	echo
	echo "### counters of another CPU (bench_exporter_remote): read(2), a reader pinned there, the user page"
	echo
	"$BUILD/bench/bench_exporter_remote" 3000
fi
