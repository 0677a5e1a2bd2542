"""Tutorial 6: an FP8 linear layer, y = x W^T, on Hopper's 8-bit tensor cores.

Two tile programs from examples/: fp8_quantize.mlir rounds each row of a
bf16 matrix to float8_e4m3fn with a scale per row, and fp8_linear.mlir is a
whole layer in one host function (it quantizes the activations into
temporaries, then runs the FP8 GEMM with a scale per row of x and per row
of W). The CPU part compiles both to PTX and runs them in the float64
interpreter against NumPy; the GPU part runs them on torch tensors against
PyTorch's own FP8 GEMM (torch._scaled_mm) and bf16 x @ W.T.

    PYTHONPATH=build/python_packages python3 python/tutorials/06_fp8.py

The page that explains it: docs/guide/06-fp8.md.
"""

import os

import numpy as np

import ism

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def example(name):
    return ism.Module.parse_file(os.path.join(ROOT, "examples", name))


def bf16_bits(a):
    """float32 values (already bf16-representable or not) as bf16 bit
    patterns (uint16, round to nearest even), which the runner takes for
    bf16 buffers; and those values back as float64."""
    u = a.astype(np.float32).view(np.uint32)
    u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return u, (u.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def cpu():
    # --8<-- [start:cpu]
    quantize, linear = example("fp8_quantize.mlir"), example("fp8_linear.mlir")
    ptx = ism.to_ptx(linear, chip="sm_90a")         # no GPU needed
    assert "cvt.rn.satfinite.e4m3x2.f32" in ptx     # the quantization
    assert "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3" in ptx

    rng = np.random.default_rng(0)
    M, N, K = 64, 300, 512
    x, x64 = bf16_bits(rng.standard_normal((M, K)))
    w, w64 = bf16_bits(rng.standard_normal((N, K)))

    # The weights, once: e4m3 bit patterns (uint8) and a scale per row.
    wq = np.zeros((N, K), np.uint8)
    sw = np.zeros(N, np.float32)
    ism.interpret(quantize, "main", w, wq, sw)

    y = np.zeros((M, N), np.uint16)                 # bf16 bits
    ism.interpret(linear, "main", x, wq, sw, y)
    y64 = (y.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    ref = x64 @ w64.T
    error = np.linalg.norm(y64 - ref) / np.linalg.norm(ref)
    print(f"FP8 linear, {M}x{N}x{K}: relative error {error:.4f} against "
          f"float64 x @ W.T (e4m3 keeps 3 mantissa bits)")
    # --8<-- [end:cpu]
    return {"ptx": ptx, "error": error}


def gpu():
    # --8<-- [start:gpu]
    import torch

    quantize = ism.compile(example("fp8_quantize.mlir"))
    linear = ism.compile(example("fp8_linear.mlir"))

    M, N, K = 4096, 4096, 4096
    x = torch.randn(M, K, dtype=torch.bfloat16, device="cuda")
    w = torch.randn(N, K, dtype=torch.bfloat16, device="cuda")
    wq = torch.empty(N, K, dtype=torch.float8_e4m3fn, device="cuda")
    sw = torch.empty(N, dtype=torch.float32, device="cuda")
    quantize(w, wq, sw)                             # the weights, once
    y = torch.empty(M, N, dtype=torch.bfloat16, device="cuda")
    linear(x, wq, sw, y)

    # The same layer in PyTorch: the same per-row quantization, then
    # cuBLASLt's FP8 GEMM with row-wise scales.
    def torch_linear(x):
        amax = x.float().abs().amax(dim=1, keepdim=True).clamp(min=1e-12)
        xq = (x.float() * (448.0 / amax)).clamp(-448, 448)
        return torch._scaled_mm(xq.to(torch.float8_e4m3fn), wq.t(),
                                scale_a=amax / 448.0, scale_b=sw[None, :],
                                out_dtype=torch.bfloat16)

    torch.testing.assert_close(y, torch_linear(x), atol=0.5, rtol=2e-2)
    ref = x.float() @ w.float().t()
    error = ((y.float() - ref).norm() / ref.norm()).item()
    print(f"FP8 linear, {M}x{N}x{K}: relative error {error:.4f} against "
          f"x @ W.T in f32")
    assert error < 0.05

    def time_ms(fn, reps=20):
        start, end = (torch.cuda.Event(enable_timing=True) for _ in range(2))
        fn()
        start.record()
        for _ in range(reps):
            fn()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / reps

    flops = 2.0 * M * N * K
    for name, fn in [("ism (quantize + FP8 GEMM)", lambda: linear(x, wq, sw, y)),
                     ("torch (quantize + _scaled_mm)", lambda: torch_linear(x)),
                     ("torch bf16 x @ W.T", lambda: x @ w.t())]:
        ms = time_ms(fn)
        print(f"  {name}: {ms:.3f} ms, {flops / ms / 1e9:.0f} TFLOP/s")
    # --8<-- [end:gpu]
    return error


if __name__ == "__main__":
    cpu()
    try:
        import torch
        have_gpu = torch.cuda.is_available()
    except ImportError:
        have_gpu = False
    if have_gpu:
        gpu()
    else:
        print("no CUDA GPU with PyTorch here: the GPU part is skipped")
