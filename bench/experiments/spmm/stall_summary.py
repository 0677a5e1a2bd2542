#!/usr/bin/env python3
"""Sums ncu's per-instruction warp-stall samples (the CSV that
stalls_h200.sh writes: `ncu --page source --csv --print-source sass`).

    stall_summary.py STALLS.csv[.xz] [TOP]

Prints the samples by stall reason over the whole kernel, then the TOP
(default 0) instructions with the most samples and their three largest
reasons: where the warps wait (a `long_sb` stall sits at the first
instruction that reads a global load's result).
"""
import collections
import csv
import lzma
import sys


def main():
    path = sys.argv[1]
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    opener = lzma.open if path.endswith(".xz") else open
    with opener(path, "rt") as f:
        rows = list(csv.reader(f))
    header, data = rows[1], rows[2:]
    ix = {h: i for i, h in enumerate(header)}
    samples_col = ix["Warp Stall Sampling (All Samples)"]
    reasons = [h for h in header
               if h.startswith("stall_") and "Not Issued" not in h]
    total = collections.Counter()
    samples = 0
    for r in data:
        for h in reasons:
            total[h] += int(r[ix[h]] or 0)
        samples += int(r[samples_col] or 0)
    print(f"samples {samples}")
    for h, v in total.most_common(12):
        print(f"  {h:28} {v:9} {100 * v / max(samples, 1):5.1f}%")
    ranked = sorted(data, key=lambda r: -int(r[samples_col] or 0))[:top]
    for r in ranked:
        s = int(r[samples_col])
        why = sorted(((int(r[ix[h]] or 0), h[6:]) for h in reasons),
                     reverse=True)[:3]
        print(f"{r[0][-5:]} {s:7} {100 * s / max(samples, 1):5.1f}% "
              f"{r[1].strip()[:60]:60} {why}")


if __name__ == "__main__":
    main()
