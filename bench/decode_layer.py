#!/usr/bin/env python3
"""A whole Llama decoder layer's decode step (batch 1) as one ordered region.

The module is assembled from the examples' kernels, unchanged:

  @rope, @copy_row   examples/decode_rope_append.mlir (RoPE and the KV-cache
                     append at a position read from the GPU)
  @decode            examples/decode_gqa_attention.mlir (grouped-query
                     split-KV attention over positions 0 .. pos)
  @gate_up, @down    examples/decode_mlp.mlir (the MLP block)

and two projections written here: @proj (RMSNorm inside, one matrix, 4
output rows a program, written as heads of 64) for Q, K and V, and @o_proj
(the output projection and the residual, 2 rows a program). One
`ism.coschedule ordered` region runs, in order: the Q, K and V projections;
RoPE of q, RoPE of k into the K cache and v into the V cache at pos; the
attention; the output projection; gate/up; down. Each launch waits for the
launches that wrote what it reads; weights are loaded before the waits.

    python3 bench/decode_layer.py write OUT.mlir [--ctx N]
    python3 bench/decode_layer.py check --ism-run ISM_RUN
    python3 bench/decode_layer.py bench --ism-run ISM_RUN [--out DIR]

`check` runs ism-run --check (fused and one launch at a time) at a small
and at Llama-3.2-1B's shapes. `bench` times one layer's step as in serving
(20 steps back to back, no L2 flush, medians): ism fused, ism per-op
(programmatic dependent launch), ism per-op from a CUDA graph, PyTorch
eager and in a CUDA graph, against the HBM bound (weights + the KV read
over a device copy's rate), at contexts 1024 and 8192 (pos = ctx - 1).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from decode_mlp import (CALLS, EPS, copy_gbps, eager_and_graphed,  # noqa: E402
                        write_rows)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")
# The step's text (kernels(), @proj, @o_proj), from the package's source
# without the extension.
sys.path.insert(0, os.path.join(ROOT, "python", "ism", "models"))
from decode_modules import (F2, M2, M3, PROJ, kernels,  # noqa: E402,F401
                            proj_kernel)


HOST = f"""
// One decoder layer's step at batch 1: x (1 x H) -> y (1 x H), the token
// at position pos (1 x i32 on the GPU) appended to the caches kc, vc
// (Hkv x max_ctx x 64). H = Hq * 64 <= 2048, F <= 8192.
func.func @main(%x: {M2}, %wn_attn: memref<?xbf16>, %wq: {M2}, %wk: {M2},
                %wv: {M2}, %wo: {M2}, %wn_mlp: memref<?xbf16>, %wg: {M2},
                %wu: {M2}, %wd: {M2}, %cos: {F2}, %sin: {F2},
                %pos: memref<?xi32>, %kc: {M3}, %vc: {M3}, %y: {M2},
                %eps: f32, %scale: f32) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %H = memref.dim %x, %c1 : {M2}
  %Hq = arith.divui %H, %c64 : index
  %Hkv = memref.dim %kc, %c0 : {M3}
  %ctx = memref.dim %kc, %c1 : {M3}
  %F = memref.dim %wg, %c0 : {M2}
  %QR = memref.dim %wq, %c0 : {M2}
  %KR = memref.dim %wk, %c0 : {M2}
  %OR = memref.dim %wo, %c0 : {M2}
  %OC = memref.dim %wo, %c1 : {M2}
  %hrem = arith.remui %H, %c64 : index
  %a1 = arith.cmpi eq, %hrem, %c0 : index
  %a2 = arith.cmpi eq, %QR, %H : index
  %kvr = arith.muli %Hkv, %c64 : index
  %a3 = arith.cmpi eq, %KR, %kvr : index
  %a4 = arith.cmpi eq, %OR, %H : index
  %a5 = arith.cmpi eq, %OC, %H : index
  %maxH = arith.constant 2048 : index
  %maxF = arith.constant 8192 : index
  %a6 = arith.cmpi sle, %H, %maxH : index
  %a7 = arith.cmpi sle, %F, %maxF : index
  %a12 = arith.andi %a1, %a2 : i1
  %a34 = arith.andi %a3, %a4 : i1
  %a56 = arith.andi %a5, %a6 : i1
  %a1234 = arith.andi %a12, %a34 : i1
  %a567 = arith.andi %a56, %a7 : i1
  %shapes = arith.andi %a1234, %a567 : i1
  ism.assert %shapes, "x is 1x{{0}}, W_q {{1}} rows, W_k {{2}} rows (KV heads {{3}}), W_o {{4}}x{{5}}, W_gate {{6}} rows: this layer takes H = 64 x heads <= 2048, W_q H rows, W_k 64 x KV heads rows, W_o H x H, F <= 8192"
      (%H, %QR, %KR, %Hkv, %OR, %OC, %F)
      : index, index, index, index, index, index, index
  %splits = arith.ceildivui %ctx, %c128 : index
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
  %a = memref.alloc(%c1, %F) : {M2}
  %gq = arith.ceildivui %H, %c4 : index
  %gkv = arith.ceildivui %kvr, %c4 : index
  %go = arith.ceildivui %H, %c2 : index
  %gf = arith.ceildivui %F, %c4 : index
  %no = arith.constant 0 : i32
  %yes = arith.constant 1 : i32
  ism.coschedule ordered attributes {{ctas_per_sm = 3 : i32}} {{
    ism.launch @proj grid(%gq) (%wq, %x, %wn_attn, %q, %eps)
        : ({M2}, {M2}, memref<?xbf16>, {M2}, f32)
    ism.launch @proj grid(%gkv) (%wk, %x, %wn_attn, %k, %eps)
        : ({M2}, {M2}, memref<?xbf16>, {M2}, f32)
    ism.launch @proj grid(%gkv) (%wv, %x, %wn_attn, %v, %eps)
        : ({M2}, {M2}, memref<?xbf16>, {M2}, f32)
    ism.launch @rope grid(%Hq) (%q, %cos, %sin, %pos, %qo, %no)
        : ({M2}, {F2}, {F2}, memref<?xi32>, {M3}, i32)
    ism.launch @rope grid(%Hkv) (%k, %cos, %sin, %pos, %kc, %yes)
        : ({M2}, {F2}, {F2}, memref<?xi32>, {M3}, i32)
    ism.launch @copy_row grid(%Hkv) (%v, %pos, %vc)
        : ({M2}, memref<?xi32>, {M3})
    ism.launch @decode grid(%splits, %Hq)
        (%qo, %kc, %vc, %pos, %o, %mp, %lp, %op, %count, %scale)
        : ({M3}, {M3}, {M3}, memref<?xi32>, {M2}, {F2}, {F2},
           memref<?x?x?xf32>, memref<?xi32>, f32)
    ism.launch @o_proj grid(%go) (%wo, %o, %x, %x1)
        : ({M2}, {M2}, {M2}, {M2})
    ism.launch @gate_up grid(%gf) (%wg, %wu, %x1, %wn_mlp, %a, %eps)
        : ({M2}, {M2}, {M2}, memref<?xbf16>, {M2}, f32)
    ism.launch @down grid(%go) (%wd, %a, %x1, %y)
        : ({M2}, {M2}, {M2}, {M2})
  }}
  return
}}
"""


def layer_module():
    """The layer's module text."""
    parts = kernels(os.path.join(EXAMPLES, "decode_rope_append.mlir"),
                    ["rope", "copy_row"])
    parts += kernels(os.path.join(EXAMPLES, "decode_gqa_attention.mlir"),
                     ["decode"])
    parts += kernels(os.path.join(EXAMPLES, "decode_mlp.mlir"),
                     ["gate_up", "down"])
    return "\n\n".join(parts) + "\n" + PROJ + HOST


