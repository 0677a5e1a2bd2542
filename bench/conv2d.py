#!/usr/bin/env python3
"""conv2d fprop (NHWC, KRSC filters, bf16) as an implicit GEMM on wgmma:
ism against cuDNN (torch.nn.functional.conv2d on channels_last tensors).

The program is examples/conv2d.mlir's, for any filter size, stride,
padding and dilation (`program()`): ism.im2col reads each filter tap's
input pixels (TMA's im2col mode on sm_90a), the filter is K x (R * S * C).

    python3 bench/conv2d.py check --ism-run ISM_RUN [--out DIR]
        every variant through `ism-run --check` (float64 reference)
    python3 bench/conv2d.py bench --ism-run ISM_RUN [--out DIR] [--batch 32,128]
        ResNet-50's 3x3 and 1x1 layers: TFLOP/s of ism (the best of a few
        tiles, ism-run --bench, L2 flushed, medians) and cuDNN (CUDA
        events), with the SM clock and board power of ism's runs
"""
import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gemm import run, write  # noqa: E402


def program(r=3, s=3, stride=1, pad=1, dil=1, bn=128, warps=8, epilogue=True):
    """y = relu(bias + conv2d(x, f)) (epilogue=False: y = conv2d(x, f)),
    x N x H x W x C, f K x (R * S * C), y (N * P * Q) x K, bf16; 128 output
    pixels x bn output channels a program, C in blocks of 64 channels."""
    acc = f"tensor<128x{bn}xf32>"
    attrs = (f"{{filter = array<i64: {r}, {s}>, stride = array<i64: {stride}, "
             f"{stride}>, padding = array<i64: {pad}, {pad}>, dilation = "
             f"array<i64: {dil}, {dil}>}}")
    if epilogue:
        tail = f"""  %bv = ism.load %bias[%n0] : memref<?xf32> -> tensor<{bn}xf32>
  %be = ism.expand_dims %bv axis = 0 : tensor<{bn}xf32> -> tensor<1x{bn}xf32>
  %bb = ism.broadcast %be : tensor<1x{bn}xf32> -> {acc}
  %sum = arith.addf %acc, %bb : {acc}
  %z = arith.constant dense<0.0> : {acc}
  %res = arith.maximumf %sum, %z : {acc}
"""
    else:
        tail = "  %res = arith.addf %acc, %zero : " + acc + "\n"
    span = lambda d: f"""  %{d}s = arith.constant {2 * pad - dil * ((r if d == 'h' else s) - 1) - 1} : index
  %{d}a = arith.addi %{d.upper()}, %{d}s : index
  %{d}d = arith.divsi %{d}a, %cst : index
  %{d}o = arith.addi %{d}d, %c1 : index
"""
    return f"""ism.kernel @conv2d(%x: memref<?x?x?x?xbf16>, %f: memref<?x?xbf16>,
                   %bias: memref<?xf32>, %y: memref<?x?xbf16>)
    attributes {{num_warps = {warps} : i32}} {{
  %pm = ism.program_id x : index
  %pn = ism.program_id y : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %cbn = arith.constant {bn} : index
  %cs = arith.constant {s} : index
  %m0 = arith.muli %pm, %c128 : index
  %n0 = arith.muli %pn, %cbn : index
  %C = memref.dim %x, %c3 : memref<?x?x?x?xbf16>
  %cb = arith.ceildivui %C, %c64 : index
  %taps = arith.constant {r * s} : index
  %steps = arith.muli %cb, %taps : index
  %zero = arith.constant dense<0.0> : {acc}
  %acc = scf.for %t = %c0 to %steps step %c1 iter_args(%acc = %zero) -> ({acc}) {{
    %tap = arith.divui %t, %cb : index
    %blk = arith.remui %t, %cb : index
    %r = arith.divui %tap, %cs : index
    %s = arith.remui %tap, %cs : index
    %ch = arith.muli %blk, %c64 : index
    %tapc = arith.muli %tap, %C : index
    %kcol = arith.addi %tapc, %ch : index
    %a = ism.im2col %x[%m0, %ch] tap [%r, %s] {attrs} : memref<?x?x?x?xbf16> -> tensor<128x64xbf16>
    %ft = ism.load %f[%n0, %kcol] : memref<?x?xbf16> -> tensor<{bn}x64xbf16>
    %b = ism.trans %ft order = [1, 0] : tensor<{bn}x64xbf16> -> tensor<64x{bn}xbf16>
    %d = ism.dot %a, %b, %acc : tensor<128x64xbf16> * tensor<64x{bn}xbf16> -> {acc}
    scf.yield %d : {acc}
  }}
{tail}  %out = arith.truncf %res : {acc} to tensor<128x{bn}xbf16>
  ism.store %out, %y[%m0, %n0] : tensor<128x{bn}xbf16> -> memref<?x?xbf16>
  ism.return
}}

func.func @main(%x: memref<?x?x?x?xbf16>, %f: memref<?x?xbf16>,
                %bias: memref<?xf32>, %y: memref<?x?xbf16>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %cst = arith.constant {stride} : index
  %N = memref.dim %x, %c0 : memref<?x?x?x?xbf16>
  %H = memref.dim %x, %c1 : memref<?x?x?x?xbf16>
  %W = memref.dim %x, %c2 : memref<?x?x?x?xbf16>
  %C = memref.dim %x, %c3 : memref<?x?x?x?xbf16>
  %K = memref.dim %f, %c0 : memref<?x?xbf16>
  %FC = memref.dim %f, %c1 : memref<?x?xbf16>
  %YM = memref.dim %y, %c0 : memref<?x?xbf16>
  %YK = memref.dim %y, %c1 : memref<?x?xbf16>
{span('h')}{span('w')}  %taps = arith.constant {r * s} : index
  %rsc = arith.muli %C, %taps : index
  %fok = arith.cmpi eq, %FC, %rsc : index
  ism.assert %fok, "the filter is {{0}}x{{1}}; a {r}x{s} filter of C = {{2}} is K x {{3}}"
      (%K, %FC, %C, %rsc) : index, index, index, index
  %hw = arith.muli %ho, %wo : index
  %npq = arith.muli %N, %hw : index
  %ymok = arith.cmpi eq, %YM, %npq : index
  %ykok = arith.cmpi eq, %YK, %K : index
  %yok = arith.andi %ymok, %ykok : i1
  ism.assert %yok, "y is {{0}}x{{1}}; it must be {{2}}x{{3}} (N * P * Q x K)"
      (%YM, %YK, %npq, %K) : index, index, index, index
  %c128 = arith.constant 128 : index
  %cbn = arith.constant {bn} : index
  %gm = arith.ceildivui %npq, %c128 : index
  %gn = arith.ceildivui %K, %cbn : index
  ism.launch @conv2d grid(%gm, %gn) (%x, %f, %bias, %y)
      : (memref<?x?x?x?xbf16>, memref<?x?xbf16>, memref<?xf32>, memref<?x?xbf16>)
  return
}}
"""


