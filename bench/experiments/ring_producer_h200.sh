#!/usr/bin/env bash
# Attention with its K/V ring filled by a producer warpgroup (mbarriers:
# ring_producer, the default on two warpgroups) against every thread
# filling it with cp.async behind a CTA barrier (ring_producer = false), on
# the H200, with the runner package in dist/:
#   OUT=/tmp/out bash bench/experiments/ring_producer_h200.sh [gpu|check|san|bench]...
# gpu: the package's GPU lit subset; san: the attention cases of
# test/Runner/Inputs/sanitize-cases.txt under compute-sanitizer (memcheck,
# racecheck, synccheck); check: ism-run --check of each
# producer module at 1000 and 4097 tokens, causal and not (3 heads);
# bench: ism-run --bench (median of 50, L2 flushed) of both variants at
# B*H x S = 128 x 4096 (head dim 128) and 256 x 2048 (64), causal and not,
# two rounds; TFLOP/s = 4 B H S^2 D (halved for causal). CFGS: head dim,
# block M, block N, warps, stages.
set -uo pipefail
: "${OUT:?set OUT to a directory for the logs}"
mkdir -p "$OUT" /tmp/r
pkg=$(ls dist/ism-runner-*.tar.xz | head -1)
[ -x /tmp/r/ism-runner/bin/ism-run ] || tar xJf "$pkg" -C /tmp/r
run=/tmp/r/ism-runner/bin/ism-run
export ISM_CACHE_DIR=/tmp/ism-cache
cfgs="${CFGS:-128,128,128,8,2 128,128,64,8,2 128,128,64,8,3 64,128,128,8,2 64,128,64,8,3}"
for c in $cfgs; do
  IFS=, read -r d bm bn w st <<< "$c"
  for p in 0 1; do
    python3 -c "import sys; sys.path.insert(0, 'bench'); from attention import module_text; print(module_text($d, $bm, $bn, $w, False, $st))" > /tmp/att-$c-$p.mlir
    [ $p = 0 ] && sed -i "s/num_warps = $w : i32/num_warps = $w : i32, ring_producer = false/" /tmp/att-$c-$p.mlir
  done
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
      check)
        for c in $cfgs; do
          IFS=, read -r d bm bn w st <<< "$c"
          for S in 1000 4097; do
            for cz in 0 1; do
              log="$OUT/check-$c-$S-$cz.log"
              "$run" /tmp/att-$c-1.mlir --check --arg bf16:3x${S}x$d:randn \
                --arg bf16:3x${S}x$d:randn --arg bf16:3x${S}x$d:randn \
                --arg bf16:3x${S}x$d:poison --arg f32:3x$S:poison \
                --arg f32:scalar=0.1 --arg i32:scalar=$cz > "$log" 2>&1
              echo "check $c S=$S causal=$cz rc=$? $(grep -c ': ok' "$log") ok $(grep -m1 -i 'error\|mismatch' "$log" | cut -c1-120)"
            done
          done
        done ;;
      bench)
        printf '%-16s %-8s %-6s %10s %8s\n' d,bm,bn,w,st producer causal ms TFLOP/s
        for round in 1 2; do
          for c in $cfgs; do
            IFS=, read -r d bm bn w st <<< "$c"
            bh=128; S=4096; [ "$d" = 64 ] && { bh=256; S=2048; }
            for p in 0 1; do
              for cz in 0 1; do
                log="$OUT/bench-$c-$p-$cz-$round.log"
                "$run" /tmp/att-$c-$p.mlir --bench --reps 50 \
                  --arg bf16:${bh}x${S}x$d:randn --arg bf16:${bh}x${S}x$d:randn \
                  --arg bf16:${bh}x${S}x$d:randn --arg bf16:${bh}x${S}x$d:poison \
                  --arg f32:${bh}x$S:poison --arg f32:scalar=0.1 \
                  --arg i32:scalar=$cz > "$log" 2>&1
                ms=$(grep -o 'median [0-9.]*' "$log" | head -1 | cut -d' ' -f2)
                tf=$(python3 -c "print(f'{4*$bh*$S*$S*$d/(2 if $cz else 1)/($ms*1e-3)/1e12:.0f}')" 2>/dev/null)
                printf '%-16s %-8s %-6s %10s %8s\n' $c $p $cz "$ms" "$tf"
              done
            done
          done
        done ;;
      *) echo "unknown step '$s' (gpu, check, san or bench)" >&2; exit 2 ;;
    esac
  done
done
