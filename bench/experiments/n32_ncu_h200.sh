#!/usr/bin/env bash
# ncu of the 64x32-tile GEMM (whole K, 16 stages: 128 CTAs at N = 4096, the
# tile cuBLAS's skinny kernel uses) at 64x4096x4096 bf16: duration, DRAM,
# SM activity and the warp-state breakdown, beside ism's best skinny
# configuration (64x128, 8 stages, split in two, two passes). From a
# checkout on the H200 with the runner package in dist/ and OUT set:
#   OUT=/tmp/out bash bench/experiments/n32_ncu_h200.sh
set -uo pipefail
source "$(dirname "$0")/h200_setup.sh"
python3 - <<'PY'
import sys; sys.path.insert(0, "bench"); import gemm
open("/tmp/n32_whole.mlir", "w").write(gemm.program(
    dtype="bf16", bm=64, bn=32, warps=4, stages=16))
open("/tmp/n128_split.mlir", "w").write(gemm.splitk_program(
    dtype="bf16", bm=64, bn=128, warps=4, splits=2, stages=8, fixup=False))
PY
metrics=gpu__time_duration.sum,sm__cycles_active.avg,sm__cycles_elapsed.max,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum,launch__grid_size,smsp__average_warp_latency_issue_stalled_barrier.ratio,smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio,smsp__average_warp_latency_issue_stalled_wait.ratio,smsp__average_warp_latency_issue_stalled_sleeping.ratio,smsp__average_warp_latency_issue_stalled_math_pipe_throttle.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio
args="--arg bf16:64x4096:randn --arg bf16:4096x4096:randn --arg bf16:64x4096"
for f in n32_whole n128_split; do
  echo "== $f"
  ncu --clock-control none --metrics $metrics -c 3 "$run" /tmp/$f.mlir $args 2>&1 |
    grep -E "^\s+(gpu__|sm__|dram__|lts__|launch__|smsp__)|^  [a-zA-Z_]"
  ncu --clock-control none --section WarpStateStats -c 1 -k regex:gemm \
    "$run" /tmp/$f.mlir $args > "$OUT/ncu-warpstate-$f.txt" 2>&1
  grep -E "Stall|Warp Cycles" "$OUT/ncu-warpstate-$f.txt" | head -8
done