def out_size(h, r, stride, pad, dil):
    return (h + 2 * pad - dil * (r - 1) - 1) // stride + 1


def ism_args(n, h, w, c, k, r, s, stride, pad, dil):
    p, q = out_size(h, r, stride, pad, dil), out_size(w, s, stride, pad, dil)
    return [f"bf16:{n}x{h}x{w}x{c}:randn", f"bf16:{k}x{r * s * c}:randn",
            f"f32:{k}:randn", f"bf16:{n * p * q}x{k}:poison"]


# name, program() arguments, (N, H, W, C, K)
CHECKS = [
    ("3x3_pad1", dict(), (2, 9, 7, 64, 96)),
    ("3x3_pad1_c80", dict(), (3, 10, 11, 80, 200)),       # C % 64 != 0
    ("3x3_stride2", dict(stride=2), (2, 15, 13, 128, 128)),
    ("3x3_dil2_pad2", dict(pad=2, dil=2), (2, 12, 12, 64, 64)),
    ("3x3_pad0", dict(pad=0), (2, 9, 9, 64, 128)),
    ("1x1", dict(r=1, s=1, pad=0), (4, 7, 7, 256, 256)),
    ("1x1_stride2", dict(r=1, s=1, pad=0, stride=2), (2, 14, 14, 128, 64)),
    ("5x5_bn64", dict(r=5, s=5, pad=2, bn=64), (2, 8, 8, 64, 64)),
    # C * 2 bytes not a multiple of 16: no tensor map, element copies.
    ("3x3_c12_copies", dict(), (2, 6, 6, 12, 40)),
]


def check(args):
    failed = 0
    for name, kw, (n, h, w, c, k) in CHECKS:
        path = write(args.out, f"conv_{name}", program(**kw))
        g = dict(r=kw.get("r", 3), s=kw.get("s", 3), stride=kw.get("stride", 1),
                 pad=kw.get("pad", 1), dil=kw.get("dil", 1))
        cmd = [args.ism_run, path, "--check"]
        for a in ism_args(n, h, w, c, k, **g):
            cmd += ["--arg", a]
        rc, out, err = run(cmd)
        lines = (out + err).strip().splitlines()
        failed += rc != 0
        print(f"{'PASS' if rc == 0 else 'FAIL'} {name} N={n} H={h} W={w} "
              f"C={c} K={k}: {lines[-1] if lines else ''}", flush=True)
    print(f"conv2d checks: {len(CHECKS) - failed} passed, {failed} failed")
    return 1 if failed else 0


