#!/usr/bin/env python3
"""The combination sweep: every profiler of `perfscope help --table --format json`, each option
and ATTR it declares given generated values, alone and in seeded random pairs (the interacting
ones first), run on live events for about a second and stopped with SIGINT. Each run must exit 0
with no sanitizer report and no hang; a usage error (exit 2) passes only with its message.

A profiler's option is swept by being declared: values come from the kind of its metavariable
(cli/table.c), with a few overrides below for values whose meaning is the profiler's own.

Environment: PERFSCOPE (the binary), B_SANITIZE (meson's b_sanitize: the hang guards x3 under
ASan), SWEEP_SEED (replays a run: the seed is printed), SWEEP_BUDGET (seconds for the sampled
pairs; the fixed cases and the cover always run), SWEEP_COVER (0/1: the cover of every option;
default 1 under sanitizers only), SWEEP_JOBS (at most 2), SWEEP_PROFILERS (names, comma separated:
those profilers only, to sweep a new one).
Prints TAP. See tests/README.md.
"""
import itertools
import json
import os
import random
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

P = os.environ.get("PERFSCOPE")
SANITIZE = os.environ.get("B_SANITIZE", "none")
ASAN = "address" in SANITIZE
SCALE = 3 if SANITIZE not in ("", "none") else 1
GUARD = 30 * SCALE  # seconds: to start, and to end after SIGINT; past it a hang
# Seconds a combination runs once its events are on: the workload below keeps every event of
# EVENTS firing, so half a second passes thousands of records through its paths (1 s cost the
# ASan run ~100 s of its 15 minutes for nothing more).
HOLD = 0.5
DRAIN_GRACE = 5 * SCALE  # seconds a drain that says it is long gets before a second SIGINT
# The sampled pairs' default budget (seconds): a few minutes under ASan (the build where it
# matters: sanitizer reports), a smaller one in a plain build, where it looks for crashes and
# hangs only.
BUDGET = float(os.environ.get("SWEEP_BUDGET", "30" if ASAN else "45"))
# The cover (every option of every profiler) runs where sanitizers watch it; a plain build runs
# the fixed cases and its budget of sampled pairs (SWEEP_COVER=1 asks for the cover there too).
COVER = os.environ.get("SWEEP_COVER", "1" if SANITIZE not in ("", "none") else "0") == "1"
JOBS = max(1, min(2, int(os.environ.get("SWEEP_JOBS", "2"))))
SEED = int(os.environ.get("SWEEP_SEED", str(int(time.time()) % 1000000)))
SANITIZER_RE = re.compile(
    r"AddressSanitizer|UndefinedBehaviorSanitizer|LeakSanitizer|runtime error:|ThreadSanitizer")

# Events that fire on an idle VM, the workload below keeping the syscall ones busy.
EVENTS = ["sched:sched_switch", "sched:sched_wakeup", "syscalls:sys_enter_getppid",
          "irq:softirq_entry", "timer:hrtimer_start"]
# Start and end pairs for the profilers that take two -e (multi-trace's groups).
EVENT_PAIRS = [
    ["sched:sched_wakeup//key=pid/", "sched:sched_switch//key=next_pid/"],
    ["irq:softirq_entry/vec==1/", "irq:softirq_exit/vec==1/"],
    ["syscalls:sys_enter_getppid", "syscalls:sys_exit_getppid"],
    ["timer:hrtimer_start//key=hrtimer/", "timer:hrtimer_expire_entry//key=hrtimer/"],
]
# The options whose pairs interact (deferred printing, stack copies, ring sizes, targets): their
# pairs come first in the sampling.
INTERACTING = {"call-graph", "user-callchain", "than", "detail", "order", "interval",
               "overwrite", "mmap-pages", "exit-N", "output", "format", "pid", "cpu",
               "only-than", "max-pending"}
# Spellings that say the same as another option (swept through it), and options that stop a
# run at once by design.
SKIP_OPTS = {"help", "version"}


class Combo:
    def __init__(self, prof, args, desc, hold=HOLD, expect_ok=False):
        self.prof, self.args, self.desc, self.hold = prof, args, desc, hold
        self.expect_ok = expect_ok  # a fixed case: a usage error fails it too


