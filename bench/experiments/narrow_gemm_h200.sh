#!/usr/bin/env bash
# The GEMM pairs with a 128x64 GEMM tile (bench/coschedule.py --gemm-block
# 128x64): the consumers' 64x64 accumulators leave registers for three
# copies of the other kernel (768 threads; the consumers get fewer
# registers than the CTA starts with, so their setmaxnreg is a decrease).
# From a checkout on the H200 with the runner package in dist/ and OUT set:
#   OUT=/tmp/out bash bench/experiments/narrow_gemm_h200.sh [check|sanitize|bench|base]...
# check: n64_check.sh (--check of the pairs: alone, as decided, join =
# false, two copies); sanitize: memcheck and racecheck of the 128x64
# RMSNorm and SpMM pairs at partial tiles; bench: bench/coschedule.py on
# the three GEMM pairs with the 128x64 tile; base: the same with the
# default 128x128 tile (the same-run baseline).
set -uo pipefail
source "$(dirname "$0")/h200_setup.sh"
dir=$(dirname "$0")
for s in ${@:-check sanitize bench base}; do
  case $s in
    check)
      bash "$dir/n64_check.sh" ;;
    sanitize)
      mm="--arg bf16:1000x520:randn --arg bf16:520x777:randn --arg bf16:1000x777:poison"
      rms="--arg bf16:3000x4000:randn --arg bf16:4000:randn --arg bf16:3000x4000:poison --arg 1e-5"
      sp="--arg npy:/tmp/csr.rowptr.npy --arg npy:/tmp/csr.colind.npy --arg npy:/tmp/csr.values.npy --arg f32:700x300:randn --arg f32:1500x300:poison"
      [ -f /tmp/n_spmm.mlir ] || bash "$dir/n64_check.sh" > /dev/null
      for p in rmsnorm spmm; do
        other=$rms; [ $p = spmm ] && other=$sp
        for tool in memcheck racecheck; do
          printf '%-8s %-10s ' $p $tool
          compute-sanitizer --tool $tool --print-limit 5 "$run" \
            /tmp/n_$p.mlir --check $mm $other 2>&1 |
            grep -E "ERROR SUMMARY|RACECHECK SUMMARY|check: arg|rror" |
            sed 's/; max abs.*//' | tr '\n' ' '
          echo
        done
      done ;;
    bench|base)
      block=128x64; [ $s = base ] && block=128x128
      gemm_pairs_bench $block --gemm-block $block ;;
  esac
done
rm -rf "$OUT"/co-*/tmp*
