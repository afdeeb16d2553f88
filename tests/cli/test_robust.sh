#!/usr/bin/env bash
# CLI tests of perfscope under hostile conditions: signals at awkward moments, closed pipes, odd targets.
# shellcheck source=tests/cli/tap.sh
source "$(dirname "$0")/tap.sh"
P=${PERFSCOPE:?}
plan 28
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# gone PIDFILE: true when the process whose pid the file holds has exited; else kills it (ours)
gone() {
	local pid
	pid=$(cat "$1" 2>/dev/null) || return 0
	[ -n "$pid" ] || return 0
	for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
	kill -9 "$pid" 2>/dev/null
	return 1
}

if ! need_root; then
	skip_all "needs root (system-wide counting)"
fi

# ---- 1-2: stat -i into '| head -1': the closed pipe stops stat (not SIGPIPE's death) and the
# command it started is not left running on its own. JSON: text counts go to stderr, as perf's.
(
	"$P" stat -e page-faults -i 50 --format json -- sh -c "echo \$\$ >'$TMP/cmd1'; exec sleep 30" | head -1 >/dev/null
	echo "${PIPESTATUS[0]}" >"$TMP/rc1"
)
rc=$(cat "$TMP/rc1")
if [ "$rc" -ne 141 ] && [ "$rc" -le 2 ]; then ok "stat -i | head -1: stops on the closed pipe (exit $rc)"; else
	fail "stat -i | head -1: exit $rc (141: killed by SIGPIPE)"; fi
if gone "$TMP/cmd1"; then ok "stat -i | head -1: the command is not left running"; else
	fail "stat -i | head -1: the command outlived perfscope"; fi

# ---- stat -- CMD into a pipe whose reader has left: no failure (as in trace and list), so stat
# exits with the command's status, not 1. The reader closes its end before it says so.
(
	"$P" stat -e page-faults --format json -- sh -c "while [ ! -e '$TMP/gone' ]; do sleep 0.05; done; exit 3" |
		{ exec 0<&-; touch "$TMP/gone"; }
	echo "${PIPESTATUS[0]}" >"$TMP/rc_gone"
) 2>"$TMP/err_gone"
rc=$(cat "$TMP/rc_gone")
if [ "$rc" -eq 3 ]; then ok "stat -- CMD | a reader that left: the command's status (3)"; else
	fail "stat -- CMD | a reader that left: exit $rc, wanted 3"; sed 's/^/#   /' "$TMP/err_gone" | head -3; fi

# ---- 3-4: SIGUSR1 (here from the command itself, so it comes while stat counts) prints the
# counts so far, and counting goes on to the command's own exit status
run_capture "$P" stat -e page-faults --format json -- sh -c 'kill -USR1 $PPID; sleep 0.2; exit 3'
n=$(grep -c '"event":"page-faults"' "$OUT")
if [ "$RC" -eq 3 ]; then ok "stat: SIGUSR1 does not stop it; the command's status 3 is passed on"; else
	fail "stat after SIGUSR1: exit $RC, wanted 3"; sed 's/^/#   /' "$ERR" | head -3; fi
if [ "$n" -eq 2 ]; then ok "stat: SIGUSR1 printed the counts so far, then the final ones"; else
	fail "stat: $n reports after SIGUSR1, wanted 2"; sed 's/^/#   /' "$OUT" | head -4; fi

# ---- 5-6: a command that ignores SIGINT/SIGTERM: the first is passed on, the second kills it
# (stat waited for it with every further signal blocked)
"$P" stat -e page-faults -- sh -c "echo \$\$ >'$TMP/cmd2'; trap '' INT TERM; kill -TERM \$PPID; sleep 1; kill -TERM \$PPID; exec sleep 30" >"$TMP/out2" 2>&1 &
spid=$!
for _ in $(seq 100); do kill -0 "$spid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$spid" 2>/dev/null; then
	kill -9 "$spid"
	fail "stat: still waiting 10 s after a second SIGTERM"
else
	wait "$spid"
	rc=$?
	if [ "$rc" -eq 137 ] && grep -q page-faults "$TMP/out2"; then ok "stat: the second SIGTERM kills the command that ignores it, counts printed (exit $rc)"; else
		fail "stat after two SIGTERMs: exit $rc"; sed 's/^/#   /' "$TMP/out2" | head -3; fi
fi
if gone "$TMP/cmd2"; then ok "stat: that command is gone"; else fail "stat: the command outlived two SIGTERMs"; fi

# ---- 7-10: SIGINT while stdout is a full pipe nobody reads: stat and trace stop and say what was
# not written (SIGINT, blocked for sigtimedwait/signalfd, waited behind the blocking write for
# ever). The signal is sent once they block it; a second one 5 s later ends the wait of a
# first that came before they were writing.
cat >"$TMP/fullpipe.py" <<'PY'
import fcntl, os, signal, subprocess, sys, time
r, w = os.pipe()
fcntl.fcntl(w, fcntl.F_SETFL, os.O_NONBLOCK)
try:
    while True:
        os.write(w, b"x" * 4096)  # fill it: the first write blocks