def table():
    out = subprocess.run([P, "help", "--table", "--format", "json"], check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def libc_path():
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1]
            if re.search(r"/libc[.-][^/]*so", path):
                return path
    return "/lib/x86_64-linux-gnu/libc.so.6"


def cgroup2_mount():
    with open("/proc/self/mounts") as f:
        for line in f:
            w = line.split()
            if w[2] == "cgroup2":
                return w[1]
    return None


class Ctx:
    """What the generated values refer to: the workload, the CPUs, a scratch directory."""

    def __init__(self, tmp, workload):
        self.tmp = tmp
        self.workload = workload
        self.cpus = sorted(os.sched_getaffinity(0))
        self.n = 0
        self.lock = threading.Lock()
        self.cgroup = None

    def path(self, what):
        with self.lock:
            self.n += 1
            return os.path.join(self.tmp, f"{what}.{self.n}")


SCRATCH = None  # the sweep's scratch directory


def base_args(prof):
    """The profiler's conformance line, whose events run on an idle machine; an -o in it (trigger's
    output directory) moved into the sweep's scratch directory."""
    args = shlex.split(prof.get("conformance_args") or "")
    for i, a in enumerate(args[:-1]):
        if a == "-o" and SCRATCH:
            args[i + 1] = os.path.join(SCRATCH, prof["name"] + "-o")
    return args


def nr_event_args(args):
    return sum(1 for a in args if a == "-e")


def replace_events(args, events):
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a == "-e":
            skip = True
            continue
        out.append(a)
    for e in events:
        out += ["-e", e]
    return out


def event_values(prof):
    """-e lists for prof: pairs where its line has two -e (or it pairs: --impl), its own default
    events where it reads given ones, else each idle-machine event; an ATTR whose value is a
    field keeps its name with common_pid, a field of every tracepoint."""
    base = base_args(prof)
    own = {o["name"] for o in prof["opts"]}
    evs = [base[i + 1] for i, a in enumerate(base) if a == "-e"]
    attrs = []
    for e in evs[:1]:
        parts = e.split("/")
        attrs = [a.split("=")[0] + "=common_pid" for a in parts[2:] if "=" in a]
    tail = ("//" + "/".join(attrs) + "/") if attrs else ""
    if len(evs) >= 2 or "impl" in own:
        return [["-e", p[0], "-e", p[1]] for p in EVENT_PAIRS]
    if prof.get("default_events") and not evs:
        return [["-e", prof["default_events"]]]
    return [["-e", e + tail] for e in EVENTS]


