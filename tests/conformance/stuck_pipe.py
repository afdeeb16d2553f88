#!/usr/bin/env python3
"""Runs a command into a pipe that nobody reads, then sends SIGINT: prints its exit status and stderr.

Usage: stuck_pipe.py SCALE ERRFILE COMMAND ARGS...
The command's first line is read (it is running and has its signals set up), then the pipe is
filled to the brim and never read again. SIGINT is sent once the command is blocked writing to
it (or after SCALE seconds, for a profiler that buffers instead of blocking). The first line of
the output is the command's exit status (negative: killed by that signal; "hung" when it was
still there 30*SCALE seconds after SIGINT, and was killed).
"""
import fcntl
import os
import select
import signal
import subprocess
import sys
import time

scale = float(sys.argv[1])
err = open(sys.argv[2], "wb")
r, w = os.pipe()
p = subprocess.Popen(sys.argv[3:], stdout=w, stderr=err)


def wchan():
    try:
        with open("/proc/%d/wchan" % p.pid) as f:
            return f.read()
    except OSError:
        return ""


# Ready: the first line came (30 s at most: a loaded machine).
buf, end = b"", time.time() + 30 * scale
while b"\n" not in buf and time.time() < end and p.poll() is None:
    if select.select([r], [], [], 0.05)[0]:
        buf += os.read(r, 65536)
if b"\n" not in buf:
    print("no output" if p.poll() is None else "exited %d before any output" % p.returncode)
    p.kill()
    p.wait()
    sys.exit(0)
# Fill it: from now on the command's writes block (or fail with EAGAIN).
fcntl.fcntl(w, fcntl.F_SETFL, os.O_NONBLOCK)
try:
    while True:
        os.write(w, b"x" * 4096)
except BlockingIOError:
    pass
os.close(w)
end = time.time() + scale
while time.time() < end and p.poll() is None and wchan() != "pipe_write":
    time.sleep(0.02)
p.send_signal(signal.SIGINT)
try:
    p.wait(timeout=30 * scale)
    print(p.returncode)
except subprocess.TimeoutExpired:
    p.kill()
    p.wait()
    print("hung")
os.close(r)
