#!/usr/bin/env python3
"""Plots bench/decode_mlp.py's and bench/decode_layer.py's JSON results: us
a step per shape (the MLP block) and per context (a whole decoder layer)
for ism fused, ism per-op, ism per-op from a CUDA graph and PyTorch in a
CUDA graph, with the HBM bound. Needs matplotlib only (no GPU).

    python3 bench/plot_decode.py DECODE_MLP.json DECODE_LAYER.json OUT.png
"""
import json
import sys

WAYS = [("fused_us", "ism fused"), ("per_op_us", "ism per-op"),
        ("per_op_graph_us", "ism per-op, CUDA graph"),
        ("graph_us", "PyTorch, CUDA graph")]
# decode_mlp.py names the per-op columns after --coschedule=sequential.
MLP_KEYS = {"per_op_us": "sequential_us",
            "per_op_graph_us": "sequential_graph_us"}


def panel(ax, rows, labels, keys, title):
    width = 0.8 / len(WAYS)
    for i, (key, name) in enumerate(WAYS):
        ax.bar([x + i * width for x in range(len(rows))],
               [r[keys.get(key, key)] for r in rows], width, label=name)
    for x, r in enumerate(rows):
        ax.hlines(r["bound_us"], x - width / 2, x + 0.8 - width / 2,
                  colors="black", linestyles="dashed",
                  label="HBM bound" if x == 0 else None)
    ax.set_xticks([x + 0.4 - width / 2 for x in range(len(rows))])
    ax.set_xticklabels(labels)
    ax.set_ylabel("us a step (20 back to back, medians)")
    ax.set_title(title)
    ax.legend(fontsize=8)


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    mlp = json.load(open(argv[0]))["rows"]
    layer = json.load(open(argv[1]))["rows"]
    fig, (a, b) = plt.subplots(1, 2, figsize=(13, 4.5))
    panel(a, mlp, [f"{r['shape']}\n{r['H']}x{r['F']}" for r in mlp],
          MLP_KEYS, "MLP block, batch 1")
    panel(b, layer, [f"{r['shape']}\nctx {r['ctx']}" for r in layer], {},
          "decoder layer, batch 1")
    fig.tight_layout()
    fig.savefig(argv[2], dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