# (name, H, Hkv, F): Llama-3.2-1B's layer.
LLAMA_1B = ("llama-1b", 2048, 8, 8192)


def ism_args(h, hkv, f, ctx, pos_file):
    return [f"bf16:1x{h}:randn", f"bf16:{h}:randn",
            f"bf16:{h}x{h}:randn", f"bf16:{hkv * 64}x{h}:randn",
            f"bf16:{hkv * 64}x{h}:randn", f"bf16:{h}x{h}:randn",
            f"bf16:{h}:randn", f"bf16:{f}x{h}:randn", f"bf16:{f}x{h}:randn",
            f"bf16:{h}x{f}:randn", f"f32:{ctx}x32:uniform",
            f"f32:{ctx}x32:uniform", f"i32:1:{pos_file}",
            f"bf16:{hkv}x{ctx}x64:randn", f"bf16:{hkv}x{ctx}x64:randn",
            f"bf16:1x{h}:poison", str(EPS), str(64 ** -0.5)]


def write_inputs(tmp, pos):
    import numpy as np
    path = os.path.join(tmp, f"pos{pos}.npy")
    np.save(path, np.array([pos], np.int32))
    module = os.path.join(tmp, "decode_layer.mlir")
    with open(module, "w") as fh:
        fh.write(layer_module())
    return module, path


