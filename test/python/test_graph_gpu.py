"""CUDA graphs on a GPU: ism.run(graph=True) returns what a replay of the
captured launches computed, and a compiled program's calls on torch tensors
can be captured with torch.cuda.graph (after a first call on the capture
stream, which makes the program's temporary buffers and counters) and
replayed on new inputs copied into the captured tensors: the ordered decode
MLP fused (its counters reset by the kernel itself) and one launch at a
time. Skipped without a GPU (and the torch part without torch)."""

import os

import pytest

import ism
from conftest import ROOT

np = pytest.importorskip("numpy")

EPS = 1e-5


def gpu_error():
    x = np.zeros(4, np.float32)
    try:
        ism.run(ism.Module.parse_file(os.path.join(
            ROOT, "examples", "vector_add.mlir")), "main", x, x.copy(),
            x.copy())
    except ism.RuntimeUnavailable as e:
        return str(e)
    return None


def test_run_graph_result_is_the_replays():
    if gpu_error() is not None:
        pytest.skip(f"no GPU: {gpu_error()}")
    m = ism.Module.parse_file(os.path.join(ROOT, "examples",
                                           "vector_add.mlir"))
    rng = np.random.default_rng(5)
    a = rng.standard_normal(100000).astype(np.float32)
    b = rng.standard_normal(100000).astype(np.float32)
    c = np.full_like(a, np.nan)
    r = ism.run(m, "main", a, b, c, time=True, warmup=1, reps=3, calls=4,
                graph=True)
    np.testing.assert_allclose(c, a.astype(np.float64) + b, rtol=1e-6)
    assert len(r.times_ms) == 3


@pytest.mark.parametrize("coschedule", ["fused", "sequential"])
def test_torch_cuda_graph_replays_the_decode_mlp(coschedule):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU")
    with open(os.path.join(ROOT, "examples", "decode_mlp.mlir")) as f:
        step = ism.compile(f.read(), coschedule=coschedule)
    hidden, ffn = 999, 3001
    gen = torch.Generator(device="cuda").manual_seed(1)

    def randn(*shape):
        return (torch.randn(*shape, generator=gen, device="cuda") *
                shape[-1] ** -0.5).to(torch.bfloat16)
    x, wn = randn(1, hidden) * hidden ** 0.5, randn(hidden) + 1
    wg, wu, wd = randn(ffn, hidden), randn(ffn, hidden), randn(hidden, ffn)
    y = torch.full((1, hidden), float("nan"), dtype=torch.bfloat16,
                   device="cuda")
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        step(x, wn, wg, wu, wd, y, EPS)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        step(x, wn, wg, wu, wd, y, EPS)
    for _ in range(3):
        x.copy_(randn(1, hidden) * hidden ** 0.5)
        y.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        xd, wnd = x.double(), wn.double()
        h = xd * torch.rsqrt((xd * xd).mean(-1, keepdim=True) + EPS) * wnd
        g, u = h @ wg.double().T, h @ wu.double().T
        a = (g * torch.sigmoid(g) * u).to(torch.bfloat16).double()
        ref = a @ wd.double().T + xd
        torch.testing.assert_close(y.double(), ref, rtol=2e-2,
                                   atol=2e-2 * ref.abs().max().item())
