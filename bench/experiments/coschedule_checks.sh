#!/usr/bin/env bash
# On the H200: the trace of the balanced GEMM + RMSNorm pair (per-SM
# timeline and per-partition spans), compute-sanitizer memcheck, racecheck
# and synccheck on every fused example at small shapes, and ncu's
# throughput figures for the fused kernel beside each kernel alone.
#   bench/experiments/coschedule_checks.sh ISM_RUN OUT_DIR [trace|sanitize|ncu]...
set -uo pipefail
run=$1; out=$2; shift 2
root=$(cd "$(dirname "$0")/../.." && pwd)
ex=$root/examples
mkdir -p "$out"
gemm="--arg bf16:4096x4096:randn --arg bf16:4096x4096:randn --arg bf16:4096x4096"
small="--arg bf16:1000x512:randn --arg bf16:512x777:randn --arg bf16:1000x777:poison"
for what in "$@"; do
case $what in
trace)
  "$run" "$ex/coschedule_matmul_rmsnorm.mlir" --trace="$out/trace.json" $gemm \
    --arg bf16:57600x4096:randn --arg bf16:4096:randn --arg bf16:57600x4096 \
    --arg 1e-5
  python3 "$root/scripts/plot-trace.py" "$out/trace.json" -o "$out/trace.png"
  python3 "$root/bench/experiments/trace_spans.py" "$out/trace.json"
  ;;
sanitize)
  for tool in memcheck racecheck synccheck; do
    for f in coschedule_matmul_rmsnorm coschedule_matmul_softmax; do
      case $f in
        *rmsnorm) args="$small --arg bf16:300x4000:randn --arg bf16:4000:randn --arg bf16:300x4000:poison --arg 1e-5" ;;
        *softmax) args="$small --arg f16:299x4000:randn --arg f16:299x4000:poison" ;;
      esac
      echo "== $tool $f"
      compute-sanitizer --tool $tool --print-limit 5 "$run" "$ex/$f.mlir" --check $args \
        2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|check: arg|Error|error" | head -6
    done
    python3 "$root/test/Runner/Inputs/make_csr.py" 500 700 40 7 "$out/csr."
    echo "== $tool coschedule_matmul_spmm"
    compute-sanitizer --tool $tool --print-limit 5 "$run" "$ex/coschedule_matmul_spmm.mlir" --check $small \
      --arg npy:$out/csr.rowptr.npy --arg npy:$out/csr.colind.npy --arg npy:$out/csr.values.npy \
      --arg f32:700x300:randn --arg f32:500x300:poison \
      2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|check: arg|Error|error" | head -6
    echo "== $tool coschedule_rmsnorm_softmax (fallback = false)"
    sed 's/ism.coschedule warp_specialized {/ism.coschedule warp_specialized attributes {fallback = false} {/' \
      "$ex/coschedule_rmsnorm_softmax.mlir" > "$out/ctl.mlir"
    compute-sanitizer --tool $tool --print-limit 5 "$run" "$out/ctl.mlir" --check \
      --arg bf16:300x4000:randn --arg bf16:4000:randn --arg bf16:300x4000:poison --arg 1e-5 \
      --arg f16:299x4000:randn --arg f16:299x4000:poison \
      2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|check: arg|Error|error" | head -6
  done
  ;;
ncu)
  metrics=gpu__time_duration.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed
  for mode in fused sequential; do
    echo "== ncu $mode"
    ncu --clock-control none --metrics $metrics "$run" "$ex/coschedule_matmul_rmsnorm.mlir" \
      --coschedule=$mode $gemm --arg bf16:57600x4096:randn --arg bf16:4096:randn \
      --arg bf16:57600x4096 --arg 1e-5 2>&1 | grep -E "^  [a-z_]+|matmul|rmsnorm|gpu__time|pct" | head -30
  done
  ;;
esac
done
