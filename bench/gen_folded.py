#!/usr/bin/env python3
"""Writes N distinct folded stacks (deterministic for a seed) for bench_flamegraph.sh: 8 process
names, main, then 3..40 frames drawn from 2000 functions with a heavy head (Pareto), 30% ending in
3 of 200 kernel frames ("_[k]"), counts 1..100. usage: gen_folded.py N [SEED] > FILE.folded"""
import random
import sys

n = int(sys.argv[1])
random.seed(int(sys.argv[2]) if len(sys.argv) > 2 else 1)
funcs = ['func_%d' % i for i in range(2000)]
kern = ['k_%d_[k]' % i for i in range(200)]
comms = ['app%d' % i for i in range(8)]
seen = set()
out = []
while len(seen) < n:
    st = [random.choice(comms), 'main']
    st += [funcs[int(random.paretovariate(1.2)) % 2000] for _ in range(random.randint(3, 40))]
    if random.random() < 0.3:
        st += random.sample(kern, 3)
    s = ';'.join(st)
    if s not in seen:
        seen.add(s)
        out.append('%s %d\n' % (s, random.randint(1, 100)))
sys.stdout.write(''.join(out))
