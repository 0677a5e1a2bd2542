#!/usr/bin/env python3
"""Co-scheduling benchmark: each ism.coschedule pair run every way, in one run.

For each pair (examples/coschedule_*.mlir) at two size ratios -- balanced
(both kernels take about the same time alone) and unbalanced (the first
kernel, a GEMM or a prefill attention, takes about 3x the other) -- it
times, with CUDA events, the L2 flushed before every repetition, medians:

  - each ism kernel alone (the example with only that launch),
  - ism sequential, ism on two streams, ism fused warp_specialized and ism
    fused block_interleaved (`ism-run --bench --coschedule=...`),
  - the PyTorch baselines (cuBLAS for the GEMM, PyTorch for the other
    kernel; scaled_dot_product_attention for both attention kernels) one
    after the other and on two CUDA streams,
  - the ideal max(alone) of the ism kernels,

and prints a table with the ratios; writes results.csv and coschedule.png
under --out.

    python3 bench/coschedule.py --ism-run build/bin/ism-run [--out DIR]
        [--reps 100] [--warmup 10] [--only matmul_rmsnorm,...] [--quick]
        [--gemm-cluster 2x1] [--gemm-block 128x256] [--attrs "join = false"]

The sizes are calibrated in the run: the other kernel's rows are scaled so
that its time alone is the GEMM's (balanced) or a third of it (unbalanced).
For prefill_decode the prefill is 16 heads of 4096 tokens (head dim 128, not
causal) and the "rows" are the decode's sequences x heads, each against
16384 cached keys in 4 splits.
"""
import argparse
import csv
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")
EPS = 1e-5


def run_ism(ism_run, path, args, reps, warmup, mode="fused", extra=()):
    cmd = [ism_run, path, "--bench", "--json", f"--reps={reps}",
           f"--warmup={warmup}", f"--coschedule={mode}", *extra]
    for a in args:
        cmd.append(f"--arg={a}")
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}\n{out.stdout}{out.stderr}")
    return json.loads(out.stdout)


def variant(text, keep=None, policy=None):
    """The module with only launch `keep` (a kernel name) of its
    coschedule, or with the coschedule's policy replaced."""
    if policy:
        return text.replace("ism.coschedule warp_specialized",
                            f"ism.coschedule {policy}")
    lines = text.split("\n")
    start = next(i for i, l in enumerate(lines)
                 if l.strip().startswith("ism.coschedule"))
    end = next(i for i in range(start + 1, len(lines))
               if lines[i].strip() == "}")
    groups = []
    for line in lines[start + 1:end]:
        if line.strip().startswith("ism.launch"):
            groups.append([line])
        else:
            groups[-1].append(line)
    kept = [line for g in groups
            if re.match(r"\s*ism\.launch @(\w+)", g[0]).group(1) == keep
            for line in g]
    return "\n".join(lines[:start] + kept + lines[end + 1:])


def wide_gemm(text, n=256):
    """The pair with its 128x128 GEMM kernel made 128 x `n` (BLOCK_N = n,
    its grid's y over n columns)."""
    start = text.index("ism.kernel @matmul")
    end = text.index("ism.return", start)
    kernel = text[start:end]
    wide = (kernel.replace("%bn = arith.constant 128 : index",
                           f"%bn = arith.constant {n} : index")
            .replace("tensor<64x128xbf16>", f"tensor<64x{n}xbf16>")
            .replace("tensor<128x128xf32>", f"tensor<128x{n}xf32>")
            .replace("tensor<128x128xbf16>", f"tensor<128x{n}xbf16>"))
    assert wide != kernel
    text = text[:start] + wide + text[end:]
    grid = "%gn = arith.ceildivui %N, %block : index"
    assert grid in text
    return text.replace(grid, f"%cbn = arith.constant {n} : index\n"
                        "  %gn = arith.ceildivui %N, %cbn : index")


