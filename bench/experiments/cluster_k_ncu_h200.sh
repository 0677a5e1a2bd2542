#!/usr/bin/env bash
# ncu of the cluster_k = 2 GEMM (64x128 tiles, 8 stages; the pair of CTAs
# splits each program's K steps and adds through distributed shared memory)
# beside the two-pass split-K it replaces (64x128, 8 stages, 2 splits, a
# summing kernel), at 64x4096x4096 and 128x4096x4096 bf16: each kernel's
# duration, SM activity, DRAM and the warps' stall reasons. From a checkout
# on the H200 with the runner package in dist/ and OUT set:
#   OUT=/tmp/out bash bench/experiments/cluster_k_ncu_h200.sh
set -uo pipefail
source "$(dirname "$0")/h200_setup.sh"
python3 - <<'PY'
import sys; sys.path.insert(0, "bench"); import gemm
open("/tmp/ck2.mlir", "w").write(gemm.program(
    dtype="bf16", bm=64, bn=128, warps=4, stages=8, ck=2))
open("/tmp/split2.mlir", "w").write(gemm.splitk_program(
    dtype="bf16", bm=64, bn=128, warps=4, splits=2, stages=8, fixup=False))
PY
metrics=gpu__time_duration.sum,sm__cycles_active.avg,sm__cycles_elapsed.max,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum,launch__grid_size,launch__cluster_dim_x,smsp__average_warp_latency_issue_stalled_barrier.ratio,smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio,smsp__average_warp_latency_issue_stalled_wait.ratio,smsp__average_warp_latency_issue_stalled_sleeping.ratio,smsp__average_warp_latency_issue_stalled_membar.ratio
for m in 64 128; do
  args="--arg bf16:${m}x4096:randn --arg bf16:4096x4096:randn --arg bf16:${m}x4096"
  for f in ck2 split2; do
    echo "== $f ${m}x4096x4096"
    "$run" /tmp/$f.mlir $args --bench --reps 30 --warmup 5 --flops $((2 * m * 4096 * 4096)) 2>&1 | grep -iE "median|TFLOP" | head -2
    ncu --clock-control none --metrics $metrics -c 3 "$run" /tmp/$f.mlir $args 2>&1 |
      grep -E "^\s+(gpu__|sm__|dram__|launch__|smsp__)|^  [a-zA-Z_]" > "$OUT/ncu-$f-$m.txt"
    grep -E "^  [a-zA-Z_]|gpu__time|dram__|sm__cycles_active|membar|barrier|long_score|stalled_wait|sleeping" "$OUT/ncu-$f-$m.txt" | head -24
  done
done
