#!/usr/bin/env bash
# The GEMM issue's benchmark on the H200: bench/gemm.py tune (ism.autotune
# from the abi3 wheel, against cuBLAS and Triton's tutorial and persistent
# TMA matmuls, interleaved rounds) on ISSUE_SHAPES, one data type per
# invocation; `summary` merges the data types' runs (table, targets, CSV,
# chart). From a checkout on the H200 with the runner package and the wheel
# in dist/ and OUT set:
#   OUT=/tmp/out bash bench/experiments/gemm_issue_h200.sh bf16 [f16] [summary]
set -uo pipefail
source "$(dirname "$0")/h200_setup.sh" wheel
for step in "$@"; do
  if [ "$step" = summary ]; then
    python3 bench/gemm.py summary --json "$OUT"/tune-*/gemm-tune.json \
      --out "$OUT/summary" > "$OUT/summary.log" 2>&1
    echo "summary rc=$?"
    grep -E "^(bf16|f16) " "$OUT/summary.log"
    continue
  fi
  start=$SECONDS
  /tmp/v/bin/python bench/gemm.py tune --dtypes "$step" --reps 30 \
    --out "$OUT/tune-$step" > "$OUT/tune-$step.log" 2>&1
  echo "tune $step rc=$? in $((SECONDS - start)) s"
  grep -E "^$step (large|skinny)" "$OUT/tune-$step.log"
  rm -rf "$OUT/tune-$step/autotune-cache"
done
