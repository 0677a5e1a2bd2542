#!/usr/bin/env python3
"""RoPE variants on the GPU, forward and backward: ism configurations
(tokens per program x warps, every size dynamic or, with a trailing "s",
the module specialized to the head count and head_dim: static inner sizes)
and Triton's kernel with 4 and 8 warps, in interleaved rounds (each a
median of --reps calls, L2 flushed, GPU time), so that drift between rounds
shows. Prints one table per sequence length and direction; ratio = Triton
(4 warps, the TritonRoPE kernel as written) time / variant time, above 1 is
faster than Triton. Every variant's result is first checked against a
float64 RoPE.

    python3 bench/experiments/rope_variants.py [--seqs 512,1024,...]
        [--configs 1x8,1x8s,1x4,1x16b4,1x8m8] [--batch 4] [--fwd-only]

(bB: B batch indices per program, rope_autograd's ``block_b``; a
trailing mN: the kernels' min_ctas_per_sm = N; a trailing t: the
token-major grid, token blocks along x and batch blocks along y, as the
example had it before 1b5824c. Without it the grid is the example's
batch-major one, whose consecutive programs take consecutive memory of t
and whose y dimension, the token blocks, stops at 65535)
"""
import argparse
import os
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python", "examples"))
sys.path.insert(0, os.path.join(ROOT, "bench"))

import torch  # noqa: E402
import ism  # noqa: E402
import rope_autograd as R  # noqa: E402
import triton_kernels as tk  # noqa: E402


def time_rounds(timer, variants, rounds):
    """Times every variant (name -> function) once per round, the variants
    interleaved within a round; returns name -> the rounds' times (ms)."""
    res = {n: [] for n in variants}
    for _ in range(rounds):
        for n, fn in variants.items():
            res[n].append(timer(fn))
    return res


def print_rounds(title, res, base, width):
    """Prints each variant's rounds (us), its median and the ratio of the
    `base` variant's median to it (above 1: faster than `base`)."""
    base_ms = statistics.median(res[base])
    print(f"{title}:")
    for n, v in res.items():
        med = statistics.median(v)
        print(f"  {n:{width}s} " + " ".join(f"{x * 1e3:7.2f}" for x in v)
              + f"   median {med * 1e3:7.2f}  x triton {base_ms / med:.3f}")


def rope_inputs(seq, batch, heads, dim, dtype="bf16"):
    """A random t (seq, batch, heads, dim) of ``dtype`` and the cos/sin
    tables of `seq` tokens, on the GPU."""
    c_np, s_np = R.rope_tables(seq, dim)
    cos, sin = torch.from_numpy(c_np).cuda(), torch.from_numpy(s_np).cuda()
    t = torch.randn(seq, batch, heads, dim, device="cuda").to(
        R.torch_dtype(dtype))
    return t, cos, sin


def rope_reference(t, cos, sin, bwd):
    """A float64 RoPE of t (rotation by -theta with ``bwd``), on t's
    device: the example's PyTorch eager RoPE (``rope_torch``) in
    float64."""
    c, s = R.eager_tables(cos, -sin if bwd else sin, t.shape[0],
                          torch.float64)
    return R.rope_torch(t.double(), c, s)


def check_variant(name, fn, t, cos, sin, ref):
    """Runs ``fn`` on a copy of t and compares it with ``ref``
    (``rope_reference`` of t, computed once for all variants) at bf16
    tolerance, the loosest of the three types; raises on a mismatch."""
    y = t.clone()
    fn(y, cos, sin)
    torch.cuda.synchronize()
    err = (y.double() - ref).abs().max().item()
    if not torch.allclose(y.double(), ref, rtol=1.6e-2, atol=1e-2):
        raise SystemExit(f"{name}: wrong result (max abs error {err:.3g})")
    return err


def time_against_triton(timer, title, programs, t, cos, sin, bwd, rounds,
                         width):
    """Times each compiled ism program (name -> program of this direction)
    on (t, cos, sin) beside Triton's kernel with 4 and 8 warps, in
    interleaved rounds, and prints them against Triton with 4 warps."""
    ref = rope_reference(t, cos, sin, bwd)
    for n, k in programs.items():
        check_variant(n, k, t, cos, sin, ref)
    check_variant("triton", lambda y, c, s: tk.rope_inplace_triton(
        y, c, s, backward=bwd), t, cos, sin, ref)
    ref = None
    variants = {n: (lambda k=k: k(t, cos, sin)) for n, k in programs.items()}
    for nw in (4, 8):
        variants[f"triton {nw} warps"] = (
            lambda nw=nw: tk.rope_inplace_triton(
                t, cos, sin, backward=bwd, num_warps=nw))
    print_rounds(title, time_rounds(timer, variants, rounds),
                 "triton 4 warps", width)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seqs", default="512,1024,2048,4096,8192")
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--heads", type=int, default=32)
    p.add_argument("--head-dim", type=int, default=128)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--reps", type=int, default=200)
    p.add_argument("--configs", default="1x8s,1x8",
                   help="BLOCK_SxWARPS[s][bBLOCK_B][mMIN_CTAS][t], "
                   "comma-separated")
    p.add_argument("--fwd-only", action="store_true")
    p.add_argument("--dtype", default="bf16", choices=R.DTYPES)
    a = p.parse_args()
    heads, dim, half = a.heads, a.head_dim, a.head_dim // 2
    mods = {}
    for c in a.configs.split(","):
        token_major = c.endswith("t")
        c = c.rstrip("t")
        c, _, min_ctas = c.partition("m")
        c, _, block_b = c.partition("b")
        spec = c.endswith("s")
        bs, nw = map(int, c.rstrip("s").split("x"))
        text = R.module_text(a.dtype, heads, half, bs, nw,
                             head_dim=dim if spec else None,
                             block_b=int(block_b) if block_b else 1,
                             batch_major=not token_major)
        name = f"ism {bs}x{nw} " + ("specialized" if spec else "dynamic")
        if block_b:
            name += f" b{block_b}"
        if min_ctas:
            # At least this many CTAs an SM (PTX .minnctapersm): ptxas
            # fits the registers to that occupancy.
            attr = f"num_warps = {nw} : i32"
            text = text.replace(attr, f"{attr}, min_ctas_per_sm = "
                                      f"{int(min_ctas)} : i32")
            name += f" min{min_ctas}"
        if token_major:
            name += " token-major grid"
        mods[name] = text
    kern = {(n, e): ism.compile(ism.Module.parse(t), entry=e)
            for n, t in mods.items() for e in ("main", "backward")}
    timer = R.Timer(20, a.reps)
    print(f"device: {torch.cuda.get_device_name()}; {a.dtype} (seq, "
          f"{a.batch}, "
          f"{heads}, {dim}); us per round (median of {a.reps} calls each)")
    for seq in map(int, a.seqs.split(",")):
        t, cos, sin = rope_inputs(seq, a.batch, heads, dim, a.dtype)
        for direction in ("fwd",) if a.fwd_only else ("fwd", "bwd"):
            bwd = direction == "bwd"
            entry = "backward" if bwd else "main"
            time_against_triton(timer, f"seq {seq} {direction}",
                                {n: kern[(n, entry)] for n in mods}, t, cos,
                                sin, bwd, a.rounds, 30)


if __name__ == "__main__":
    main()
