"""examples/decode_mlp.mlir (an ordered ism.coschedule: two dependent
kernels in one persistent launch) on torch CUDA tensors, fused and one
launch after another, against a float64 PyTorch MLP block: called again
and again on fresh inputs (the fused kernel's last CTA resets its ticket
and done counters for the next call), and captured with torch.cuda.graph
and replayed. Skipped without torch or a GPU."""

import os

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():  # pragma: no cover - CPU-only machines
    pytest.skip("no CUDA GPU", allow_module_level=True)

import ism  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
EPS = 1e-5


def reference(x, wn, wg, wu, wd):
    """float64, with a rounded to bf16 as the kernels store it."""
    x, wn, wg, wu, wd = (t.double() for t in (x, wn, wg, wu, wd))
    h = (x * torch.rsqrt((x * x).mean(-1, keepdim=True) + EPS) * wn)
    g, u = h @ wg.T, h @ wu.T
    a = (g * torch.sigmoid(g) * u).to(torch.bfloat16).double()
    return a @ wd.T + x


def randn(gen, *shape):
    return (torch.randn(*shape, generator=gen, device="cuda") *
            shape[-1] ** -0.5).to(torch.bfloat16)


def inputs(gen, hidden, ffn):
    """x, w_norm, W_gate, W_up, W_down and a NaN-filled y."""
    x, wn = randn(gen, 1, hidden) * hidden ** 0.5, randn(gen, hidden) + 1
    wg, wu = randn(gen, ffn, hidden), randn(gen, ffn, hidden)
    wd = randn(gen, hidden, ffn)
    y = torch.full((1, hidden), float("nan"), dtype=torch.bfloat16,
                   device="cuda")
    return x, wn, wg, wu, wd, y


def compile_step(coschedule):
    with open(os.path.join(ROOT, "examples", "decode_mlp.mlir")) as f:
        return ism.compile(f.read(), coschedule=coschedule)


def assert_matches(y, x, wn, wg, wu, wd):
    ref = reference(x, wn, wg, wu, wd)
    torch.testing.assert_close(y.double(), ref, rtol=2e-2,
                               atol=2e-2 * ref.abs().max().item())


@pytest.mark.parametrize("coschedule", ["fused", "sequential"])
def test_decode_mlp_calls_again_and_again(coschedule):
    step = compile_step(coschedule)
    gen = torch.Generator(device="cuda").manual_seed(0)
    for hidden, ffn in [(2048, 8192), (2048, 8192), (999, 3001),
                        (2048, 8192)]:
        x, wn, wg, wu, wd, y = inputs(gen, hidden, ffn)
        step(x, wn, wg, wu, wd, y, EPS)
        torch.cuda.synchronize()
        assert_matches(y, x, wn, wg, wu, wd)


@pytest.mark.parametrize("coschedule", ["fused", "sequential"])
def test_decode_mlp_replayed_from_a_torch_cuda_graph(coschedule):
    """Captured with torch.cuda.graph after a first call on the capture
    stream (which makes the temporaries and counters), replayed on new
    inputs copied into the captured tensors."""
    step = compile_step(coschedule)
    gen = torch.Generator(device="cuda").manual_seed(1)
    hidden, ffn = 999, 3001
    x, wn, wg, wu, wd, y = inputs(gen, hidden, ffn)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        step(x, wn, wg, wu, wd, y, EPS)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        step(x, wn, wg, wu, wd, y, EPS)
    for _ in range(3):
        x.copy_(randn(gen, 1, hidden) * hidden ** 0.5)
        y.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        assert_matches(y, x, wn, wg, wu, wd)
