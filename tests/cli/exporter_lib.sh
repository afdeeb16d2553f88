# Set-up shared by the exporter CLI tests: TAP, the binaries, skips, a temp dir, servers started
# on free loopback ports and stopped by PID. Source it, then call exporter_setup N REASON.
# shellcheck shell=bash disable=SC2034  # PORT, PID, LOG, URL, STOP_RC, TMP: for the caller
# shellcheck source=tests/cli/tap.sh
source "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
P=${PERFSCOPE:?}
: "${WORKLOAD:?}"
CLIENT=(python3 -W ignore "$(dirname "${BASH_SOURCE[0]}")/exporter_client.py")

# exporter_setup NTESTS ROOT_REASON: the plan; every test skipped (and exit) without root, curl or
# python3; else TMP (removed at exit) and PIDS (processes stopped at exit: SIGTERM, then SIGKILL).
exporter_setup() {
	local n=$1 why=$2
	plan "$n"
	if ! need_root; then
		skip_all "needs root ($why)"
	fi
	if ! command -v curl >/dev/null || ! command -v python3 >/dev/null; then
		skip_all "needs curl and python3 (scripts/install-deps.sh)"
	fi
	TMP=$(mktemp -d)
	PIDS=()
	trap exporter_cleanup EXIT
}

exporter_cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do
		for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$p" 2>/dev/null
	done
	rm -rf "$TMP"
}

# start_exporter NAME ARGS...: serves on a free loopback port; sets PORT, PID, LOG, URL
start_exporter() {
	local name=$1
	shift
	PORT=$("${CLIENT[@]}" free-port)
	LOG=$TMP/$name.log
	"$P" exporter --web.listen-address=127.0.0.1:"$PORT" "$@" 2>"$LOG" &
	PID=$!
	PIDS+=("$PID")
	URL=http://127.0.0.1:$PORT
	for _ in $(seq 100); do
		grep -q 'msg="listening on' "$LOG" && return 0
		kill -0 "$PID" 2>/dev/null || break
		sleep 0.1
	done
	diag "exporter $name did not start:"
	sed 's/^/#   /' "$LOG" | tail -5
	return 1
}

# stop PID: SIGTERM, then its exit status in STOP_RC (124 when it did not stop within 10 s)
stop() {
	kill -TERM "$1" 2>/dev/null
	for _ in $(seq 100); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$1" 2>/dev/null; then
		kill -9 "$1"
		wait "$1" 2>/dev/null
		STOP_RC=124
	else
		wait "$1"
		STOP_RC=$?
	fi
}

# status URL [curl args]: the HTTP status code (000 when there was no HTTP answer)
status() {
	local url=$1
	shift
	curl -s -o /dev/null -w '%{http_code}' --max-time 10 "$@" "$url"
}

# wait_http URL: until it answers (10 s at most)
wait_http() {
	for _ in $(seq 100); do
		curl -s -o /dev/null --max-time 2 "$1" && return 0
		sleep 0.1
	done
	return 1
}
