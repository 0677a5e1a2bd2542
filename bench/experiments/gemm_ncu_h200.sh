#!/usr/bin/env bash
# ncu of the bf16 GEMM at one square size (default 2048): ism's 128x256
# kernel against cuBLAS's (torch.matmul), the same metrics side by side,
# plus ism's `--set full` details. Caches flushed between replays (ncu's
# default), clocks not locked. From a checkout on the H200 with the runner
# package in dist/ and OUT set:
#   OUT=/tmp/out [SIZE=2048] [FULL=0] bash bench/experiments/gemm_ncu_h200.sh
# (and Triton's tutorial kernel's same metrics; FULL=0 skips ism's full
# set and per-instruction stall samples)
set -uo pipefail
source "$(dirname "$0")/h200_setup.sh"
n=${SIZE:-2048}
python3 - "$n" <<'PY'
import sys; sys.path.insert(0, "bench"); import gemm
open("/tmp/gemm_ncu.mlir", "w").write(gemm.program(dtype="bf16", bm=128, bn=256, warps=8))
PY
metrics=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size,launch__block_size,launch__registers_per_thread
args="--arg bf16:${n}x${n}:randn --arg bf16:${n}x${n}:randn --arg bf16:${n}x${n}"
echo "== ism 128x256"
ncu --clock-control none --metrics $metrics -k regex:'^gemm$' -c 1 \
  "$run" /tmp/gemm_ncu.mlir $args 2>&1 | grep -E "^\s+(gpu__|sm__|dram__|lts__|launch__)|gemm"
echo "== cuBLAS"
ncu --clock-control none --metrics $metrics -k regex:'nvjet|sm90|gemm|cutlass' -s 1 -c 1 \
  python3 -c "
import torch
a = torch.randn($n, $n, dtype=torch.bfloat16, device='cuda')
b = torch.randn($n, $n, dtype=torch.bfloat16, device='cuda')
for _ in range(2): torch.matmul(a, b)
torch.cuda.synchronize()" 2>&1 | grep -E "^\s+(gpu__|sm__|dram__|lts__|launch__)|  [a-zA-Z_0-9]+.*\(\d+, \d+, \d+\)"
echo "== Triton (tutorial matmul, autotuned first; the profiled launch only)"
ncu --clock-control none --metrics $metrics --profile-from-start off -c 1 \
  python3 -c "
import sys, torch
sys.path.insert(0, 'bench')
import triton_matmul
a = torch.randn($n, $n, dtype=torch.bfloat16, device='cuda')
b = torch.randn($n, $n, dtype=torch.bfloat16, device='cuda')
run = triton_matmul.matmul_fn(a, b)
run(); torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStart()
run(); torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStop()" 2>&1 | grep -E "^\s+(gpu__|sm__|dram__|lts__|launch__)|  [a-zA-Z_0-9]+.*\(\d+, \d+, \d+\)"
[ "${FULL:-1}" = 1 ] || exit 0
ncu --clock-control none --set full -k regex:'^gemm$' -c 1 "$run" /tmp/gemm_ncu.mlir $args \
  > "$OUT/ism-gemm-$n-full.txt" 2>&1
echo "full rc=$?"
grep -E "Duration|Warp Cycles Per Issued|Issue Slots Busy|Stall|Achieved Occupancy" "$OUT/ism-gemm-$n-full.txt" | head -20
# Per-instruction warp stall samples of ism's kernel (SASS, CSV), for the
# main loop's idle tensor cycles.
ncu --clock-control none --section SourceCounters --section WarpStateStats \
  --page source --print-source sass --csv -k regex:'^gemm$' -c 1 \
  "$run" /tmp/gemm_ncu.mlir $args > "$OUT/ism-gemm-$n-sass.csv" 2>&1
echo "sass rc=$?"