except BlockingIOError:
    pass
fcntl.fcntl(w, fcntl.F_SETFL, 0)
p = subprocess.Popen(sys.argv[1:], stdout=w, stderr=subprocess.PIPE)
os.close(w)


def sigint_blocked():
    with open("/proc/%d/status" % p.pid) as f:
        return any(l.startswith("SigBlk:") and int(l.split()[1], 16) & 2 for l in f)


for _ in range(400):
    if p.poll() is not None or sigint_blocked():
        break
    time.sleep(0.05)
time.sleep(0.3)
err = "hung"
for wait in (5, 20):
    p.send_signal(signal.SIGINT)
    try:
        err = p.communicate(timeout=wait)[1].decode()
        break
    except subprocess.TimeoutExpired:
        pass
else:
    p.kill()
    p.wait()
print(p.returncode, "not being read" in err)
PY
res=$(python3 "$TMP/fullpipe.py" "$P" stat -a -i 50 -e page-faults --format json)
if [ "${res% *}" = 1 ]; then ok "stat -i into a full pipe: SIGINT stops it (exit 1: the counts are lost)"; else
	fail "stat -i into a full pipe after SIGINT: $res"; fi
if [ "${res#* }" = True ]; then ok "stat: says the counts were not written"; else fail "stat: no message ($res)"; fi
res=$(python3 "$TMP/fullpipe.py" "$P" trace -a -e sched:sched_switch)
if [ "${res% *}" = 0 ]; then ok "trace into a full pipe: SIGINT stops it (exit 0)"; else
	fail "trace into a full pipe after SIGINT: $res"; fi
if [ "${res#* }" = True ]; then ok "trace: says what was not written"; else fail "trace: no message ($res)"; fi

# ---- 11-14: -G with what is not a cgroup perf can count: a usage error naming the cgroup and what
# to give instead (any directory opened, and every event then failed with a bare EBADF)
expect_rc "-G /tmp (a directory, not a cgroup)" 2 "$P" stat -e page-faults -G /tmp --duration 0.1
if grep -q "cgroup '/tmp': not a cgroup that perf can count; give a cgroup directory" "$ERR"; then
	ok "-G /tmp: says why and what to give"; else fail "-G /tmp: $(tail -1 "$ERR")"; fi
expect_rc "-G '' (an empty name)" 2 "$P" stat -e page-faults -G '' --duration 0.1
v1=$(awk '$3 == "cgroup" && $4 !~ /perf_event/ {print $2; exit}' /proc/mounts)
if [ -n "$v1" ]; then
	expect_rc "-G $v1 (a v1 hierarchy without perf_event)" 2 "$P" trace -e sched:sched_switch -G "$v1" --duration 0.1
else
	skip "no cgroup v1 hierarchy of another controller is mounted"
fi

# ---- 15-17: the exporter keeps a connection for the next request: three pipelined requests on
# one connection get three answers (the first was answered with "Connection: close" and the
# others were dropped), and it still stops cleanly
port=$(python3 "$(dirname "$0")/exporter_client.py" free-port)
"$P" exporter --web.listen-address=127.0.0.1:"$port" 2>"$TMP/exporter.log" &
epid=$!
for _ in $(seq 100); do grep -q 'msg="listening on' "$TMP/exporter.log" && break; sleep 0.1; done
answers=$(python3 - "$port" <<'PY'
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
s.sendall(b"GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n" b"HEAD /metrics HTTP/1.1\r\nHost: a\r\n\r\n"
          b"GET / HTTP/1.1\r\nHost: a\r\n\r\n")
data, end = b"", time.time() + 10
while data.count(b"HTTP/1.1 200 OK\r\n") < 3 and time.time() < end:
    try:
        chunk = s.recv(65536)
    except socket.timeout:
        break
    if not chunk:
        break
    data += chunk
head = data.split(b"\r\n\r\n")[0].lower()
print(data.count(b"HTTP/1.1 200 OK\r\n"), "close" if b"connection: close" in head else "kept")
PY
)
if [ "${answers% *}" = 3 ]; then ok "exporter: 3 pipelined requests, 3 answers"; else
	fail "exporter: pipelined requests answered: $answers"; fi
if [ "${answers#* }" = kept ]; then ok "exporter: a scrape keeps its connection"; else
	fail "exporter: the connection is closed after each scrape ($answers)"; fi
kill -TERM "$epid"
for _ in $(seq 100); do kill -0 "$epid" 2>/dev/null || break; sleep 0.1; done
kill -9 "$epid" 2>/dev/null
wait "$epid"
erc=$?
if [ "$erc" -eq 0 ]; then ok "exporter: stops on SIGTERM with exit 0"; else
	fail "exporter: exit $erc on SIGTERM"; sed 's/^/#   /' "$TMP/exporter.log" | tail -3; fi

