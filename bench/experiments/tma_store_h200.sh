#!/usr/bin/env bash
# The TMA-store epilogue (tma_store = 1) on the H200: bench/gemm.py's tma
# check variants, compute-sanitizer on three of them, the GPU lit subset,
# and the large shapes with and without it (same run, same stages; cuBLAS
# and Triton as baselines). From a checkout on the H200 with the runner
# package in dist/ and OUT set:
#   OUT=/tmp/out bash bench/experiments/tma_store_h200.sh [check] [sanitize] [tests] [bench]
# (bench: DTYPES, SHAPES, TILES and STAGES narrow it)
set -uo pipefail
source "$(dirname "$0")/h200_setup.sh"
steps=${*:-check sanitize tests bench}
for step in $steps; do
  case $step in
  check) gemm_check tma tma_ ;;
  sanitize)
    sanitize_gemm bf16_tma_partial:1000x1000:1000x1000:1000x1000 \
      bf16_tma_pingpong:2000x1000:1000x2100:2000x2100 \
      bf16_tma_ck2:100x1000:1000x1000:100x1000 ;;
  tests) gpu_tests ;;
  bench)
    python3 bench/gemm.py bench --dtypes "${DTYPES:-bf16}" \
      --shapes ${SHAPES:-2048x2048x2048,4096x4096x4096,8192x8192x8192,8192x4096x4096,4096x14336x4096,8192x11008x4096} \
      --tiles ${TILES:-128x256x8,128x256x8t} --stages ${STAGES:-4} \
      --reps 50 --warmup 10 --ism-run "$run" --out "$OUT/bench" \
      > "$OUT/bench-tma.log" 2>&1
    echo "bench rc=$?"; grep -E "^  (bf16|f16) " "$OUT/bench-tma.log"
    sed -n '/^| dtype/,/^$/p' "$OUT/bench-tma.log" ;;
  esac
done
