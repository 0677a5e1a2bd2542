#!/usr/bin/env bash
# Vector gathers (gather-vector.mlir) on the H200: the GPU test subset and
# compute-sanitizer on the gather kernels with the new runner, then the
# CSR SpMM alone and the GEMM + SpMM pair (bench/coschedule.py) with the
# runner before the change (OLD_RUNNER_TAR, unpacked to /tmp/old) and
# after (dist/), in one session:
#   OUT=/tmp/out OLD_RUNNER_TAR=dist/old/ism-runner-X.tar.xz \
#     bash bench/experiments/gather_vector_h200.sh [tests] [sanitize] [bench]
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
        scripts/gpu-sanitize.sh "$run" \
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
  esac
done
