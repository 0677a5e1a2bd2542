"""CUDA graphs on a GPU: ism.run(graph=True) returns what a replay of the
captured launches computed (test_ordered_gpu.py captures a compiled
program's calls on torch tensors with torch.cuda.graph). Skipped without a
GPU."""

import pytest

import ism
from test_run import gpu_error, vector_add

np = pytest.importorskip("numpy")


def test_run_graph_result_is_the_replays():
    if gpu_error() is not None:
        pytest.skip(f"no GPU: {gpu_error()}")
    m = vector_add()
    rng = np.random.default_rng(5)
    a = rng.standard_normal(100000).astype(np.float32)
    b = rng.standard_normal(100000).astype(np.float32)
    c = np.full_like(a, np.nan)
    r = ism.run(m, "main", a, b, c, time=True, warmup=1, reps=3, calls=4,
                graph=True)
    np.testing.assert_allclose(c, a.astype(np.float64) + b, rtol=1e-6)
    assert len(r.times_ms) == 3
