#!/usr/bin/env bash
# cluster_k = 2 (a K loop split over a cluster's two CTAs, the accumulators
# added through distributed shared memory) on the H200: the GPU lit subset,
# bench/gemm.py's ck2 check variants, compute-sanitizer on three of them,
# and the skinny shapes with the cluster_k candidates beside the split-K
# ones (same run, cuBLAS and Triton as baselines). From a checkout on the
# H200 with the runner package in dist/ and OUT set:
#   OUT=/tmp/out bash bench/experiments/cluster_k_h200.sh [tests] [check] [sanitize] [bench] [ncu]
# (bench: DTYPES, SHAPES, TILES and STAGES narrow it)
set -uo pipefail
source "$(dirname "$0")/h200_setup.sh"
steps=${*:-tests check sanitize bench}
for step in $steps; do
  case $step in
  tests) gpu_tests ;;
  check) gemm_check ck2 ck2,cluster ;;
  sanitize)
    sanitize_gemm bf16_ck2_partial:100x1000:1000x300:100x300 \
      bf16_ck2_one_step:64x64:64x256:64x256 \
      bf16_ck2_many:300x256:256x700:300x700 ;;
  bench)
    python3 bench/gemm.py bench --skinny --dtypes "${DTYPES:-bf16,f16}" \
      ${SHAPES:+--shapes $SHAPES} \
      --tiles ${TILES:-64x128x4,64x128x4k2,64x64x4k2,128x64x4k2,128x128x8k2} \
      --stages ${STAGES:-4,6,8} --splits 2 \
      --split-only --reps 30 --warmup 5 --ism-run "$run" --out "$OUT/bench" \
      > "$OUT/bench-ck2.log" 2>&1
    echo "bench rc=$?"; sed -n '/^| dtype/,$p' "$OUT/bench-ck2.log" ;;
  ncu)
    # Kernel time of the cluster_k GEMM beside the split-K pair at
    # 64x4096x4096 (caches flushed between replays).
    python3 - <<'PY'
import sys; sys.path.insert(0, "bench"); import gemm
open("/tmp/ck2.mlir", "w").write(gemm.program(
    dtype="bf16", bm=64, bn=64, warps=4, stages=8, ck=2))
open("/tmp/split2.mlir", "w").write(gemm.splitk_program(
    dtype="bf16", bm=64, bn=128, warps=4, splits=2, stages=8, fixup=False))
PY
    args="--arg bf16:64x4096:randn --arg bf16:4096x4096:randn --arg bf16:64x4096"
    for f in ck2 split2; do
      ncu --clock-control none --metrics gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size \
        -c 3 "$run" /tmp/$f.mlir $args > "$OUT/ncu-$f.txt" 2>&1
      echo "== $f"; grep -E "^  [a-zA-Z_]|gpu__time|dram__|grid_size" "$OUT/ncu-$f.txt"
    done ;;
  esac
done
