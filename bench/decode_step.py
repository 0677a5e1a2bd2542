#!/usr/bin/env python3
"""A whole Llama decode step (batch 1) as one ordered region.

The layers of bench/decode_layer.py, `--layers` of them one after another
(each on its own weights and KV cache, the residual stream passed from one
to the next), then the final RMSNorm and the LM head (@head: @proj's
program with 8 of the vocabulary's rows a program, not 4; the logits, as
vocab / 64 x 64 bf16). Sixteen layers and
the LM head are a Llama-3.2-1B step without the sampling: 161 launches in
one `ism.coschedule ordered` region. Launches of the same kernel share one
program in the fused kernel (docs/coschedule.md), so the kernel holds nine
programs whatever the number of layers.

    python3 bench/decode_step.py write OUT.mlir [--layers N] [--sample]
    python3 bench/decode_step.py check --ism-run ISM_RUN
    python3 bench/decode_step.py bench --ism-run ISM_RUN [--out DIR]

`check` runs ism-run --check (fused and one launch at a time) on
`--layers` small layers (H 256) and the head, and on two layers and the
head at Llama-3.2-1B's shapes. `bench` times the step as in serving (20 steps back
to back, no L2 flush, medians): ism fused, ism per-op (programmatic
dependent launch), ism per-op from a CUDA graph, PyTorch eager and in a
CUDA graph, torch.compile (max-autotune-no-cudagraphs, one graph for the
whole step) in a CUDA graph (--no-torch-compile leaves it out), against the
HBM bound (the weights and the KV rows read over a
device copy's rate in the same run), at contexts 1024 and 8192
(pos = ctx - 1), Llama-3.2-1B's shapes (16 layers, vocabulary 128256).
"""

import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from decode_layer import (check_both, command_line, ism_ways,  # noqa: E402
                          torch_helpers, write_module)
from decode_modules import (EMBED, LAYER_ARGS, TYPES, VEC,  # noqa: E402,F401
                            host, layer_checks, layer_launches, step_module)
from decode_mlp import (CALLS, EPS, copy_gbps, eager_and_graphed,  # noqa: E402
                        write_rows)

def ism_args(layers, h, hkv, f, ctx, vocab, pos_file):
    """ism-run's --arg values: random weight matrices scaled by 1 /
    sqrt(their row length), as a trained model's are roughly (with N(0, 1)
    weights the attention's softmax turns so peaked after a layer or two
    that bf16 roundings decide it, and the check compares noise)."""
    def w(rows, cols):
        return f"bf16:{rows}x{cols}:randn*{cols ** -0.5:.6g}"
    one = [f"bf16:{h}:randn", w(h, h), w(hkv * 64, h), w(hkv * 64, h),
           w(h, h), f"bf16:{h}:randn", w(f, h), w(f, h), w(h, f),
           f"bf16:{hkv}x{ctx}x64:randn", f"bf16:{hkv}x{ctx}x64:randn"]
    return ([f"bf16:1x{h}:randn"] + one * layers +
            [f"f32:{ctx}x32:uniform", f"f32:{ctx}x32:uniform",
             f"i32:1:{pos_file}", f"bf16:{h}:randn", w(vocab, h),
             f"bf16:{vocab // 64}x64:poison", str(EPS), str(64 ** -0.5)])


def write_inputs(tmp, layers, pos):
    import numpy as np
    path = os.path.join(tmp, f"pos{pos}.npy")
    np.save(path, np.array([pos], np.int32))
    module = os.path.join(tmp, f"decode_step{layers}.mlir")
    with open(module, "w") as fh:
        fh.write(step_module(layers))
    return module, path


def check(opts):
    with tempfile.TemporaryDirectory() as tmp:
        # (--layers small layers, and two at Llama-3.2-1B's shapes: the
        # reference runs on the CPU)
        for (layers, h, hkv, f, ctx, vocab, pos) in [
                (opts.layers, 256, 2, 600, 100, 1024, 37),
                (2, 2048, 8, 8192, 1024, 128256, 1023)]:
            module, pos_file = write_inputs(tmp, layers, pos)
            check_both(opts.ism_run, module,
                       ism_args(layers, h, hkv, f, ctx, vocab, pos_file),
                       f"layers={layers} H={h} Hkv={hkv} F={f} ctx={ctx} "
                       f"vocab={vocab} pos={pos}")
    return 0


