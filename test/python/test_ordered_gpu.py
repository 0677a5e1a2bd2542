"""examples/decode_mlp.mlir (an ordered ism.coschedule: two dependent
kernels in one persistent launch) on torch CUDA tensors, called again and
again on fresh inputs (the fused kernel's last CTA resets its ticket and
done counters for the next call), fused and one launch after another,
against a float64 PyTorch MLP block. Skipped without torch or a GPU."""

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


@pytest.mark.parametrize("coschedule", ["fused", "sequential"])
def test_decode_mlp_calls_again_and_again(coschedule):
    with open(os.path.join(ROOT, "examples", "decode_mlp.mlir")) as f:
        step = ism.compile(f.read(), coschedule=coschedule)
    gen = torch.Generator(device="cuda").manual_seed(0)
    for hidden, ffn in [(2048, 8192), (2048, 8192), (999, 3001),
                        (2048, 8192)]:
        def randn(*shape):
            return (torch.randn(*shape, generator=gen, device="cuda") *
                    shape[-1] ** -0.5).to(torch.bfloat16)
        x, wn = randn(1, hidden) * hidden ** 0.5, randn(hidden) + 1
        wg, wu, wd = randn(ffn, hidden), randn(ffn, hidden), randn(hidden, ffn)
        y = torch.full((1, hidden), float("nan"), dtype=torch.bfloat16,
                       device="cuda")
        step(x, wn, wg, wu, wd, y, EPS)
        torch.cuda.synchronize()
        ref = reference(x, wn, wg, wu, wd)
        torch.testing.assert_close(y.double(), ref, rtol=2e-2,
                                   atol=2e-2 * ref.abs().max().item())
