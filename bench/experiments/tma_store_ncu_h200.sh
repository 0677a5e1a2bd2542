#!/usr/bin/env bash
# ncu of the bf16 128x256 GEMM with and without the TMA-store epilogue at
# one square size (default 8192, where tma_store measured 8% slower):
# time, tensor-pipe activity, L2 and DRAM traffic, shared memory per CTA.
# Caches flushed between replays, clocks not locked. From a checkout on
# the H200 with the runner package in dist/ and OUT set:
#   OUT=/tmp/out [SIZE=8192] bash bench/experiments/tma_store_ncu_h200.sh
set -uo pipefail
source "$(dirname "$0")/h200_setup.sh"
n=${SIZE:-8192}
python3 - <<'PY'
import sys; sys.path.insert(0, "bench"); import gemm
open("/tmp/direct.mlir", "w").write(gemm.program(bm=128, bn=256, warps=8, stages=4))
open("/tmp/tma.mlir", "w").write(gemm.program(bm=128, bn=256, warps=8, stages=4, tma=True))
PY
metrics=gpu__time_duration.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_write.sum,lts__t_sectors_op_write.sum,launch__shared_mem_per_block_dynamic,launch__registers_per_thread,sm__cycles_elapsed.avg.per_second
args="--arg bf16:${n}x${n}:randn --arg bf16:${n}x${n}:randn --arg bf16:${n}x${n}"
for f in direct tma; do
  echo "== $f"
  ncu --clock-control none --metrics $metrics -k regex:'^gemm$' -c 1 \
    "$run" /tmp/$f.mlir $args 2>&1 | grep -E "^\s+(gpu__|sm__|dram__|lts__|launch__)"
done
