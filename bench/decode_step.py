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
CUDA graph, against the HBM bound (the weights and the KV rows read over a
device copy's rate in the same run), at contexts 1024 and 8192
(pos = ctx - 1), Llama-3.2-1B's shapes (16 layers, vocabulary 128256).
"""

import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from decode_layer import (EXAMPLES, F2, M2, M3, PROJ,  # noqa: E402
                          check_both, command_line, ism_ways, kernels,
                          proj_kernel, torch_helpers, write_module)
from decode_mlp import (CALLS, EPS, copy_gbps, eager_and_graphed,  # noqa: E402
                        write_rows)

LAYER_ARGS = ["wn_attn", "wq", "wk", "wv", "wo", "wn_mlp", "wg", "wu", "wd",
              "kc", "vc"]
VEC = "memref<?xbf16>"
TYPES = dict(wn_attn=VEC, wq=M2, wk=M2, wv=M2, wo=M2, wn_mlp=VEC, wg=M2,
             wu=M2, wd=M2, kc=M3, vc=M3)


def layer_checks(l):
    """Host asserts on layer l's weights and caches (H, Hkv, ctx, F from
    layer 0's)."""
    s = f"_{l}"
    dims = [("wq", 0, "%H"), ("wq", 1, "%H"), ("wk", 0, "%kvr"),
            ("wk", 1, "%H"), ("wv", 0, "%kvr"), ("wv", 1, "%H"),
            ("wo", 0, "%H"), ("wo", 1, "%H"), ("wg", 0, "%F"),
            ("wg", 1, "%H"), ("wu", 0, "%F"), ("wu", 1, "%H"),
            ("wd", 0, "%H"), ("wd", 1, "%F"), ("wn_attn", 0, "%H"),
            ("wn_mlp", 0, "%H"), ("kc", 0, "%Hkv"), ("kc", 1, "%ctx"),
            ("kc", 2, "%c64"), ("vc", 0, "%Hkv"), ("vc", 1, "%ctx"),
            ("vc", 2, "%c64")]
    out, ok = [], None
    for k, (name, d, want) in enumerate(dims):
        c = "%c0" if d == 0 else "%c1" if d == 1 else "%c2"
        out.append(f"  %d{s}_{k} = memref.dim %{name}{s}, {c} : "
                   f"{TYPES[name]}")
        out.append(f"  %e{s}_{k} = arith.cmpi eq, %d{s}_{k}, {want} : index")
        if ok is None:
            ok = f"%e{s}_{k}"
        else:
            out.append(f"  %ok{s}_{k} = arith.andi {ok}, %e{s}_{k} : i1")
            ok = f"%ok{s}_{k}"
    shapes = ", ".join(f"{n}[{d}] {{{k}}}" for k, (n, d, _) in
                       enumerate(dims))
    args = ", ".join(f"%d{s}_{k}" for k in range(len(dims)))
    out.append(f'  ism.assert {ok}, "layer {l}: {shapes}: each layer '
               f'takes W_q, W_o H x H, W_k, W_v 64 Hkv x H, W_gate, W_up '
               f'F x H, W_down H x F, norms H, caches Hkv x max_ctx x 64 '
               f'(H, Hkv, F, max_ctx: layer 0\'s)"')
    out.append(f"      ({args}) : " + ", ".join(["index"] * len(dims)))
    return out


def layer_launches(l, layers, x, y):
    """Layer l's ten launches, from residual x to residual y."""
    s = f"_{l}"
    return f"""    ism.launch @proj grid(%gq) (%wq{s}, {x}, %wn_attn{s}, %q, %eps)
        : ({M2}, {M2}, {VEC}, {M2}, f32)
    ism.launch @proj grid(%gkv) (%wk{s}, {x}, %wn_attn{s}, %k, %eps)
        : ({M2}, {M2}, {VEC}, {M2}, f32)
    ism.launch @proj grid(%gkv) (%wv{s}, {x}, %wn_attn{s}, %v, %eps)
        : ({M2}, {M2}, {VEC}, {M2}, f32)
    ism.launch @rope grid(%Hq) (%q, %cos, %sin, %pos, %qo, %no)
        : ({M2}, {F2}, {F2}, memref<?xi32>, {M3}, i32)
    ism.launch @rope grid(%Hkv) (%k, %cos, %sin, %pos, %kc{s}, %yes)
        : ({M2}, {F2}, {F2}, memref<?xi32>, {M3}, i32)
    ism.launch @copy_row grid(%Hkv) (%v, %pos, %vc{s})
        : ({M2}, memref<?xi32>, {M3})
    ism.launch @decode grid(%splits, %Hq)
        (%qo, %kc{s}, %vc{s}, %pos, %o, %mp, %lp, %op, %count, %scale)
        : ({M3}, {M3}, {M3}, memref<?xi32>, {M2}, {F2}, {F2},
           memref<?x?x?xf32>, memref<?xi32>, f32)
    ism.launch @o_proj grid(%go) (%wo{s}, %o, {x}, %x1)
        : ({M2}, {M2}, {M2}, {M2})
    ism.launch @gate_up grid(%gf) (%wg{s}, %wu{s}, %x1, %wn_mlp{s}, %a, %eps)
        : ({M2}, {M2}, {M2}, {VEC}, {M2}, f32)
    ism.launch @down grid(%go) (%wd{s}, %a, %x1, {y})
        : ({M2}, {M2}, {M2}, {M2})
"""


EMBED = """
// x[0, :] = E[token[0], :]: the step's input, the embedding of the token
// the step before sampled (on the GPU: a token past the table reads zeros)
ism.kernel @embed(%e: memref<?x?xbf16>, %token: memref<?xi32>,
                  %x: memref<?x?xbf16>) attributes {num_warps = 8 : i32} {
  %c0 = arith.constant 0 : index
  %t32 = memref.load %token[%c0] : memref<?xi32>
  %t = arith.index_cast %t32 : i32 to index
  %row = ism.load %e[%t, %c0] : memref<?x?xbf16> -> tensor<1x2048xbf16>
  ism.store %row, %x[%c0, %c0] : tensor<1x2048xbf16> -> memref<?x?xbf16>
  ism.return
}
"""


def host(layers, sample=False):
    """@main: with `sample`, the step takes the embedding table and the
    token (1 x i32) instead of x, starts with the token's embedding and
    ends by writing the next token (greedy: examples/decode_argmax.mlir)
    into the same buffer."""
    params = (["%embed: " + M2, "%token: memref<?xi32>"] if sample else
              ["%x: " + M2])
    for l in range(layers):
        params += [f"%{n}_{l}: {TYPES[n]}" for n in LAYER_ARGS]
    params += [f"%cos: {F2}", f"%sin: {F2}", "%pos: memref<?xi32>",
               f"%wn_final: {VEC}", f"%w_lm: {M2}", f"%logits: {M2}",
               "%eps: f32", "%scale: f32"]
    body = [f"""func.func @main({', '.join(params)}) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %H = memref.dim %{"embed" if sample else "x"}, %c1 : {M2}
  %Hq = arith.divui %H, %c64 : index
  %Hkv = memref.dim %kc_0, %c0 : {M3}
  %ctx = memref.dim %kc_0, %c1 : {M3}
  %F = memref.dim %wg_0, %c0 : {M2}
  %kvr = arith.muli %Hkv, %c64 : index
  %hrem = arith.remui %H, %c64 : index
  %h64 = arith.cmpi eq, %hrem, %c0 : index
  %maxH = arith.constant 2048 : index
  %maxF = arith.constant 8192 : index
  %hmax = arith.cmpi sle, %H, %maxH : index
  %fmax = arith.cmpi sle, %F, %maxF : index
  %hf = arith.andi %h64, %hmax : i1
  %sizes = arith.andi %hf, %fmax : i1
  ism.assert %sizes, "x is 1x{{0}} and W_gate has {{1}} rows: this step takes H = 64 x heads <= 2048 and F <= 8192"
      (%H, %F) : index, index
  %V = memref.dim %w_lm, %c0 : {M2}
  %VC = memref.dim %w_lm, %c1 : {M2}
  %LR = memref.dim %logits, %c0 : {M2}
  %LC = memref.dim %logits, %c1 : {M2}
  %vr = arith.remui %V, %c64 : index
  %v64 = arith.cmpi eq, %vr, %c0 : index
  %vc_ok = arith.cmpi eq, %VC, %H : index
  %vrows = arith.divui %V, %c64 : index
  %lr_ok = arith.cmpi eq, %LR, %vrows : index
  %lc_ok = arith.cmpi eq, %LC, %c64 : index
  %v1 = arith.andi %v64, %vc_ok : i1
  %v2 = arith.andi %lr_ok, %lc_ok : i1
  %head_ok = arith.andi %v1, %v2 : i1
  ism.assert %head_ok, "W_lm is {{0}}x{{1}} and logits {{2}}x{{3}}: the head takes W_lm V x H (V a multiple of 64) and logits V/64 x 64"
      (%V, %VC, %LR, %LC) : index, index, index, index"""]
    for l in range(layers):
        body += layer_checks(l)
    body.append(f"""  %splits = arith.ceildivui %ctx, %c128 : index
  %q = memref.alloc(%Hq, %c64) : {M2}
  %k = memref.alloc(%Hkv, %c64) : {M2}
  %v = memref.alloc(%Hkv, %c64) : {M2}
  %qo = memref.alloc(%Hq, %c1, %c64) : {M3}
  %o = memref.alloc(%Hq, %c64) : {M2}
  %mp = memref.alloc(%Hq, %splits) : {F2}
  %lp = memref.alloc(%Hq, %splits) : {F2}
  %op = memref.alloc(%Hq, %splits, %c64) : memref<?x?x?xf32>
  %count = memref.alloc(%Hq) {{ism.zeroed}} : memref<?xi32>
  %x1 = memref.alloc(%c1, %H) : {M2}
  %a = memref.alloc(%c1, %F) : {M2}""")
    if sample:
        body.append(f"""  %x = memref.alloc(%c1, %H) : {M2}
  %ER = memref.dim %embed, %c0 : {M2}
  %NT = memref.dim %token, %c0 : memref<?xi32>
  %blocks = arith.ceildivui %LR, %c64 : index
  %few = arith.cmpi sle, %blocks, %c64 : index
  %one = arith.cmpi eq, %NT, %c1 : index
  %sample_ok = arith.andi %few, %one : i1
  ism.assert %sample_ok, "the vocabulary has {{0}} rows (embedding table: {{1}}) and token {{2}} elements: greedy sampling takes at most 262144 logits and a 1-element token"
      (%V, %ER, %NT) : index, index, index
  %pm = memref.alloc(%blocks) : memref<?xf32>
  %pi = memref.alloc(%blocks) : memref<?xi32>""")
    for l in range(layers):
        body.append(f"  %h_{l + 1} = memref.alloc(%c1, %H) : {M2}")
    body.append("""  %gq = arith.ceildivui %H, %c4 : index
  %gkv = arith.ceildivui %kvr, %c4 : index
  %go = arith.ceildivui %H, %c2 : index
  %gf = arith.ceildivui %F, %c4 : index
  %c8 = arith.constant 8 : index
  %glm = arith.ceildivui %V, %c8 : index
  %no = arith.constant 0 : i32
  %yes = arith.constant 1 : i32
  ism.coschedule ordered attributes {ctas_per_sm = 3 : i32} {""")
    if sample:
        body.append(f"""    ism.launch @embed grid(%c1) (%embed, %token, %x)
        : ({M2}, memref<?xi32>, {M2})""")
    for l in range(layers):
        x = "%x" if l == 0 else f"%h_{l}"
        body.append(layer_launches(l, layers, x, f"%h_{l + 1}").rstrip("\n"))
    body.append(f"""    ism.launch @head grid(%glm) (%w_lm, %h_{layers}, %wn_final, %logits, %eps)
        : ({M2}, {M2}, {VEC}, {M2}, f32)""")
    if sample:
        body.append(f"""    ism.launch @argmax_blocks grid(%blocks) (%logits, %pm, %pi)
        : ({M2}, memref<?xf32>, memref<?xi32>)
    ism.launch @argmax_final grid(%c1) (%pm, %pi, %token)
        : (memref<?xf32>, memref<?xi32>, memref<?xi32>)""")
    body.append("""  }
  return
}""")
    return "\n".join(body) + "\n"


def step_module(layers, sample=False):
    """The step's module text (with `sample`: from a token to the next,
    host())."""
    parts = kernels(os.path.join(EXAMPLES, "decode_rope_append.mlir"),
                    ["rope", "copy_row"])
    parts += kernels(os.path.join(EXAMPLES, "decode_gqa_attention.mlir"),
                     ["decode"])
    parts += kernels(os.path.join(EXAMPLES, "decode_mlp.mlir"),
                     ["gate_up", "down"])
    if sample:
        parts += kernels(os.path.join(EXAMPLES, "decode_argmax.mlir"),
                         ["argmax_blocks", "argmax_final"])
        parts.append(EMBED.strip("\n"))
    return ("\n\n".join(parts) + "\n" + PROJ + "\n" + proj_kernel("head", 8) +
            "\n" + host(layers, sample))


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


def torch_step(torch, layers, h, hkv, f, ctx, vocab, pos, reps, warmup):
    """The same step in PyTorch (bf16, SDPA over each cache's first pos + 1
    rows), eager and in a CUDA graph: ms a step."""
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
    return eager_and_graphed(torch, step, reps, warmup)


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
            eager, graphed = torch_step(torch, layers, h, hkv, f, ctx, vocab,
                                        pos, opts.reps, opts.warmup)
            per_layer = 2 * (h * h * 2 + 2 * hkv * 64 * h + 3 * f * h + 2 * h)
            weights = layers * per_layer + 2 * (vocab * h + h)
            kv = layers * 2 * 2 * hkv * (pos + 1) * 64
            bound = (weights + kv) / (copy * 1e9) * 1e6
            rows.append(dict(shape=f"llama-1b x{layers}", ctx=ctx,
                             bound_us=bound, fused_us=times["fused"],
                             per_op_us=times["per_op"],
                             per_op_graph_us=times["per_op_graph"],
                             eager_us=eager * 1e3, graph_us=graphed * 1e3,
                             sm_clock_mhz=power.get("sm_clock_mhz"),
                             power_w=power.get("power_w")))
    write_rows(opts.out, "decode_step", copy, rows)
    print(f"device copy (read + write): {copy:.0f} GB/s; a decode step "
          f"({layers} layers + LM head), batch 1, {CALLS} back to back, "
          f"medians, no L2 flush")
    print(f"{'ctx':>5} {'bound':>7} {'fused':>7} {'%':>4} {'per-op':>7} "
          f"{'op graph':>8} {'torch':>7} {'graph':>7} {'vs opg':>6} "
          f"{'vs graph':>8} {'tok/s':>6} {'MHz':>5} {'W':>4}")
    for r in rows:
        print(f"{r['ctx']:>5} {r['bound_us']:>6.0f}u {r['fused_us']:>6.0f}u "
              f"{100 * r['bound_us'] / r['fused_us']:>3.0f}% "
              f"{r['per_op_us']:>6.0f}u {r['per_op_graph_us']:>7.0f}u "
              f"{r['eager_us']:>6.0f}u {r['graph_us']:>6.0f}u "
              f"{r['per_op_graph_us'] / r['fused_us']:>5.2f}x "
              f"{r['graph_us'] / r['fused_us']:>7.2f}x "
              f"{1e6 / min(r['fused_us'], r['per_op_graph_us']):>6.0f} "
              f"{r['sm_clock_mhz'] or 0:>5.0f} {r['power_w'] or 0:>4.0f}")
    return 0


def main():
    parser, (w, c, b) = command_line(__doc__, "step", "decode-step-out", 20,
                                     3)
    b.add_argument("--ctx", type=int, nargs="+", default=[1024, 8192])
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
