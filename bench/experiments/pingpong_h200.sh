#!/usr/bin/env bash
# GPU checks and benchmark of the ping-pong GEMM (consumer_groups = 2).
# Run from a checkout on the H200 with the runner package in dist/
# (scripts/pack-runner.sh) and OUT set to a directory for the logs:
#   OUT=/tmp/out bash bench/experiments/pingpong_h200.sh [ppcheck] [check] [quick] [llm]
# ppcheck: the ping-pong variants against the float64 reference, 60 s each,
# stopping the script if one fails; check: every GEMM variant (bench/gemm.py
# check); quick (ONLY: the configurations, default 128x256 w8 and ping-pong): 4096^3 and 8192^3, every configuration's TFLOP/s and the
# best against cuBLAS and Triton; llm: the M = 8192 LLM shapes the same
# way.
set -uo pipefail
source "$(dirname "$0")/h200_setup.sh"
for s in ${@:-ppcheck quick}; do
  case $s in
    ppcheck)
      # The ping-pong variants first, 60 s each: stop here if one fails.
      python3 bench/gemm.py check --only pingpong --timeout 60 \
        --ism-run $run --out "$OUT/ppcheck" > "$OUT/ppcheck.log" 2>&1
      rc=$?; echo "ppcheck rc=$rc"; cut -c1-160 "$OUT/ppcheck.log"
      [ $rc = 0 ] || exit 1 ;;
    check)
      python3 bench/gemm.py check --ism-run $run --out "$OUT/check" \
        > "$OUT/check.log" 2>&1
      echo "check rc=$?"; grep -E "FAIL|pingpong|checks:" "$OUT/check.log" | cut -c1-160 ;;
    quick)
      python3 bench/gemm.py bench --quick --dtypes bf16 --ism-run $run \
        --only "${ONLY:-128x256x64_w8,pingpong}" \
        --reps 30 --warmup 5 --out "$OUT/quick" > "$OUT/quick.log" 2>&1
      echo "quick rc=$?"; grep -E "TFLOP/s$" "$OUT/quick.log"; tail -4 "$OUT/quick.log" ;;
    llm)
      python3 bench/gemm.py bench --dtypes bf16 \
        --only "${ONLY:-128x256x64_w8,pingpong}" --shapes 8192x4096x4096,8192x14336x4096,8192x4096x14336,8192x11008x4096 --ism-run $run \
        --reps 20 --warmup 5 --out "$OUT/llm" > "$OUT/llm.log" 2>&1
      echo "llm rc=$?"; tail -8 "$OUT/llm.log" ;;
    *) echo "pingpong_h200.sh: unknown step '$s' (ppcheck, check, quick, llm)" >&2
       exit 2 ;;
  esac
done
