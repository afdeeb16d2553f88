#!/usr/bin/env bash
# `perfscope exporter` with the real Prometheus stack: a Prometheus server scrapes it every second
# and its query API shows rising counters per CPU; software-event counts agree with Debian's
# node_exporter (perf collector only) on the same workload; promtool is happy with both formats.
# shellcheck source=tests/cli/exporter_lib.sh
source "$(dirname "$0")/exporter_lib.sh"
exporter_setup 11 "system-wide perf events"
ncpu=$(getconf _NPROCESSORS_ONLN)

if start_exporter main --collector.perf.tracepoint=sched:sched_switch; then ok "exporter serves on 127.0.0.1:$PORT"; else
	fail "exporter did not start"; fi
EXP_PID=$PID
EXP_LOG=$LOG
URL=$URL/metrics

# ---- promtool, on text format and on what Prometheus itself asks for
if command -v promtool >/dev/null; then
	curl -s --max-time 10 "$URL" >"$TMP/text.prom"
	if promtool check metrics <"$TMP/text.prom" >"$TMP/pt.out" 2>&1; then
		ok "promtool check metrics: clean ($(grep -vc '^#' "$TMP/text.prom") samples, tracepoint counter included)"
	else fail "promtool check metrics"; sed 's/^/#   /' "$TMP/pt.out" | head -5; fi
else
	skip "promtool not installed (Debian package prometheus)"
fi

# ---- the shipped examples: the scrape config and the systemd unit are valid as they are
EX=${SOURCE_ROOT:-$(dirname "$0")/../..}/examples/exporter
if command -v promtool >/dev/null; then
	if promtool check config "$EX/prometheus.yml" >"$TMP/ptc.out" 2>&1; then ok "promtool check config examples/exporter/prometheus.yml"; else
		fail "promtool check config"; sed 's/^/#   /' "$TMP/ptc.out" | head -5; fi
else
	skip "promtool not installed (Debian package prometheus)"
fi
# systemd-analyze wants the binary where ExecStart says and the man page installed: this build's
# binary instead, and no Documentation= line; everything else as shipped.
if command -v systemd-analyze >/dev/null; then
	sed -e "s|/usr/local/bin/perfscope|$P|" -e '/^Documentation=/d' "$EX/perfscope-exporter.service" >"$TMP/perfscope-exporter.service"
	if SYSTEMD_LOG_LEVEL=warning systemd-analyze verify "$TMP/perfscope-exporter.service" >"$TMP/sa.out" 2>&1; then
		ok "systemd-analyze verify examples/exporter/perfscope-exporter.service"
	else fail "systemd-analyze verify"; sed 's/^/#   /' "$TMP/sa.out" | head -5; fi
else
	skip "systemd-analyze not installed"
fi

# ---- a real Prometheus scrapes it every second; counters rise per CPU in its query API
if command -v prometheus >/dev/null; then
	PROM_PORT=$("${CLIENT[@]}" free-port)
	mkdir -p "$TMP/prom-data"
	cat >"$TMP/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: perfscope
    static_configs:
      - targets: ['127.0.0.1:$PORT']
EOF
	prometheus --config.file="$TMP/prometheus.yml" --storage.tsdb.path="$TMP/prom-data" \
		--web.listen-address=127.0.0.1:"$PROM_PORT" --log.level=warn 2>"$TMP/prometheus.log" &
	PROM_PID=$!
	PIDS+=("$PROM_PID")
	# context switches on every CPU while Prometheus collects samples
	for ((c = 0; c < ncpu; c++)); do
		taskset -c "$c" "$WORKLOAD" sleeps 40000 &
		PIDS+=("$!")
	done
	PROM=http://127.0.0.1:$PROM_PORT
	if wait_http "$PROM/-/ready"; then ok "prometheus ready on 127.0.0.1:$PROM_PORT"; else
		fail "prometheus did not start"; sed 's/^/#   /' "$TMP/prometheus.log" | tail -5; fi
	run_capture "${CLIENT[@]}" prom-rising "$PROM" node_perf_context_switches_total "$ncpu" 25
	if [ "$RC" -eq 0 ]; then ok "query API: $(cat "$OUT")"; else fail "$(cat "$OUT") $(tail -2 "$ERR")"; fi
	up=$("${CLIENT[@]}" prom-query "$PROM" 'up{job="perfscope"}')
	tp=$("${CLIENT[@]}" prom-query "$PROM" 'count(node_perf_sched_sched_switch_total)')
	if [ "$up" = 1 ] && [ "$tp" = "$ncpu" ]; then ok "up == 1 (Prometheus negotiated and parsed every scrape), tracepoint series on $tp CPUs"; else
		fail "up '$up', tracepoint series '$tp'"; fi
	kill "$PROM_PID"
else
	for _ in 1 2 3; do skip "prometheus not installed (Debian package prometheus)"; done
fi

# ---- node_exporter's perf collector on another port: software events agree over one workload
NE=$(command -v prometheus-node-exporter || command -v node_exporter)
if [ -n "$NE" ]; then
	NE_PORT=$("${CLIENT[@]}" free-port)
	"$NE" --collector.disable-defaults --collector.perf --web.listen-address=127.0.0.1:"$NE_PORT" 2>"$TMP/ne.log" &
	NE_PID=$!
	PIDS+=("$NE_PID")
	NE_URL=http://127.0.0.1:$NE_PORT/metrics
	if wait_http "$NE_URL" && curl -s "$NE_URL" | grep -q '^node_perf_context_switches_total'; then
		ok "node_exporter $("$NE" --version 2>&1 | head -1 | awk '{ print $3 }') serves its perf collector on $NE_PORT"
	else fail "node_exporter's perf collector did not start"; sed 's/^/#   /' "$TMP/ne.log" | tail -3; fi
	# 20000 page touches and 2000 sleeps on every CPU, pinned, between two scrapes of each
	wl=$TMP/workload.sh
	cat >"$wl" <<EOF
#!/bin/bash
for ((c = 0; c < $ncpu; c++)); do taskset -c \$c "$WORKLOAD" faults 20000 & taskset -c \$c "$WORKLOAD" sleeps 2000 & done
wait
EOF
	run_capture "${CLIENT[@]}" compare "$URL" "$NE_URL" bash "$wl"
	sed -n 's/^# /#   /p' "$OUT"
	if [ "$RC" -eq 0 ]; then ok "software events: $(grep -v '^#' "$OUT") (increases within 200 + 2%)"; else
		fail "software events differ: $(grep -v '^#' "$OUT") $(tail -2 "$ERR")"; fi
	# what node_exporter silently drops, perfscope says
	if curl -s "$NE_URL" | grep -q '^node_perf_cpucycles_total'; then
		skip "this machine has a hardware PMU: node_exporter exports cycles too"
	elif curl -s "$URL" | grep -q '^node_perf_event_supported{cpu="0",event="cycles"} 0$' &&
		grep -qE 'event cycles .*cannot be counted|perf events are not supported on this machine.*[ :]cycles[,( ]' "$EXP_LOG"; then
		ok "no hardware PMU: node_exporter drops cycles silently, perfscope reports it (gauge 0, log line)"
	else fail "cycles: neither exported nor reported as unsupported"; fi
	kill "$NE_PID"
else
	for _ in 1 2 3; do skip "node_exporter not installed (Debian package prometheus-node-exporter)"; done
fi

stop "$EXP_PID"
if [ "$STOP_RC" -eq 0 ]; then ok "exporter stops cleanly on SIGTERM after all that"; else fail "exporter exit $STOP_RC"; fi
done_testing