# ---- 18-19: at --web.max-connections, connections are not kept: a client asking again and again
# on its own would keep those waiting to be accepted out (2 slots: the first of two connections is
# kept, the second, which fills the slots, is answered with "Connection: close")
port=$(python3 "$(dirname "$0")/exporter_client.py" free-port)
"$P" exporter --web.listen-address=127.0.0.1:"$port" --web.max-connections=2 2>"$TMP/exporter2.log" &
epid=$!
for _ in $(seq 100); do grep -q 'msg="listening on' "$TMP/exporter2.log" && break; sleep 0.1; done
kept=$(python3 - "$port" <<'PY'
import http.client, sys
port = int(sys.argv[1])
a = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
b = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
out = []
for c in (a, b):
    c.request("GET", "/metrics")
    r = c.getresponse()
    r.read()
    out.append("close" if (r.getheader("Connection") or "").lower() == "close" else "kept")
print(" ".join(out))
PY
)
if [ "${kept% *}" = kept ]; then ok "exporter: a connection below the limit is kept"; else fail "exporter, below the limit: $kept"; fi
if [ "${kept#* }" = close ]; then ok "exporter: the connection that fills the limit is closed after its answer"; else
	fail "exporter, at the limit: $kept"; fi
kill -TERM "$epid"
wait "$epid"

# ---- 20-21: --user naming nobody that exists: said before any event is opened, with what to give
expect_rc "exporter --user=no_such_user_xyz" 1 "$P" exporter --web.listen-address=127.0.0.1:0 --user=no_such_user_xyz
if ! grep -q 'counting' "$ERR" && grep -q 'no such user; give an existing user' "$ERR"; then
	ok "exporter: an unknown --user is refused before the events open, saying what to give"; else
	fail "exporter --user: $(grep -c . "$ERR") lines, last: $(tail -1 "$ERR")"; fi

# ---- 22-23: a command that stopped itself, still there at --duration: it is continued, so that it
# gets the SIGTERM (it was killed 2 s later without seeing it)
run_capture "$P" trace -e sched:sched_process_exit --duration 0.5 -- \
	sh -c "echo \$\$ >'$TMP/cmd3'; trap 'echo term >\"$TMP/term3\"; exit 5' TERM; kill -STOP \$\$; exec sleep 30"
if [ "$RC" -eq 0 ] && [ -s "$TMP/term3" ]; then ok "trace --duration: a stopped command is continued and handles SIGTERM"; else
	fail "trace --duration with a stopped command: exit $RC, SIGTERM handled: $(cat "$TMP/term3" 2>/dev/null || echo no)"; fi
if gone "$TMP/cmd3"; then ok "trace: the stopped command is gone"; else fail "trace: the stopped command outlived it"; fi

# -p of a process that is not there: said at once, before a slow setup (memleak's uprobes take
# seconds), exit 1; the same name in the list of a process that is: still refused, named.
dead=$(sh -c 'echo $$')
run_report "$P" memleak -p "$dead"
check "memleak -p a pid that is gone: exit 1 naming it (exit $RC)" \
	sh -c "[ $RC -eq 1 ] && grep -q 'no process with pid $dead' '$ERR' && ! grep -q uprobe '$ERR'"
run_capture "$P" trace -e sched:sched_switch -p "1,$dead" -N 1
check "trace -p 1,GONE: exit 1 naming the missing one (exit $RC)" \
	sh -c "[ $RC -eq 1 ] && grep -q 'no process with pid $dead' '$ERR'"

# ---- a script's background job starts with SIGINT ignored; a SIGINT sent while perfscope starts
# (before it takes the stop signals) must still end the run, not be discarded and leave it running
"$P" trace -v -e sched:sched_switch >"$TMP/bg.out" 2>"$TMP/bg.err" &
bg=$!
echo "$bg" >"$TMP/bg.pid"
# once main() holds SIGINT (SigBlk bit 2): before it, even perfscope cannot keep an ignored signal
for _ in $(seq 400); do
	blk=$(awk '/^SigBlk:/ { print $2 }' /proc/$bg/status 2>/dev/null)
	[ -n "$blk" ] && (( (0x$blk & 2) != 0 )) && break
	sleep 0.005
done
ign=$(awk '/^SigIgn:/ { print $2 }' /proc/$bg/status 2>/dev/null)
kill -INT "$bg"
if gone "$TMP/bg.pid"; then
	wait "$bg"
	rc=$?
	if [ $rc -eq 0 ] && grep -q ': running (' "$TMP/bg.err"; then
		ok "a SIGINT at start to a background job (SigIgn $ign) ends the run once it runs (exit 0)"
	else
		fail "a SIGINT at start to a background job: exit $rc; $(tail -1 "$TMP/bg.err")"
	fi
else
	wait "$bg"
	fail "a SIGINT at start to a background job (SigIgn $ign) was lost: still running after 3 s"
fi
if [ -n "$ign" ] && (( (0x$ign & 2) != 0 )); then ok "the background job started with SIGINT ignored, the case above"; else
	fail "the background job did not have SIGINT ignored (SigIgn '$ign'): the case above was not tried"; fi

done_testing