def opt_values(prof, opt, ctx, rnd):
    """Lists of argv words giving opt valid values on prof (one entry per value to try)."""
    name, kind, arg = opt["name"], opt["kind"], opt.get("arg")
    flag = "--" + name
    nev = nr_event_args(base_args(prof))
    if kind == "none":
        return [[flag]]
    if kind == "optional":
        vals = {
            "call-graph": ["", "fp", "dwarf", "dwarf,1024", "dwarf,65528"],
            "user-callchain": ["", "fp", "dwarf", "dwarf,4096"],
            "detail": ["", "samecpu", "-1ms,+1ms", "samepid,hide<10us", "samekey"],
            "irqs_disabled": ["", "0", "1"],
            "tif_need_resched": ["", "0", "1"],
        }.get(name, [""])
        # --detail needs an outlier threshold beside it
        also = (["--than", "1ms"] if name == "detail" and
                "than" in {o["name"] for o in prof["opts"]} else [])
        return [[flag + ("=" + v if v else "")] + also for v in vals]
    if kind == "events":
        if name == "event":
            return event_values(prof)
        if prof["name"] == "kmemleak":  # both or neither
            return [["--alloc", "kmem:kmalloc", "--free", "kmem:kfree"]]
        return [[flag, EVENTS[0]]]
    if kind == "cpus":
        return [[flag, "0"], [flag, ",".join(map(str, ctx.cpus))]]
    if kind in ("pids", "pid"):
        return [[flag, str(ctx.workload)]]
    if kind == "cgroup":
        return [[flag, ctx.cgroup]] if ctx.cgroup else []
    if kind == "ms":
        return [[flag, "100"], [flag, "300"]]
    if kind == "seconds":
        return [[flag, "0.5"], [flag, "2"]]
    if kind == "pages":
        return [[flag, "4"], [flag, "256"]]
    if kind == "percent":
        if name == "watermark":
            return [[flag, "0"], [flag, "1"], [flag, "100"]]
        return [[flag, "1"], [flag, "50"], [flag, "99"]]
    if kind == "format":
        return [[flag, "json"], [flag, "text"]]
    if kind in ("file", "path"):
        if name == "libc":
            return [[flag, libc_path()]]
        return [[flag, ctx.path(name)]]
    if kind == "dir":
        return [[flag, ctx.path(name)]]
    if kind == "time":
        if prof["name"] == "irq-off" and name == "than":  # above its line's 1ms period
            return [[flag, "1100us"], [flag, "1s"]]
        if prof["name"] == "irq-off" and name == "period":  # below its line's --than
            return [[flag, "500us"], [flag, "1ms"]]
        return [[flag, "10us"], [flag, "1ms"], [flag, "100ms"]]
    if kind == "size":
        return [[flag, "1M"], [flag, "64M"]]
    if kind == "expr":
        return [[flag, "_cpu"], [flag, "common_pid"]]
    if kind in ("int", "number"):
        lo = opt.get("min", 0)
        hi = opt.get("max", 1 << 30)
        special = {"exit-N": [5, 1000], "sampling-limit": [10, 100000], "count": [1000000],
                   "freq": [99, 997], "nr_running_min": [1], "nr_running_max": [2],
                   "top": [1, 20], "rows": [1, 5], "repeat": [2], "for": [0.5],
                   "capture": [0.5], "max-pending": [1, 4], "than": [1, 1000],
                   "thresh": [0.2, 10]}
        if name in special:
            vals = special[name]
        else:
            vals = sorted({max(lo, 1), min(max(lo, 100), hi)})
        return [[flag, str(v)] for v in vals if lo <= v <= hi or kind == "number"]
    # "string": what the value means is this profiler's own
    if prof["name"] == "oncpu" and name == "filter":  # a kernel filter on sched_switch
        return [[flag, "prev_prio<120"], [flag, "next_pid>0"]]
    vals = {
        "impl": ["delay", "pair", "syscalls", "call-delay"],
        "filter": ["python3*", "sweepwork*,sh"],
        "device": ["loop0", "vda"],
        "sched_policy": ["0", "NORMAL"],
        "prio": ["120", "100-139"],
        "rate": ["sched:sched_switch>1000000"],
        "latency": ["sched:sched_wakeup,sched:sched_switch>1s"],
        "field-separator": [";", ","],
        "class": ["softirq", "irq,workqueue"],
    }.get(name)
    if vals is None:
        return [[flag, "x"]]  # a rejection (exit 2) must print why; recorded as such
    return [[flag, v] for v in vals]


ATTR_VALUES = {"role": "1", "untraced": None, "trigger": None, "size": "64", "num": "prev_prio",
               "printkey": "next_comm", "comm": "next_comm", "top-by": "prev_prio",
               "top-add": "prev_prio", "ptr": "ptr", "key": "next_pid"}


def attr_value(attr):
    if attr["kind"] == "flag":
        return None
    if attr["name"] in ATTR_VALUES:
        return ATTR_VALUES[attr["name"]]
    return {"field": "next_pid", "expr": "next_pid", "num": "1", "string": "x"}[attr["kind"]]


