#!/usr/bin/env python3
"""Grouped GEMM for mixture-of-experts layers: ism against PyTorch.

ism runs examples/grouped_gemm.mlir through ism-run (one host function: the
plan kernel, then one launch over every expert's tiles, the routing read on
the GPU). The baselines, on the same shapes and routing: a loop of cuBLAS
GEMMs, one per expert (torch.mm into slices of y; the loop knows the counts
on the host, which a real layer would have to copy back first), and
torch._grouped_mm where the installed PyTorch has it. Routing is uneven
(multinomial over Dirichlet weights, fixed seed), some experts get no
tokens.

    python3 bench/grouped_gemm.py --ism-run ISM_RUN [--out DIR] [--quick]
                                  [--dtype bf16|e4m3]

Prints a table of TFLOP/s (medians, L2 flushed) with ism's SM clock and
board power; writes grouped_gemm.json under --out.
"""
import argparse
import json
import os
import re
import statistics
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gemm import run  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "examples", "grouped_gemm.mlir")

# name, experts, rows (tokens x top-k), N, K
CASES = [
    ("Mixtral up (8 experts)", 8, 8192, 14336, 4096),
    ("Mixtral down (8 experts)", 8, 8192, 4096, 14336),
    ("DeepSeek-like (64 experts)", 64, 8192, 2048, 7168),
    ("DeepSeek-like (256 experts)", 256, 16384, 2048, 7168),
]


def fp8_text(text=None):
    """examples/grouped_gemm.mlir with e4m3 x and W (128-wide K steps, both
    read K-major by wgmma's 8-bit form; y stays bf16), as an FP8 MoE layer
    runs it."""
    if text is None:
        with open(EXAMPLE) as f:
            text = f.read()
    start = text.index("ism.kernel @grouped")
    end = text.index("func.func @main")
    f8 = "memref<?x?xf8E4M3FN>"
    kernel, host = text[start:end], text[end:]
    for old, new in [
            ("memref<?x?xbf16>, %w: memref<?x?xbf16>", f"{f8}, %w: {f8}"),
            ("memref.dim %x, %c1 : memref<?x?xbf16>",
             f"memref.dim %x, %c1 : {f8}"),
            ("%bk = arith.constant 64", "%bk = arith.constant 128"),
            ("memref<?x?xbf16> -> tensor<128x64xbf16>",
             f"{f8} -> tensor<128x128xf8E4M3FN>"),
            ("tensor<128x64xbf16> -> tensor<64x128xbf16>",
             "tensor<128x128xf8E4M3FN> -> tensor<128x128xf8E4M3FN>"),
            ("tensor<128x64xbf16> * tensor<64x128xbf16>",
             "tensor<128x128xf8E4M3FN> * tensor<128x128xf8E4M3FN>")]:
        assert old in kernel, old
        kernel = kernel.replace(old, new)
    for old, new in [
            ("memref<?x?xbf16>, %w: memref<?x?xbf16>", f"{f8}, %w: {f8}"),
            ("%x, %c0 : memref<?x?xbf16>", f"%x, %c0 : {f8}"),
            ("%x, %c1 : memref<?x?xbf16>", f"%x, %c1 : {f8}"),
            ("%w, %c0 : memref<?x?xbf16>", f"%w, %c0 : {f8}"),
            ("%w, %c1 : memref<?x?xbf16>", f"%w, %c1 : {f8}"),
            ("(memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xbf16>",
             f"({f8}, {f8}, memref<?x?xbf16>")]:
        assert old in host, old
        host = host.replace(old, new)
    return text[:start] + kernel + host


