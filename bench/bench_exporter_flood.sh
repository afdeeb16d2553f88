#!/usr/bin/env bash
# Benchmark: scrape latency of the exporter while connections flood it (and node_exporter's for
# reference): idle connections that never send a byte, half-open ones (half a request line, then
# silence), half-closed ones (shutdown at once) and trickling ones (a header byte every 0.2 s),
# each opened again within 0.2 s when the server closes it; 20 scrapes one after the other, each
# given 1 s (tests/cli/exporter_client.py siege). Loopback only; everything started is stopped by
# PID.
#
# usage: bench/bench_exporter_flood.sh PERFSCOPE [EXTRA_EXPORTER_ARGS]    (as root)
# prints one line per scenario: scrapes answered within 1 s, latency median and max, server fds
# and RSS before and after.
set -euo pipefail

P=${1:?usage: bench_exporter_flood.sh PERFSCOPE [EXTRA_EXPORTER_ARGS]}
EXTRA=${2:-}
NE=$(command -v prometheus-node-exporter || command -v node_exporter || true)
CLIENT=(python3 -W ignore "$(dirname "$0")/../tests/cli/exporter_client.py")
[ "$(id -u)" -eq 0 ] || { echo "bench_exporter_flood: run as root (system-wide perf events)" >&2; exit 2; }

PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

# siege NAME IDLE HALF TRICKLE: one flood against a fresh server started by start_server
siege() {
	local name=$1 idle=$2 half=$3 trickle=$4 port pid
	port=$("${CLIENT[@]}" free-port)
	start_server "$port"
	pid=$!
	PIDS+=("$pid")
	for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/metrics" && break; sleep 0.1; done
	printf '%-28s %4d idle %3d half-open %3d half-closed %3d trickling: ' "$name" "$idle" "$half" "$half" "$trickle"
	{ "${CLIENT[@]}" siege 127.0.0.1 "$port" "http://127.0.0.1:$port/metrics" "$idle" "$half" "$trickle" 20 "$pid" 1 || true; } |
		grep -v '^#' | sed 's/^round 1: //; s/; [0-9]* connections held ([^)]*)//'
	kill "$pid"
	wait "$pid" 2>/dev/null || true
}

for scenario in "200 0 0" "1000 50 50"; do
	start_server() { "$P" exporter --web.listen-address=127.0.0.1:"$1" $EXTRA 2>/dev/null & }
	# shellcheck disable=SC2086
	siege "perfscope $EXTRA" $scenario
	if [ -n "$NE" ]; then
		start_server() {
			"$NE" --web.listen-address=127.0.0.1:"$1" --collector.disable-defaults --collector.perf \
				>/dev/null 2>&1 &
		}
		# shellcheck disable=SC2086
		siege "node_exporter" $scenario
	fi
done
