#!/usr/bin/env bash
# On the H200: where the L2 traffic of the GEMM alone, the SpMM alone and
# the fused pair (ROWS rows, default 12288) comes from: ncu's L2 sectors
# by source unit (the SMs' L1/TEX and TMA requests, the fabric between the
# two L2 partitions) and by operation. Table on stdout, ncu output in
# $OUT/l2src-*.txt, the metric names this ncu knows in $OUT/lts-metrics.txt.
#   OUT=... bash bench/experiments/spmm/l2_sources_h200.sh
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../.."
source bench/experiments/h200_setup.sh
rows=${ROWS:-12288}
csr=$(spmm_csr_args "$rows")
gemm="--arg bf16:4096x4096:randn --arg bf16:4096x4096:randn --arg bf16:4096x4096"
ncu --query-metrics 2>/dev/null | grep -E "^lts__t_(sectors|requests)" > "$OUT/lts-metrics.txt"
metrics=gpu__time_duration.sum,lts__t_sectors.sum,lts__t_sectors_srcunit_tex.sum,lts__t_sectors_srcunit_ltcfabric.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,lts__t_sectors_op_atom.sum,lts__t_sectors_op_red.sum,lts__t_sectors_srcunit_tex_lookup_hit.sum,lts__t_sectors_srcunit_tex_lookup_miss.sum
prof() {
  local tag=$1
  shift
  ncu --clock-control none --metrics $metrics "$run" "$@" > "$OUT/l2src-$tag.txt" 2>&1
  echo "== $tag rc=$?"
  grep -E "gpu__time|lts__" "$OUT/l2src-$tag.txt" | head -12
}
prof gemm examples/matmul.mlir $gemm
prof spmm examples/spmm.mlir $csr
prof fused examples/coschedule_matmul_spmm.mlir --coschedule=fused $gemm $csr
