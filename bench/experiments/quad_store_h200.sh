#!/usr/bin/env bash
# The GEMM epilogue's quad-transposed 16-byte stores against the 4-byte
# stores before, on the H200, same session. dist/ holds two runner
# packages: ism-runner-$BASE.tar.xz (before) and one other (after).
#   OUT=/tmp/out BASE=5935721 bash bench/experiments/quad_store_h200.sh [check|sanitize|bench|pair]...
# check: the GPU lit subset and bench/gemm.py check with the new package;
# sanitize: memcheck and racecheck of a 128x256 GEMM whose tiles take the
# new path (and a partial one that does not); bench: bench/gemm.py bench on
# the square and LLM shapes, 128x256 tiles (with and without 2-CTA
# clusters), both packages; pair: the balanced GEMM + RMSNorm pair
# (bench/coschedule.py --quick), both packages.
set -uo pipefail
: "${OUT:?set OUT}" "${BASE:?set BASE to the commit of the baseline package}"
mkdir -p "$OUT"
newpkg=$(ls dist/ism-runner-*.tar.xz | grep -v "$BASE" | head -1)
for d in new base; do
  pkg=$newpkg; [ $d = base ] && pkg=dist/ism-runner-$BASE.tar.xz
  [ -x /tmp/$d/ism-runner/bin/ism-run ] || { mkdir -p /tmp/$d && tar xJf "$pkg" -C /tmp/$d; }
done
export ISM_CACHE_DIR=/tmp/ism-cache
shapes=2048x2048x2048,4096x4096x4096,6144x6144x6144,8192x8192x8192,8192x4096x4096
for s in ${@:-check sanitize bench pair}; do
  case $s in
    check)
      /tmp/new/ism-runner/scripts/gpu-tests.sh > "$OUT/gpu-tests.log" 2>&1
      echo "gpu-tests rc=$?"; grep -E "^(FAIL|  Passed|  Failed)" "$OUT/gpu-tests.log"
      python3 bench/gemm.py check --ism-run /tmp/new/ism-runner/bin/ism-run \
        > "$OUT/gemm-check.log" 2>&1
      echo "gemm check rc=$?"; tail -2 "$OUT/gemm-check.log" ;;
    sanitize)
      python3 - <<'PY'
import sys; sys.path.insert(0, "bench"); import gemm
open("/tmp/q.mlir", "w").write(gemm.program(dtype="bf16", bm=128, bn=256, warps=8))
PY
      for shape in 512x1024x256 500x1000x256; do
        IFS=x read m n k <<< "$shape"
        for tool in memcheck racecheck; do
          printf '%-12s %-10s ' $shape $tool
          compute-sanitizer --tool $tool --print-limit 5 /tmp/new/ism-runner/bin/ism-run \
            /tmp/q.mlir --check --arg bf16:${m}x${k}:randn --arg bf16:${k}x${n}:randn \
            --arg bf16:${m}x${n}:poison 2>&1 |
            grep -E "ERROR SUMMARY|RACECHECK SUMMARY|check: arg|rror" | sed 's/; max abs.*//' | tr '\n' ' '
          echo
        done
      done ;;
    bench)
      for d in base new; do
        python3 bench/gemm.py bench --shapes $shapes --dtypes bf16 --reps 30 \
          --only 128x256x64_w8 --ism-run /tmp/$d/ism-runner/bin/ism-run \
          --out "$OUT/g-$d" > "$OUT/gemm-$d.log" 2>&1
        echo "bench $d rc=$?"; grep -E "^\| bf16" "$OUT/gemm-$d.log"
        grep -E "^  bf16" "$OUT/gemm-$d.log" > "$OUT/gemm-$d-configs.txt"
        rm -f "$OUT/g-$d"/*.mlir
      done ;;
    pair)
      for d in base new; do
        python3 bench/coschedule.py --ism-run /tmp/$d/ism-runner/bin/ism-run --quick \
          --only matmul_rmsnorm --out "$OUT/co-$d" > "$OUT/pair-$d.log" 2>&1
        echo "pair $d rc=$?"; tail -2 "$OUT/pair-$d.log"
        rm -rf "$OUT/co-$d"/tmp*
      done ;;
  esac
done
