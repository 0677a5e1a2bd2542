#!/usr/bin/env bash
# On the H200: ncu's per-instruction warp-stall samples (SourceCounters,
# SASS) of the fused GEMM + SpMM kernel and of the SpMM alone at ROWS
# (default 7936) rows, as CSV in $OUT/stalls-{fused,spmm}.csv.xz, for
# stall_summary.py to sum by reason and instruction.
#   OUT=... bash bench/experiments/spmm/stalls_h200.sh
set -uo pipefail
cd "$(dirname "$0")/../../.."
source bench/experiments/h200_setup.sh
rows=${ROWS:-7936}
ex=${EXAMPLE:-examples/coschedule_matmul_spmm.mlir}
csr=$(spmm_csr_args "$rows")
gemm="--arg bf16:4096x4096:randn --arg bf16:4096x4096:randn --arg bf16:4096x4096"
ncu --clock-control none --section WarpStateStats --section SourceCounters \
  --section SpeedOfLight -k regex:matmul__spmm -c 1 -f -o /tmp/fused \
  "$run" $ex $gemm $csr > "$OUT/stalls-fused.log" 2>&1
echo "fused rc=$?"
ncu --clock-control none --section WarpStateStats --section SourceCounters \
  --section SpeedOfLight -k regex:spmm -c 1 -f -o /tmp/spmm \
  "$run" examples/spmm.mlir $csr > "$OUT/stalls-spmm.log" 2>&1
echo "spmm rc=$?"
for k in fused spmm; do
  ncu -i /tmp/$k.ncu-rep --page source --csv --print-source sass 2> "$OUT/stalls-$k.err" |
    xz -9 > "$OUT/stalls-$k.csv.xz"
  echo "$k csv: $(xz -dc "$OUT/stalls-$k.csv.xz" | wc -l) lines"; head -c 600 "$OUT/stalls-$k.err"
  ncu -i /tmp/$k.ncu-rep --page details --section WarpStateStats --section SpeedOfLight 2>&1 |
    grep -E "Duration|Stall|Warp Cycles|Throughput" | head -12
done
