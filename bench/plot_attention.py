#!/usr/bin/env python3
"""Plots bench/attention.py's JSON results: forward TFLOP/s per shape
(ism, Triton, SDPA backends) and decode GB/s per KV length against the
copy. Needs matplotlib only (no GPU).

    python3 bench/plot_attention.py FORWARD.json DECODE.json OUT.png
"""
import json
import sys


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fwd = json.load(open(argv[0]))
    dec = json.load(open(argv[1]))
    fig, (a, b) = plt.subplots(1, 2, figsize=(13, 4.5))
    names = ["ism", "triton", "sdpa-flash", "sdpa-cudnn", "sdpa-efficient"]
    rows = fwd["rows"]
    labels = [f"{r['shape']} {'causal' if r['causal'] else 'full'}"
              for r in rows]
    width = 0.8 / len(names)
    for i, n in enumerate(names):
        a.bar([x + i * width for x in range(len(rows))],
              [r.get(n) or 0 for r in rows], width, label=n)
    a.set_xticks([x + 0.4 - width / 2 for x in range(len(rows))])
    a.set_xticklabels(labels, fontsize=7, rotation=30, ha="right")
    a.set_ylabel("TFLOP/s")
    a.set_title(f"flash attention forward, bf16 ({fwd['device']})")
    a.legend(fontsize=8)
    seqs = [r["seq"] for r in dec["rows"]]
    for n in ["ism", "sdpa-flash", "sdpa-cudnn", "copy"]:
        b.plot(seqs, [r.get(n) or 0 for r in dec["rows"]], marker="o",
               label=n, linestyle="--" if n == "copy" else "-")
    b.set_xscale("log", base=2)
    b.set_xlabel("KV length")
    b.set_ylabel("GB/s (K and V read once)")
    b.set_title("split-KV decode, bf16, 32 heads x 128")
    b.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(argv[2], dpi=110)
    print(f"wrote {argv[2]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
