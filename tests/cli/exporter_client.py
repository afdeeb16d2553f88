#!/usr/bin/env python3
"""HTTP clients for the exporter CLI tests: raw and slow connections, floods, node_exporter and
Prometheus checks. Standard library only; each subcommand prints one result line, exits 0/1."""

import gzip
import http.client
import json
import os
import socket
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

HANG_GUARD = 10  # seconds: a request taking longer means the server is stuck, not slow


def free_port():
    """A port nothing listens on now (the kernel's choice on 127.0.0.1)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    print(port)
    return 0


def get(url, headers=None, timeout=HANG_GUARD):
    """(status, headers, body) of a GET; HTTP errors are results, not exceptions."""
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def first_line(host, port, data, timeout=HANG_GUARD):
    """Sends raw bytes, returns the status line of the answer ('' when the server just closed)."""
    with socket.create_connection((host, port), timeout=timeout) as s:
        s.sendall(data)
        buf = b""
        while b"\r\n" not in buf:
            try:
                chunk = s.recv(4096)
            except ConnectionResetError:
                break
            if not chunk:
                break
            buf += chunk
        return buf.split(b"\r\n", 1)[0].decode("latin-1")


def raw(host, port, kind):
    """Malformed or hostile requests; prints the status line the server answered with."""
    port = int(port)
    requests = {
        "garbage": b"\x00\x01\x02 this is not http\r\n\r\n",
        "no-version": b"GET /metrics\r\n\r\n",
        "bad-version": b"GET /metrics HTTP/9.9\r\nHost: x\r\n\r\n",
        "bare-lf": b"GET /metrics HTTP/1.1\nHost: x\n\n",
        "no-host": b"GET /metrics HTTP/1.1\r\n\r\n",
        "huge-header": b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 100000 + b"\r\n\r\n",
        "many-headers": b"GET /metrics HTTP/1.1\r\nHost: x\r\n"
        + b"".join(b"X-H%d: v\r\n" % i for i in range(5000))
        + b"\r\n",
        "huge-url": b"GET /" + b"m" * 100000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
        "body-post": b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n"
        + b"z" * 65536,
        "bad-chunked": b"POST /metrics HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        "traversal": b"GET /../../etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n",
    }
    try:
        line = first_line(host, port, requests[kind])
    except OSError as e:
        line = "closed (%s)" % e.__class__.__name__
    print(line or "closed")
    return 0


def flood(url, n):
    """n connections at once, each a GET; prints how many got 200 and how many were refused."""
    n = int(n)
    results = []
    lock = threading.Lock()
    start = threading.Barrier(n)

    def one():
        try:
            start.wait(timeout=HANG_GUARD)
        except threading.BrokenBarrierError:
            pass
        try:
            status = get(url)[0]
        except (OSError, urllib.error.URLError):
            status = "refused"
        with lock:
            results.append(status)

    threads = [threading.Thread(target=one) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(HANG_GUARD * 3)
    stuck = sum(t.is_alive() for t in threads)
    ok = results.count(200)
    print("ok=%d refused=%d other=%d stuck=%d" % (ok, results.count("refused"), len(results) - ok - results.count("refused"), stuck))
    return 0 if stuck == 0 and ok > 0 else 1


def server_sockets(pid):
    """How many sockets the process holds (its listening socket and its connections)."""
    n = 0
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            n += os.readlink("/proc/%d/fd/%s" % (pid, fd)).startswith("socket:")
        except OSError:
            pass
    return n


def slow(host, port, url, nslow, nscrapes, pid=0, limit=0):
    """nslow clients trickle request headers a byte every 0.2 s, reconnecting whenever the server
    closes them (a slowloris), while nscrapes scrapes run; every scrape must answer 200 (within
    the hang guard). With pid and limit: the server never holds more than limit connections (plus
    its listening socket)."""
    port, nslow, nscrapes, pid, limit = int(port), int(nslow), int(nscrapes), int(pid), int(limit)
    stop = threading.Event()
    head = b"GET /metrics HTTP/1.1\r\nHost: slow\r\nX-Slow: "
    socks = []
    counts = {"reconnects": 0, "max_sockets": 0}

    def connect():
        s = socket.create_connection((host, port), timeout=HANG_GUARD)
        s.setblocking(False)
        try:
            s.send(head)
        except OSError:
            pass
        return s

    def closed(s):
        try:
            return s.recv(4096) == b""
        except BlockingIOError:
            return False
        except OSError:
            return True

    for _ in range(nslow):
        socks.append(connect())

    def trickle():
        while not stop.is_set():
            for i, s in enumerate(socks):
                if closed(s):
                    s.close()
                    try:
                        socks[i] = connect()
                    except OSError:
                        continue
                    counts["reconnects"] += 1
                    continue
                try:
                    s.send(b"a")
                except OSError:
                    pass
            if pid:
                counts["max_sockets"] = max(counts["max_sockets"], server_sockets(pid))
            stop.wait(0.2)

    t = threading.Thread(target=trickle)
    t.start()
    good = 0
    try:
        for _ in range(nscrapes):
            try:
                status, _, body = get(url)
            except (OSError, urllib.error.URLError):
                status, body = "no answer", b""
            if status == 200 and b"node_perf_" in body:
                good += 1
            time.sleep(0.1)
    finally:
        stop.set()
        t.join()
        for s in socks:
            s.close()
    bounded = not limit or counts["max_sockets"] <= limit + 1
    print("scrapes ok=%d/%d with %d slow clients (the server closed them %d times)%s" % (
        good, nscrapes, nslow, counts["reconnects"],
        "; at most %d server sockets (limit %d + listener)" % (counts["max_sockets"], limit) if pid else ""))
    return 0 if good == nscrapes and bounded else 1


def proc_status(pid, key):
    """A /proc/PID/status value in kB (VmRSS, VmHWM), 0 when the process is gone."""
    try:
        for line in open("/proc/%d/status" % pid):
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def siege(host, port, url, nidle, npartial, ntrickle, nscrapes, pid=0, rounds=1, keep_from=""):
    """A connection flood while scrapes run, in rounds: each round opens nidle connections that
    never send a byte, npartial that send half a request line and stop (half-open), npartial more
    that shut down their sending side at once (half-closed), and ntrickle that trickle header bytes
    every 0.2 s; every one of them the server closes is opened again (within 0.2 s), so the
    pressure holds. Opening
    is non-blocking: a server that stops accepting cannot stall the flood. Meanwhile nscrapes GETs,
    one after the other, each on a new connection with a 1 s timeout. After each round everything
    is closed and, with pid, the server's fds and RSS are read once it settles.

    With keep_from (a local address such as 127.0.0.2): a client from that address connects before
    the flood, stays silent through the scrapes, then sends its GET on that connection: the flood,
    from another address, must not have had it dropped (the per-address limit).

    Prints one line per round: scrapes answered (200 with node_perf_ metrics) within 1 s, latency
    median and max, connections the server closed, and the server's fds and RSS before and after.
    Exit 0 when every scrape of every round was answered within 1 s (and the kept-alive connection
    survived)."""
    import resource
    import selectors

    port, nidle, npartial, ntrickle = int(port), int(nidle), int(npartial), int(ntrickle)
    nscrapes, pid, rounds = int(nscrapes), int(pid), int(rounds)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = nidle + 2 * npartial + ntrickle + 64
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, hard), hard))
    kinds = ["idle"] * nidle + ["partial"] * npartial + ["halfclosed"] * npartial + ["trickle"] * ntrickle
    first = {"idle": b"", "partial": b"GET /metr", "halfclosed": b"", "trickle": b"GET /metrics HTTP/1.1\r\nX-Slow: "}

    def open_one(kind):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        s.connect_ex((host, port))
        return s

    def fds():
        try:
            return len(os.listdir("/proc/%d/fd" % pid)) if pid else 0
        except OSError:
            return 0

    def settle():
        """The server's fd count once it stops changing (closes are asynchronous), 10 s at most."""
        last, same = fds(), 0
        for _ in range(100):
            time.sleep(0.1)
            now = fds()
            same = same + 1 if now == last else 0
            last = now
            if same >= 5:
                break
        return last

    all_ok = True
    base_fds, base_rss = settle(), proc_status(pid, "VmRSS") if pid else 0
    for rnd in range(rounds):
        sel = selectors.DefaultSelector()
        conns = {}  # socket -> [kind, sent_first, connected]
        closed_by_server = 0
        reopen = []
        for k in kinds:
            s = open_one(k)
            conns[s] = [k, False]
            sel.register(s, selectors.EVENT_READ | selectors.EVENT_WRITE)
        stop = threading.Event()

        def pump():
            nonlocal closed_by_server
            last_trickle = 0.0
            while not stop.is_set():
                for key, ev in sel.select(timeout=0.05):
                    s = key.fileobj
                    st = conns.get(s)
                    if st is None:
                        continue
                    kind, sent = st
                    gone = False
                    if ev & selectors.EVENT_READ:
                        try:
                            gone = s.recv(4096) == b""
                        except BlockingIOError:
                            pass
                        except OSError:
                            gone = True
                    if not gone and ev & selectors.EVENT_WRITE and not sent:
                        if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR):
                            gone = True
                        else:
                            try:
                                if first[kind]:
                                    s.send(first[kind])
                                if kind == "halfclosed":
                                    s.shutdown(socket.SHUT_WR)
                            except OSError:
                                gone = True
                            st[1] = True
                            sel.modify(s, selectors.EVENT_READ)
                    if gone:
                        closed_by_server += 1
                        sel.unregister(s)
                        del conns[s]
                        s.close()
                        reopen.append(kind)
                now = time.time()
                if now - last_trickle >= 0.2:
                    # what the server closed is opened again, at most every 0.2 s: the pressure
                    # holds without a busy loop
                    last_trickle = now
                    for kind in reopen:
                        n = open_one(kind)
                        conns[n] = [kind, False]
                        sel.register(n, selectors.EVENT_READ | selectors.EVENT_WRITE)
                    reopen.clear()
                    for s, (kind, sent) in list(conns.items()):
                        if kind == "trickle" and sent:
                            try:
                                s.send(b"a")
                            except OSError:
                                pass

        keeper, kept_ok = None, True
        if keep_from:
            keeper = http.client.HTTPConnection(host, port, timeout=HANG_GUARD, source_address=(keep_from, 0))
            keeper.connect()
        t = threading.Thread(target=pump)
        t.start()
        time.sleep(1.0)  # the flood is in place before the first scrape
        lat, good, failures = [], 0, {}
        for _ in range(nscrapes):
            t0 = time.monotonic()
            why = ""
            try:
                status, _, body = get(url, timeout=1.0)
                ok = status == 200 and b"node_perf_" in body
                why = "status %s" % status
            except (OSError, urllib.error.URLError) as e:
                ok, why = False, str(getattr(e, "reason", e))
            dt = time.monotonic() - t0
            if ok and dt <= 1.0:
                good += 1
                lat.append(dt)
            else:
                failures[why] = failures.get(why, 0) + 1
            time.sleep(0.05)
        stop.set()
        t.join()
        if keeper:
            try:
                keeper.request("GET", urllib.parse.urlparse(url).path)
                r = keeper.getresponse()
                kept_ok = r.status == 200 and b"node_perf_" in r.read()
            except (OSError, http.client.HTTPException):
                kept_ok = False
            keeper.close()
            print("# round %d: a connection from %s silent through the flood %s" % (
                rnd + 1, keep_from, "was then answered" if kept_ok else "was dropped"))
        held = len(conns)
        for s in list(conns):
            s.close()
        sel.close()
        after_fds, after_rss = settle(), proc_status(pid, "VmRSS") if pid else 0
        lat.sort()
        med = lat[len(lat) // 2] * 1000 if lat else float("nan")
        mx = lat[-1] * 1000 if lat else float("nan")
        if failures:
            print("# round %d: failed scrapes: %s" % (rnd + 1, ", ".join("%s (%d)" % kv for kv in failures.items())))
        print("round %d: scrapes answered within 1 s %d/%d, latency median %.1f ms max %.1f ms; "
              "%d connections held (%d idle, %d half-open, %d half-closed, %d trickling), closed by "
              "the server %d times; server fds %d before, %d after; RSS %d kB before, %d kB after"
              % (rnd + 1, good, nscrapes, med, mx, held, nidle, npartial, npartial, ntrickle,
                 closed_by_server, base_fds, after_fds, base_rss, after_rss))
        sys.stdout.flush()
        all_ok = all_ok and good == nscrapes and kept_ok
    return 0 if all_ok else 1


def idle_closed(host, port, wait):
    """A connection that sends nothing must be closed by the server (connection timeout)."""
    with socket.create_connection((host, int(port)), timeout=float(wait)) as s:
        try:
            data = s.recv(1)
        except socket.timeout:
            print("still open after %ss" % wait)
            return 1
        except ConnectionResetError:
            data = b""
    print("closed by the server" if not data else "server sent data unasked")
    return 0 if not data else 1


def parse(text):
    """{(family, cpu): value} of node_perf_* samples with a cpu label, from text format 0.0.4."""
    out = {}
    for line in text.splitlines():
        if not line.startswith("node_perf_") or "{" not in line:
            continue
        name, rest = line.split("{", 1)
        labels, value = rest.rsplit("}", 1)
        lab = dict(kv.split("=", 1) for kv in labels.split(","))
        if set(lab) != {"cpu"}:
            continue
        out[(name, lab["cpu"].strip('"'))] = float(value)
    return out


def scrape(url):
    status, headers, body = get(url, {"Accept-Encoding": "gzip"})
    if headers.get("Content-Encoding") == "gzip":
        body = gzip.decompress(body)
    if status != 200:
        raise RuntimeError("%s answered %d" % (url, status))
    return parse(body.decode())


SOFTWARE = [
    "node_perf_page_faults_total",
    "node_perf_minor_faults_total",
    "node_perf_major_faults_total",
    "node_perf_context_switches_total",
    "node_perf_cpu_migrations_total",
]


def compare(ours, theirs, *workload):
    """Software-event increases over the same workload, perfscope vs node_exporter, per CPU.

    Both count every process on every CPU since they started, so totals differ by what happened
    between their starts; increases over a common interval do not. Each side is scraped twice,
    back to back with the other, around a workload that faults pages and switches context on every
    CPU. What differs is only what ran in the few milliseconds between reading one exporter and
    reading the other, at each end: the other exporter's own request handling (Go's runtime
    wakes threads and faults pages), this client, kernel threads. That is bounded by a small
    absolute slack (ABS events) plus a relative share (REL) of the increase, where the workload
    makes the increase large (tens of thousands of faults, thousands of switches)."""
    ABS, REL = 200, 0.02
    import subprocess

    a0, b0 = scrape(ours), scrape(theirs)
    subprocess.run(list(workload), check=True)
    a1, b1 = scrape(ours), scrape(theirs)
    bad, rows = [], []
    for key in sorted(b1):
        if key[0] not in SOFTWARE:
            continue
        if key not in a1 or key not in a0 or key not in b0:
            bad.append("%s{cpu=%s} missing from perfscope" % key)
            continue
        da, db = a1[key] - a0[key], b1[key] - b0[key]
        tol = ABS + REL * max(da, db)
        rows.append("%s{cpu=%s} +%d vs +%d" % (key[0], key[1], da, db))
        if abs(da - db) > tol:
            bad.append("%s{cpu=%s}: perfscope +%d, node_exporter +%d, tolerance %d" % (key[0], key[1], da, db, tol))
    for r in rows:
        print("# " + r)
    if not rows:
        bad.append("node_exporter served no software events")
    print("; ".join(bad) if bad else "agree on %d series" % len(rows))
    return 1 if bad else 0


def prom_rising(prom, metric, ncpus, deadline_s):
    """Asks Prometheus' HTTP API for metric[30s] until every CPU has >= 3 samples, each series
    rising (last > first); prints what it saw."""
    ncpus = int(ncpus)
    end = time.time() + float(deadline_s)
    seen = "nothing"
    while time.time() < end:
        q = urllib.parse.urlencode({"query": "%s[30s]" % metric})
        try:
            status, _, body = get("%s/api/v1/query?%s" % (prom, q), timeout=5)
        except (OSError, urllib.error.URLError) as e:
            seen = "no answer (%s)" % e
            time.sleep(0.5)
            continue
        res = json.loads(body)
        if status == 200 and res.get("status") == "success":
            series = res["data"]["result"]
            rising = {}
            for s in series:
                vals = [float(v) for _, v in s["values"]]
                rising[s["metric"].get("cpu")] = (len(vals), vals[0], vals[-1])
            seen = " ".join("cpu%s:%d samples %g->%g" % (c, *rising[c]) for c in sorted(rising))
            if len(rising) == ncpus and all(n >= 3 and last > first for n, first, last in rising.values()):
                print("rising on every CPU: " + seen)
                return 0
        time.sleep(0.5)
    print("not rising on %d CPUs within %ss: %s" % (ncpus, deadline_s, seen))
    return 1


def prom_query(prom, query):
    """Prints the values of an instant query, one per line (empty when no result)."""
    q = urllib.parse.urlencode({"query": query})
    status, _, body = get("%s/api/v1/query?%s" % (prom, q), timeout=5)
    res = json.loads(body)
    for s in res.get("data", {}).get("result", []):
        print(s["value"][1])
    return 0 if status == 200 else 1


COMMANDS = {
    "free-port": free_port,
    "raw": raw,
    "flood": flood,
    "slow": slow,
    "idle-closed": idle_closed,
    "siege": siege,
    "compare": compare,
    "prom-rising": prom_rising,
    "prom-query": prom_query,
}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        sys.exit("usage: exporter_client.py %s ARGS" % "|".join(COMMANDS))
    sys.exit(COMMANDS[sys.argv[1]](*sys.argv[2:]))
