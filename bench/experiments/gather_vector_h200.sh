#!/usr/bin/env bash
# Vector gathers (gather-vector.mlir) on the H200: the GPU test subset and
# compute-sanitizer on the gather kernels with the new runner, then the
# CSR SpMM alone and the GEMM + SpMM pair (bench/coschedule.py) with the
# runner before the change (OLD_RUNNER_TAR, unpacked to /tmp/old) and
# after (dist/), in one session:
#   OUT=/tmp/out OLD_RUNNER_TAR=dist/old/ism-runner-X.tar.xz \
#     bash bench/experiments/gather_vector_h200.sh [tests] [sanitize] [bench] [ncu] [variants]
# variants: bench/experiments/spmm/run.py (each SpMM program shape alone and
# in the pair at ROWS rows) with both runners.
# ncu: the fused pair and the SpMM alone at ROWS (default 7936) rows, both
# runners: time, memory and warp-state sections, in $OUT/ncu-TAG-MODE.txt.
set -uo pipefail
source "$(dirname "$0")/h200_setup.sh"
old=/tmp/old/ism-runner/bin/ism-run
if [ ! -x "$old" ]; then
  mkdir -p /tmp/old && tar xJf "${OLD_RUNNER_TAR:?}" -C /tmp/old
fi
nvidia-smi --query-gpu=name --format=csv,noheader
for step in "$@"; do
  case $step in
    tests) gpu_tests ;;
    sanitize)
      ISM_SANITIZE_FILTER='spmm|gather|compact' \
        bash scripts/gpu-sanitize.sh "$run" \
        memcheck,racecheck,synccheck "$OUT/sanitize" > "$OUT/sanitize.log" 2>&1
      echo "sanitize rc=$?"
      tail -3 "$OUT/sanitize.log" ;;
    bench)
      for tag in old new; do
        r=$run
        [ $tag = old ] && r=$old
        python3 bench/coschedule.py --ism-run "$r" --only matmul_spmm \
          --out "$OUT/co-$tag" > "$OUT/spmm-pair-$tag.log" 2>&1
        echo "pair $tag rc=$?"
        sed -n '/^pair /,$p' "$OUT/spmm-pair-$tag.log"
      done ;;
    variants)
      for tag in old new; do
        r=$run
        [ $tag = old ] && r=$old
        python3 bench/experiments/spmm/run.py "$r" "${ROWS:-11008}" \
          "${VARIANTS:-orig,v512x8,p512x8,v256x16,v512x4}" \
          > "$OUT/spmm-variants-$tag.log" 2>&1
        echo "variants $tag rc=$?"
        sed -n '/^variant /,$p' "$OUT/spmm-variants-$tag.log"
      done ;;
    ncu)
      csr=$(spmm_csr_args "${ROWS:-7936}")
      for tag in old new; do
        r=$run
        [ $tag = old ] && r=$old
        ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis \
          --section WarpStateStats --section SchedulerStats --section LaunchStats \
          "$r" examples/coschedule_matmul_spmm.mlir --coschedule=fused \
          --arg bf16:4096x4096:randn --arg bf16:4096x4096:randn --arg bf16:4096x4096 \
          $csr > "$OUT/ncu-$tag-fused.txt" 2>&1
        ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis \
          --section WarpStateStats --section SchedulerStats --section LaunchStats \
          "$r" examples/spmm.mlir $csr > "$OUT/ncu-$tag-spmm.txt" 2>&1
        for m in fused spmm; do
          echo "== ncu $tag $m"
          grep -E "Duration|L1/TEX Hit|L2 Hit|Memory Throughput|Warp Cycles Per Issued|Issued Warp|No Eligible|Registers Per|Achieved Occupancy|Long Scoreboard" \
            "$OUT/ncu-$tag-$m.txt" | head -14
        done
      done ;;
  esac
done
