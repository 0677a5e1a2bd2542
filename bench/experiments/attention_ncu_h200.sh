#!/usr/bin/env bash
# ncu of the flash-attention forward (head dim 128, B*H = 128, S = 4096,
# not causal): ism's example program at 128x128 blocks, 8 warps, 2 stages
# (attention_d128_split.mlir) against Triton's fused-attention kernel
# (bench/triton_kernels.py, autotuned first; the profiled launch only),
# the same metrics side by side: time, clock, tensor pipe, issue slots,
# instructions, registers, achieved occupancy, L2 and DRAM. Caches
# flushed between replays (ncu's default), clocks not locked. From a
# checkout on the H200 with the runner package in dist/ and OUT set:
#   OUT=/tmp/out bash bench/experiments/attention_ncu_h200.sh [WHAT...]
# WHAT: split (the module above), pipelined (bench/attention.py's
# module_text with the tuner's choice: 128x128, 8 warps, 2 stages, the
# next block's S before this block's P V), triton, cudnn (SDPA's cuDNN
# backend, the kernels of one call); by default split and triton.
set -uo pipefail
source "$(dirname "$0")/h200_setup.sh"
metrics=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active,lts__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__registers_per_thread,launch__grid_size,launch__block_size,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio
pat="^\s+(gpu__|sm__|smsp__|dram__|lts__|launch__)"
a="--arg bf16:128x4096x128:randn"
ism() {
  ncu --clock-control none --metrics $metrics -k regex:'^attention$' -c 1 \
    "$run" "$1" $a $a $a $a \
    --arg f32:128x4096:poison --arg f32:scalar=0.08838834764831845 \
    --arg i32:scalar=0 2>&1 | grep -E "$pat"
}
for what in ${@:-split triton}; do
case $what in
split)
echo "== ism (128x128, 8 warps, 2 stages)"
ism bench/experiments/attention_d128_split.mlir ;;
pipelined)
echo "== ism pipelined (128x128, 8 warps, 2 stages)"
python3 -c "
import sys; sys.path.insert(0, 'bench')
from attention import module_text
print(module_text(128, 128, 128, 8, stages=2, pipelined=True))" > /tmp/pipelined.mlir
ism /tmp/pipelined.mlir ;;
cudnn)
echo "== cuDNN (SDPA's cuDNN backend)"
ncu --clock-control none --metrics $metrics --profile-from-start off \
  python3 -c "
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
q, k, v = (torch.randn(1, 128, 4096, 128, dtype=torch.bfloat16, device='cuda') for _ in range(3))
with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
    for _ in range(2): F.scaled_dot_product_attention(q, k, v)
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    F.scaled_dot_product_attention(q, k, v)
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()" 2>&1 | grep -E "$pat|^  [a-zA-Z_0-9]+.*\(" ;;
triton)
echo "== Triton (fused attention, autotuned)"
ncu --clock-control none --metrics $metrics --profile-from-start off -c 1 \
  python3 -c "
import sys, torch
sys.path.insert(0, 'bench')
import triton_kernels as tk
q, k, v = (torch.randn(128, 4096, 128, dtype=torch.bfloat16, device='cuda') for _ in range(3))
o = torch.empty_like(q); lse = torch.empty(128, 4096, device='cuda')
for _ in range(2): tk.attention_triton(q, k, v, o, lse, 0.08838834764831845, False)
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStart()
tk.attention_triton(q, k, v, o, lse, 0.08838834764831845, False)
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStop()" 2>&1 | grep -E "$pat|Config|BLOCK" ;;
*) echo "unknown '$what' (split, pipelined, triton or cudnn)" >&2; exit 2 ;;
esac
done
