#!/usr/bin/env bash
# Swap-AB (C^T = B^T A^T on wgmma, the small M as the instruction's N) and
# transposed operands on the H200: the GPU lit subset, bench/gemm.py's swap
# and bt check variants, compute-sanitizer on three of them, and the skinny
# shapes with swapped tiles beside the unswapped 64-row ones (same run,
# cuBLAS and Triton as baselines). From a checkout on the H200 with the
# runner package in dist/ and OUT set:
#   OUT=/tmp/out bash bench/experiments/swap_ab_h200.sh [tests] [check] [sanitize] [bench] [tune]
# (bench: DTYPES, SHAPES, TILES, STAGES and SPLITS narrow it; tune: the
# skinny shapes through ism.autotune from the wheel in dist/, both dtypes)
set -uo pipefail
source "$(dirname "$0")/h200_setup.sh" ${WHEEL:+wheel}
steps=${*:-tests check sanitize bench}
for step in $steps; do
  case $step in
  tests) gpu_tests ;;
  check) gemm_check swap swap,bt_ ;;
  sanitize)
    sanitize_gemm bf16_swap_partial:100x1000:1000x1000:100x1000 \
      bf16_swap_ck2:100x1000:1000x1000:100x1000 \
      bf16_swap_cluster1x2:100x1000:1000x1000:100x1000 ;;
  bench)
    python3 bench/gemm.py bench --skinny --dtypes "${DTYPES:-bf16}" \
      ${SHAPES:+--shapes $SHAPES} \
      --tiles ${TILES:-64x128x4,16x128x4,8x64x4,16x64x4k2,16x128x4k2,8x64x4k2} \
      --stages ${STAGES:-8} --splits ${SPLITS:-2} \
      --reps 30 --warmup 5 --ism-run "$run" --out "$OUT/bench" \
      > "$OUT/bench-swap.log" 2>&1
    echo "bench rc=$?"; sed -n '/^| dtype/,$p' "$OUT/bench-swap.log" ;;
  tune)
    /tmp/v/bin/python bench/gemm.py tune --skinny --dtypes "${DTYPES:-bf16,f16}" \
      --reps 30 --out "$OUT/tune" > "$OUT/tune-swap.log" 2>&1
    echo "tune rc=$?"; sed -n '/^| dtype/,$p' "$OUT/tune-swap.log" ;;
  esac
done
# Per shape: the best swapped (BLOCK_M below 64) and unswapped candidate.
if [ -f "$OUT/bench-swap.log" ]; then
  python3 - "$OUT/bench-swap.log" <<'PY'
import re, sys
best = {}
for line in open(sys.argv[1]):
    m = re.match(r"\s+(\w+) (\d+x\d+x\d+) (\S+): [\d.]+ TFLOP/s \(([\d.]+) us\)", line)
    if m:
        dtype, shape, cfg, us = m.group(1), m.group(2), m.group(3), float(m.group(4))
        kind = "swap" if int(cfg.split("x")[0]) < 64 else "plain"
        key = (dtype, shape, kind)
        if key not in best or us < best[key][0]:
            best[key] = (us, cfg)
print("| dtype | shape | best unswapped us | best swapped us | swapped/unswapped time |")
for (dtype, shape, kind), (us, cfg) in sorted(best.items()):
    if kind == "plain" and (dtype, shape, "swap") in best:
        s_us, s_cfg = best[(dtype, shape, "swap")]
        print(f"| {dtype} | {shape} | {us:.1f} ({cfg}) | {s_us:.1f} ({s_cfg}) | {s_us / us:.2f} |")
PY
fi
