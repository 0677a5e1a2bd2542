#!/usr/bin/env python3
"""Per-partition spans of an `ism-run --trace` file: for each kernel of the
fused launch, its first start and last end over all SMs, its work items and
their mean duration.

    python3 bench/trace_spans.py TRACE.json
"""
import json
import sys

ev = [e for e in json.load(open(sys.argv[1]))["traceEvents"]
      if e.get("ph") == "X"]
by = {}
for e in ev:
    s = by.setdefault(e["name"], [1e18, 0, 0, 0])
    s[0] = min(s[0], e["ts"])
    s[1] = max(s[1], e["ts"] + e["dur"])
    s[2] += 1
    s[3] += e["dur"]
for k, (a, b, n, busy) in by.items():
    print(f"trace span {k}: {a:.1f}..{b:.1f} us ({b - a:.1f} us), {n} items, "
          f"mean item {busy / n:.2f} us")
