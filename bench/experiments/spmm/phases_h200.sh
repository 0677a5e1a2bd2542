#!/usr/bin/env bash
# On the H200: where the GEMM + SpMM pair's time goes. For each row count,
# the fused kernel's trace (ism-run --trace) split into the SpMM work done
# beside the GEMM and after it (trace_phases.py), then the SpMM alone and
# the pair in every mode (bench/coschedule.py's run_ism, medians of 50).
#   OUT=... bash bench/experiments/spmm/phases_h200.sh [ROWS...] (default 4096 12288)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
cd "$root"
source bench/experiments/h200_setup.sh
ex=${EXAMPLE:-examples/coschedule_matmul_spmm.mlir}
for rows in ${@:-4096 12288}; do
  python3 - "$run" "$ex" "$rows" "$OUT" <<'PY'
import json, os, subprocess, sys
sys.path.insert(0, "bench")
import coschedule as C
run, ex, rows, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
tmp = f"/tmp/phases-{rows}"
os.makedirs(tmp, exist_ok=True)
a1, _ = C.gemm_part(4096)
a2, _ = C.other_part("matmul_spmm", rows, tmp)
trace = f"{out}/trace-spmm-{rows}.json"
t = subprocess.run([run, ex, f"--trace={trace}"] + [f"--arg={a}" for a in a1 + a2],
                   capture_output=True, text=True)
print(f"== rows {rows}: trace rc={t.returncode} " + (t.stdout + t.stderr).strip()[-300:])
print(subprocess.run([sys.executable, "bench/experiments/spmm/trace_phases.py", trace],
                     capture_output=True, text=True).stdout.strip())
text = open(ex).read()
alone = os.path.join(tmp, "alone.mlir")
open(alone, "w").write(C.variant(text, keep="spmm"))
t2 = C.run_ism(run, alone, a1 + a2, 50, 5, "sequential")["bench"]["median_ms"]
co = C.run_ism(run, ex, a1 + a2, 50, 5, "fused")["coschedule"]
s, st, f = (co[m]["median_ms"] for m in ("sequential", "streams", "fused"))
print(f"rows {rows}: spmm alone {t2:.4f} ms ({1e6 * t2 / rows:.1f} ns/row), seq {s:.4f}, streams {st:.4f}, fused {f:.4f}, fused vs seq {s / f:.3f}x")
PY
done