def variant(text, bn=128, warps=8, group=0, cluster_n=1):
    """The example (or fp8_text's) with BLOCK_N = bn columns of y a program,
    `warps` warps, group > 0: the persistent grid walks the programs in
    groups of `group` table slots (the GEMM's group_size; default 8),
    cluster_n = 2: programs of the same slot and neighbouring columns run
    as a cluster of two CTAs sharing the x tile (TMA multicast; a cluster
    along the slots would share W tiles, which differ where experts
    change)."""
    start = text.index("ism.kernel @grouped")
    end = text.index("func.func @main")
    kernel, host = text[start:end], text[end:]
    reps = [("%bn = arith.constant 128 : index",
             f"%bn = arith.constant {bn} : index"),
            ("x128xf32>", f"x{bn}xf32>"), ("128x128xbf16>", f"128x{bn}xbf16>"),
            ("128x128xi32>", f"128x{bn}xi32>"), ("128x128xi1>", f"128x{bn}xi1>"),
            ("%ci = ism.range 0 to 128 : tensor<128xi32>",
             f"%ci = ism.range 0 to {bn} : tensor<{bn}xi32>"),
            ("%ce = ism.expand_dims %ci axis = 0 : tensor<128xi32> -> "
             "tensor<1x128xi32>", f"%ce = ism.expand_dims %ci axis = 0 : "
             f"tensor<{bn}xi32> -> tensor<1x{bn}xi32>"),
            ("tensor<1x128xi32> -> tensor", f"tensor<1x{bn}xi32> -> tensor"),
            ("attributes {num_warps = 8 : i32}",
             "attributes {num_warps = %d : i32%s%s}" % (
                 warps, f", group_size = {group} : i32" if group else "",
                 f", cluster_n = {cluster_n} : i32" if cluster_n > 1
                 else ""))]
    # The W tile (bf16: 128 x 64, e4m3: 128 x 128) and its transpose.
    for k in (64, 128):
        for t in ("bf16", "f8E4M3FN"):
            reps += [(f"%wt = ism.load %w[%wn, %k] : memref<?x?x{t}> -> "
                      f"tensor<128x{k}x{t}>", f"%wt = ism.load %w[%wn, %k] : "
                      f"memref<?x?x{t}> -> tensor<{bn}x{k}x{t}>"),
                     (f"ism.trans %wt order = [1, 0] : tensor<128x{k}x{t}> -> "
                      f"tensor<{k}x128x{t}>", f"ism.trans %wt order = [1, 0] : "
                      f"tensor<{bn}x{k}x{t}> -> tensor<{k}x{bn}x{t}>"),
                     (f"* tensor<{k}x128x{t}>", f"* tensor<{k}x{bn}x{t}>")]
    for old, new in reps:
        kernel = kernel.replace(old, new)
    host = host.replace("%bn = arith.constant 128 : index",
                        f"%bn = arith.constant {bn} : index")
    return text[:start] + kernel + host


