"""Tutorial 5: flash attention.

`examples/attention.mlir` is a flash-attention forward as one tile program:
each program takes 64 query rows of one (batch x head), walks the keys in
blocks of 64 with an online softmax (a running row maximum and sum, the
output accumulator rescaled when the maximum grows), and runs both products,
S = Q K^T and O += P V, on the tensor cores. The CPU part checks it in the
float64 interpreter against NumPy, causal and not; the GPU part checks it
against PyTorch's scaled_dot_product_attention and times both.

    PYTHONPATH=build/python_packages python3 python/tutorials/05_attention.py

The page that explains it: docs/guide/05-attention.md.
"""

import math
import os

import numpy as np

import ism

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "examples", "attention.mlir")
HEAD_DIM = 64


def to_bf16(a):
    """float32 -> bf16 bit patterns (uint16), rounding to nearest even."""
    u = np.ascontiguousarray(a, np.float32).view(np.uint32)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def from_bf16(b):
    return (b.astype(np.uint32) << 16).view(np.float32)


# --8<-- [start:reference]
def attention_reference(q, k, v, scale, causal):
    """softmax(scale * Q K^T [+ causal mask]) V and the rows' log-sum-exp,
    in float64; q, k, v: (batch x heads, seq, head_dim)."""
    s = scale * np.einsum("bqd,bkd->bqk", q, k)
    if causal:
        s = np.where(np.tril(np.ones(s.shape[1:], bool)), s, -np.inf)
    mx = s.max(axis=2, keepdims=True)
    p = np.exp(s - mx)
    lse = (mx + np.log(p.sum(axis=2, keepdims=True)))[..., 0]
    return np.einsum("bqk,bkd->bqd", p / p.sum(axis=2, keepdims=True), v), lse
# --8<-- [end:reference]


def cpu():
    # --8<-- [start:cpu]
    m = ism.Module.parse_file(EXAMPLE)
    ptx = ism.to_ptx(m, chip="sm_90a")
    print("both products on wgmma:", ptx.count("wgmma.mma_async") > 0)

    rng = np.random.default_rng(0)
    bh, seq = 2, 100                       # a partial block of 36 queries and keys
    q, k, v = (to_bf16(rng.standard_normal((bh, seq, HEAD_DIM)))
               for _ in range(3))
    scale = 1 / math.sqrt(HEAD_DIM)
    errors = {}
    for causal in (0, 1):
        o = np.zeros_like(q)
        lse = np.zeros((bh, seq), np.float32)
        ism.interpret(m, "main", q, k, v, o, lse, scale, causal)
        ref_o, ref_lse = attention_reference(
            *(from_bf16(t).astype(np.float64) for t in (q, k, v)),
            scale, causal)
        errors[causal] = (np.abs(from_bf16(o) - ref_o).max(),
                          np.abs(lse - ref_lse).max())
        print(f"causal={causal}: max error O {errors[causal][0]:.1e}, "
              f"LSE {errors[causal][1]:.1e}")
        assert errors[causal][0] < 2e-2 and errors[causal][1] < 1e-4
    # --8<-- [end:cpu]
    return dict(ptx=ptx, errors=errors)


def gpu():
    # --8<-- [start:gpu]
    import torch
    import torch.nn.functional as F

    attention = ism.compile(ism.Module.parse_file(EXAMPLE))
    batch, heads, seq = 4, 32, 4096
    bf16 = dict(dtype=torch.bfloat16, device="cuda")
    q, k, v = (torch.randn(batch * heads, seq, HEAD_DIM, **bf16)
               for _ in range(3))
    o = torch.empty_like(q)
    lse = torch.empty(batch * heads, seq, dtype=torch.float32, device="cuda")
    scale = 1 / math.sqrt(HEAD_DIM)
    for causal in (False, True):
        attention(q, k, v, o, lse, scale, int(causal))
        ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        torch.testing.assert_close(o, ref, atol=2e-2, rtol=2e-2)
        flops = 4 * batch * heads * seq * seq * HEAD_DIM / (2 if causal else 1)
        for name, fn in (
                ("ism", lambda: attention(q, k, v, o, lse, scale, int(causal))),
                ("SDPA", lambda: F.scaled_dot_product_attention(
                    q, k, v, is_causal=causal))):
            ms = median_ms(fn)
            print(f"causal={causal} {name}: {ms:.3f} ms, "
                  f"{flops / ms / 1e9:.0f} TFLOP/s")
    # --8<-- [end:gpu]


def median_ms(fn, reps=20):
    import torch
    fn()
    times = []
    for _ in range(reps):
        start, end = (torch.cuda.Event(enable_timing=True) for _ in range(2))
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return sorted(times)[len(times) // 2]


def have_gpu():
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


if __name__ == "__main__":
    cpu()
    if have_gpu():
        gpu()
    else:
        print("no CUDA GPU with PyTorch here: the GPU part is skipped")
