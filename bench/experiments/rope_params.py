#!/usr/bin/env python3
"""Does the size of a kernel's parameter block cost GPU time per launch?

Runs Triton's in-place RoPE kernel (bench/triton_kernels.py, 8 warps) as
written (about 48 bytes of parameters) and the same kernel with N unused
i64 parameters added (N = 19 gives ~200 bytes, the size of ism's RoPE
parameter block of three full memref descriptors), in interleaved rounds
(median of --reps calls each, L2 flushed, CUDA events), at short sequences
where the per-launch cost shows. Needs torch and triton (--ism: also
ism's RoPE, from the ism package).

    python3 bench/experiments/rope_params.py [--seqs 512,1024] [--pads 0,19,40]
"""
import argparse
import os
import statistics
import sys

import torch
import triton
import triton.language as tl

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
import triton_kernels as tk  # noqa: E402


def edited_kernel(name: str, edits):
    """bench/triton_kernels.py's in-place RoPE kernel with its source
    edited: each (old, new) of ``edits`` replaces the first ``old`` (which
    must be there); compiled as module ``name``."""
    import inspect
    import linecache
    import types
    src = inspect.getsource(tk._rope_inplace_kernel.fn)
    for old, new in edits:
        assert old in src, old
        src = src.replace(old, new, 1)
    file = f"<{name}>"
    linecache.cache[file] = (len(src), None, src.splitlines(True), file)
    mod = types.ModuleType(name)
    mod.__dict__.update(triton=triton, tl=tl)
    exec(compile(src, file, "exec"), mod.__dict__)
    return mod._rope_inplace_kernel


def make_kernel(pads: int):
    """bench/triton_kernels.py's in-place RoPE kernel with `pads` extra i64
    parameters (its source, with the parameters added to the signature)."""
    extra = "".join(f", p{i}" for i in range(pads))
    return edited_kernel(f"rope_pad_{pads}", [
        ("cos_stride, heads,", f"cos_stride, heads{extra},")])


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seqs", default="512,1024,2048")
    p.add_argument("--pads", default="0,19,40")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--reps", type=int, default=200)
    p.add_argument("--ahead", type=float, default=0.0,
                   help="ms the GPU sleeps first so the host runs ahead")
    p.add_argument("--ism", action="store_true",
                   help="also time ism's RoPE (1 token, 8 warps, dynamic)")
    a = p.parse_args()
    batch, heads, dim = 4, 32, 128
    half = dim // 2
    kernels = {n: make_kernel(n) for n in map(int, a.pads.split(","))}
    flush = torch.empty(128 << 20, dtype=torch.uint8, device="cuda")

    def timed(fn):
        for _ in range(10):
            fn()
        torch.cuda.synchronize()
        if a.ahead:
            # The GPU sleeps while the host queues every timed call, so
            # no call waits for the host's launch path.
            torch.cuda._sleep(int(a.ahead * 1.98e6))
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(a.reps)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(a.reps)]
        for i in range(a.reps):
            flush.zero_()
            starts[i].record()
            fn()
            ends[i].record()
        torch.cuda.synchronize()
        return statistics.median(s.elapsed_time(e) for s, e in
                                 zip(starts, ends)) * 1e3

    print(f"device: {torch.cuda.get_device_name()}; Triton {triton.__version__}"
          f"; bf16 ({batch}, {heads}, {dim}) per token; us, median of "
          f"{a.reps} calls per round")
    for seq in map(int, a.seqs.split(",")):
        t = torch.randn(seq, batch, heads, dim, device="cuda").bfloat16()
        cos = torch.rand(seq, half, device="cuda")
        sin = torch.rand(seq, half, device="cuda")
        res = {}
        if a.ism:
            sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
                os.path.dirname(os.path.abspath(__file__)))), "python",
                "examples"))
            import ism
            import rope_autograd as R
            k_ism = ism.compile(ism.Module.parse(
                R.module_text("bf16", heads, half, 1, 8)), entry="main")
        for _ in range(a.rounds):
            if a.ism:
                res.setdefault("ism", []).append(
                    timed(lambda: k_ism(t, cos, sin)))
            for n, k in kernels.items():
                pads = [12345 + 7 * i for i in range(n)]

                def fn(k=k, pads=pads):
                    k[(seq, batch)](t, cos, sin, t.stride(0), t.stride(1),
                                    t.stride(2), cos.stride(0), heads, *pads,
                                    HALF=half, BLOCK_H=32, BLOCK_D=64,
                                    BACKWARD=False, num_warps=8)
                res.setdefault(n, []).append(timed(fn))
        base = statistics.median(res[0])
        print(f"seq {seq}:")
        for n, v in res.items():
            med = statistics.median(v)
            label = ("ism 1x8 (~200 B)    " if n == "ism" else
                     f"{n:3d} extra i64 (~{3 * 8 + 5 * 4 + 8 * n:3d} B)")
            print(f"  {label} " +
                  " ".join(f"{x:7.2f}" for x in v) +
                  f"  median {med:7.2f}  +{med - base:5.2f} us")


if __name__ == "__main__":
    main()