def bench_torch(fn, reps, warmup):
    """Median ms of fn() with events, L2 flushed before each repetition."""
    flush = torch.empty(int(2 * 60 * 2**20 // 4), dtype=torch.float32,
                        device="cuda")
    times = []
    for r in range(warmup + reps):
        flush.fill_(float(r))
        s, e = torch.cuda.Event(True), torch.cuda.Event(True)
        s.record()
        fn()
        e.record()
        torch.cuda.synchronize()
        if r >= warmup:
            times.append(s.elapsed_time(e))
    return statistics.median(times)


def on_two_streams(f, g):
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()

    def run():
        cur = torch.cuda.current_stream()
        s1.wait_stream(cur)
        s2.wait_stream(cur)
        with torch.cuda.stream(s1):
            f()
        with torch.cuda.stream(s2):
            g()
        cur.wait_stream(s1)
        cur.wait_stream(s2)
    return run


def csr(rows, cols, nnz_per_row, seed, out_dir):
    rng = np.random.default_rng(seed)
    nnz = rng.integers(nnz_per_row // 2, 3 * nnz_per_row // 2 + 1, rows)
    rowptr = np.concatenate([[0], np.cumsum(nnz)]).astype(np.int32)
    colind = rng.integers(0, cols, int(rowptr[-1])).astype(np.int32)
    values = rng.standard_normal(int(rowptr[-1])).astype(np.float32)
    paths = []
    for name, a in (("rowptr", rowptr), ("colind", colind),
                    ("values", values)):
        p = os.path.join(out_dir, f"{name}_{rows}_{seed}.npy")
        np.save(p, a)
        paths.append(p)
    return paths, (rowptr, colind, values)


def gemm_part(n):
    """ism args, torch inputs and fn for the n^3 bf16 GEMM."""
    a = torch.randn(n, n, dtype=torch.bfloat16, device="cuda")
    b = torch.randn(n, n, dtype=torch.bfloat16, device="cuda")
    c = torch.empty(n, n, dtype=torch.bfloat16, device="cuda")
    args = [f"bf16:{n}x{n}:randn", f"bf16:{n}x{n}:randn", f"bf16:{n}x{n}"]
    return args, (lambda: torch.matmul(a, b, out=c))


PREFILL = (16, 4096, 128)   # batch x heads, tokens, head dim
DECODE_KEYS, DECODE_SPLITS = 16384, 4


def prefill_part():
    """ism args and the SDPA fn of the prefill attention."""
    bh, s, d = PREFILL
    q, k, v = (torch.randn(1, bh, s, d, dtype=torch.bfloat16, device="cuda")
               for _ in range(3))
    scale = d ** -0.5
    args = [f"bf16:{bh}x{s}x{d}:randn"] * 3 + [
        f"bf16:{bh}x{s}x{d}", f"f32:{bh}x{s}", f"f32:scalar={scale}",
        "i32:scalar=0"]
    return args, (lambda: torch.nn.functional.scaled_dot_product_attention(
        q, k, v, scale=scale))


def decode_part(rows):
    """ism args and the SDPA fn of `rows` decode sequences x heads."""
    n, d, sp = DECODE_KEYS, PREFILL[2], DECODE_SPLITS
    q = torch.randn(1, rows, 1, d, dtype=torch.bfloat16, device="cuda")
    k, v = (torch.randn(1, rows, n, d, dtype=torch.bfloat16, device="cuda")
            for _ in range(2))
    scale = d ** -0.5
    args = [f"bf16:{rows}x{d}:randn", f"bf16:{rows}x{n}x{d}:randn",
            f"bf16:{rows}x{n}x{d}:randn", f"bf16:{rows}x{d}",
            f"f32:{rows}x{sp}", f"f32:{rows}x{sp}", f"f32:{rows}x{sp}x{d}",
            f"f32:scalar={scale}"]
    return args, (lambda: torch.nn.functional.scaled_dot_product_attention(
        q, k, v, scale=scale))


def other_part(pair, rows, out_dir):
    """ism args and a torch fn for the pair's other kernel at `rows`."""
    cols = 4096
    if pair in ("matmul_rmsnorm", "rmsnorm_softmax"):
        x = torch.randn(rows, cols, dtype=torch.bfloat16, device="cuda")
        w = torch.randn(cols, dtype=torch.bfloat16, device="cuda")
        args = [f"bf16:{rows}x{cols}:randn", f"bf16:{cols}:randn",
                f"bf16:{rows}x{cols}", f"{EPS}"]
        return args, (lambda: torch.nn.functional.rms_norm(
            x, (cols,), w, EPS))
    if pair == "matmul_softmax":
        x = torch.randn(rows, cols, dtype=torch.float16, device="cuda")
        args = [f"f16:{rows}x{cols}:randn", f"f16:{rows}x{cols}"]
        return args, (lambda: torch.softmax(x, dim=-1))
    if pair == "matmul_spmm":
        k, n = 4096, 512
        paths, (rp, ci, va) = csr(rows, k, 64, rows, out_dir)
        a = torch.sparse_csr_tensor(torch.from_numpy(rp.astype(np.int64)),
                                    torch.from_numpy(ci.astype(np.int64)),
                                    torch.from_numpy(va), size=(rows, k),
                                    device="cuda")
        d = torch.randn(k, n, dtype=torch.float32, device="cuda")
        args = [f"npy:{p}" for p in paths] + [f"f32:{k}x{n}:randn",
                                              f"f32:{rows}x{n}"]
        return args, (lambda: torch.sparse.mm(a, d))
    raise ValueError(pair)


PAIRS = {
    # name: (example, first kernel, second kernel, base rows of the second)
    "matmul_rmsnorm": ("coschedule_matmul_rmsnorm.mlir", "matmul", "rmsnorm",
                       16384),
    "matmul_softmax": ("coschedule_matmul_softmax.mlir", "matmul", "softmax",
                       16384),
    "matmul_spmm": ("coschedule_matmul_spmm.mlir", "matmul", "spmm", 8192),
    "rmsnorm_softmax": ("coschedule_rmsnorm_softmax.mlir", "rmsnorm",
                        "softmax", 16384),
    "prefill_decode": ("coschedule_prefill_decode.mlir", "prefill", "decode",
                       128),
}
# The second kernel's sizes are multiples of this (256 rows by default).
GRAIN = {"prefill_decode": 16}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ism-run", required=True)
    parser.add_argument("--out", default="coschedule-out")
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--only", default="")
    parser.add_argument("--gemm", type=int, default=4096)
    parser.add_argument("--quick", action="store_true",
                        help="30 repetitions, balanced ratio only")
    parser.add_argument("--gemm-cluster", default="1x1",
                        help="the GEMM kernel's thread-block cluster: 1x1, "
                             "2x1 (pairs share B by TMA multicast) or 1x2")
    parser.add_argument("--gemm-block", default="128x128",
                        choices=["128x64", "128x128", "128x256"],
                        help="the GEMM kernel's BLOCK_M x BLOCK_N (128x256: "
                             "25%% less L2 traffic; beside other partitions "
                             "its m64n256 wgmma are issued as two m64n128; "
                             "128x64: fewer registers, room for more copies)")
    parser.add_argument("--attrs", default="",
                        help="attributes given to every ism.coschedule, "
                             "e.g. 'join = false'")
    opts = parser.parse_args()
    if opts.quick:
        opts.reps = 30
    os.makedirs(opts.out, exist_ok=True)
    tmp = tempfile.mkdtemp(dir=opts.out)
    only = [p for p in opts.only.split(",") if p]
    rows_out = []
    for pair, (example, first, second, base) in PAIRS.items():
        if only and pair not in only:
            continue
        text = open(os.path.join(EXAMPLES, example)).read()
        if opts.gemm_cluster != "1x1" and "matmul" in (first, second):
            cm, cn = opts.gemm_cluster.split("x")
            gemm_attrs = "%C: memref<?x?xbf16>) attributes {num_warps = 8 : i32"
            assert gemm_attrs in text, example
            text = text.replace(gemm_attrs, gemm_attrs +
                                f", cluster_m = {cm} : i32, "
                                f"cluster_n = {cn} : i32", 1)
        if opts.gemm_block != "128x128" and "matmul" in (first, second):
            text = wide_gemm(text, int(opts.gemm_block.split("x")[1]))
        if opts.attrs:
            text = text.replace(
                "ism.coschedule warp_specialized {",
                f"ism.coschedule warp_specialized attributes {{{opts.attrs}}} {{")
        files = {}
        for name, t in (("alone1", variant(text, keep=first)),
                        ("alone2", variant(text, keep=second)),
                        ("pair", text),
                        ("interleaved", variant(text,
                                                policy="block_interleaved"))):
            files[name] = os.path.join(tmp, f"{pair}_{name}.mlir")
            open(files[name], "w").write(t)

        def args_for(rows, rows1=None):
            if pair == "rmsnorm_softmax":
                a1, f1 = other_part("matmul_rmsnorm", rows1, tmp)
                a2, f2 = other_part("matmul_softmax", rows, tmp)
            elif pair == "prefill_decode":
                a1, f1 = prefill_part()
                a2, f2 = decode_part(rows)
            else:
                a1, f1 = gemm_part(opts.gemm)
                a2, f2 = other_part(pair, rows, tmp)
            return a1, f1, a2, f2

        def alone(path, args):
            return run_ism(opts.ism_run, path, args, opts.reps, opts.warmup,
                           "sequential")["bench"]["median_ms"]

        # Calibrate: the second kernel's time alone at `base` rows.
        rows1 = base if pair == "rmsnorm_softmax" else None
        a1, f1, a2, f2 = args_for(base, rows1)
        # (main keeps every parameter: each run passes all the arguments)
        t1 = alone(files["alone1"], a1 + a2)
        t2 = alone(files["alone2"], a1 + a2)
        ratios = [("balanced", 1.0)] + ([] if opts.quick else
                                        [("unbalanced 3:1", 1 / 3)])
        for label, ratio in ratios:
            g = GRAIN.get(pair, 256)
            rows = max(g, int(round(base * t1 * ratio / t2 / g)) * g)
            a1, f1, a2, f2 = args_for(rows, rows1)
            args = a1 + a2
            alone1 = alone(files["alone1"], args)
            alone2 = alone(files["alone2"], args)
            res = run_ism(opts.ism_run, files["pair"], args, opts.reps,
                          opts.warmup, "fused", ["--verbose"])
            co = res["coschedule"]
            inter = run_ism(opts.ism_run, files["interleaved"], args,
                            opts.reps, opts.warmup, "fused")["coschedule"]
            torch_seq = bench_torch(lambda: (f1(), f2()), opts.reps,
                                    opts.warmup)
            torch_streams = bench_torch(on_two_streams(f1, f2), opts.reps,
                                        opts.warmup)
            row = dict(pair=pair, ratio=label, rows=rows,
                       alone1=alone1, alone2=alone2,
                       sequential=co["sequential"]["median_ms"],
                       streams=co["streams"]["median_ms"],
                       fused=co["fused"]["median_ms"],
                       interleaved=inter["fused"]["median_ms"],
                       torch_sequential=torch_seq,
                       torch_streams=torch_streams,
                       ideal=max(alone1, alone2))
            row["fused_vs_sequential"] = row["sequential"] / row["fused"]
            row["fused_vs_streams"] = row["streams"] / row["fused"]
            row["fused_vs_torch_streams"] = torch_streams / row["fused"]
            row["fused_vs_ideal"] = row["ideal"] / row["fused"]
            rows_out.append(row)
            print(json.dumps(row), flush=True)

    keys = list(rows_out[0].keys()) if rows_out else []
    with open(os.path.join(opts.out, "results.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows_out)
    try:
        plot(rows_out, os.path.join(opts.out, "coschedule.png"))
    except ImportError:
        print("matplotlib missing: no plot", file=sys.stderr)

    print(f"\n{'pair':16} {'ratio':15} {'rows':>6} {'alone1':>7} "
          f"{'alone2':>7} {'seq':>7} {'streams':>7} {'fusedWS':>7} "
          f"{'fusedBI':>7} {'torchSeq':>8} {'torchStr':>8} {'ideal':>7} "
          f"{'xSeq':>5} {'xStr':>5} {'xTorch':>6}")
    for r in rows_out:
        print(f"{r['pair']:16} {r['ratio']:15} {r['rows']:>6} "
              f"{r['alone1']:7.4f} {r['alone2']:7.4f} {r['sequential']:7.4f} "
              f"{r['streams']:7.4f} {r['fused']:7.4f} {r['interleaved']:7.4f} "
              f"{r['torch_sequential']:8.4f} {r['torch_streams']:8.4f} "
              f"{r['ideal']:7.4f} {r['fused_vs_sequential']:5.2f} "
              f"{r['fused_vs_streams']:5.2f} "
              f"{r['fused_vs_torch_streams']:6.2f}")


def plot(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    series = ["sequential", "streams", "fused", "interleaved",
              "torch_sequential", "torch_streams", "ideal"]
    labels = [f"{r['pair']}\n{r['ratio']}" for r in rows]
    fig, ax = plt.subplots(figsize=(max(8, 2.2 * len(rows)), 4.5))
    width = 0.8 / len(series)
    for i, s in enumerate(series):
        ax.bar([x + i * width for x in range(len(rows))],
               [r[s] for r in rows], width, label=s)
    ax.set_xticks([x + 0.4 - width / 2 for x in range(len(rows))])
    ax.set_xticklabels(labels, fontsize=8)
    ax.set_ylabel("ms (median, L2 flushed)")
    ax.set_title("ism co-scheduling on the H200 (lower is better)")
    ax.legend(fontsize=7, ncol=4)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    main()
