"""Reads `go tool pprof -raw` output: the shares of functions, the labels and mappings of a process."""
import re
import sys


def parse(path):
    """samples [(count, [location ids], {label: [values]})], locations {id: [functions]}, mappings."""
    samples, locs, maps = [], {}, []
    section = None
    cur = None
    for line in open(path, encoding="utf-8", errors="replace"):
        s = line.rstrip("\n")
        if s in ("Samples:", "Locations", "Mappings"):
            section = s
            continue
        if section == "Samples:":
            m = re.match(r"^\s+(\d+)\s+\d+:((?:\s+\d+)*)\s*$", s)
            if m:
                cur = (int(m.group(1)), [int(x) for x in m.group(2).split()], {})
                samples.append(cur)
                continue
            if cur is not None and s.strip():
                for k, v in re.findall(r"(\w+):\[([^\]]*)\]", s):
                    cur[2][k] = v
        elif section == "Locations":
            m = re.match(r"^\s+(\d+):\s+0x[0-9a-f]+\s+M=(\d+)\s+(.*)$", s)
            if m:
                last = int(m.group(1))
                locs[last] = [re.sub(r"\s+\S*:\d+\s+s=\d+$", "", m.group(3))]
            elif s.strip() and locs:
                locs[last].append(re.sub(r"\s+\S*:\d+\s+s=\d+$", "", s.strip()))
        elif section == "Mappings":
            if s.strip():
                maps.append(s.strip())
    return samples, locs, maps


def shares(path, pid, *funcs):
    """Prints 'TOTAL share1 share2 ...': samples of pid, and the fraction with each function."""
    samples, locs, _ = parse(path)
    mine = [x for x in samples if x[2].get("pid") == pid]
    total = sum(c for c, _, _ in mine)
    out = [str(total)]
    for f in funcs:
        n = sum(c for c, ids, _ in mine if any(f in locs.get(i, []) for i in ids))
        out.append("%.3f" % (n / total if total else 0))
    print(" ".join(out))
    return 0


def labels(path, pid):
    """Prints the labels of pid's samples, 'key=value' once each, sorted."""
    samples, _, _ = parse(path)
    seen = set()
    for _, _, lab in samples:
        if lab.get("pid") == pid:
            seen.update("%s=%s" % kv for kv in lab.items())
    print("\n".join(sorted(seen)))
    return 0


def mapping(path, name):
    """Prints the mapping lines whose file ends with name."""
    _, _, maps = parse(path)
    for m in maps:
        if re.search(r"\s\S*%s(\s|$)" % re.escape(name), m):
            print(m)
    return 0


if __name__ == "__main__":
    cmd = {"shares": shares, "labels": labels, "mapping": mapping}[sys.argv[1]]
    sys.exit(cmd(*sys.argv[2:]))
