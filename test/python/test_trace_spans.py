"""bench/trace_spans.py on a committed trace: spans per kernel, and with
--by-launch per launch (from the tid in that older trace, from the items'
args in a trace of today's format with 161 launches), with the items'
median; a missing file is a one-line error."""

import json
import os
import subprocess
import sys

from conftest import ROOT

SCRIPT = os.path.join(ROOT, "bench", "trace_spans.py")
TRACE = os.path.join(ROOT, "test", "Runner", "Inputs", "trace_two_kernels.json")


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True,
                          text=True)


def test_spans_per_kernel():
    p = run(TRACE)
    assert p.returncode == 0, p.stderr
    assert "trace span matmul: 0.0..20.0 us (20.0 us), 4 items, mean item " \
        "9.12 us" in p.stdout
    assert "trace span rmsnorm: 0.5..40.0 us (39.5 us), 5 items" in p.stdout


def test_spans_per_launch():
    p = run(TRACE, "--by-launch")
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == [
        "launch 0 (matmul): 0.0..20.0 us (20.0 us), 4 items, median item "
        "10.00 us, busy 36.5 us",
        "launch 1 (rmsnorm): 0.5..40.0 us (39.5 us), 5 items, median item "
        "10.00 us, busy 43.0 us"]


def test_launches_past_a_hundred_are_apart(tmp_path):
    """ism-run names each item's region, launch and copy in its args; tids
    are one per (region, launch, copy). Launches 1 and 101 (which a tid of
    launch * 100 + copy would mix up) and two regions stay apart."""
    events, tid = [], {}
    for region, launch, start in [(0, 1, 0.0), (0, 1, 5.0), (0, 101, 2.0),
                                  (0, 160, 9.0), (1, 1, 3.0)]:
        t = tid.setdefault((region, launch), len(tid))
        events.append({"name": f"k{launch}", "ph": "X", "pid": 0, "tid": t,
                       "ts": start, "dur": 1.0,
                       "args": {"item": 0, "region": region,
                                "launch": launch, "copy": 0}})
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": events}))
    p = run(str(path), "--by-launch")
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == [
        "launch 0:1 (k1): 0.0..6.0 us (6.0 us), 2 items, median item 1.00 us, "
        "busy 2.0 us",
        "launch 0:101 (k101): 2.0..3.0 us (1.0 us), 1 items, median item "
        "1.00 us, busy 1.0 us",
        "launch 0:160 (k160): 9.0..10.0 us (1.0 us), 1 items, median item "
        "1.00 us, busy 1.0 us",
        "launch 1:1 (k1): 3.0..4.0 us (1.0 us), 1 items, median item 1.00 us, "
        "busy 1.0 us"]


def test_a_missing_file_is_one_line(tmp_path):
    p = run(str(tmp_path / "none.json"))
    assert p.returncode == 2
    assert "cannot read" in p.stderr.splitlines()[-1]
