"""Tutorial 4: co-scheduling a GEMM and an RMSNorm on the same SMs.

`examples/coschedule_matmul_rmsnorm.mlir` launches a tensor-core GEMM and a
memory-bound RMSNorm inside one `ism.coschedule` region: the two have no
order between them, and the `ism-coschedule` pass fuses them into one kernel
whose CTAs hold the warps of both. The CPU part shows the pass's decision
and checks the pair in the float64 interpreter; the GPU part runs it fused,
one launch after the other and on two streams, checks it against PyTorch and
times the three.

    PYTHONPATH=build/python_packages python3 python/tutorials/04_coschedule.py

The page that explains it: docs/guide/04-coschedule.md.
"""

import os

import numpy as np

import ism

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "examples", "coschedule_matmul_rmsnorm.mlir")


def to_bf16(a):
    """float32 -> bf16 bit patterns (uint16), rounding to nearest even."""
    u = np.ascontiguousarray(a, np.float32).view(np.uint32)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def from_bf16(b):
    return (b.astype(np.uint32) << 16).view(np.float32)


def references(A, B, x, w, eps):
    """C = A B and y = x / rms(x) * w, in float64."""
    x = x.astype(np.float64)
    rms = np.sqrt((x * x).mean(axis=1, keepdims=True) + eps)
    return A.astype(np.float64) @ B.astype(np.float64), x / rms * w


def cpu():
    # --8<-- [start:cpu]
    m = ism.Module.parse_file(EXAMPLE)

    # The pass's decision, in the IR after it (and as a remark on stderr):
    # one fused kernel, a partition per launch with its warps, registers,
    # named barriers, shared memory and work counter.
    # (The first passes of the ism-to-ptx pipeline, up to ism-coschedule.)
    fused = ism.apply_pipeline(
        m, "ism-combine,canonicalize,cse,ism-assign-layouts,"
           "ism-accelerate-dot{chip=sm_90a},ism-pipeline,"
           "ism-remove-layout-conversions,ism-coschedule")
    text = str(fused)
    print(text[text.index("ism.kernel @matmul__rmsnorm"):].split("(")[0])
    for partition in text.split("#ism.partition<")[1:]:
        print("    #ism.partition<" + partition.split(">")[0] + ">")
    ptx = ism.to_ptx(m, chip="sm_90a")
    assert ".entry matmul__rmsnorm" in ptx           # one kernel, both programs

    # The interpreter runs the region's launches one after another.
    rng = np.random.default_rng(0)
    A = to_bf16(rng.standard_normal((192, 128)))
    B = to_bf16(rng.standard_normal((128, 160)))
    C = np.zeros((192, 160), np.uint16)
    x = to_bf16(rng.standard_normal((40, 4096)))
    w = to_bf16(rng.standard_normal(4096))
    y = np.zeros_like(x)
    ism.interpret(m, "main", A, B, C, x, w, y, 1e-5)
    ref_c, ref_y = references(from_bf16(A), from_bf16(B), from_bf16(x),
                              from_bf16(w), 1e-5)
    err_c = np.abs(from_bf16(C) - ref_c).max() / np.abs(ref_c).max()
    err_y = np.abs(from_bf16(y) - ref_y).max() / np.abs(ref_y).max()
    print(f"interpreted: GEMM error {err_c:.1e}, RMSNorm error {err_y:.1e} "
          f"(of the largest value)")
    assert err_c < 1e-2 and err_y < 1e-2
    # --8<-- [end:cpu]
    return dict(ir=text, ptx=ptx, errors=(err_c, err_y))


def gpu():
    # --8<-- [start:gpu]
    import torch

    text = open(EXAMPLE).read()
    bf16 = dict(dtype=torch.bfloat16, device="cuda")
    A, B = torch.randn(4096, 4096, **bf16), torch.randn(4096, 4096, **bf16)
    x, w = torch.randn(46336, 4096, **bf16), torch.randn(4096, **bf16)
    C, y = torch.empty(4096, 4096, **bf16), torch.empty_like(x)
    times = {}
    for mode in ("fused", "sequential", "streams"):
        pair = ism.compile(text, coschedule=mode)
        pair(A, B, C, x, w, y, 1e-5)
        torch.testing.assert_close(C, A @ B, atol=0.5, rtol=2e-2)
        torch.testing.assert_close(
            y, torch.nn.functional.rms_norm(x, (4096,), w, 1e-5),
            atol=5e-2, rtol=2e-2)
        times[mode] = median_ms(lambda: pair(A, B, C, x, w, y, 1e-5))
        print(f"{mode}: {times[mode]:.4f} ms")
    print(f"fused is {times['sequential'] / times['fused']:.2f}x sequential, "
          f"{times['streams'] / times['fused']:.2f}x two streams")
    # --8<-- [end:gpu]
    return times


def median_ms(fn, reps=50):
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
