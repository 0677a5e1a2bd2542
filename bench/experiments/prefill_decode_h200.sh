#!/usr/bin/env bash
# GPU checks and benchmark of the prefill + decode attention pair
# (examples/coschedule_prefill_decode.mlir). Run from a checkout on the H200
# with the runner package in dist/ and OUT set to a directory for the logs:
#   OUT=/tmp/out bash bench/experiments/prefill_decode_h200.sh [gpu|sanitize|split|trace|bench]...
# gpu: the GPU lit subset; sanitize: compute-sanitizer memcheck, racecheck
# and synccheck on the fused pair at small shapes; split: the fused pair at
# the benchmark's balanced size with other register splits and ring depths
# (coschedule attributes) and the prefill alone at 2 and 3 ring stages,
# timed side by side; trace: ism-run --trace of the fused pair at the
# balanced and 3:1 sizes (per-partition spans, timeline PNG); bench:
# bench/coschedule.py
# --only prefill_decode (balanced and 3:1, against SDPA on two streams).
set -uo pipefail
source "$(dirname "$0")/h200_setup.sh"
ex=examples/coschedule_prefill_decode.mlir
small="--arg bf16:2x1000x128:randn --arg bf16:2x1000x128:randn
  --arg bf16:2x1000x128:randn --arg bf16:2x1000x128:poison
  --arg f32:2x1000:poison --arg f32:scalar=0.088 --arg i32:scalar=1
  --arg bf16:3x128:randn --arg bf16:3x4097x128:randn --arg bf16:3x4097x128:randn
  --arg bf16:3x128:poison --arg f32:3x7:poison --arg f32:3x7:poison
  --arg f32:3x7x128:poison --arg f32:scalar=0.088"
# The benchmark's balanced size: 16 heads x 4096 tokens of prefill beside
# ${ROWS:-160} decode sequences x heads of 16384 keys in 4 splits.
rows=${ROWS:-160}
big="--arg bf16:16x4096x128:randn --arg bf16:16x4096x128:randn
  --arg bf16:16x4096x128:randn --arg bf16:16x4096x128 --arg f32:16x4096
  --arg f32:scalar=0.088 --arg i32:scalar=0
  --arg bf16:${rows}x128:randn --arg bf16:${rows}x16384x128:randn
  --arg bf16:${rows}x16384x128:randn --arg bf16:${rows}x128 --arg f32:${rows}x4
  --arg f32:${rows}x4 --arg f32:${rows}x4x128 --arg f32:scalar=0.088"
for s in ${@:-gpu sanitize split bench}; do
  case $s in
    gpu)
      gpu_tests ;;
    sanitize)
      for tool in memcheck racecheck synccheck; do
        echo "== $tool"
        compute-sanitizer --tool $tool --print-limit 5 "$run" $ex --check $small \
          2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|check: arg|rror" | head -8
      done ;;
    split)
      # attributes on ism.coschedule: the pass's choice, other register
      # splits (prefill warpgroups, decode warpgroup) and ring depths.
      for attrs in "" "registers = array<i32: 160, 160, 184>" \
                   "registers = array<i32: 168, 168, 168>" \
                   "registers = array<i32: 176, 176, 152>" \
                   "registers = array<i32: 184, 184, 136>" \
                   "registers = array<i32: 200, 200, 104>" \
                   "replicas = array<i32: 1, 2>, registers = array<i32: 160, 160, 96, 96>" \
                   "stages = 1 : i32" "stages = 3 : i32"; do
        if [ -n "$attrs" ]; then
          sed "s/ism.coschedule warp_specialized {/ism.coschedule warp_specialized attributes {$attrs} {/" \
            $ex > "$OUT/split.mlir"
        else
          cp $ex "$OUT/split.mlir"
        fi
        printf '%-45s ' "${attrs:-default}"
        "$run" "$OUT/split.mlir" --bench --reps=30 --verbose $big 2>&1 |
          grep -E "^bench:|rror" | tail -1
      done
      for st in 2 3; do
        sed "s/attributes {num_warps = 8 : i32}/attributes {num_warps = 8 : i32, num_stages = $st : i32}/" \
          test/Pipelines/Inputs/attention-d128.mlir > "$OUT/pre$st.mlir"
        printf '%-45s ' "prefill alone, num_stages = $st"
        "$run" "$OUT/pre$st.mlir" --bench --reps=30 \
          --arg bf16:16x4096x128:randn --arg bf16:16x4096x128:randn \
          --arg bf16:16x4096x128:randn --arg bf16:16x4096x128 --arg f32:16x4096 \
          --arg f32:scalar=0.088 --arg i32:scalar=0 2>&1 | grep -E "^bench:|rror" | tail -1
      done ;;
    trace)
      for r in $rows ${ROWS_UNBALANCED:-80}; do
        b=$(echo "$big" | sed "s/${rows}x/${r}x/g")
        "$run" $ex --trace="$OUT/trace-$r.json" $b 2>&1 | grep -iE "active" | head -1
        python3 scripts/plot-trace.py "$OUT/trace-$r.json" -o "$OUT/trace-$r.png" 2>&1 | tail -1
        python3 bench/experiments/trace_spans.py "$OUT/trace-$r.json"
      done ;;
    bench)
      python3 bench/coschedule.py --ism-run "$run" --only prefill_decode \
        --out "$OUT/co" > "$OUT/bench.log" 2>&1
      echo "bench rc=$?"
      tail -4 "$OUT/bench.log" ;;
  esac
done
# Only the logs, tables and pictures come back (the device returns a few files).
rm -rf "$OUT"/co/tmp* "$OUT"/*.mlir "$OUT"/*.json
