#!/usr/bin/env python3
"""Counts test cases across meson test logs (TAP subtests where a test speaks TAP) and prints the CI summary."""
import json
import re
import sys

passed = failed = skipped = 0
failures = []
for path in sys.argv[1:]:
    build = path.split("/meson-logs/")[0]
    try:
        lines = open(path, encoding="utf-8", errors="replace").read().splitlines()
    except OSError as e:
        print(f"summarize: cannot read {path}: {e}")
        failed += 1
        continue
    for line in lines:
        if not line.strip():
            continue
        t = json.loads(line)
        name = f"{build}:{t['name']}"
        result = t["result"]
        out = t.get("stdout") or t.get("stdo") or ""
        cases = [l for l in out.splitlines() if re.match(r"^(not )?ok\b", l)]
        if t.get("protocol") == "tap" or cases:
            p = f = s = 0
            for c in cases:
                if re.search(r"#\s*skip", c, re.I):
                    s += 1
                elif c.startswith("not ok"):
                    if re.search(r"#\s*todo", c, re.I):
                        s += 1
                    else:
                        f += 1
                        failures.append(f"{name}: {c}")
                else:
                    p += 1
            # A crash or timeout after some cases passed still counts as a failure.
            if result in ("FAIL", "TIMEOUT", "ERROR", "UNEXPECTEDPASS") and f == 0:
                f += 1
                failures.append(f"{name}: {result} (exit {t.get('returncode')})")
            if not cases and result == "SKIP":
                s += 1
            passed += p
            failed += f
            skipped += s
        else:
            if result in ("OK", "EXPECTEDFAIL"):
                passed += 1
            elif result == "SKIP":
                skipped += 1
            else:
                failed += 1
                failures.append(f"{name}: {result} (exit {t.get('returncode')})")
for f in failures:
    print("FAILED:", f)
print(f"{passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed else 0)
