#!/usr/bin/env python3
"""What does merging the chunks in the partial kernel save in split-KV
decode attention?

Times examples/decode_attention.mlir (one launch: the program with the
last ticket of a head merges its chunks) against the two-launch version
before it (a second kernel merged them; decode_two_launches.mlir beside
this script, from 3df7c33), on the same tensors,
in interleaved rounds (median of --reps calls each, L2 flushed, GPU time),
for each KV length and number of splits. Both are checked against float64
first.

    python3 bench/experiments/decode_merge.py [--two-launch FILE]
        [--seqs 16384,32768] [--splits 8,16,32] [--heads 32]
"""
import argparse
import math
import os
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))

import torch  # noqa: E402
import ism  # noqa: E402
from bench import Timer  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--two-launch", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)),
        "decode_two_launches.mlir"),
                   help="the two-kernel decode module (see above)")
    p.add_argument("--seqs", default="16384,32768")
    p.add_argument("--splits", default="8,16,32")
    p.add_argument("--heads", type=int, default=32)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--reps", type=int, default=100)
    a = p.parse_args()
    with open(os.path.join(ROOT, "examples", "decode_attention.mlir")) as f:
        one = ism.compile(f.read())
    with open(a.two_launch) as f:
        two = ism.compile(f.read())
    timer = Timer(10, a.reps)
    bh, d = a.heads, 128
    scale = 1 / math.sqrt(d)
    print(f"{torch.cuda.get_device_name()}: decode, {bh} (batch x heads), "
          f"head dim {d}; us, median of {a.reps} per round")
    print("| KV length | splits | one launch | two launches | saved us | "
          "two / one |")
    print("| --- | --- | --- | --- | --- | --- |")
    for seq in map(int, a.seqs.split(",")):
        q = torch.randn(bh, d, device="cuda", dtype=torch.bfloat16)
        k = torch.randn(bh, seq, d, device="cuda", dtype=torch.bfloat16)
        v = torch.randn(bh, seq, d, device="cuda", dtype=torch.bfloat16)
        p_ = torch.softmax(scale * (k.double() @ q.double()[:, :, None])[..., 0],
                           dim=1)
        ref = (p_[:, None, :] @ v.double())[:, 0]
        for splits in map(int, a.splits.split(",")):
            o = torch.full_like(q, float("nan"))
            mp = torch.empty(bh, splits, device="cuda")
            lp = torch.empty(bh, splits, device="cuda")
            op = torch.empty(bh, splits, d, device="cuda")
            runs = {
                "one": lambda: one(q, k, v, o, mp, lp, op, scale),
                "two": lambda: two(q, k, v, o, mp, lp, op, scale),
            }
            for name, fn in runs.items():
                o.fill_(float("nan"))
                fn()
                err = (o.double() - ref).abs().max().item()
                assert err < 2e-2 * ref.abs().max().item() + 1e-2, (
                    name, seq, splits, err)
            times = {n: [] for n in runs}
            for _ in range(a.rounds):
                for n, fn in runs.items():
                    times[n].append(timer(fn) * 1e3)
            t1 = statistics.median(times["one"])
            t2 = statistics.median(times["two"])
            print(f"| {seq} | {splits} | {t1:.1f} | {t2:.1f} | {t2 - t1:.1f} "
                  f"| {t2 / t1:.3f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