def with_attr(prof, attr):
    """prof's conformance line with ATTR added to its last -e, which is made sched_switch's (the
    fields above); None when it takes no -e to carry it."""
    args = base_args(prof)
    name = attr["name"]
    v = attr_value(attr)
    spec = name if v is None else f"{name}={v}"
    if prof["name"] == "trigger":
        # its ATTRs are on --latency's events
        spec = name if v is None else f"{name}=common_pid"  # a field of both events
        return args + ["--latency", f"sched:sched_wakeup//{spec}/,sched:sched_switch//{spec}/>1s"]
    if prof["name"] == "kmemleak":
        # its ATTRs are on --alloc and --free
        return args + ["--alloc", "kmem:kmalloc//ptr=ptr/size=bytes_alloc/",
                       "--free", "kmem:kfree//ptr=ptr/"]
    if "impl" in {o["name"] for o in prof["opts"]}:
        # a pairing profiler: wakeup -> switch, the ATTR on the switch (the fields above)
        args = replace_events(args, EVENT_PAIRS[0])
    idx = [i for i, a in enumerate(args) if a == "-e"]
    if not idx:
        if "event" not in {o["name"] for o in prof["shared"]}:
            return None
        return args + ["-e", f"sched:sched_switch//{spec}/"]
    i = idx[-1] + 1
    if "impl" in {o["name"] for o in prof["opts"]} and v is None:
        # a flag (untraced, trigger) on an event of its own beside the group's traced one
        args[i] += f",sched:sched_wakeup//key=pid/{spec}/"
        return args
    ev = args[i]
    if not ev.startswith("sched:sched_switch/") and ev != "sched:sched_switch":
        ev = "sched:sched_switch"  # the fields ATTR_VALUES name; its own ATTRs kept otherwise
    if "/" in ev:
        ev = ev if ev.endswith("/") else ev + "/"
        parts = ev.split("/")
        # drop the same ATTR already there (key=): the one added replaces it
        parts = [p for p in parts if not (p.split("=")[0] == name)] + [""]
        ev = "/".join(parts[:-1]).rstrip("/") + "/"
        if ev.count("/") < 2:
            ev += "/"
        ev += spec + "/"
    else:
        ev += "//" + spec + "/"
    args[i] = ev
    return args


def options_of(prof):
    opts = [o for o in prof["shared"] if o.get("listed", True) and o["name"] not in SKIP_OPTS]
    own = {o["name"] for o in prof["opts"]}
    # an own option of the same name replaces the shared one (profile's --format, -o)
    return [o for o in opts if o["name"] not in own] + list(prof["opts"])


# What an option needs of the conformance line to run at all, so that the cover sees it running:
# options it adds, options of the line it replaces (with their values), a command it ends with.
NEEDS = {
    ("profile", "bpf-stacks"): (["--bpf"], [], []),
    ("profile", "count"): ([], ["-F"], []),
    ("stat", "field-separator"): ([], ["--format"], []),
    ("stat", "repeat"): ([], ["-i"], ["--", "true"]),
    ("hrtimer", "freq"): ([], ["--period"], []),
}


def without(args, opts):
    """args less each option of opts and its value."""
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a in opts:
            skip = True
        else:
            out.append(a)
    return out


def build(prof, parts):
    """prof's conformance line with the options of parts ([(name, words)]) added; an -e given
    replaces the line's own."""
    base = base_args(prof)
    tail = []
    if any(n == "event" for n, _ in parts):
        base = replace_events(base, [])
    # what the options need is taken from the line first, so that no option of the pair is lost
    for name, _ in parts:
        add, drop, end = NEEDS.get((prof["name"], name), ([], [], []))
        base = without(base, drop) + [w for w in add if w not in base]
        tail = tail or end
    for _, words in parts:
        base = base + words
    return base + tail


def combo_of(prof, parts, why=""):
    c = Combo(prof["name"], build(prof, parts), why + " ".join(w for _, ws in parts for w in ws))
    c.parts = parts
    c.pobj = prof
    return c


def cover(prof, ctx, rnd):
    """Every option of prof, each with one of its values (seeded), two options a run; and each
    ATTR on the conformance line. A pair rejected as a usage error is run again one option at
    a time (run_combo), so that each option is seen running."""
    out, skipped = [], []
    parts = []
    for o in options_of(prof):
        vals = opt_values(prof, o, ctx, rnd)
        if not vals:
            skipped.append(f"{prof['name']} --{o['name']}: no value to give here "
                           f"(kind {o['kind']})")
            continue
        parts.append((o["name"], rnd.choice(vals)))
    rnd.shuffle(parts)
    for i in range(0, len(parts), 2):
        out.append(combo_of(prof, parts[i:i + 2]))
    for a in prof["attrs"]:
        args = with_attr(prof, a)
        if args is None:
            skipped.append(f"{prof['name']} ATTR {a['name']}: no -e here to carry it")
        else:
            out.append(Combo(prof["name"], args, "ATTR " + a["name"]))
    return out, skipped


