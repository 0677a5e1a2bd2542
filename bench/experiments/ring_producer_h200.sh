#!/usr/bin/env bash
# Attention with its K/V ring filled by a producer warpgroup (mbarriers:
# ring_producer, the default on two warpgroups) against every thread
# filling it with cp.async behind a CTA barrier (ring_producer = false), on
# the H200, with the runner package in dist/:
#   OUT=/tmp/out bash bench/experiments/ring_producer_h200.sh [gpu|check|san|bench]...
# gpu: the package's GPU lit subset; san: the attention cases of
# test/Runner/Inputs/sanitize-cases.txt under compute-sanitizer (memcheck,
# racecheck, synccheck); check and bench: attention_variants.py's steps on
# both variants of each configuration (ism-run --check at 1000 and 4097
# tokens, causal and not, 3 heads; ism-run --bench, median of 50, L2
# flushed, at B*H x S = 128 x 4096 (head dim 128) and 256 x 2048 (64),
# causal and not, two interleaved rounds; TFLOP/s = 4 B H S^2 D, halved
# for causal). CFGS: head dim, block M, block N, warps, stages. (Until
# 9d82dcc this script had loops of its own doing the same, checking only
# the producer modules.)
set -uo pipefail
: "${OUT:?set OUT to a directory for the logs}"
mkdir -p "$OUT" /tmp/r
pkg=$(ls dist/ism-runner-*.tar.xz | head -1)
[ -x /tmp/r/ism-runner/bin/ism-run ] || tar xJf "$pkg" -C /tmp/r
run=/tmp/r/ism-runner/bin/ism-run
export ISM_CACHE_DIR=/tmp/ism-cache
cfgs="${CFGS:-128,128,128,8,2 128,128,64,8,2 128,128,64,8,3 64,128,128,8,2 64,128,64,8,3}"
variants=()
for c in $cfgs; do
  variants+=("$c,0,ring_producer=false" "$c,0")
done
for step in "${@:-gpu check bench}"; do
  for s in $step; do
    case $s in
      gpu)
        /tmp/r/ism-runner/scripts/gpu-tests.sh > "$OUT/gpu-tests.log" 2>&1
        echo "gpu-tests rc=$?"
        grep -E "^(FAIL|  Passed|  Failed|  Unsupported)" "$OUT/gpu-tests.log" ;;
      san)
        ISM_SANITIZE_JOBS=8 ISM_SANITIZE_FILTER=attention \
          bash scripts/gpu-sanitize.sh "$run" memcheck,racecheck,synccheck \
          "$OUT/san" > "$OUT/san.log" 2>&1
        echo "sanitize rc=$?"; tail -n +2 "$OUT/san.log" | grep -E "compute-sanitizer:|FAIL|^[a-z]+check +[a-z]" ;;
      check|bench)
        python3 bench/experiments/attention_variants.py --ism-run "$run" \
          --out "$OUT/$s" --steps "$s" --rounds 2 --reps 50 "${variants[@]}"
        echo "$s rc=$?" ;;
      *) echo "unknown step '$s' (gpu, check, san or bench)" >&2; exit 2 ;;
    esac
  done
done
