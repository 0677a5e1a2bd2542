#!/usr/bin/env bash
# The GEMM pairs with the GEMM's consumer warpgroups joining the other
# launch's copies after their last tile (#ism.partition `after`), against
# the same pairs with `join = false`, in one run. From a checkout on the
# H200 with the runner package in dist/ and OUT set:
#   OUT=/tmp/out bash bench/experiments/join_h200.sh [gpu|sanitize|trace|bench]...
# gpu: the package's GPU lit subset; sanitize: memcheck and racecheck of
# the three GEMM pairs at partial-tile sizes (the joined copies reuse the
# GEMM's ring); trace: per-partition spans of the balanced GEMM + RMSNorm
# pair, joined and not; bench: bench/coschedule.py on the GEMM pairs,
# joined (the default) and with --attrs 'join = false'.
set -uo pipefail
source "$(dirname "$0")/h200_setup.sh"
ex=examples
mm="--arg bf16:1000x512:randn --arg bf16:512x777:randn --arg bf16:1000x777:poison"
python3 test/Runner/Inputs/make_csr.py 1500 700 40 7 /tmp/csr.
for s in ${@:-gpu sanitize trace bench}; do
  case $s in
    gpu)
      gpu_tests ;;
    sanitize)
      for p in rmsnorm softmax spmm; do
        case $p in
          rmsnorm) other="--arg bf16:3000x4000:randn --arg bf16:4000:randn
                          --arg bf16:3000x4000:poison --arg 1e-5" ;;
          softmax) other="--arg f16:2999x4000:randn --arg f16:2999x4000:poison" ;;
          spmm) other="--arg npy:/tmp/csr.rowptr.npy --arg npy:/tmp/csr.colind.npy
                       --arg npy:/tmp/csr.values.npy --arg f32:700x300:randn
                       --arg f32:1500x300:poison" ;;
        esac
        for tool in memcheck racecheck; do
          printf '%-8s %-10s ' $p $tool
          compute-sanitizer --tool $tool --print-limit 5 "$run" \
            $ex/coschedule_matmul_$p.mlir --check $mm $other 2>&1 |
            grep -E "ERROR SUMMARY|RACECHECK SUMMARY|check: arg|rror" |
            sed 's/; max abs.*//' | tr '\n' ' '
          echo
        done
      done ;;
    trace)
      rows=57600
      big="--arg bf16:4096x4096:randn --arg bf16:4096x4096:randn --arg bf16:4096x4096
        --arg bf16:${rows}x4096:randn --arg bf16:4096:randn --arg bf16:${rows}x4096 --arg 1e-5"
      for attrs in "" "join = false"; do
        if [ -n "$attrs" ]; then
          sed "s/ism.coschedule warp_specialized {/ism.coschedule warp_specialized attributes {$attrs} {/" \
            $ex/coschedule_matmul_rmsnorm.mlir > /tmp/t.mlir
        else
          cp $ex/coschedule_matmul_rmsnorm.mlir /tmp/t.mlir
        fi
        echo "== ${attrs:-joined}"
        "$run" /tmp/t.mlir --bench --reps=30 --coschedule=fused $big 2>&1 |
          grep -E "^bench:|rror" | tail -1
        "$run" /tmp/t.mlir --trace=/tmp/trace.json $big 2>&1 | grep -iE "active" | head -1
        python3 bench/experiments/trace_spans.py /tmp/trace.json
        [ -z "$attrs" ] && python3 scripts/plot-trace.py /tmp/trace.json \
          -o "$OUT/trace-join.png" 2>&1 | tail -1
      done ;;
    bench)
      for attrs in "" "join = false"; do
        tag=${attrs:+nojoin}; tag=${tag:-join}
        gemm_pairs_bench $tag ${attrs:+--attrs "$attrs"}
      done ;;
  esac
done
rm -rf "$OUT"/co-*/tmp*