def ism_run(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}\n{out.stdout}{out.stderr}")
    return out.stdout


def check(opts):
    with tempfile.TemporaryDirectory() as tmp:
        for (h, hkv, f, ctx, pos) in [(256, 2, 600, 100, 37),
                                      (2048, 8, 8192, 1024, 1023)]:
            module, pos_file = write_inputs(tmp, pos)
            check_both(opts.ism_run, module,
                       ism_args(h, hkv, f, ctx, pos_file),
                       f"H={h} Hkv={hkv} F={f} ctx={ctx} pos={pos}")
    return 0


def check_both(ism_run_path, module, args, label):
    """ism-run --check of `module`, fused and one launch at a time."""
    for mode in ("fused", "sequential"):
        cmd = [ism_run_path, module, "--check", f"--coschedule={mode}"]
        cmd += [f"--arg={a}" for a in args]
        out = ism_run(cmd)
        bad = [l for l in out.splitlines()
               if l.startswith("check:") and ": ok" not in l]
        if bad or ": ok" not in out:
            raise RuntimeError(f"{' '.join(cmd)}\n{out}")
        print(f"check {label} {mode}: ok")


def ism_ways(opts, module, args):
    """us a step (fused, per-op, per-op from a CUDA graph) and the fused
    run's power record."""
    times, power = {}, {}
    for way, extra in (("fused", ["--coschedule=fused"]),
                       ("per_op", ["--coschedule=sequential"]),
                       ("per_op_graph", ["--coschedule=sequential",
                                         "--graph"])):
        out = ism_run([opts.ism_run, module, "--bench", "--json",
                       f"--reps={opts.reps}", f"--warmup={opts.warmup}",
                       "--flush-l2=false", f"--calls={CALLS}"] + extra +
                      [f"--arg={a}" for a in args])
        b = json.loads(out)["bench"]
        times[way] = b["median_ms"] * 1e3
        if way == "fused":
            power = b.get("power") or {}
    return times, power


def torch_helpers(torch):
    """randn (scaled by 1 / sqrt(last dim), bf16, seeded), RMSNorm and RoPE
    as the kernels compute them."""
    g = torch.Generator(device="cuda").manual_seed(0)

    def randn(*shape):
        return (torch.randn(*shape, generator=g, device="cuda") *
                shape[-1] ** -0.5).to(torch.bfloat16)

    def norm(t, w):
        v = t.float()
        return (v * torch.rsqrt(v.pow(2).mean(-1, keepdim=True) + EPS) *
                w.float()).to(torch.bfloat16)

    def rope(t, c, s):
        t1, t2 = t[..., :32].float(), t[..., 32:].float()
        return torch.cat([t1 * c - t2 * s, t2 * c + t1 * s], -1).to(
            torch.bfloat16)
    return randn, norm, rope


def torch_layer(torch, h, hkv, f, ctx, pos, reps, warmup):
    """The same layer in PyTorch (bf16, SDPA over the cache's first pos + 1
    rows), eager and in a CUDA graph: ms a step."""
    import torch.nn.functional as F
    randn, norm, rope = torch_helpers(torch)
    hq = h // 64
    x, wn1, wn2 = randn(1, h), randn(h), randn(h)
    wq, wk, wv, wo = randn(h, h), randn(hkv * 64, h), randn(hkv * 64, h), \
        randn(h, h)
    wg, wu, wd = randn(f, h), randn(f, h), randn(h, f)
    cos = torch.rand(ctx, 32, device="cuda")
    sin = torch.rand(ctx, 32, device="cuda")
    kc = randn(hkv, ctx, 64)
    vc = randn(hkv, ctx, 64)
    p = torch.tensor([pos], device="cuda")

    def step():
        hn = norm(x, wn1)
        q = F.linear(hn, wq).view(hq, 64)
        k = F.linear(hn, wk).view(hkv, 64)
        v = F.linear(hn, wv).view(hkv, 64)
        c, s = cos.index_select(0, p), sin.index_select(0, p)
        q, k = rope(q, c, s), rope(k, c, s)
        kc.index_copy_(1, p, k.unsqueeze(1))
        vc.index_copy_(1, p, v.unsqueeze(1))
        o = F.scaled_dot_product_attention(
            q.view(1, hq, 1, 64), kc[:, :pos + 1].unsqueeze(0),
            vc[:, :pos + 1].unsqueeze(0), enable_gqa=True)
        x1 = F.linear(o.reshape(1, h), wo) + x
        hn2 = norm(x1, wn2)
        a = F.silu(F.linear(hn2, wg)) * F.linear(hn2, wu)
        return F.linear(a, wd) + x1
    return eager_and_graphed(torch, step, reps, warmup)


