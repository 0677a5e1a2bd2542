"""bench/trace_spans.py on a committed trace: spans per kernel, and with
--by-launch per launch (tid // 100), with the items' median; a missing
file is a one-line error."""

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


def test_a_missing_file_is_one_line(tmp_path):
    p = run(str(tmp_path / "none.json"))
    assert p.returncode == 2
    assert "cannot read" in p.stderr.splitlines()[-1]
