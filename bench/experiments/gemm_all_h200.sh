#!/usr/bin/env bash
# Every GEMM check of a package on the H200: the GPU lit subset, all of
# bench/gemm.py's check variants, compute-sanitizer on three kernels
# (TMA-store ping-pong, a masked store, swap-AB ping-pong), and ncu at
# 2048^3 beside cuBLAS and Triton (gemm_ncu_h200.sh, FULL=0). From a
# checkout on the H200 with the runner package in dist/ and OUT set:
#   OUT=/tmp/out bash bench/experiments/gemm_all_h200.sh
set -uo pipefail
source "$(dirname "$0")/h200_setup.sh"
gpu_tests
python3 bench/gemm.py check --ism-run "$run" --out "$OUT/check" > "$OUT/check-all.log" 2>&1
echo "check rc=$?"; grep -E "^(FAIL|gemm checks)" "$OUT/check-all.log"
sanitize_gemm bf16_tma_pingpong:2000x1000:1000x2100:2000x2100 bf16_masked_store:1000x512:512x1000:1000x1000 bf16_swap_pingpong:300x1000:1000x2000:300x2000
SIZE=2048 FULL=0 bash bench/experiments/gemm_ncu_h200.sh > "$OUT/ncu-2048.txt" 2>&1; echo "ncu rc=$?"
cat "$OUT/ncu-2048.txt" | grep -E "==|gpu__time|hmma|lts__|dram__|sm__throughput|grid_size|registers" | head -40
