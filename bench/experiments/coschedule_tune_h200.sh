#!/usr/bin/env bash
# What a bare `ism-run --tune` picks for the three GEMM pairs at their
# balanced sizes (GEMM 4096^3; the latest bench/coschedule.py sizes): the
# default set times every mode (fused, sequential, streams) with the
# kernels' attributes. From a checkout on the H200 with the runner package
# in dist/ and OUT set:
#   OUT=/tmp/out bash bench/experiments/coschedule_tune_h200.sh
set -uo pipefail
source "$(dirname "$0")/h200_setup.sh"
gemm="--arg bf16:4096x4096:randn --arg bf16:4096x4096:randn --arg bf16:4096x4096"
tune_pair() {
  local name=$1 file=$2
  shift 2
  local start=$SECONDS
  # shellcheck disable=SC2086
  "$run" "examples/$file" --tune --no-cache --json --bench --reps=50 $gemm "$@" \
    > "$OUT/tune-$name.json" 2> "$OUT/tune-$name.err"
  echo "$name rc=$? in $((SECONDS - start)) s"
  python3 - "$OUT/tune-$name.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
t = r["tune"]
best = {}
for c in t["candidates"]:
    if "median_ms" not in c:
        continue
    mode = [w for w in c["config"].split() if w.startswith("coschedule=")][0]
    if mode not in best or c["median_ms"] < best[mode][0]:
        best[mode] = (c["median_ms"], c["config"])
pruned = sum("pruned" in c for c in t["candidates"])
print(f"  picks {t['best']} ({t['best_ms']:.4f} ms; {len(t['candidates'])} "
      f"candidates, {pruned} pruned, {t['seconds']:.1f} s); the run: "
      f"{r['bench']['median_ms']:.4f} ms")
for mode, (ms, cfg) in sorted(best.items(), key=lambda kv: kv[1][0]):
    print(f"  best {mode}: {ms:.4f} ms ({cfg})")
PY
}
tune_pair rmsnorm coschedule_matmul_rmsnorm.mlir --arg bf16:46336x4096:randn \
  --arg bf16:4096:randn --arg bf16:46336x4096 --arg 1e-5
tune_pair softmax coschedule_matmul_softmax.mlir --arg f16:46592x4096:randn \
  --arg f16:46592x4096
# shellcheck disable=SC2046
tune_pair spmm coschedule_matmul_spmm.mlir $(spmm_csr_args 12544)