def pairs(prof, ctx, rnd):
    """Seeded random pairs of values of two options, the interacting ones first."""
    opts = [o for o in options_of(prof) if o["name"] != "event"]
    inter = [o for o in opts if o["name"] in INTERACTING]
    first = list(itertools.combinations(inter, 2))
    rnd.shuffle(first)
    rest = [p for p in itertools.combinations(opts, 2)
            if not (p[0]["name"] in INTERACTING and p[1]["name"] in INTERACTING)]
    rnd.shuffle(rest)
    out = []
    for a, b in first + rest:
        va, vb = opt_values(prof, a, ctx, rnd), opt_values(prof, b, ctx, rnd)
        if not va or not vb:
            continue
        out.append(combo_of(prof, [(a["name"], rnd.choice(va)), (b["name"], rnd.choice(vb))]))
    return out


FIXED = [
    # perf-prof's documented command lines that crashed (issue 19): DWARF stacks of samples
    # kept past their ring round for deferred printing
    ("multi-trace", ["-e", "irq:softirq_entry/vec==1/stack/", "-e",
                     "irq:softirq_exit/vec==1/stack/", "-i", "1000", "--user-callchain=dwarf",
                     "-m", "512", "--than", "10us"]),
    ("rundelay", ["-e", "sched:sched_wakeup*//stack/,sched:sched_switch//stack/", "-e",
                  "sched:sched_switch//stack/", "-i", "1000", "-m", "256", "--than", "1ms",
                  "--user-callchain=dwarf"]),
    # --detail with a loose --than: a backlog of outliers to print when SIGINT comes
    ("multi-trace", ["-e", "sched:sched_wakeup//key=pid/", "-e",
                     "sched:sched_switch//key=next_pid/", "--than", "1ns", "--detail",
                     "-i", "1000"]),
    # DWARF unwinding of every malloc on the machine: a backlog that took minutes to drain
    # after SIGINT (the sweep found it); now a second SIGINT ends the drain, as it says
    ("memleak", ["-i", "200", "--call-graph=dwarf"]),
    ("multi-trace", ["-e", "sched:sched_wakeup//key=pid/stack/", "-e",
                     "sched:sched_switch//key=next_pid/stack/", "--than", "1ns",
                     "--detail=samecpu", "--user-callchain=dwarf,4096", "-m", "4"]),
]


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(") ", 1)[1][0] != "Z"
    except (OSError, IndexError):
        return False


def ready(pid):
    """Events open and SIGINT blocked for the session's signalfd: running, -v line or not."""
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for fd in fds:
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if link == "anon_inode:[perf_event]" or link.startswith("anon_inode:bpf"):
            try:
                with open(f"/proc/{pid}/status") as f:
                    for line in f:
                        if line.startswith("SigBlk:"):
                            return int(line.split()[1], 16) & 2 != 0
            except OSError:
                return False
    return False


# SIGINT and SIGTERM at their defaults, as from a terminal, whatever the test runner left
DFL = ["env", "--default-signal"] if subprocess.run(
    ["env", "--default-signal", "true"], stderr=subprocess.DEVNULL).returncode == 0 else []
DRAINING_RE = re.compile(rb"^perfscope [a-z-]*: stopping: delivering the events", re.M)


def wait_stop(proc, errf):
    """After the SIGINT: "ended", or "cut" when it said it was delivering a long backlog read
    before the stop (common/loop/session.c) and a second SIGINT, DRAIN_GRACE later, ended it; "hang"
    when it is still there GUARD seconds after its last signal."""
    t = time.monotonic()
    said = None
    while proc.poll() is None:
        now = time.monotonic()
        if said is None:
            with open(errf, "rb") as f:
                if DRAINING_RE.search(f.read()):
                    said = now
        if said is not None and now - said > DRAIN_GRACE:
            os.kill(proc.pid, signal.SIGINT)
            try:
                proc.wait(GUARD)
                return "cut"
            except subprocess.TimeoutExpired:
                return "hang"
        if now - t > GUARD:
            return "hang"
        time.sleep(0.05)
    return "ended"