def torch_step(torch, layers, h, hkv, f, ctx, vocab, pos, reps, warmup,
               compiled=False):
    """The same step in PyTorch (bf16, SDPA over each cache's first pos + 1
    rows), eager and in a CUDA graph, and with `compiled` torch.compile's
    (mode max-autotune-no-cudagraphs, the whole step one graph) in a CUDA
    graph too: ms a step (None for the compiled one when not asked)."""
    import torch.nn.functional as F
    randn, norm, rope = torch_helpers(torch)
    hq = h // 64
    x = randn(1, h)
    ws = [dict(wn1=randn(h), wq=randn(h, h), wk=randn(hkv * 64, h),
               wv=randn(hkv * 64, h), wo=randn(h, h), wn2=randn(h),
               wg=randn(f, h), wu=randn(f, h), wd=randn(h, f),
               kc=randn(hkv, ctx, 64), vc=randn(hkv, ctx, 64))
          for _ in range(layers)]
    wnf, wlm = randn(h), randn(vocab, h)
    cos = torch.rand(ctx, 32, device="cuda")
    sin = torch.rand(ctx, 32, device="cuda")
    p = torch.tensor([pos], device="cuda")

    def step():
        r = x
        c, s = cos.index_select(0, p), sin.index_select(0, p)
        for w in ws:
            hn = norm(r, w["wn1"])
            q = F.linear(hn, w["wq"]).view(hq, 64)
            k = F.linear(hn, w["wk"]).view(hkv, 64)
            v = F.linear(hn, w["wv"]).view(hkv, 64)
            q, k = rope(q, c, s), rope(k, c, s)
            w["kc"].index_copy_(1, p, k.unsqueeze(1))
            w["vc"].index_copy_(1, p, v.unsqueeze(1))
            o = F.scaled_dot_product_attention(
                q.view(1, hq, 1, 64), w["kc"][:, :pos + 1].unsqueeze(0),
                w["vc"][:, :pos + 1].unsqueeze(0), enable_gqa=True)
            x1 = F.linear(o.reshape(1, h), w["wo"]) + r
            hn2 = norm(x1, w["wn2"])
            a = F.silu(F.linear(hn2, w["wg"])) * F.linear(hn2, w["wu"])
            r = F.linear(a, w["wd"]) + x1
        return F.linear(norm(r, wnf), wlm)
    eager, graphed = eager_and_graphed(torch, step, reps, warmup)
    if not compiled:
        return eager, graphed, None
    fast = torch.compile(step, mode="max-autotune-no-cudagraphs",
                         fullgraph=True)
    _, compiled_graphed = eager_and_graphed(torch, fast, reps, warmup)
    return eager, graphed, compiled_graphed


def bench(opts):
    import torch
    os.makedirs(opts.out, exist_ok=True)
    copy = copy_gbps(torch)
    h, hkv, f, vocab, layers = 2048, 8, 8192, 128256, opts.layers
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for ctx in opts.ctx:
            pos = ctx - 1
            module, pos_file = write_inputs(tmp, layers, pos)
            times, power = ism_ways(
                opts, module, ism_args(layers, h, hkv, f, ctx, vocab,
                                       pos_file))
            eager, graphed, compiled = torch_step(
                torch, layers, h, hkv, f, ctx, vocab, pos, opts.reps,
                opts.warmup, compiled=opts.torch_compile)
            per_layer = 2 * (h * h * 2 + 2 * hkv * 64 * h + 3 * f * h + 2 * h)
            weights = layers * per_layer + 2 * (vocab * h + h)
            kv = layers * 2 * 2 * hkv * (pos + 1) * 64
            bound = (weights + kv) / (copy * 1e9) * 1e6
            rows.append(dict(shape=f"llama-1b x{layers}", ctx=ctx,
                             bound_us=bound, fused_us=times["fused"],
                             per_op_us=times["per_op"],
                             per_op_graph_us=times["per_op_graph"],
                             eager_us=eager * 1e3, graph_us=graphed * 1e3,
                             compile_graph_us=(compiled * 1e3 if compiled
                                               else None),
                             sm_clock_mhz=power.get("sm_clock_mhz"),
                             power_w=power.get("power_w")))
    write_rows(opts.out, "decode_step", copy, rows)
    print(f"device copy (read + write): {copy:.0f} GB/s; a decode step "
          f"({layers} layers + LM head), batch 1, {CALLS} back to back, "
          f"medians, no L2 flush")
    print(f"{'ctx':>5} {'bound':>7} {'fused':>7} {'%':>4} {'per-op':>7} "
          f"{'op graph':>8} {'torch':>7} {'graph':>7} {'compile':>7} "
          f"{'vs opg':>6} {'vs graph':>8} {'tok/s':>6} {'MHz':>5} {'W':>4}")
    for r in rows:
        print(f"{r['ctx']:>5} {r['bound_us']:>6.0f}u {r['fused_us']:>6.0f}u "
              f"{100 * r['bound_us'] / r['fused_us']:>3.0f}% "
              f"{r['per_op_us']:>6.0f}u {r['per_op_graph_us']:>7.0f}u "
              f"{r['eager_us']:>6.0f}u {r['graph_us']:>6.0f}u "
              f"{compiled_text(r['compile_graph_us']):>7} "
              f"{r['per_op_graph_us'] / r['fused_us']:>5.2f}x "
              f"{r['graph_us'] / r['fused_us']:>7.2f}x "
              f"{1e6 / min(r['fused_us'], r['per_op_graph_us']):>6.0f} "
              f"{r['sm_clock_mhz'] or 0:>5.0f} {r['power_w'] or 0:>4.0f}")
    return 0


def compiled_text(us):
    return "-" if us is None else f"{us:.0f}u"


def main():
    parser, (w, c, b) = command_line(__doc__, "step", "decode-step-out", 20,
                                     3)
    b.add_argument("--ctx", type=int, nargs="+", default=[1024, 8192])
    b.add_argument("--no-torch-compile", dest="torch_compile",
                   action="store_false",
                   help="leave out torch.compile (max-autotune, in a CUDA "
                   "graph), whose autotuning takes minutes")
    for p in (w, c, b):
        p.add_argument("--layers", type=int, default=16)
    w.add_argument("--sample", action="store_true",
                   help="from a token to the next: @main takes the "
                   "embedding table and a 1-element token buffer instead of "
                   "x, and writes the greedy next token into it")
    opts = parser.parse_args()
    if opts.layers < 1:
        parser.error(f"--layers must be at least 1, got {opts.layers}")
    if opts.command == "write":
        return write_module(parser, opts.path,
                            step_module(opts.layers, opts.sample))
    return check(opts) if opts.command == "check" else bench(opts)


if __name__ == "__main__":
    sys.exit(main())