def bench(opts):
    import torch
    os.makedirs(opts.out, exist_ok=True)
    copy = copy_gbps(torch)
    name, h, hkv, f = LLAMA_1B
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for ctx in (1024, 8192):
            pos = ctx - 1
            module, pos_file = write_inputs(tmp, pos)
            times, power = ism_ways(opts, module,
                                    ism_args(h, hkv, f, ctx, pos_file))
            eager, graphed = torch_layer(torch, h, hkv, f, ctx, pos,
                                         opts.reps, opts.warmup)
            weights = 2 * (h * h * 2 + 2 * hkv * 64 * h + 3 * f * h + 2 * h)
            kv = 2 * 2 * hkv * (pos + 1) * 64
            bound = (weights + kv) / (copy * 1e9) * 1e6
            rows.append(dict(shape=name, ctx=ctx, bound_us=bound,
                             fused_us=times["fused"],
                             per_op_us=times["per_op"],
                             per_op_graph_us=times["per_op_graph"],
                             eager_us=eager * 1e3, graph_us=graphed * 1e3,
                             sm_clock_mhz=power.get("sm_clock_mhz"),
                             power_w=power.get("power_w")))
    write_rows(opts.out, "decode_layer", copy, rows)
    print(f"device copy (read + write): {copy:.0f} GB/s; one layer's step, "
          f"batch 1, {CALLS} back to back, medians, no L2 flush")
    print(f"{'shape':<9} {'ctx':>5} {'bound':>7} {'fused':>7} {'%':>4} "
          f"{'per-op':>7} {'op graph':>8} {'torch':>7} {'graph':>7} "
          f"{'vs op':>6} {'vs opg':>6} {'vs graph':>8} {'MHz':>5} {'W':>4}")
    for r in rows:
        print(f"{r['shape']:<9} {r['ctx']:>5} {r['bound_us']:>6.1f}u "
              f"{r['fused_us']:>6.1f}u {100 * r['bound_us'] / r['fused_us']:>3.0f}% "
              f"{r['per_op_us']:>6.1f}u {r['per_op_graph_us']:>7.1f}u "
              f"{r['eager_us']:>6.1f}u {r['graph_us']:>6.1f}u "
              f"{r['per_op_us'] / r['fused_us']:>5.2f}x "
              f"{r['per_op_graph_us'] / r['fused_us']:>5.2f}x "
              f"{r['graph_us'] / r['fused_us']:>7.2f}x "
              f"{r['sm_clock_mhz'] or 0:>5.0f} {r['power_w'] or 0:>4.0f}")
    return 0


def command_line(doc, what, out, reps, warmup):
    """The write / check / bench command line of a decode benchmark: the
    parser and its three subcommands' parsers."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    w = sub.add_parser("write", help=f"write the {what}'s module")
    w.add_argument("path")
    c = sub.add_parser("check", help="ism-run --check, fused and per-op")
    c.add_argument("--ism-run", required=True)
    b = sub.add_parser("bench", help="time it against PyTorch")
    b.add_argument("--ism-run", required=True)
    b.add_argument("--out", default=out)
    b.add_argument("--reps", type=int, default=reps)
    b.add_argument("--warmup", type=int, default=warmup)
    return parser, (w, c, b)


def write_module(parser, path, text):
    """Writes a module for the write subcommand; a path that cannot be
    written is a one-line usage error."""
    try:
        with open(path, "w") as fh:
            fh.write(text)
    except OSError as e:
        parser.error(f"cannot write {path}: {e.strerror}")
    return 0


def main():
    parser, _ = command_line(__doc__, "layer", "decode-layer-out", 30, 5)
    opts = parser.parse_args()
    if opts.command == "write":
        return write_module(parser, opts.path, layer_module())
    return check(opts) if opts.command == "check" else bench(opts)


if __name__ == "__main__":
    sys.exit(main())
