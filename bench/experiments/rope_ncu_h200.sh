#!/usr/bin/env bash
# ncu of the RoPE forward at one sequence length (default 512 tokens,
# bf16 (seq, 4, 32, 128), where ism trails Triton by 0.1-0.2 us a launch):
# ism's kernel (its default configuration for the shape) and Triton's (8
# warps, or TW) side by side, the same metrics, and each one's `--set full`
# report. From a checkout on the H200 with the abi3 wheel in dist/ and OUT
# set:
#   OUT=/tmp/out [SEQ=512] [BATCH=4] [HEADS=32] [TW=8] \
#     bash bench/experiments/rope_ncu_h200.sh
set -uo pipefail
source "$(dirname "$0")/h200_setup.sh" wheel
seq=${SEQ:-512} batch=${BATCH:-4} heads=${HEADS:-32} tw=${TW:-8}
cat > /tmp/rope_ncu.py <<PY
import sys, torch
sys.path.insert(0, "python/examples"); sys.path.insert(0, "bench")
import rope_autograd as ra, triton_kernels as tk
c, s = ra.rope_tables($seq + 3, 128)
cos, sin = torch.from_numpy(c).cuda(), torch.from_numpy(s).cuda()
t = torch.randn($seq, $batch, $heads, 128, dtype=torch.bfloat16,
                device="cuda")
for _ in range(3):
    ra.rope_ism_(t, cos, sin)
    tk.rope_inplace_triton(t, cos, sin, num_warps=$tw)
torch.cuda.synchronize()
PY
metrics=gpu__time_duration.sum,sm__cycles_active.avg,sm__cycles_active.max,sm__cycles_elapsed.max,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,launch__registers_per_thread,launch__occupancy_limit_registers,launch__grid_size,launch__block_size,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,launch__shared_mem_config_size,launch__shared_mem_per_block_static,launch__shared_mem_per_block_dynamic
/tmp/v/bin/python -c "import ism" || exit 1
ncu --clock-control none --metrics $metrics -k regex:rope -s 2 -c 2 \
  /tmp/v/bin/python /tmp/rope_ncu.py 2>&1 | grep -v "^==PROF" | tee "$OUT/rope-ncu-metrics.txt" |
  grep -E "^\s+(gpu__|sm__|dram__|lts__|launch__|smsp__)|^  [a-zA-Z_]"
ncu --clock-control none --set full -k regex:rope -s 2 -c 2 \
  /tmp/v/bin/python /tmp/rope_ncu.py > "$OUT/rope-ncu-full.txt" 2>&1
echo "full rc=$?"
grep -E "^  [a-zA-Z_]|Duration|Achieved Occupancy|Theoretical Occupancy|Warp Cycles Per Issued|DRAM Throughput|Registers Per|Waves Per SM|Block Limit" "$OUT/rope-ncu-full.txt" | head -40
