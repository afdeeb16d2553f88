#!/usr/bin/env bash
# `perfscope exporter --collector.profile` with real clients: `go tool pprof -raw` fetches
# /debug/pprof/profile over HTTP with basic auth and reads a workload's known functions at their
# known shares (3:1 of its CPU time), its labels and its mapping's build-id; Prometheus scrapes
# /metrics of the same exporter meanwhile; a scraper without the password is refused; two
# concurrent scrapers of the same seconds get the same bytes; a too-long request gets 400 with
# the reason; the ring path (--collector.profile.bpf=false) reads the same shares.
# shellcheck source=tests/cli/exporter_lib.sh
source "$(dirname "$0")/exporter_lib.sh"
exporter_setup 14 "system-wide CPU sampling"
RAW=(python3 "$(dirname "$0")/pprof_raw.py")
if ! command -v go >/dev/null; then
	skip_all "needs go (golang-go, scripts/install-deps.sh) for go tool pprof"
fi
export PPROF_TMPDIR=$TMP/pprof HOME=$TMP
PROG=$TMP/pprof_prog
# shellcheck disable=SC2086  # CC may be a command with arguments
${CC:-cc} -O1 -g -fno-omit-frame-pointer -o "$PROG" "$(dirname "$0")/pprof_prog.c"
BUILD_ID=$(readelf -n "$PROG" 2>/dev/null | awk '/Build ID:/ { print $3 }')

HASH=$(python3 -W ignore -c 'import crypt; print(crypt.crypt("s3cret pass", crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1 << 5)))' 2>/dev/null)
AUTH=()
if [[ "$HASH" == \$2* ]]; then
	printf 'basic_auth_users:\n  prom: %s\n' "$HASH" >"$TMP/auth.yml"
	AUTH=(--web.config.file="$TMP/auth.yml")
fi

# workload PID SECONDS: the program spinning for SECONDS of CPU time; WPID its pid
workload() {
	"$PROG" "$1" &
	WPID=$!
	PIDS+=("$WPID")
}

# check_shares RAWFILE WHAT: alpha_work about 75% and beta_work 25% of the workload's samples,
# within 4 standard deviations of a binomial draw of that many samples (+3% for the spin's own
# edges): the machine may be loaded and the workload get few samples
check_shares() {
	local s total a b
	s=$("${RAW[@]}" shares "$1" "$WPID" alpha_work beta_work)
	read -r total a b <<<"$s"
	if [ "${total:-0}" -ge 20 ] && awk -v a="$a" -v b="$b" -v n="$total" 'BEGIN {
		d = 4 * sqrt(0.75 * 0.25 / n) + 0.03
		exit !(a > 0.75 - d && a < 0.75 + d && b > 0.25 - d && b < 0.25 + d && a + b > 0.95) }'; then
		ok "$2: alpha_work $a, beta_work $b of $total samples (3:1 by CPU time)"
	else
		fail "$2: samples, alpha, beta: '$s'"
		grep -E 'alpha|beta|Comment' "$1" | head -5 | sed 's/^/#   /'
	fi
}

if start_exporter main --collector.profile "${AUTH[@]}"; then ok "exporter with --collector.profile serves on 127.0.0.1:$PORT"; else
	fail "exporter did not start"; fi
