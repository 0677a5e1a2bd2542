#!/usr/bin/env python3
"""Per-partition spans of an `ism-run --trace` file: for each kernel of the
fused launch, its first start and last end over all SMs, its work items and
their mean duration. With --by-launch, the same for each launch (in launch
order: the launches of an ordered region that share a kernel, a model's
layers, apart), with the items' median.

    python3 bench/trace_spans.py TRACE.json [--by-launch]
"""
import argparse
import json
import statistics
import sys


def spans(events, key):
    """{key(event): [first start, last end, items, busy us, durations]}."""
    by = {}
    for e in events:
        s = by.setdefault(key(e), [1e18, 0, 0, 0, []])
        s[0] = min(s[0], e["ts"])
        s[1] = max(s[1], e["ts"] + e["dur"])
        s[2] += 1
        s[3] += e["dur"]
        s[4].append(e["dur"])
    return by


def launch_of(event):
    """The launch an item belongs to: its args' (docs/runner.md), or from
    the tid of a trace written before the args named it (region * 10000 +
    launch * 100 + copy)."""
    args = event.get("args") or {}
    if "launch" in args:
        return (int(args.get("region", 0)), int(args["launch"]))
    return divmod(event["tid"] // 100, 100)


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("trace")
    parser.add_argument("--by-launch", action="store_true")
    opts = parser.parse_args()
    try:
        with open(opts.trace) as fh:
            data = json.load(fh)
    except (OSError, ValueError) as e:
        parser.error(f"cannot read {opts.trace}: {e}")
    events = [e for e in data.get("traceEvents", []) if e.get("ph") == "X"]
    if not events:
        parser.error(f"{opts.trace} has no work items")
    if not opts.by_launch:
        for k, (a, b, n, busy, _) in spans(events, lambda e: e["name"]).items():
            print(f"trace span {k}: {a:.1f}..{b:.1f} us ({b - a:.1f} us), "
                  f"{n} items, mean item {busy / n:.2f} us")
        return 0
    by = spans(events, lambda e: (launch_of(e), e["name"]))
    regions = len({region for (region, _), _ in by})
    for ((region, launch), name), (a, b, n, busy, durations) in sorted(
            by.items()):
        where = f"{region}:{launch}" if regions > 1 else str(launch)
        print(f"launch {where} ({name}): {a:.1f}..{b:.1f} us "
              f"({b - a:.1f} us), {n} items, median item "
              f"{statistics.median(durations):.2f} us, busy {busy:.1f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