def routing(experts, rows, seed=0):
    """Tokens per expert, uneven: a multinomial draw over Dirichlet(0.5)
    weights (several experts empty at 64-256)."""
    rng = np.random.default_rng(seed)
    weights = rng.dirichlet(np.full(experts, 0.5))
    return rng.multinomial(rows, weights).astype(np.int32)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ism-run", default="ism-run")
    parser.add_argument("--out", default="/tmp/ism-grouped-gemm")
    parser.add_argument("--quick", action="store_true",
                        help="the first and the last case only")
    parser.add_argument("--dtype", choices=("bf16", "e4m3"), default="bf16",
                        help="x and W in bf16, or in float8_e4m3fn (y bf16; "
                             "the baselines take bf16 copies: cuBLAS has no "
                             "FP8 grouped GEMM in PyTorch)")
    parser.add_argument("--configs", default="128x128w8",
                        help="kernel variants to time (the best counts): "
                             "128 x BLOCK_N, warps, [g GROUP: the persistent "
                             "order's group], [c1x2: clusters of two along "
                             "N], e.g. 128x128w8,128x256w8c1x2")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--reps", type=int, default=30)
    args = parser.parse_args()

    import torch
    from bench import Timer

    os.makedirs(args.out, exist_ok=True)
    with open(EXAMPLE) as f:
        text = f.read()
    if args.dtype == "e4m3":
        text = fp8_text(text)
    examples = {}
    for cfg in args.configs.split(","):
        m = re.fullmatch(r"128x(\d+)w(\d+)(?:g(\d+))?(?:c1x(\d))?", cfg)
        if not m:
            parser.error(f"bad config '{cfg}': "
                         "128xBLOCK_NwWARPS[gGROUP][c1x2]")
        path = os.path.join(args.out, f"grouped_{args.dtype}_{cfg}.mlir")
        with open(path, "w") as f:
            f.write(variant(text, int(m[1]), int(m[2]), int(m[3] or 0),
                            int(m[4] or 1)))
        examples[cfg] = path
    timer = Timer(args.warmup, args.reps)
    cases = [CASES[0], CASES[-1]] if args.quick else CASES
    rows = []
    for name, experts, m, n, k in cases:
        counts = routing(experts, m)
        counts_path = os.path.join(args.out, f"counts_{experts}_{m}.npy")
        np.save(counts_path, counts)
        flops = 2.0 * m * n * k
        starts = np.concatenate([[0], np.cumsum(counts)])

        x = torch.randn(m, k, dtype=torch.bfloat16, device="cuda")
        w = torch.randn(experts, n, k, dtype=torch.bfloat16, device="cuda")
        y = torch.empty(m, n, dtype=torch.bfloat16, device="cuda")

        def per_expert():
            for e in range(experts):
                if counts[e]:
                    torch.mm(x[starts[e]:starts[e + 1]], w[e].t(),
                             out=y[starts[e]:starts[e + 1]])

        t_loop = timer(per_expert)
        t_grouped = float("nan")
        if hasattr(torch, "_grouped_mm"):
            offs = torch.tensor(starts[1:], dtype=torch.int32, device="cuda")
            try:
                t_grouped = timer(lambda: torch._grouped_mm(
                    x, w.transpose(-2, -1), offs=offs))
            except Exception as e:  # report, keep benchmarking
                print(f"torch._grouped_mm failed on {name}: {e}")

        xt = "bf16" if args.dtype == "bf16" else "f8e4m3"
        bench, best = None, None
        for cfg, example in examples.items():
            cmd = [args.ism_run, example, "--bench", "--json",
                   f"--warmup={args.warmup}", f"--reps={args.reps}",
                   f"--flops={flops}", "--arg", f"{xt}:{m}x{k}:randn",
                   "--arg", f"{xt}:{experts * n}x{k}:randn",
                   "--arg", f"i32:{experts}:{counts_path}",
                   "--arg", f"bf16:{m}x{n}:poison"]
            rc, out, err = run(cmd, timeout=600)
            if rc != 0:
                print(f"ism {cfg} failed on {name}: {err.strip()[-300:]}")
                continue
            result = json.loads(out)["bench"]
            print(f"  {name} {cfg}: "
                  f"{flops / result['median_ms'] / 1e9:.0f} TFLOP/s",
                  flush=True)
            if bench is None or result["median_ms"] < bench["median_ms"]:
                bench, best = result, cfg
        if bench is None:
            continue
        power = bench.get("power") or {}
        tf = lambda ms: flops / ms / 1e9
        row = dict(case=name, dtype=args.dtype, config=best,
                   experts=experts, shape=f"{m}x{n}x{k}",
                   empty=int((counts == 0).sum()),
                   ism=tf(bench["median_ms"]), loop=tf(t_loop),
                   grouped=tf(t_grouped), clock=power.get("sm_clock_mhz"),
                   watts=power.get("power_w"))
        rows.append(row)
        print(f"{name}: ism {row['ism']:.0f} TFLOP/s, cuBLAS loop "
              f"{row['loop']:.0f}, torch._grouped_mm {row['grouped']:.0f}",
              flush=True)
    with open(os.path.join(args.out, "grouped_gemm.json"), "w") as f:
        json.dump(rows, f, indent=1)
    fmt = lambda v: "-" if v is None or v != v else f"{v:.0f}"
    print()
    print("| case | M x N x K | empty experts | ism TFLOP/s | cuBLAS loop "
          "| torch._grouped_mm | x loop | x _grouped_mm | ism config "
          "| SM MHz | W |")
    print("| --- " * 11 + "|")
    for r in rows:
        print(f"| {r['case']} | {r['shape']} | {r['empty']} | {r['ism']:.0f} "
              f"| {r['loop']:.0f} | {fmt(r['grouped'])} "
              f"| {r['ism'] / r['loop']:.2f} "
              f"| {r['ism'] / r['grouped']:.2f} | {r['config']} "
              f"| {fmt(r['clock'])} | {fmt(r['watts'])} |")
    if rows:
        ratios = [r["ism"] / r["loop"] for r in rows]
        print(f"\nmedian {statistics.median(ratios):.2f}x the cuBLAS loop")
    return 0


if __name__ == "__main__":
    sys.exit(main())
