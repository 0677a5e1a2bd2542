#!/usr/bin/env bash
# Issue 10's large shapes with the 128x256 configurations (with and without
# 2-CTA clusters): the squares 2048-8192 and the LLM shapes (M = 4096 and
# 8192, N x K = 4096x4096, 14336x4096, 4096x14336, 11008x4096), bf16 and
# f16, against cuBLAS and Triton in one run. From a checkout on the H200
# with the runner package in dist/ and OUT set:
#   OUT=/tmp/out bash bench/experiments/gemm_targets_h200.sh
set -uo pipefail
source "$(dirname "$0")/h200_setup.sh"
shapes=2048x2048x2048,4096x4096x4096,6144x6144x6144,8192x8192x8192
for m in 4096 8192; do
  for nk in 4096x4096 14336x4096 4096x14336 11008x4096; do
    shapes+=",${m}x${nk}"
  done
done
python3 bench/gemm.py bench --shapes "$shapes" --dtypes bf16,f16 --reps 30 \
  --only 128x256x64_w8 --ism-run "$run" --out "$OUT/g" > "$OUT/gemm-targets.log" 2>&1
echo "bench rc=$?"
grep -E "^\| (bf16|f16)" "$OUT/gemm-targets.log"
rm -f "$OUT/g"/*.mlir
