#!/usr/bin/env python3
"""Dependent kernels in one launch: an LLM decoder's MLP block at batch 1.

examples/decode_mlp.mlir chains two kernels (gate/up projections with
the RMSNorm and SiLU; the down projection with the residual, reading what
the first wrote) in an `ism.coschedule ordered` region. This
script times a step as in serving: 20 steps back to back between two
events, no L2 flush (ism-run --bench --calls=20 --flush-l2=false), for
Llama-like MLP shapes, in these ways:

  ism fused       the ordered region as one persistent kernel (ism-run
                  --bench --coschedule=fused)
  ism per-op      the same kernels launched one after another, with
                  programmatic dependent launch (--coschedule=sequential)
  ism per-op graph
                  those launches captured in a CUDA graph and replayed
                  (--coschedule=sequential --graph)
  torch eager     RMSNorm, two F.linear, SiLU * up, F.linear, residual add
  torch graph     the same, captured in a CUDA graph and replayed

against the HBM bound: the bytes of the weights (3 F H bf16) over a device
copy's rate (read + write) measured in the same run. Medians over 50
such runs of the time a step; the SM clock and board power of the ism
runs are printed. Run on the
GPU machine with the packed runner:

  python3 bench/decode_mlp.py --ism-run /path/to/ism-run --out OUT
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "examples", "decode_mlp.mlir")
EPS = 1e-5

# (name, H, F): Llama-3.2-1B, TinyLlama-1.1B, Qwen2.5-0.5B MLP shapes.
SHAPES = [("llama-1b", 2048, 8192), ("tinyllama", 2048, 5632),
          ("qwen-0.5b", 896, 4864)]


def ism_args(h, f):
    return [f"bf16:1x{h}:randn", f"bf16:{h}:randn", f"bf16:{f}x{h}:randn",
            f"bf16:{f}x{h}:randn", f"bf16:{h}x{f}:randn",
            f"bf16:1x{h}:poison", str(EPS)]


CALLS = 20


def run_ism(ism_run, mode, h, f, reps, warmup, graph=False):
    cmd = [ism_run, EXAMPLE, "--bench", "--json", f"--reps={reps}",
           f"--warmup={warmup}", f"--coschedule={mode}", "--flush-l2=false",
           f"--calls={CALLS}"] + (["--graph"] if graph else [])
    cmd += [f"--arg={a}" for a in ism_args(h, f)]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}\n{out.stdout}{out.stderr}")
    return json.loads(out.stdout)["bench"]


def check_ism(ism_run, mode, h, f, graph=False):
    cmd = [ism_run, EXAMPLE, "--check", f"--coschedule={mode}"]
    cmd += ["--graph"] if graph else []
    cmd += [f"--arg={a}" for a in ism_args(h, f)]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0 or ": ok" not in out.stdout:
        raise RuntimeError(f"{' '.join(cmd)}\n{out.stdout}{out.stderr}")


def time_step(torch, fn, reps, warmup, calls=CALLS):
    """Median ms of one call: `calls` calls back to back between two events,
    no L2 flush."""
    times = []
    for r in range(warmup + reps):
        s, e = torch.cuda.Event(True), torch.cuda.Event(True)
        s.record()
        for _ in range(calls):
            fn()
        e.record()
        torch.cuda.synchronize()
        if r >= warmup:
            times.append(s.elapsed_time(e) / calls)
    return statistics.median(times)


def copy_gbps(torch):
    """A device-to-device copy of 1 GiB: (read + write) bytes / time."""
    n = 2**30
    src = torch.empty(n, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    ms = time_step(torch, lambda: dst.copy_(src), 20, 3, calls=1)
    return 2 * n / (ms * 1e-3) / 1e9


def write_rows(out, stem, copy, rows):
    """OUT/STEM.json (the copy rate and the rows) and OUT/STEM.csv."""
    with open(os.path.join(out, f"{stem}.json"), "w") as fh:
        json.dump(dict(copy_gbps=copy, rows=rows), fh, indent=1)
    with open(os.path.join(out, f"{stem}.csv"), "w") as fh:
        keys = list(rows[0])
        fh.write(",".join(keys) + "\n")
        for r in rows:
            fh.write(",".join(str(r[k]) for k in keys) + "\n")


def torch_ways(torch, h, f, reps, warmup):
    import torch.nn.functional as F
    g = torch.Generator(device="cuda").manual_seed(0)

    def randn(*shape):
        return (torch.randn(*shape, generator=g, device="cuda") *
                shape[-1] ** -0.5).to(torch.bfloat16)
    x, wn = randn(1, h), randn(h)
    wg, wu, wd = randn(f, h), randn(f, h), randn(h, f)

    def step():
        v = x.float()
        hn = (v * torch.rsqrt(v.pow(2).mean(-1, keepdim=True) + EPS) *
              wn.float()).to(torch.bfloat16)
        a = F.silu(F.linear(hn, wg)) * F.linear(hn, wu)
        return F.linear(a, wd) + x
    return eager_and_graphed(torch, step, reps, warmup)


def eager_and_graphed(torch, step, reps, warmup):
    """Median ms a call of `step` as it is and captured in a CUDA graph
    (after three warm-up calls on the capture's side stream) and replayed."""
    eager = time_step(torch, step, reps, warmup)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        step()
    return eager, time_step(torch, graph.replay, reps, warmup)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ism-run", required=True)
    parser.add_argument("--out", default="decode-mlp-out")
    parser.add_argument("--reps", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=5)
    opts = parser.parse_args()
    import torch
    os.makedirs(opts.out, exist_ok=True)
    copy = copy_gbps(torch)
    rows = []
    for name, h, f in SHAPES:
        for mode in ("fused", "sequential"):
            check_ism(opts.ism_run, mode, h, f)
        check_ism(opts.ism_run, "sequential", h, f, graph=True)
        fused = run_ism(opts.ism_run, "fused", h, f, opts.reps, opts.warmup)
        seq = run_ism(opts.ism_run, "sequential", h, f, opts.reps,
                      opts.warmup)
        seq_graph = run_ism(opts.ism_run, "sequential", h, f, opts.reps,
                            opts.warmup, graph=True)
        eager, graphed = torch_ways(torch, h, f, opts.reps, opts.warmup)
        weight_bytes = 3 * f * h * 2 + h * 2
        bound = weight_bytes / (copy * 1e9) * 1e3
        power = fused.get("power") or {}
        rows.append(dict(shape=name, H=h, F=f, bound_us=bound * 1e3,
                         fused_us=fused["median_ms"] * 1e3,
                         sequential_us=seq["median_ms"] * 1e3,
                         sequential_graph_us=seq_graph["median_ms"] * 1e3,
                         eager_us=eager * 1e3, graph_us=graphed * 1e3,
                         sm_clock_mhz=power.get("sm_clock_mhz"),
                         power_w=power.get("power_w")))
    write_rows(opts.out, "decode_mlp", copy, rows)
    print(f"device copy (read + write): {copy:.0f} GB/s; a step's share of "
          f"{CALLS} back to back, medians, no L2 flush")
    print(f"{'shape':<10} {'H x F':>11} {'HBM bound':>9} {'ism fused':>9} "
          f"{'% bound':>7} {'ism per-op':>10} {'per-op graph':>12} "
          f"{'torch':>8} {'graph':>8} {'vs per-op':>9} {'vs op graph':>11} "
          f"{'vs graph':>8} {'MHz':>5} {'W':>5}")
    for r in rows:
        clock = r["sm_clock_mhz"] or 0
        watts = r["power_w"] or 0
        print(f"{r['shape']:<10} {r['H']:>5}x{r['F']:<5} "
              f"{r['bound_us']:>7.1f}us {r['fused_us']:>7.1f}us "
              f"{100 * r['bound_us'] / r['fused_us']:>6.0f}% "
              f"{r['sequential_us']:>8.1f}us "
              f"{r['sequential_graph_us']:>10.1f}us {r['eager_us']:>6.1f}us "
              f"{r['graph_us']:>6.1f}us "
              f"{r['sequential_us'] / r['fused_us']:>8.2f}x "
              f"{r['sequential_graph_us'] / r['fused_us']:>10.2f}x "
              f"{r['graph_us'] / r['fused_us']:>7.2f}x "
              f"{clock:>5.0f} {watts:>5.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