EXP_PID=$PID
CRED=
[ ${#AUTH[@]} -gt 0 ] && CRED='prom:s3cret%20pass@'
PURL=http://${CRED}127.0.0.1:$PORT/debug/pprof/profile

# ---- Prometheus scrapes /metrics with the password while the profile is taken
PROM=
if command -v prometheus >/dev/null; then
	PROM_PORT=$("${CLIENT[@]}" free-port)
	{
		printf 'global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: perfscope\n'
		[ ${#AUTH[@]} -gt 0 ] && printf '    basic_auth:\n      username: prom\n      password: "s3cret pass"\n'
		printf "    static_configs:\n      - targets: ['127.0.0.1:%s']\n" "$PORT"
	} >"$TMP/prometheus.yml"
	prometheus --config.file="$TMP/prometheus.yml" --storage.tsdb.path="$TMP/prom-data" \
		--web.listen-address=127.0.0.1:"$PROM_PORT" --log.level=warn 2>"$TMP/prometheus.log" &
	PIDS+=("$!")
	PROM=http://127.0.0.1:$PROM_PORT
	wait_http "$PROM/-/ready" || PROM=
	# its first scrape done (Prometheus takes seconds to start on a loaded machine)
	for _ in $(seq 200); do
		[ -z "$PROM" ] || [ "$("${CLIENT[@]}" prom-query "$PROM" 'up{job="perfscope"}')" = 1 ] && break
		sleep 0.1
	done
fi

# ---- go tool pprof -raw over HTTP: the workload's functions at their shares, the workload in a
# cgroup named as docker names a container's (cgroup v2), removed at the end
workload 30
CID=$(echo "$$ $RANDOM $(date +%s%N)" | sha256sum | cut -c1-64)
CGP=
CG2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
if [ -n "$CG2" ] && mkdir -p "$CG2/perfscope-test.$$/docker-$CID.scope" 2>/dev/null; then
	CGP=$CG2/perfscope-test.$$
	trap 'exporter_cleanup; rmdir "$CGP/docker-$CID.scope" "$CGP" 2>/dev/null' EXIT
	echo "$WPID" >"$CGP/docker-$CID.scope/cgroup.procs" || CGP=
fi
t0=$(date +%s)
go tool pprof -raw -seconds 8 "$PURL" >"$TMP/main.raw" 2>"$TMP/main.err"
t1=$(date +%s)
if grep -q '^Samples:' "$TMP/main.raw"; then ok "go tool pprof -raw fetched an 8 s profile over HTTP${CRED:+ with basic auth}"; else
	fail "go tool pprof: $(tail -3 "$TMP/main.err")"; fi
check_shares "$TMP/main.raw" "BPF path"
lab=$("${RAW[@]}" labels "$TMP/main.raw" "$WPID" | tr '\n' ' ')
if [[ "$lab" == *"comm=pprof_prog"* && "$lab" == *"pid=$WPID"* && "$lab" == *"cgroup=/"* ]]; then
	ok "string labels: $lab"; else fail "labels: '$lab'"; fi
if [ -z "$CGP" ]; then
	skip "no cgroup v2 hierarchy mounted to make a container's cgroup in"
elif [[ "$lab" == *"cgroup=/perfscope-test.$$/docker-$CID.scope "* && "$lab" == *"container_id=$CID "* ]]; then
	ok "a docker-named cgroup: its path and container_id labels"
else fail "container labels: '$lab' (cgroup docker-$CID.scope)"; fi
map=$("${RAW[@]}" mapping "$TMP/main.raw" pprof_prog)
if [ -n "$BUILD_ID" ] && [[ "$map" == *"$BUILD_ID"* ]]; then ok "the workload's mapping with its build-id: $map"; else
	fail "mapping '$map', build-id '$BUILD_ID'"; fi
if grep -q '^samples/count cpu/nanoseconds' "$TMP/main.raw" && grep -q '^PeriodType: cpu nanoseconds' "$TMP/main.raw"; then
	ok "sample types samples/count and cpu/nanoseconds"; else fail "sample types: $(grep -A1 '^Samples:' "$TMP/main.raw" | tail -1)"; fi

# ---- Prometheus scraped the same exporter while the profile was being taken
if [ -n "$PROM" ]; then
	# the scrapes between the profile's request and its answer, all successful
	q() { curl -s --max-time 5 "$PROM/api/v1/query" --data-urlencode "query=$1" --data-urlencode "time=$t1" |
		python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else 0)'; }
	n=$(q "sum_over_time(up{job=\"perfscope\"}[$((t1 - t0))s])")
	all=$(q "count_over_time(up{job=\"perfscope\"}[$((t1 - t0))s])")
	if [ "${n%%.*}" -ge 3 ] 2>/dev/null && [ "$n" = "$all" ]; then ok "Prometheus scraped /metrics while the profile was taken: $n of $all scrapes in $((t1 - t0)) s up"; else
		fail "Prometheus successful scrapes: '$n' of '$all'"; sed "s/^/#   /" "$TMP/prometheus.log" | tail -3; fi
	# the counter moves when the answer is sent: wait for a scrape after that (1 s apart)
	for _ in $(seq 60); do
		v=$("${CLIENT[@]}" prom-query "$PROM" 'perfscope_exporter_profile_requests_total{result="served"}')
		[ "${v%%.*}" -ge 1 ] 2>/dev/null && break
		sleep 0.5
	done
	if [ "${v%%.*}" -ge 1 ] 2>/dev/null; then ok "perfscope_exporter_profile_requests_total{result=\"served\"} $v in Prometheus"; else
		fail "served requests in Prometheus: '$v'"; fi
else
	for _ in 1 2; do skip "prometheus not installed (Debian package prometheus)"; done
fi

# ---- a second scraper without the password is refused
if [ ${#AUTH[@]} -gt 0 ]; then
	c1=$(status "$URL/debug/pprof/profile?seconds=1")
	c2=$(status "$URL/debug/pprof/profile?seconds=1" -u 'prom:wrong')
	if [ "$c1" = 401 ] && [ "$c2" = 401 ]; then ok "without or with a wrong password: 401"; else fail "no/wrong password: $c1 $c2"; fi
else
	skip "python3 crypt cannot make bcrypt hashes here"
fi

# ---- two concurrent scrapers of the same seconds: the same profile, byte for byte
same=
for _ in 1 2 3; do
	curl -s --max-time 20 -o "$TMP/c1.pb.gz" "$PURL?seconds=2" &
	c1=$!
	curl -s --max-time 20 -o "$TMP/c2.pb.gz" "$PURL?seconds=2"
	wait "$c1"
	t1=$(go tool pprof -raw "$TMP/c1.pb.gz" 2>/dev/null | grep '^Time:')
	t2=$(go tool pprof -raw "$TMP/c2.pb.gz" 2>/dev/null | grep '^Time:')
	# two requests on either side of a second's turn get windows a second apart: ask again
	[ -n "$t1" ] && [ "$t1" = "$t2" ] || continue
	cmp -s "$TMP/c1.pb.gz" "$TMP/c2.pb.gz" && same=yes || same=no
	break
done
if [ "$same" = yes ]; then ok "two concurrent scrapers got the same profile ($(stat -c %s "$TMP/c1.pb.gz") bytes)"; else
	fail "concurrent scrapers: same='$same'"; fi

# ---- too long: 400 with the reason, as Go's handler answers
body=$(curl -s --max-time 10 -w ' %{http_code}' "$PURL?seconds=3600")
if [[ "$body" == *"exceeds the exporter's maximum of 60 s"*" 400" ]]; then ok "seconds=3600: 400, '$(echo ${body% *})'"; else fail "seconds=3600: '$body'"; fi
stop "$EXP_PID"
kill "$WPID" 2>/dev/null
wait "$WPID" 2>/dev/null
if [ -n "$CGP" ]; then rmdir "$CGP/docker-$CID.scope" "$CGP"; fi
if [ "$STOP_RC" = 0 ]; then ok "SIGTERM: stops with 0"; else fail "stop: $STOP_RC"; fi
kill "$WPID" 2>/dev/null

# ---- the ring path reads the same shares
if start_exporter ring --collector.profile --collector.profile.bpf=false && grep -q 'ring path' "$LOG"; then
	workload 30
	go tool pprof -raw -seconds 8 "$URL/debug/pprof/profile" >"$TMP/ring.raw" 2>"$TMP/ring.err"
	check_shares "$TMP/ring.raw" "ring path"
	stop "$PID"
	kill "$WPID" 2>/dev/null
else
	fail "exporter (ring path) did not start: $(tail -2 "$LOG")"
fi
