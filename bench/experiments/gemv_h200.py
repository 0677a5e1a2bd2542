#!/usr/bin/env python3
"""Decode GEMMs (M = 1 to 16) on the CUDA cores (bench/gemm.py's
gemv_program) against ism's tensor-core candidates for those shapes and
cuBLAS (torch.matmul), same run, medians, L2 flushed.

    python3 bench/experiments/gemv_h200.py ISM_RUN OUT

1. --check of the GEMV on odd shapes (M 1-5, N and K not multiples of the
   tile, K odd: unaligned rows of A);
2. a sweep of GEMV tiles (BLOCK_K x BLOCK_N, warps, K splits) at bf16
   M = 1, N = K = 4096 and 8192;
3. the three best of the sweep, ism's tensor-core candidates for small M
   and torch.matmul at M = 1, 2, 4, 8, 16 (N = K = 4096 and 8192), bf16
   and f16 (M = 1, 4, 16). Prints a table; details in OUT/gemv.log and OUT/gemv.json."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                ".."))
import gemm  # noqa: E402

ISM_RUN, OUT = sys.argv[1], sys.argv[2]
os.makedirs(OUT, exist_ok=True)
log = open(os.path.join(OUT, "gemv.log"), "w")


def say(*a):
    print(*a, flush=True)
    print(*a, file=log, flush=True)


def ism(text, name, m, n, k, dtype, mode):
    path = gemm.write(os.path.join(OUT, "mlir"), name, text)
    cmd = [ISM_RUN, path] + (["--check"] if mode == "check" else
                             ["--bench", "--json", "--reps=50", "--warmup=10",
                              f"--flops={2.0 * m * n * k}"])
    cmd += ["--arg", f"{dtype}:{m}x{k}:randn", "--arg",
            f"{dtype}:{k}x{n}:randn", "--arg", f"{dtype}:{m}x{n}:poison"]
    rc, out, err = gemm.run(cmd)
    if rc != 0:
        say(f"FAIL {name} {m}x{n}x{k}: {(out + err).strip()[-300:]}")
        return None
    if mode == "check":
        return (out + err).strip().splitlines()[-1]
    return json.loads(out)["bench"]["median_ms"]


def gname(c):
    return f"gemv_k{c['bk']}_n{c['bn']}_w{c['warps']}_s{c['splits']}"


sweep = [dict(bk=bk, bn=bn, warps=w, splits=s)
         for bk in (64, 128, 256) for bn in (64, 128, 256) for w in (4, 8)
         for s in (4, 8, 16) if 16 <= bk * bn // (32 * w) <= 64]

# 1. correctness on odd shapes
fails = 0
for c in (sweep[0], dict(bk=128, bn=64, warps=4, splits=8),
          dict(bk=256, bn=64, warps=8, splits=16)):
    for (m, n, k) in ((1, 1000, 4000), (3, 1000, 4001), (5, 4097, 999)):
        for dtype in ("bf16", "f16"):
            r = ism(gemm.gemv_program(dtype=dtype, **c), f"chk_{gname(c)}",
                    m, n, k, dtype, "check")
            fails += r is None
            say(f"check {dtype} {gname(c)} {m}x{n}x{k}: {r}")
say(f"gemv checks: {fails} failed")

# 2. sweep
times = {}
for c in sweep:
    for nk in (4096, 8192):
        ms = ism(gemm.gemv_program(**c), gname(c), 1, nk, nk, "bf16", "bench")
        if ms is not None:
            times.setdefault(gname(c), {})[nk] = ms
            say(f"sweep {gname(c)} 1x{nk}x{nk}: {ms * 1e3:.1f} us, "
                f"{1 * nk * nk * 2 / ms / 1e6:.0f} GB/s of B")
ranked = sorted((c for c in sweep if len(times.get(gname(c), {})) == 2),
                key=lambda c: sum(times[gname(c)].values()))
best = ranked[:3]
say("best:", [gname(c) for c in best])

# 3. against the tensor-core candidates and cuBLAS
import torch  # noqa: E402
from bench import Timer  # noqa: E402
timer = Timer(10, 50)
tc = [("tc_64x128_s8_split2_2pass", dict(bm=64, bn=128, warps=4, stages=8,
                                          splits=2, fixup=False)),
      ("tc_64x128_s8_split4", dict(bm=64, bn=128, warps=4, stages=8,
                                   splits=4)),
      ("tc_64x128_s8_k2", dict(bm=64, bn=128, warps=4, stages=8, ck=2)),
      ("tc_16x64_s8_k2", dict(bm=16, bn=64, warps=4, stages=8, ck=2)),
      ("tc_8x64_s8_k2", dict(bm=8, bn=64, warps=4, stages=8, ck=2))]
rows = []
for dtype in ("bf16", "f16"):
    tdt = torch.bfloat16 if dtype == "bf16" else torch.float16
    for nk in (4096, 8192):
        for m in (1, 4, 16):
            flops = 2.0 * m * nk * nk
            a = torch.randn(m, nk, dtype=tdt, device="cuda")
            b = torch.randn(nk, nk, dtype=tdt, device="cuda")
            t_torch = timer(lambda: torch.matmul(a, b))
            g = {}
            for c in best:
                ms = ism(gemm.gemv_program(dtype=dtype, **c),
                         f"{dtype}_{gname(c)}", m, nk, nk, dtype, "bench")
                if ms is not None:
                    g[gname(c)] = ms
            t = {}
            for name, kw in tc:
                ms = ism(gemm.candidate_program(dtype=dtype, **kw),
                         f"{dtype}_{name}", m, nk, nk, dtype, "bench")
                if ms is not None:
                    t[name] = ms
            gb = min(g.items(), key=lambda kv: kv[1])
            tb = min(t.items(), key=lambda kv: kv[1])
            row = dict(dtype=dtype, shape=f"{m}x{nk}x{nk}", torch_us=t_torch * 1e3,
                       gemv_us=gb[1] * 1e3, gemv=gb[0], tc_us=tb[1] * 1e3,
                       tc=tb[0], all_gemv=g, all_tc=t)
            rows.append(row)
            say(f"{dtype} {row['shape']}: gemv {row['gemv_us']:.1f} us ({gb[0]}), "
                f"tensor cores {row['tc_us']:.1f} ({tb[0]}), cuBLAS "
                f"{row['torch_us']:.1f}")
json.dump(dict(sweep=times, rows=rows), open(os.path.join(OUT, "gemv.json"), "w"),
          indent=1)
say()
say("| dtype | M x N x K | GEMV us | tensor-core best us | cuBLAS us | "
    "GEMV x cuBLAS | TC x cuBLAS | GEMV config | TC config |")
say("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for r in rows:
    say(f"| {r['dtype']} | {r['shape']} | {r['gemv_us']:.1f} | {r['tc_us']:.1f} "
        f"| {r['torch_us']:.1f} | {r['torch_us'] / r['gemv_us']:.2f} "
        f"| {r['torch_us'] / r['tc_us']:.2f} | {r['gemv']} | {r['tc']} |")
