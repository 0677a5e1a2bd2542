#!/usr/bin/env python3
"""The two-pass split-K's summing kernel at several tile heights (its CTA
count grows as the tile shrinks), on the skinny shapes it wins: ism-run
--bench of bench/gemm.py's splitk_program (64x128, 8 stages, 2 splits, two
passes) with sum_rows 1, 2, 4, 8, 16, 32, interleaved over two rounds.

    python3 bench/experiments/split_sum_rows.py ISM_RUN OUT_DIR
"""
import json
import os
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import gemm  # noqa: E402

ism_run, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
shapes = [(16, 4096, 4096), (64, 4096, 4096), (128, 4096, 4096),
          (16, 8192, 8192)]
heights = [1, 2, 4, 8, 16, 32]
rows = {}
for rnd in range(2):
    for (m, n, k) in shapes:
        for h in heights:
            path = os.path.join(out, f"split_sum_{h}.mlir")
            with open(path, "w") as f:
                f.write(gemm.splitk_program(bm=64, bn=128, warps=4, splits=2,
                                            stages=8, fixup=False,
                                            sum_rows=h))
            cmd = [ism_run, path, "--bench", "--json", "--warmup=5",
                   "--reps=50"]
            for a in gemm.ism_args("bf16", m, n, k):
                cmd += ["--arg", a]
            p = subprocess.run(cmd, capture_output=True, text=True)
            if p.returncode:
                print(f"{m}x{n}x{k} rows {h}: failed {p.stderr[-200:]}")
                continue
            ms = json.loads(p.stdout)["bench"]["median_ms"]
            rows.setdefault((m, n, k, h), []).append(ms)
print("| M x N x K | " + " | ".join(f"{h} rows" for h in heights) + " |")
print("| --- | " + " | ".join("---" for _ in heights) + " |")
for (m, n, k) in shapes:
    cells = []
    for h in heights:
        t = rows.get((m, n, k, h))
        cells.append(f"{min(t) * 1e3:.1f} us" if t else "--")
    print(f"| {m}x{n}x{k} | " + " | ".join(cells) + " |")
