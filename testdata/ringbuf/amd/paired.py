#!/usr/bin/env python3
"""paired.py OLD NEW: per-round ratios of interleaved BenchmarkRead runs.

Each file holds rounds (one go test run each, starting at "goos:"); round i
of OLD and round i of NEW ran back to back. Prints, per size, the median
over rounds of NEW/OLD for every mode, and of batch/libbpf, batch/floor and
records/lease within NEW's rounds (and within OLD's), with how many rounds
had the ratio >= 1. Medians of per-round ratios cancel what the shared
machine did to both sides of one round."""
import re, statistics, sys

def rounds(path):
    out, cur = [], None
    for line in open(path):
        if line.startswith("goos:"):
            cur = {}
            out.append(cur)
        m = re.match(r"BenchmarkRead/size=(\d+)/mode=([\w-]+)/touch=(\w+)\S*\s.*?([\d.]+) Mrec/s", line)
        if m and cur is not None:
            cur[(int(m[1]), m[2], m[3])] = float(m[4])
    return [r for r in out if r]

def show(label, ratios):
    if not ratios:
        return "-"
    med = statistics.median(ratios)
    wins = sum(r >= 1 for r in ratios)
    return f"{med:5.2f}x ({wins}/{len(ratios)})"

old, new = rounds(sys.argv[1]), rounds(sys.argv[2])
n = min(len(old), len(new))
keys = sorted({k for r in old + new for k in r})
touches = sorted({k[2] for k in keys})
for touch in touches:
    modes = sorted({k[1] for k in keys if k[2] == touch})
    sizes = sorted({k[0] for k in keys if k[2] == touch})
    print(f"touch={touch}: new/old per round, median (rounds new >= old), {n} rounds")
    print("size  " + "".join(f"{m:>18}" for m in modes))
    for s in sizes:
        row = []
        for m in modes:
            k = (s, m, touch)
            rs = [new[i][k] / old[i][k] for i in range(n) if k in new[i] and k in old[i]]
            row.append(show(m, rs))
        print(f"{s:<6}" + "".join(f"{c:>18}" for c in row))
    pairs = [("batch", "libbpf"), ("batch", "floor"), ("records", "lease")]
    pairs = [p for p in pairs if all(x in modes for x in p)]
    if pairs:
        print(f"touch={touch}: within one run, median over rounds (rounds >= 1)")
        print("size  " + "".join(f"{'old ' + a + '/' + b:>24}{'new ' + a + '/' + b:>24}" for a, b in pairs))
        for s in sizes:
            row = []
            for a, b in pairs:
                for side in (old, new):
                    rs = [r[(s, a, touch)] / r[(s, b, touch)] for r in side[:n] if (s, a, touch) in r and (s, b, touch) in r]
                    row.append(show("", rs))
            print(f"{s:<6}" + "".join(f"{c:>24}" for c in row))
    print()