# ResNet-50's convolutions: (name, H=W, C, K, R, stride, pad).
LAYERS = [
    ("conv2 3x3", 56, 64, 64, 3, 1, 1),
    ("conv3 3x3", 28, 128, 128, 3, 1, 1),
    ("conv4 3x3", 14, 256, 256, 3, 1, 1),
    ("conv5 3x3", 7, 512, 512, 3, 1, 1),
    ("conv3 3x3 s2", 56, 128, 128, 3, 2, 1),
    ("conv2 1x1 64->256", 56, 64, 256, 1, 1, 0),
    ("conv3 1x1 512->128", 28, 512, 128, 1, 1, 0),
    ("conv4 1x1 1024->256", 14, 1024, 256, 1, 1, 0),
    ("conv5 1x1 512->2048", 7, 512, 2048, 1, 1, 0),
]
CONFIGS = [dict(bn=128, warps=8), dict(bn=64, warps=8), dict(bn=256, warps=8)]


def bench(args):
    import torch
    from bench import Timer

    timer = Timer(args.warmup, args.reps)
    torch.backends.cudnn.benchmark = True
    rows = []
    for batch in (int(b) for b in args.batch.split(",")):
        for name, hw, c, k, r, stride, pad in LAYERS:
            if args.only and not any(o in name for o in args.only.split(",")):
                continue
            p = out_size(hw, r, stride, pad, 1)
            flops = 2.0 * batch * p * p * k * r * r * c
            x = torch.randn(batch, c, hw, hw, device="cuda",
                            dtype=torch.bfloat16).to(
                memory_format=torch.channels_last)
            w = torch.randn(k, c, r, r, device="cuda",
                            dtype=torch.bfloat16).to(
                memory_format=torch.channels_last)
            t_cudnn = timer(lambda: torch.nn.functional.conv2d(
                x, w, stride=stride, padding=pad))
            best = None
            for cfg in CONFIGS:
                if cfg["bn"] > max(k, 64):
                    continue
                path = write(args.out, f"conv_r{r}s{stride}p{pad}_"
                             f"{cfg['bn']}w{cfg['warps']}",
                             program(r=r, s=r, stride=stride, pad=pad,
                                     epilogue=False, **cfg))
                cmd = [args.ism_run, path, "--bench", "--json",
                       f"--warmup={args.warmup}", f"--reps={args.reps}",
                       f"--flops={flops}"]
                for a in ism_args(batch, hw, hw, c, k, r, r, stride, pad, 1):
                    cmd += ["--arg", a]
                rc, out, err = run(cmd)
                if rc != 0:
                    print(f"ism {cfg} failed on {name}: {err.strip()[-300:]}")
                    continue
                result = json.loads(out)["bench"]
                if best is None or result["median_ms"] < best[0]["median_ms"]:
                    best = (result, cfg)
            if best is None:
                continue
            power = best[0].get("power") or {}
            row = dict(batch=batch, layer=name,
                       ism=flops / best[0]["median_ms"] / 1e9,
                       cudnn=flops / t_cudnn / 1e9,
                       config=f"128x{best[1]['bn']}w{best[1]['warps']}",
                       clock=power.get("sm_clock_mhz"),
                       watts=power.get("power_w"))
            rows.append(row)
            print(f"N={batch} {name}: ism {row['ism']:.0f} TFLOP/s, cuDNN "
                  f"{row['cudnn']:.0f}", flush=True)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "conv2d.json"), "w") as f:
        json.dump(rows, f, indent=1)
    fmt = lambda v: "-" if v is None else f"{v:.0f}"
    print("\n| N | layer | ism TFLOP/s | cuDNN | x cuDNN | ism config "
          "| SM MHz | W |")
    print("| --- " * 8 + "|")
    for r_ in rows:
        print(f"| {r_['batch']} | {r_['layer']} | {r_['ism']:.0f} "
              f"| {r_['cudnn']:.0f} | {r_['ism'] / r_['cudnn']:.2f} "
              f"| {r_['config']} | {fmt(r_['clock'])} | {fmt(r_['watts'])} |")
    if rows:
        ratios = [r_["ism"] / r_["cudnn"] for r_ in rows]
        print(f"\nmedian {statistics.median(ratios):.2f}x cuDNN, lowest "
              f"{min(ratios):.2f}x")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="mode", required=True)
    for mode in ("check", "bench"):
        p = sub.add_parser(mode)
        p.add_argument("--ism-run", default="ism-run")
        p.add_argument("--out", default="/tmp/ism-conv2d")
        if mode == "bench":
            p.add_argument("--batch", default="32,128")
            p.add_argument("--only", default="")
            p.add_argument("--warmup", type=int, default=5)
            p.add_argument("--reps", type=int, default=20)
    args = parser.parse_args()
    return {"check": check, "bench": bench}[args.mode](args)


if __name__ == "__main__":
    sys.exit(main())
