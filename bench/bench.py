#!/usr/bin/env python3
"""Benchmarks ism kernels against PyTorch and Triton on one GPU, in one run.

For each kernel, ism-run times the example program (`--bench --json`: CUDA
events, L2 flushed before every repetition, median), and the same operation
is timed through PyTorch and a Triton kernel (bench/triton_kernels.py) on
the same shapes, with the same method. A device-to-device copy measured in
the same run through PyTorch is the bandwidth roofline.

    python3 bench/bench.py --ism-run build/bin/ism-run [--out bench-out]
        [--reps 100] [--warmup 10] [--only softmax,rmsnorm] [--small]

Prints a table (time, GB/s, ratios), writes results.csv and results.png
under --out. Bytes are the same for every implementation: inputs read once
plus outputs written once. The PyTorch baselines return a new output tensor
(from the caching allocator) rather than writing into ism's, so no extra
copy is timed.
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")
EPS = 1e-5


def kernels(small):
    """name -> (example, ism --arg list, make inputs, torch fn, triton fn,
    bytes)."""
    f = 16 if small else 1  # --small divides the sizes for a quick run
    n_add = (1 << 28) // f
    rows, cols = 16384 // f, 4096
    tokens, heads, dim = 16384 // f, 32, 128
    import triton_kernels as tk

    def make(*specs):
        return lambda: [torch.randn(*s, dtype=d, device="cuda")
                        for s, d in specs]

    specs = {}
    specs["vector_add"] = dict(
        example="vector_add.mlir",
        args=[f"f32:{n_add}:randn"] * 2 + [f"f32:{n_add}"],
        make=make(((n_add,), torch.float32), ((n_add,), torch.float32),
                  ((n_add,), torch.float32)),
        torch=lambda x, y, z: torch.add(x, y, out=z),
        triton=tk.run_vector_add,
        bytes=3 * 4 * n_add,
        shape=f"fp32 {n_add}")
    specs["softmax"] = dict(
        example="softmax.mlir",
        args=[f"f16:{rows}x{cols}:randn", f"f16:{rows}x{cols}"],
        make=make(((rows, cols), torch.float16), ((rows, cols), torch.float16)),
        torch=lambda x, y: torch.softmax(x, dim=-1),
        triton=tk.run_softmax,
        bytes=2 * 2 * rows * cols,
        shape=f"fp16 {rows}x{cols}")
    specs["layernorm"] = dict(
        example="layernorm.mlir",
        args=[f"f16:{rows}x{cols}:randn", f"f16:{cols}:randn",
              f"f16:{cols}:randn", f"f16:{rows}x{cols}", str(EPS)],
        make=make(((rows, cols), torch.float16), ((cols,), torch.float16),
                  ((cols,), torch.float16), ((rows, cols), torch.float16)),
        torch=lambda x, w, b, y: torch.nn.functional.layer_norm(
            x, (cols,), w, b, EPS),
        triton=lambda x, w, b, y: tk.run_layernorm(x, w, b, y, EPS),
        bytes=2 * (2 * rows * cols + 2 * cols),
        shape=f"fp16 {rows}x{cols}")
    specs["rmsnorm"] = dict(
        example="rmsnorm.mlir",
        args=[f"bf16:{rows}x{cols}:randn", f"bf16:{cols}:randn",
              f"bf16:{rows}x{cols}", str(EPS)],
        make=make(((rows, cols), torch.bfloat16), ((cols,), torch.bfloat16),
                  ((rows, cols), torch.bfloat16)),
        torch=lambda x, w, y: torch.nn.functional.rms_norm(
            x, (cols,), w, EPS),
        triton=lambda x, w, y: tk.run_rmsnorm(x, w, y, EPS),
        bytes=2 * (2 * rows * cols + cols),
        shape=f"bf16 {rows}x{cols}")
    specs["rope"] = dict(
        example="rope.mlir",
        args=[f"bf16:{tokens}x{heads}x{dim}:randn",
              f"f32:{tokens}x{dim // 2}:randn",
              f"f32:{tokens}x{dim // 2}:randn", f"bf16:{tokens}x{heads}x{dim}"],
        make=make(((tokens, heads, dim), torch.bfloat16),
                  ((tokens, dim // 2), torch.float32),
                  ((tokens, dim // 2), torch.float32),
                  ((tokens, heads, dim), torch.bfloat16)),
        torch=tk.rope_torch,
        triton=tk.run_rope,
        bytes=2 * 2 * tokens * heads * dim + 2 * 4 * tokens * dim // 2,
        shape=f"bf16 {tokens}x{heads}x{dim}")
    return specs


class Timer:
    """Times a callable like ism-run does: CUDA events, L2 flushed by
    writing a buffer twice the L2's size before each repetition, median."""

    def __init__(self, warmup, reps):
        self.warmup, self.reps = warmup, reps
        l2 = torch.cuda.get_device_properties(0).L2_cache_size
        self.flush = torch.empty(2 * l2, dtype=torch.uint8, device="cuda")

    def __call__(self, fn):
        return statistics.median(self.samples(fn))

    def samples(self, fn, reps=None):
        """The timed repetitions' milliseconds (after the warm-up ones)."""
        times = []
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        reps = self.reps if reps is None else reps
        for i in range(self.warmup + reps):
            self.flush.fill_(i & 0xFF)
            start.record()
            fn()
            end.record()
            end.synchronize()
            if i >= self.warmup:
                times.append(start.elapsed_time(end))
        return times

    def interleaved(self, fns, rounds=3):
        """Medians of several callables timed in `rounds` interleaved
        rounds of reps / rounds repetitions each, so that a drift of the
        GPU's clock (power, temperature) during the measurement falls on
        all of them alike. fns: name -> callable; returns name -> ms."""
        times = {name: [] for name in fns}
        per = max(1, -(-self.reps // rounds))
        for _ in range(rounds):
            for name, fn in fns.items():
                times[name] += self.samples(fn, per)
        return {name: statistics.median(t) for name, t in times.items()}


def run_ism(ism_run, spec, args):
    cmd = [ism_run, os.path.join(EXAMPLES, spec["example"]), "--bench",
           "--json", f"--warmup={args.warmup}", f"--reps={args.reps}",
           f"--bytes={spec['bytes']}"]
    for a in spec["args"]:
        cmd += ["--arg", a]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        return None, proc.stderr.strip().splitlines()[-1:] or ["failed"]
    return json.loads(proc.stdout)["bench"]["median_ms"], None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ism-run", default=os.path.join(
        ROOT, "build", "bin", "ism-run"))
    parser.add_argument("--out", default="bench-out")
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--only", default="")
    parser.add_argument("--small", action="store_true",
                        help="1/16 of the sizes, for a quick run")
    args = parser.parse_args()
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    os.makedirs(args.out, exist_ok=True)

    timer = Timer(args.warmup, args.reps)
    # The roofline: a device-to-device copy of 1 GiB (read + write counted).
    src = torch.empty(1 << 28, dtype=torch.float32, device="cuda")
    dst = torch.empty_like(src)
    copy_ms = timer(lambda: dst.copy_(src))
    copy_gbps = 2 * src.numel() * 4 / copy_ms / 1e6
    del src, dst
    print(f"device: {torch.cuda.get_device_name(0)}; device-to-device copy "
          f"{copy_gbps:.0f} GB/s (roofline)")

    rows = []
    only = set(filter(None, args.only.split(",")))
    for name, spec in kernels(args.small).items():
        if only and name not in only:
            continue
        gb = spec["bytes"] / 1e9
        ism_ms, ism_error = run_ism(args.ism_run, spec, args)
        tensors = spec["make"]()
        torch_ms = timer(lambda: spec["torch"](*tensors))
        try:
            triton_ms = timer(lambda: spec["triton"](*tensors))
        except Exception as error:  # a Triton compile failure is reported
            print(f"{name}: triton failed: {error}")
            triton_ms = None
        del tensors
        torch.cuda.empty_cache()

        def gbps(ms):
            return gb / (ms * 1e-3) if ms else None

        rows.append(dict(
            kernel=name, shape=spec["shape"], bytes=spec["bytes"],
            ism_ms=ism_ms, ism_gbps=gbps(ism_ms), torch_ms=torch_ms,
            torch_gbps=gbps(torch_ms), triton_ms=triton_ms,
            triton_gbps=gbps(triton_ms),
            ism_vs_torch=torch_ms / ism_ms if ism_ms else None,
            ism_vs_triton=triton_ms / ism_ms if ism_ms and triton_ms else None,
            ism_pct_of_copy=100 * gbps(ism_ms) / copy_gbps if ism_ms else None,
            copy_gbps=copy_gbps, ism_error=" ".join(ism_error or [])))

    def fmt(v, spec=".3f"):
        return "-" if v is None else format(v, spec)

    header = (f"{'kernel':<11} {'shape':<22} {'ism ms':>8} {'GB/s':>7} "
              f"{'torch ms':>9} {'GB/s':>7} {'triton ms':>10} {'GB/s':>7} "
              f"{'x torch':>8} {'x triton':>9} {'% copy':>7}")
    print(header)
    for r in rows:
        print(f"{r['kernel']:<11} {r['shape']:<22} {fmt(r['ism_ms']):>8} "
              f"{fmt(r['ism_gbps'], '.0f'):>7} {fmt(r['torch_ms']):>9} "
              f"{fmt(r['torch_gbps'], '.0f'):>7} {fmt(r['triton_ms']):>10} "
              f"{fmt(r['triton_gbps'], '.0f'):>7} "
              f"{fmt(r['ism_vs_torch'], '.2f'):>8} "
              f"{fmt(r['ism_vs_triton'], '.2f'):>9} "
              f"{fmt(r['ism_pct_of_copy'], '.0f'):>7}")
        if r["ism_error"]:
            print(f"  ism-run failed: {r['ism_error']}")
    print("x torch / x triton: baseline time / ism time (> 1: ism faster)")

    with open(os.path.join(args.out, "results.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]) if rows else [])
        writer.writeheader()
        writer.writerows(rows)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(9, 4.5))
        width = 0.27
        for i, (key, label) in enumerate([("ism_gbps", "ism"),
                                          ("torch_gbps", "PyTorch"),
                                          ("triton_gbps", "Triton")]):
            ax.bar([j + (i - 1) * width for j in range(len(rows))],
                   [r[key] or 0 for r in rows], width, label=label)
        ax.axhline(copy_gbps, color="k", linestyle="--",
                   label="D2D copy (same run)")
        ax.set_xticks(range(len(rows)))
        ax.set_xticklabels([r["kernel"] for r in rows])
        ax.set_ylabel("GB/s (inputs read + outputs written once)")
        ax.set_title(f"ism vs PyTorch vs Triton, "
                     f"{torch.cuda.get_device_name(0)}, median, L2 flushed")
        ax.legend()
        fig.tight_layout()
        fig.savefig(os.path.join(args.out, "results.png"), dpi=120)
    except ImportError:
        print("bench: matplotlib missing; no plot written")
    print(f"bench: wrote {args.out}/results.csv and results.png")


if __name__ == "__main__":
    main()
