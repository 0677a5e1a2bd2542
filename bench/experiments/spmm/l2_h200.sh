#!/usr/bin/env bash
# On the H200: how much of the L2's throughput the GEMM, the SpMM and the
# fused pair use (ncu, one launch each at ROWS rows, default 12288): the
# SpMM alone and fused with gather_stages 1 (gathers not pipelined) and 2
# (ism-pipeline-gathers' ring), and the GEMM alone. Table on stdout, ncu
# output in $OUT/l2-*.txt.
#   OUT=... bash bench/experiments/spmm/l2_h200.sh
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../.."
source bench/experiments/h200_setup.sh
rows=${ROWS:-12288}
csr=$(spmm_csr_args "$rows")
gemm="--arg bf16:4096x4096:randn --arg bf16:4096x4096:randn --arg bf16:4096x4096"
metrics=gpu__time_duration.sum,lts__t_bytes.sum,lts__t_bytes.sum.per_second,lts__t_sectors.avg.pct_of_peak_sustained_elapsed,lts__t_sector_hit_rate.pct,dram__bytes.sum.per_second,sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active
for s in 1 2; do
  python3 - "$s" <<'PY'
import re, sys
s = sys.argv[1]
t = open("examples/spmm.mlir").read()
t = t.replace("attributes {num_warps = 4 : i32}",
              "attributes {num_warps = 4 : i32, gather_stages = %s : i32}" % s, 1)
open("/tmp/spmm-s%s.mlir" % s, "w").write(t)
PY
done
prof() {
  local tag=$1
  shift
  ncu --clock-control none --metrics $metrics "$run" "$@" > "$OUT/l2-$tag.txt" 2>&1
  echo "== $tag rc=$?"
  grep -E "^  [a-z_]+ |gpu__time|lts__|dram__|sm__" "$OUT/l2-$tag.txt" | grep -v "==PROF==" | head -20
}
prof gemm examples/matmul.mlir $gemm
prof spmm-s1 /tmp/spmm-s1.mlir $csr
prof spmm-s2 /tmp/spmm-s2.mlir $csr
prof fused-s1 bench/experiments/spmm/s1x512x8.mlir --coschedule=fused $gemm $csr
prof fused-s2 bench/experiments/spmm/s2x512x8.mlir --coschedule=fused $gemm $csr
