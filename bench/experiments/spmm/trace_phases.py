#!/usr/bin/env python3
"""Phases of a fused GEMM + X kernel from an `ism-run --trace` file.

    trace_phases.py TRACE.json

Per SM, the GEMM partition (launch 0) ends when its last tile ends; the
other launch's items are split at that time into "beside the GEMM" and
"after it" (an item counts where it ends). Prints, over all SMs: the
kernel's span, the GEMM's end (median and max over SMs), the tiles' median
duration, and for the other launch the items and rows a microsecond per SM
in each phase, and the copies (lanes) active in each.
"""

import json
import statistics
import sys


def main():
    with open(sys.argv[1]) as f:
        data = json.load(f)
    events = [e for e in data["traceEvents"] if e.get("ph") == "X"]
    by_sm = {}
    for e in events:
        launch = (int(e["tid"]) // 100) % 100
        copy = int(e["tid"]) % 100
        start = float(e["ts"])
        end = start + float(e.get("dur", 0))
        by_sm.setdefault(int(e["pid"]), []).append((launch, copy, start, end))
    t0 = min(s for items in by_sm.values() for _, _, s, _ in items)
    t1 = max(e for items in by_sm.values() for _, _, _, e in items)
    gemm_end, tiles, beside, after = [], [], [], []
    lanes_beside, lanes_after, after_span = set(), set(), []
    for sm, items in by_sm.items():
        g = [(s, e) for l, c, s, e in items if l == 0]
        end = max(e for _, e in g) if g else t0
        gemm_end.append(end - t0)
        tiles += [e - s for s, e in g]
        o = [(c, s, e) for l, c, s, e in items if l != 0]
        beside.append(sum(1 for _, _, e in o if e <= end))
        after.append(sum(1 for _, _, e in o if e > end))
        lanes_beside |= {c for c, _, e in o if e <= end}
        lanes_after |= {c for c, _, e in o if e > end}
        last = max((e for _, _, e in o), default=end)
        after_span.append(max(0.0, last - end))
    n = len(by_sm)
    med_end = statistics.median(gemm_end)
    print(f"SMs {n}, span {t1 - t0:.1f} us; GEMM ends at median "
          f"{med_end:.1f} us (min {min(gemm_end):.1f}, max "
          f"{max(gemm_end):.1f}); tiles {len(tiles)}, median "
          f"{statistics.median(tiles):.2f} us")
    total = sum(beside) + sum(after)
    rate_b = sum(beside) / sum(gemm_end) if sum(gemm_end) else 0
    rate_a = sum(after) / sum(after_span) if sum(after_span) else 0
    print(f"other launch: {total} items; beside the GEMM {sum(beside)} "
          f"({100 * sum(beside) / max(total, 1):.0f}%, "
          f"{rate_b:.3f} items/us/SM, copies {sorted(lanes_beside)}); "
          f"after it {sum(after)} ({rate_a:.3f} items/us/SM over a median "
          f"{statistics.median(after_span):.1f} us, copies "
          f"{sorted(lanes_after)})")


if __name__ == "__main__":
    main()
