#!/usr/bin/env python3
"""Does a longer prologue (more dependent instructions before a program's
first load) cost GPU time per launch on a short RoPE?

ism's RoPE kernel issues its first global load about 64 SASS instructions
into a program (64-bit address arithmetic and the uniform bounds and
alignment tests of its tiles), Triton's at about 36. To see whether that
is what the remaining 0.1-0.2 us per launch at 512 tokens is, this times
Triton's in-place RoPE kernel (bench/triton_kernels.py's, 8 warps) with a
chain of D dependent 64-bit multiply-adds put in front of its address
arithmetic (their result multiplied by a runtime zero, so the addresses do
not change and the compiler cannot drop the chain), D = --delays, beside
ism's RoPE (the default configuration), in interleaved rounds (median of
--reps calls each, L2 flushed, CUDA events). Each variant is checked
against a float64 RoPE first.

    python3 bench/experiments/rope_prologue.py [--seqs 512,1024,8192]
        [--delays 0,8,16,32,64]
"""
import argparse
import os
import sys

import torch
import triton

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import rope_variants as V  # noqa: E402 (puts bench/, examples/ on path)
import rope_autograd as R  # noqa: E402
import rope_params as P  # noqa: E402


def delayed(delay):
    """Triton's in-place RoPE forward (8 warps) with ``delay`` dependent
    64-bit multiply-adds before its address arithmetic."""
    chain = "".join(["    x = s.to(tl.int64) * stride_s + b\n"]
                    + ["    x = x * stride_b + stride_h\n"] * delay
                    + ["    s = s + (x * zero).to(tl.int32)\n"])
    kernel = P.edited_kernel(f"rope_delay_{delay}", [
        ("cos_stride, heads,", "cos_stride, heads, zero,"),
        ("    b = tl.program_id(1)\n", "    b = tl.program_id(1)\n" + chain)])

    def run(t, cos, sin):
        seq, batch, heads, dim = t.shape
        half = cos.shape[1]
        kernel[(seq, batch)](
            t, cos, sin, t.stride(0), t.stride(1), t.stride(2),
            cos.stride(0), heads, 0, HALF=half,
            BLOCK_H=triton.next_power_of_2(heads),
            BLOCK_D=triton.next_power_of_2(half), BACKWARD=False,
            num_warps=8)
    return run


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seqs", default="512,1024,8192")
    p.add_argument("--delays", default="0,8,16,32,64")
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--reps", type=int, default=200)
    a = p.parse_args()
    heads, dim = 32, 128
    timer = R.Timer(20, a.reps)
    print(f"device: {torch.cuda.get_device_name()}; bf16 (seq, {a.batch}, "
          f"{heads}, {dim}), forward; us per round (median of {a.reps} "
          f"calls each)")
    for seq in map(int, a.seqs.split(",")):
        t, cos, sin = V.rope_inputs(seq, a.batch, heads, dim)
        progs = {f"triton 8w delay {d}": delayed(int(d))
                 for d in a.delays.split(",")}
        progs["ism (default config)"] = lambda y, c, s: R.rope_ism_(y, c, s)
        ref = V.rope_reference(t, cos, sin, False)
        for n, fn in progs.items():
            V.check_variant(n, fn, t, cos, sin, ref)
        ref = None
        variants = {n: (lambda fn=fn: fn(t, cos, sin))
                    for n, fn in progs.items()}
        V.print_rounds(f"seq {seq} fwd", V.time_rounds(timer, variants,
                                                      a.rounds),
                       "triton 8w delay 0", 24)


if __name__ == "__main__":
    main()
