#!/usr/bin/env bash
# ncu of the GEMM + CSR SpMM pair at the benchmark's balanced size (GEMM
# bf16 4096^3, 8704 SpMM rows of 4096 columns with 32-96 nonzeros, B
# 4096x512 f32): the fused kernel and the two kernels run one after the
# other, side by side. Run on the H200 with the runner package in dist/:
#   OUT=/tmp/out bash bench/experiments/spmm_ncu_h200.sh
set -uo pipefail
source "$(dirname "$0")/h200_setup.sh"
rows=${ROWS:-8704}
python3 - "$rows" <<'PY'
import sys, types
sys.modules.setdefault("torch", types.ModuleType("torch"))
sys.path.insert(0, "bench")
import coschedule
rows = int(sys.argv[1])
paths, _ = coschedule.csr(rows, 4096, 64, rows, "/tmp")
print(" ".join(paths))
PY
args="--arg bf16:4096x4096:randn --arg bf16:4096x4096:randn --arg bf16:4096x4096
  --arg npy:/tmp/rowptr_${rows}_${rows}.npy --arg npy:/tmp/colind_${rows}_${rows}.npy
  --arg npy:/tmp/values_${rows}_${rows}.npy --arg f32:4096x512:randn --arg f32:${rows}x512"
metrics=gpu__time_duration.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,sm__warps_active.avg.pct_of_peak_sustained_active
for mode in ${NCU_MODES-fused sequential}; do
  echo "== ncu $mode"
  ncu --clock-control none --metrics $metrics "$run" examples/coschedule_matmul_spmm.mlir \
    --coschedule=$mode $args 2>&1 | grep -E "^  [a-z_]+|matmul|spmm|gpu__time|pct|sum" | head -30
done
# The GEMM ring's depth (stages) against the L1 left to the SpMM's gathers:
# the fused pair timed at each.
for attrs in "" "stages = 3 : i32" "stages = 2 : i32"; do
  if [ -n "$attrs" ]; then
    sed "s/ism.coschedule warp_specialized {/ism.coschedule warp_specialized attributes {$attrs} {/" \
      examples/coschedule_matmul_spmm.mlir > /tmp/st.mlir
  else
    cp examples/coschedule_matmul_spmm.mlir /tmp/st.mlir
  fi
  printf '%-20s ' "${attrs:-default}"
  "$run" /tmp/st.mlir --bench --reps=30 --coschedule=fused --verbose $args 2>&1 |
    grep -E "^bench:|rror" | tail -1
  "$run" /tmp/st.mlir --coschedule=fused --verbose $args 2>&1 | grep -o "[0-9]* B shared memory" | head -1
done
