#!/usr/bin/env bash
# The co-schedule pairs with a 128x256 GEMM tile (its m64n256 wgmma split
# into two m64n128 beside the other partition). Run from a checkout on the
# H200 with the runner package in dist/ and OUT set:
#   OUT=/tmp/out bash bench/experiments/wide_gemm_h200.sh [gpu|sanitize|split|bench|base]...
# gpu: the package's GPU lit subset, then --check of every GEMM pair made
# 128x256 at partial-tile sizes; sanitize: memcheck and racecheck of the
# 128x256 + RMSNorm pair; split: that pair at its balanced size with other
# GEMM ring depths; bench: bench/coschedule.py --gemm-block 128x256 on the
# three GEMM pairs; base: the same with the 128x128 GEMM (same run).
set -uo pipefail
source "$(dirname "$0")/h200_setup.sh"
wide() {  # the pair example $1 with the 128x256 GEMM -> stdout
  python3 - "$1" <<'PY'
import sys, types
sys.modules.setdefault("torch", types.ModuleType("torch"))
sys.path.insert(0, "bench")
import coschedule
sys.stdout.write(coschedule.wide_gemm(open(sys.argv[1]).read()))
PY
}
mm="--arg bf16:1000x520:randn --arg bf16:520x777:randn --arg bf16:1000x777:poison"
rms="--arg bf16:3000x4000:randn --arg bf16:4000:randn --arg bf16:3000x4000:poison --arg 1e-5"
for s in ${@:-gpu sanitize split bench}; do
  case $s in
    gpu)
      gpu_tests
      python3 test/Runner/Inputs/make_csr.py 1500 700 40 7 /tmp/csr.
      for p in rmsnorm softmax spmm; do
        wide examples/coschedule_matmul_$p.mlir > /tmp/wide_$p.mlir
        case $p in
          rmsnorm) other=$rms ;;
          softmax) other="--arg f16:2999x4000:randn --arg f16:2999x4000:poison" ;;
          spmm) other="--arg npy:/tmp/csr.rowptr.npy --arg npy:/tmp/csr.colind.npy
                       --arg npy:/tmp/csr.values.npy --arg f32:700x300:randn
                       --arg f32:1500x300:poison" ;;
        esac
        for mode in fused sequential streams; do
          printf '%-8s %-10s ' $p $mode
          "$run" /tmp/wide_$p.mlir --check --verbose --coschedule=$mode $mm $other 2>&1 |
            grep -E "check: arg|rror" | tr '\n' ' '
          echo
        done
      done ;;
    sanitize)
      wide examples/coschedule_matmul_rmsnorm.mlir > /tmp/wide_rmsnorm.mlir
      for tool in memcheck racecheck; do
        echo "== $tool"
        compute-sanitizer --tool $tool --print-limit 5 "$run" /tmp/wide_rmsnorm.mlir \
          --check $mm $rms 2>&1 |
          grep -E "ERROR SUMMARY|RACECHECK SUMMARY|check: arg|rror" | head -8
      done ;;
    split)
      wide examples/coschedule_matmul_rmsnorm.mlir > /tmp/wide_rmsnorm.mlir
      rows=${ROWS:-57600}
      big="--arg bf16:4096x4096:randn --arg bf16:4096x4096:randn --arg bf16:4096x4096
        --arg bf16:${rows}x4096:randn --arg bf16:4096:randn --arg bf16:${rows}x4096 --arg 1e-5"
      for attrs in "" "stages = 3 : i32" "stages = 2 : i32" \
                   "stages = 3 : i32, ring_stages = 4 : i32" \
                   "stages = 2 : i32, ring_stages = 6 : i32" \
                   "replicas = array<i32: 1, 2>, registers = array<i32: 152, 152, 40, 64, 64>" \
                   "replicas = array<i32: 1, 2>, registers = array<i32: 160, 160, 40, 56, 56>" \
                   "stages = 3 : i32, replicas = array<i32: 1, 2>, registers = array<i32: 152, 152, 40, 64, 64>"; do
        if [ -n "$attrs" ]; then
          sed "s/ism.coschedule warp_specialized {/ism.coschedule warp_specialized attributes {$attrs} {/" \
            /tmp/wide_rmsnorm.mlir > /tmp/split.mlir
        else
          cp /tmp/wide_rmsnorm.mlir /tmp/split.mlir
        fi
        printf '%-45s ' "${attrs:-default}"
        "$run" /tmp/split.mlir --bench --reps=30 --coschedule=fused $big 2>&1 |
          grep -E "^bench:|rror" | tail -1
      done
      "$run" /tmp/wide_rmsnorm.mlir --trace=/tmp/trace.json $big 2>&1 |
        grep -iE "active" | head -1
      python3 bench/experiments/trace_spans.py /tmp/trace.json ;;
    bench|base)
      block=128x256; [ $s = base ] && block=128x128
      gemm_pairs_bench $block --gemm-block $block ${QUICK:+--quick} ;;
  esac
done
rm -rf "$OUT"/co-*/tmp*
