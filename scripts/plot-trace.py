#!/usr/bin/env python3
"""Plots the per-SM timeline of an `ism-run --trace=FILE.json` trace.

    scripts/plot-trace.py FILE.json [-o timeline.png] [--no-plot]

Reads the Chrome trace ism-run wrote (complete "X" events: pid = SM, tid =
one per (region, launch, copy), args = {item, region, launch, copy}; traces
written before args named the launch have tid = region * 10000 + launch *
100 + copy; ts/dur in microseconds), prints the
same line as ism-run:

    trace: FILE.json: N work items on M SMs; both kernels active on the same SM X% of the time

and draws one row per SM (x = time in us), one colour per kernel (the
copies of a kernel share it), each (launch, copy) a thin bar in its own lane
of the SM's row, so that work items running at the same time on one SM are
visible side by side.

The overlap figure is computed as ism-run computes it: per SM, the union of
the intervals of each launch (its region and launch); the time during which at least
two of those unions hold (for two launches: launch 0's union intersected
with launch 1's), summed over SMs, over the sum over SMs of the union of all
intervals of the SM. Times are taken in whole nanoseconds (ism-run writes
them exactly, with three decimals of a microsecond).

Needs python3; the plot needs matplotlib (Agg backend, no display). Without
matplotlib the figure is printed, a message says that no plot was drawn,
and the exit status is 0.
"""

import argparse
import json
import os
import sys


def load_events(path):
    """The complete ("X") events of a Chrome trace."""
    with open(path) as f:
        data = json.load(f)
    events = data["traceEvents"] if isinstance(data, dict) else data
    items = []
    for event in events:
        if event.get("ph") != "X":
            continue
        start = int(round(float(event["ts"]) * 1000))
        end = start + int(round(float(event.get("dur", 0)) * 1000))
        args = event.get("args") or {}
        tid = int(event["tid"])
        if "launch" in args:
            group = (int(args.get("region", 0)), int(args["launch"]))
        else:
            group = divmod(tid // 100, 100)
        items.append({
            "sm": int(event["pid"]),
            "tid": tid,
            "group": group,
            "name": event.get("name", ""),
            "start": start,
            "end": end,
        })
    return items


def group_of(item):
    """The launch (region, launch index) an item belongs to."""
    return item["group"]


def union(intervals):
    """The union of [start, end) intervals, as sorted disjoint intervals."""
    merged = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return merged


def overlap_fraction(items):
    """Time with >= 2 launches active on an SM over time with any, summed
    over SMs (0 when nothing ran)."""
    by_sm = {}
    for item in items:
        if item["end"] > item["start"]:
            groups = by_sm.setdefault(item["sm"], {})
            groups.setdefault(group_of(item), []).append(
                (item["start"], item["end"]))
    overlap = busy = 0
    for groups in by_sm.values():
        events = []
        for intervals in groups.values():
            for start, end in union(intervals):
                events.append((start, 1))
                events.append((end, -1))
        events.sort()
        active = 0
        previous = 0
        i = 0
        while i < len(events):
            now = events[i][0]
            if active >= 1:
                busy += now - previous
            if active >= 2:
                overlap += now - previous
            while i < len(events) and events[i][0] == now:
                active += events[i][1]
                i += 1
            previous = now
    return overlap / busy if busy else 0.0


def summary_line(path, items):
    sms = {item["sm"] for item in items}
    groups = {group_of(item) for item in items}
    who = "at least two kernels" if len(groups) > 2 else "both kernels"
    return ("trace: %s: %d work items on %d SMs; %s active on the same SM "
            "%.1f%% of the time" % (path, len(items), len(sms), who,
                                     100 * overlap_fraction(items)))


def plot(items, output, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    sms = sorted({item["sm"] for item in items})
    tids = sorted({item["tid"] for item in items})
    group_of_tid = {item["tid"]: group_of(item) for item in items}
    groups = sorted(set(group_of_tid.values()))
    lane = {tid: i for i, tid in enumerate(tids)}
    row = {sm: i for i, sm in enumerate(sms)}
    try:
        palette = matplotlib.colormaps["tab10"]
    except AttributeError:  # matplotlib < 3.5
        palette = plt.get_cmap("tab10")
    colour = {g: palette(i % 10) for i, g in enumerate(groups)}
    label = {}
    for item in items:
        label.setdefault(group_of(item), item["name"])
    if len({g[0] for g in groups}) > 1:
        # Several fused launches (regions).
        label = {g: "%s (fused launch %d)" % (name, g[0])
                 for g, name in label.items()}

    lane_height = 0.9 / max(len(tids), 1)
    bars = {}
    for item in items:
        key = (item["sm"], item["tid"])
        # At least a hair wide, so that items shorter than the timer's
        # resolution still show.
        bars.setdefault(key, []).append(
            (item["start"] / 1000.0, max(item["end"] - item["start"], 1) /
             1000.0))

    height = min(max(3.0, 0.12 * len(sms) * max(1, len(tids) / 2.0)), 60.0)
    fig, ax = plt.subplots(figsize=(14, height))
    for (sm, tid), spans in bars.items():
        y = row[sm] - 0.45 + lane[tid] * lane_height
        ax.broken_barh(spans, (y, lane_height * 0.9),
                       facecolors=colour[group_of_tid[tid]], linewidth=0)
    for i in range(len(sms) - 1):
        ax.axhline(i + 0.5, color="0.85", linewidth=0.5)
    ax.set_ylim(-0.6, len(sms) - 0.4)
    ax.invert_yaxis()
    step = max(1, len(sms) // 40)
    ax.set_yticks(range(0, len(sms), step))
    ax.set_yticklabels(["SM %d" % sms[i] for i in range(0, len(sms), step)],
                       fontsize=7)
    ax.set_xlabel("time (us, from the earliest start)")
    ax.set_ylabel("SM")
    ax.set_title(title, fontsize=9)
    ax.legend(handles=[Patch(color=colour[g], label=label[g]) for g in groups],
              loc="upper right", fontsize=8)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(output, dpi=120)
    plt.close(fig)


def main():
    parser = argparse.ArgumentParser(
        description="Per-SM timeline of an ism-run --trace Chrome trace")
    parser.add_argument("trace", help="the FILE.json ism-run --trace wrote")
    parser.add_argument("-o", "--output",
                        help="the image to write (default: FILE.png)")
    parser.add_argument("--no-plot", action="store_true",
                        help="only print the overlap figure")
    args = parser.parse_args()

    try:
        items = load_events(args.trace)
    except (OSError, ValueError, KeyError, TypeError) as error:
        print("plot-trace: cannot read '%s': %s" % (args.trace, error),
              file=sys.stderr)
        return 1
    line = summary_line(args.trace, items)
    print(line)
    if args.no_plot:
        return 0
    if not items:
        print("plot-trace: the trace holds no work items; no plot written")
        return 0
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("plot-trace: matplotlib is not installed; no plot written")
        return 0
    output = args.output or os.path.splitext(args.trace)[0] + ".png"
    plot(items, output, line)
    print("plot-trace: wrote %s" % output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
