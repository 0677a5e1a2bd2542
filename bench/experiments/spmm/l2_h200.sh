#!/usr/bin/env bash
# On the H200: the L2 traffic of the GEMM alone, the CSR SpMM alone and the
# fused pair (ncu, one launch each at ROWS rows, default 12288).
#   OUT=... bash bench/experiments/spmm/l2_h200.sh [throughput] [sources]
# throughput: time, L2 bytes and rate, hit rate, DRAM rate and LSU use,
#   the SpMM alone and fused with gather_stages 1 (gathers not pipelined)
#   and 2 (ism-pipeline-gathers' ring); $OUT/l2-*.txt.
# sources: the L2 sectors by source unit (the SMs' L1/TEX and TMA
#   requests, the fabric between the two L2 halves) and by operation, the
#   SpMM's L1 hits; $OUT/l2src-*.txt, and the L2 metric names this ncu
#   knows in $OUT/lts-metrics.txt.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../.."
source bench/experiments/h200_setup.sh
rows=${ROWS:-12288}
csr=$(spmm_csr_args "$rows")
gemm="--arg bf16:4096x4096:randn --arg bf16:4096x4096:randn --arg bf16:4096x4096"
for s in 1 2; do
  sed "s/num_warps = 4 : i32}/num_warps = 4 : i32, gather_stages = $s : i32}/" \
    examples/spmm.mlir > /tmp/spmm-s$s.mlir
done
# prof TAG PREFIX METRICS ism-run-arguments...
prof() {
  local tag=$1 prefix=$2 metrics=$3
  shift 3
  ncu --clock-control none --metrics "$metrics" "$run" "$@" \
    > "$OUT/$prefix-$tag.txt" 2>&1
  echo "== $tag rc=$?"
  grep -E "gpu__time|lts__|l1tex__|dram__|sm__" "$OUT/$prefix-$tag.txt" |
    grep -v "==PROF==" | head -14
}
steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(throughput sources)
for step in "${steps[@]}"; do
  case $step in
    throughput)
      m=gpu__time_duration.sum,lts__t_bytes.sum,lts__t_bytes.sum.per_second,lts__t_sectors.avg.pct_of_peak_sustained_elapsed,lts__t_sector_hit_rate.pct,dram__bytes.sum.per_second,sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active
      prof gemm l2 $m examples/matmul.mlir $gemm
      prof spmm-s1 l2 $m /tmp/spmm-s1.mlir $csr
      prof spmm-s2 l2 $m /tmp/spmm-s2.mlir $csr
      prof fused-s1 l2 $m bench/experiments/spmm/s1x512x8.mlir --coschedule=fused $gemm $csr
      prof fused-s2 l2 $m bench/experiments/spmm/s2x512x8.mlir --coschedule=fused $gemm $csr ;;
    sources)
      ncu --query-metrics 2>/dev/null | grep -E "^lts__t_(sectors|requests)" \
        > "$OUT/lts-metrics.txt"
      m=gpu__time_duration.sum,lts__t_sectors.sum,lts__t_sectors_srcunit_tex.sum,lts__t_sectors_srcunit_ltcfabric.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,lts__t_sectors_op_atom.sum,lts__t_sectors_op_red.sum,lts__t_sectors_srcunit_tex_lookup_hit.sum,lts__t_sectors_srcunit_tex_lookup_miss.sum
      l1=gpu__time_duration.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum,launch__shared_mem_per_block_dynamic
      prof gemm l2src $m examples/matmul.mlir $gemm
      prof spmm l2src $m examples/spmm.mlir $csr
      prof fused l2src $m examples/coschedule_matmul_spmm.mlir --coschedule=fused $gemm $csr
      prof spmm l1 $l1 examples/spmm.mlir $csr
      prof fused l1 $l1 examples/coschedule_matmul_spmm.mlir --coschedule=fused $gemm $csr ;;
    *) echo "l2_h200.sh: unknown step '$step' (throughput, sources)" >&2; exit 2 ;;
  esac
done
