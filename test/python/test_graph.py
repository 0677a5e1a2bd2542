"""CUDA graphs from Python: ism.run(graph=True, calls=N) captures the host
function's launches after its first run and replays them (for the arrays it
returns and for each timed run), as ism-run --graph does. Without a GPU this
checks the arguments and, through the fake CUDA driver
(test/Runner/Inputs/fake_libcuda.c, which records what a captured stream
launches and replays it), what is captured and what is launched when;
test_graph_gpu.py checks the results on a GPU."""

import os
import shutil
import subprocess
import sys

import pytest

import ism
from conftest import ROOT
from test_run import vector_add

np = pytest.importorskip("numpy")


@pytest.mark.parametrize("calls", [0, -1, True, 2.0])
def test_run_calls_must_be_a_positive_int(calls):
    x = np.zeros(8, np.float32)
    with pytest.raises(ValueError, match="calls must be an int of at least 1"):
        ism.run(vector_add(), "main", x, x.copy(), x.copy(), time=True,
                calls=calls)


def test_run_graph_takes_one_stream():
    x = np.zeros(8, np.float32)
    with pytest.raises(ValueError, match="graph captures one stream"):
        ism.run(vector_add(), "main", x, x.copy(), x.copy(), graph=True,
                coschedule="streams")


def test_run_graph_captures_and_replays_with_the_fake_driver(tmp_path):
    cc = shutil.which(os.environ.get("CC", "cc"))
    if not cc:
        pytest.skip("no C compiler for the fake CUDA driver")
    fake = os.path.join(ROOT, "test", "Runner", "Inputs", "fake_libcuda.c")
    subprocess.run([cc, "-shared", "-fPIC", fake, "-o",
                    str(tmp_path / "libcuda.so.1")], check=True)
    log = tmp_path / "launches.log"
    script = f"""
import numpy as np, ism
m = ism.Module.parse_file({os.path.join(ROOT, "examples", "vector_add.mlir")!r})
x = np.ones(5000, np.float32)
r = ism.run(m, "main", x, x.copy(), x.copy(), time=True, warmup=1, reps=2,
            calls=3, graph=True, flush_l2=False)
print(len(r.times_ms))
"""
    env = dict(os.environ,
               LD_LIBRARY_PATH=os.pathsep.join(
                   [str(tmp_path), os.environ.get("LD_LIBRARY_PATH", "")]),
               FAKE_CUDA_LAUNCH_LOG=str(log),
               ISM_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join(sys.path))
    r = subprocess.run([sys.executable, "-c", script], env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, (r.returncode, r.stderr[-2000:])
    assert r.stdout.strip() == "2"
    lines = [line.split()[0] for line in log.read_text().splitlines()]
    # The run; its replay (captured, launched); the timing's call outside
    # the graph; a graph of three calls; 1 warm-up + 2 timed launches of it.
    assert lines == (["launch", "capture", "launch", "launch"] +
                     ["capture"] * 3 + ["launch"] * 9)
