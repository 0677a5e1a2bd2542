#!/usr/bin/env python3
"""Throughput per watt of the large GEMMs: ism (the configuration the tuner
picks for these shapes: 128x256 tiles, 8 consumer warps, group 16),
cuBLAS (torch.matmul) and Triton's autotuned tutorial matmul, each run back
to back for SECONDS seconds (no L2 flush: steady state) while nvidia-smi
samples the GPU's power, SM clock and clock-event reasons every 100 ms.

    python3 bench/gemm_energy.py OUT [SECONDS] [clusters]

With `clusters`, ism also runs its 2-CTA cluster configurations (TMA
multicast of B with 2x1, of A with 1x2: half that operand's L2 reads).

Prints per implementation and shape: TFLOP/s, mean power, median SM clock,
the share of samples with the software power cap active (reason 0x4) and
TFLOP/J. Where every kernel runs at the power cap, the one that does more
work per joule is faster, and the ratio of two kernels' TFLOP/J bounds the
ratio of their speeds. Needs the ism wheel (ism.compile) and torch,
triton."""
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gemm  # noqa: E402
import triton_matmul  # noqa: E402
import ism  # noqa: E402
from power import PowerLog  # noqa: E402

OUT = sys.argv[1]
SECONDS = float(sys.argv[2]) if len(sys.argv) > 2 else 3.0
# (with `clusters`: the two larger shapes only)
os.makedirs(OUT, exist_ok=True)


def measure(fn, flops):
    fn()
    torch.cuda.synchronize()
    # calls per second, roughly, so that each launch batch lasts ~0.1 s
    t0 = time.perf_counter()
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    per = max(1, int(0.1 / ((time.perf_counter() - t0) / 5)))
    start, end = (torch.cuda.Event(enable_timing=True) for _ in range(2))
    calls = 0
    with PowerLog(os.path.join(OUT, "smi.csv")) as log:
        start.record()
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < SECONDS:
            for _ in range(per):
                fn()
            calls += per
            torch.cuda.synchronize()
        end.record()
        end.synchronize()
    ms = start.elapsed_time(end) / calls
    p = log.summary()
    tflops = flops / ms / 1e9
    return dict(p, tflops=tflops, tflop_per_j=tflops / p["watts"])


results = []
for (m, n, k) in ((4096, 4096, 4096), (8192, 8192, 8192),
                  (8192, 4096, 14336))[("clusters" in sys.argv[3:]):]:
    a = torch.randn(m, k, dtype=torch.bfloat16, device="cuda")
    b = torch.randn(k, n, dtype=torch.bfloat16, device="cuda")
    c = torch.empty(m, n, dtype=torch.bfloat16, device="cuda")
    impls = {}
    variants = [("ism 128x256 g16", dict(group=16))]
    if "clusters" in sys.argv[3:]:
        variants += [("ism 128x256 2x1", dict(cluster=(2, 1))),
                     ("ism 128x256 1x2", dict(cluster=(1, 2)))]
    for name, kw in variants:
        prog = ism.compile(gemm.program(bm=128, bn=256, warps=8, **kw))
        impls[name] = (lambda p: lambda: p(a, b, c))(prog)
    impls["cuBLAS"] = lambda: torch.matmul(a, b)
    impls["Triton tutorial"] = triton_matmul.matmul_fn(a, b)
    for name, fn in impls.items():
        r = measure(fn, 2.0 * m * n * k)
        r.update(name=name, shape=f"{m}x{n}x{k}")
        results.append(r)
        print(f"{r['shape']} {name}: {r['tflops']:.0f} TFLOP/s, "
              f"{r['watts']:.0f} W, {r['clock']:.0f} MHz, power cap "
              f"{100 * r['capped']:.0f}% of samples, "
              f"{r['tflop_per_j']:.3f} TFLOP/J", flush=True)
print()
print("| bf16 M x N x K | kernel | TFLOP/s | W | SM MHz | power-capped samples "
      "| TFLOP/J |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for r in results:
    print(f"| {r['shape']} | {r['name']} | {r['tflops']:.0f} | {r['watts']:.0f} "
          f"| {r['clock']:.0f} | {100 * r['capped']:.0f}% | "
          f"{r['tflop_per_j']:.3f} |")