RUNNING_RE = re.compile(rb"^perfscope [a-z-]*: running \(", re.M)


def run(combo, ctx):
    """Runs one combination; returns (verdict, detail): ok, rejected, fail."""
    errf = ctx.path("err")
    outf = ctx.path("out")
    argv = DFL + [P, combo.prof, "-v"] + combo.args
    with open(outf, "wb") as out, open(errf, "wb") as err:
        proc = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                cwd=ctx.tmp)
    t0 = time.monotonic()
    started = False
    cut = None
    while time.monotonic() - t0 < GUARD:
        if proc.poll() is not None:
            break
        with open(errf, "rb") as f:
            if RUNNING_RE.search(f.read()):
                started = True
                break
        if ready(proc.pid):
            started = True
            break
        time.sleep(0.02)
    hung = None
    if proc.poll() is None:
        if started:
            end = time.monotonic() + combo.hold
            while time.monotonic() < end and proc.poll() is None:
                time.sleep(0.02)
        else:
            hung = f"not running after {GUARD} s"
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGINT)
            cut = wait_stop(proc, errf)
            if cut == "hang":
                hung = hung or f"still running {GUARD} s after SIGINT"
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait()
    rc = proc.returncode
    with open(errf, "rb") as f:
        err = f.read().decode("utf-8", "replace")
    os.unlink(errf)
    os.unlink(outf)
    lines = [l for l in err.splitlines() if l.strip()]
    san = [l for l in lines if SANITIZER_RE.search(l)]
    cmd = "perfscope " + combo.prof + " -v " + shlex.join(combo.args)
    if hung:
        return "fail", f"hang: {hung}: {cmd}", lines[-6:]
    if san:
        return "fail", f"sanitizer report: {cmd}", san[:6] + lines[-4:]
    if rc == 0 and cut == "cut":
        return "ok", cmd + " (a long drain after SIGINT, cut by a second one as it says)", []
    if rc == 0:
        return "ok", cmd, []
    if rc == 2 and not combo.expect_ok:
        msg = [l for l in lines if l.startswith(f"perfscope {combo.prof}:")
               and "running (" not in l]
        if msg:
            return "rejected", f"{cmd} # rejected: {msg[-1]}", []
        return "fail", f"exit 2 without a message: {cmd}", lines[-6:]
    why = f"killed by signal {-rc}" if rc < 0 else f"exit {rc}"
    return "fail", f"{why}: {cmd}", lines[-8:]


class Tap:
    def __init__(self):
        self.n = 0
        self.failed = 0
        self.counts = {"ok": 0, "rejected": 0, "fail": 0, "skip": 0}
        self.lock = threading.Lock()

    def line(self, verdict, desc, detail=()):
        with self.lock:
            self.n += 1
            self.counts[verdict] += 1
            desc = desc.replace("#", "\\#") if verdict != "rejected" else desc
            if verdict == "fail":
                self.failed += 1
                print(f"not ok {self.n} - {desc}")
                for d in detail:
                    print(f"#   {d}")
            elif verdict == "skip":
                print(f"ok {self.n} # SKIP {desc}")
            else:
                print(f"ok {self.n} - {desc}")
            sys.stdout.flush()


def start_workload(tmp):
    """A process that calls getppid and naps (syscalls, wakeups, switches, timers) until killed:
    the -p target, and what keeps the idle-VM events firing."""
    code = ("import os, time\n"
            "while True:\n"
            "    for _ in range(200): os.getppid()\n"
            "    time.sleep(0.002)\n")
    return subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.DEVNULL)


