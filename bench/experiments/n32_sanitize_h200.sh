#!/usr/bin/env bash
# compute-sanitizer memcheck, racecheck and synccheck on the 32-column B
# tile kernels (64-byte swizzle): TMA, element copies of B, and split-K in
# two passes, at small partial shapes, each under --check. From a checkout
# on the H200 with the runner package in dist/ and OUT set:
#   OUT=/tmp/out bash bench/experiments/n32_sanitize_h200.sh
set -uo pipefail
source "$(dirname "$0")/h200_setup.sh"
sanitize_gemm bf16_64x32_s16:130x256:256x200:130x200 \
  bf16_64x32_copies:70x128:128x201:70x201 \
  bf16_splitk3_64x32_s16_16x1000x4000:16x1000:1000x100:16x100