def main():
    if not P:
        print("1..0 # SKIP PERFSCOPE is not set")
        return 0
    if os.geteuid() != 0:
        print("1..0 # SKIP the sweep needs root (system-wide tracepoints)")
        return 0
    tap = Tap()
    rnd = random.Random(SEED)
    t_start = time.monotonic()
    print(f"# seed {SEED} (replay: SWEEP_SEED={SEED}), budget {BUDGET:.0f} s for the "
          f"sampled pairs, {JOBS} at a time, hang guard {GUARD} s")
    global SCRATCH
    tmp = tempfile.mkdtemp(prefix="perfscope-sweep.")
    SCRATCH = tmp
    work = start_workload(tmp)
    ctx = Ctx(tmp, work.pid)
    cg_dir = f"{cgroup2_mount()}/perfscope-sweep.{os.getpid()}"
    try:
        if cg_dir.startswith("None/"):
            raise OSError("no cgroup2 mount")
        os.mkdir(cg_dir)
        with open(cg_dir + "/cgroup.procs", "w") as f:
            f.write(str(work.pid))
        ctx.cgroup = os.path.basename(cg_dir)
    except OSError as e:
        print(f"# no cgroup of its own for the workload ({e}): -G is skipped")
    try:
        profs = [p for p in table() if not p["plain"]]
        only = os.environ.get("SWEEP_PROFILERS")
        if only:
            profs = [p for p in profs if p["name"] in only.split(",")]
        runs = []
        for name, args in FIXED:
            if only and name not in only.split(","):
                continue
            runs.append(Combo(name, args, "fixed", hold=3.0, expect_ok=True))
        for prof in profs:
            combos, skipped = cover(prof, ctx, rnd)
            if not COVER:
                continue  # still drawn, so that a seed gives the same pairs in every build
            runs += combos
            for why in skipped:
                tap.line("skip", why)
        if not COVER:
            tap.line("skip", "the cover of every option runs under sanitizers (B_SANITIZE="
                     f"{SANITIZE}); SWEEP_COVER=1 runs it here")
        sampled = []
        for prof in profs:
            sampled.append(pairs(prof, ctx, rnd))
        # round-robin over the profilers, so that a budget cut spreads evenly
        order = [c for group in itertools.zip_longest(*sampled) for c in group if c]

        never_ran = set()

        def one(combo):
            verdict, desc, detail = run(combo, ctx)
            tap.line(verdict, desc, detail)
            parts = getattr(combo, "parts", [])
            if verdict == "rejected" and len(parts) == 1:
                # an option this line cannot carry: said, not hidden
                never_ran.add(combo.prof + " " + " ".join(parts[0][1]))
            elif verdict == "rejected" and len(parts) > 1:
                # each option alone, so that a rejected pair hides none of them
                for part in parts:
                    one(combo_of(combo.pobj, [part], "alone: "))

        with ThreadPoolExecutor(JOBS) as pool:
            list(pool.map(one, runs))
        t_pairs = time.monotonic()
        it = iter(order)
        done = 0
        with ThreadPoolExecutor(JOBS) as pool:
            futs = []
            for combo in it:
                if time.monotonic() - t_pairs > BUDGET:
                    break
                # at most JOBS in flight: wait for the oldest before taking the next
                while len([f for f in futs if not f.done()]) >= JOBS:
                    time.sleep(0.02)
                futs.append(pool.submit(one, combo))
                done += 1
            for f in futs:
                f.result()
        if never_ran:
            print(f"# rejected alone, so never seen running on the conformance line: "
                  f"{'; '.join(sorted(never_ran))}")
        print(f"# {len(runs)} fixed and covering runs, {done} of {len(order)} sampled "
              f"pairs in {time.monotonic() - t_pairs:.0f} s (SWEEP_BUDGET={BUDGET:.0f})")
    finally:
        work.kill()
        work.wait()
        if ctx.cgroup:
            for _ in range(100):  # the killed workload leaves the cgroup as it is reaped
                try:
                    os.rmdir(cg_dir)
                    break
                except OSError:
                    time.sleep(0.05)
        subprocess.run(["rm", "-rf", tmp])
    c = tap.counts
    print(f"# sweep: {c['ok']} ok, {c['rejected']} rejected with a message, {c['skip']} skipped, "
          f"{c['fail']} failed; seed {SEED}; {time.monotonic() - t_start:.0f} s")
    print(f"1..{tap.n}")
    return 1 if tap.failed else 0


if __name__ == "__main__":
    sys.exit(main())
