#!/usr/bin/env bash
# Attention (head dim 128, 128x128 blocks, 8 warps, 2 stages) before and
# after the layout and example changes of e3b221f, on the H200, with the
# runner packages of 86d9857 (dist/ism-runner-86d98571*, "before") and of
# the change (the other package in dist/):
#   OUT=/tmp/out bash bench/experiments/attention_layout_h200.sh [gpu|check|bench]...
# (The "before" package is optional: without it the bench step times
# the new one only.) Further steps: sm80: bench/gemm.py check of the
# mma.sync GEMMs (--chip=sm_80: their cp.async copies); full:
# bench/attention.py from the abi3 wheel in dist/ (ism autotuned against
# Triton and SDPA's backends); pipe: module_text(pipelined=True) against
# the split loops (see the step).
# gpu: the new package's GPU lit subset; check: --check of the one-row
# layout test and of the split module at 1000 and 4097 tokens, causal and
# not; bench: ism-run --bench (median of 50, L2 flushed) at B*H = 128,
# S = 4096 of three modules (attention_d128_before.mlir: as of 86d9857;
# _onemask: base-2 softmax, one masking loop; _split: the example's
# structure) with each package, causal and not; TFLOP/s = 4 B H S^2 D
# (halved for causal).
set -uo pipefail
: "${OUT:?set OUT to a directory for the logs}"
mkdir -p "$OUT" /tmp/r0 /tmp/r
new=$(ls dist/ism-runner-*.tar.xz | grep -v 86d98571 | head -1)
[ -x /tmp/r0/ism-runner/bin/ism-run ] || [ ! -f dist/ism-runner-86d98571.tar.xz ] ||
  tar xJf dist/ism-runner-86d98571.tar.xz -C /tmp/r0
[ -x /tmp/r/ism-runner/bin/ism-run ] || tar xJf "$new" -C /tmp/r
before=/tmp/r0/ism-runner/bin/ism-run
run=/tmp/r/ism-runner/bin/ism-run
export ISM_CACHE_DIR=/tmp/ism-cache
E=bench/experiments
att_args() {  # BH S causal
  echo "--arg bf16:$1x$2x128:randn --arg bf16:$1x$2x128:randn" \
       "--arg bf16:$1x$2x128:randn --arg bf16:$1x$2x128:poison" \
       "--arg f32:$1x$2:poison --arg f32:scalar=0.08838834764831845" \
       "--arg i32:scalar=$3"
}
for step in "${@:-gpu check bench}"; do
  for s in $step; do
    case $s in
      gpu)
        /tmp/r/ism-runner/scripts/gpu-tests.sh > "$OUT/gpu-tests.log" 2>&1
        echo "gpu-tests rc=$?"
        grep -E "^(FAIL|  Passed|  Failed|  Unsupported)" "$OUT/gpu-tests.log" ;;
      check)
        "$run" test/Runner/Inputs/mma_row_tile.mlir --check \
          --arg f32:32x64:randn --arg f32:32x64:poison --arg i32:1x64:poison \
          --arg i32:scalar=5 > "$OUT/check-row-tile.log" 2>&1
        echo "row tile rc=$? $(grep -c ': ok' "$OUT/check-row-tile.log") ok"
        for m in split onemask; do
          for S in 1000 4097; do
            for c in 0 1; do
              "$run" $E/attention_d128_$m.mlir --check $(att_args 3 $S $c) \
                > "$OUT/check-$m-$S-$c.log" 2>&1
              echo "$m S=$S causal=$c rc=$? $(grep 'check: arg' "$OUT/check-$m-$S-$c.log" | tr '\n' ' ' | cut -c1-150)"
            done
          done
        done ;;
      bench)
        printf '%-10s %-8s %-6s %10s %8s\n' module runner causal ms TFLOP/s
        for round in 1 2; do
          for m in before onemask split; do
            for r in before new; do
              [ $m != before ] && [ $r = before ] && continue
              [ $r = before ] && [ ! -x $before ] && continue
              exe=$run; [ $r = before ] && exe=$before
              for c in 0 1; do
                log="$OUT/bench-$m-$r-$c-$round.log"
                "$exe" $E/attention_d128_$m.mlir --bench --reps 50 \
                  $(att_args 128 4096 $c) > "$log" 2>&1
                ms=$(grep -o 'median [0-9.]*' "$log" | head -1 | cut -d' ' -f2)
                tf=$(python3 -c "print(f'{4*128*4096*4096*128/(2 if $c else 1)/($ms*1e-3)/1e12:.0f}')" 2>/dev/null)
                printf '%-10s %-8s %-6s %10s %8s\n' $m $r $c "$ms" "$tf"
              done
            done
          done
        done ;;
      sm80)
        python3 bench/gemm.py check --ism-run "$run" --only sm80_ \
          --out "$OUT/check-sm80" > "$OUT/check-sm80.log" 2>&1
        echo "sm80 check rc=$?"
        grep -E "^(FAIL|gemm checks)" "$OUT/check-sm80.log" ;;
      full)
        if [ ! -x /tmp/v/bin/python ]; then
          python3 -m venv --system-site-packages /tmp/v
          base=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
          site=$(/tmp/v/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
          [ "$base" = "$site" ] || echo "$base" > "$site/_base_site.pth"
          /tmp/v/bin/pip install -q --no-index --no-deps dist/ism-*abi3*.whl
        fi
        /tmp/v/bin/python bench/attention.py --out "$OUT/att" \
          > "$OUT/attention.log" 2>&1
        echo "attention rc=$?"; grep -E "MISMATCH|unavailable" "$OUT/attention.log"
        tail -11 "$OUT/attention.log" ;;
      pipe)
        # module_text(pipelined=True) against the split loops (2 stages):
        # attention_variants.py's check (1000 and 4097 tokens, causal and
        # not) and bench (median of 50 at B*H x S = 128 x 4096 for head
        # dim 128, 256 x 2048 for 64; two interleaved rounds). PIPE_CFGS:
        # head dim, block M, block N, warps, pipelined.
        cfgs="${PIPE_CFGS:-128,128,128,8,0 128,128,128,8,1 128,128,64,8,0 128,128,64,8,1 64,64,64,4,0 64,64,64,4,1 64,128,128,8,0 64,128,128,8,1}"
        variants=()
        for c in $cfgs; do
          IFS=, read -r d bm bn w p <<< "$c"
          variants+=("$d,$bm,$bn,$w,2,$p")
        done
        python3 $E/attention_variants.py --ism-run "$run" --out "$OUT/pipe" \
          --steps check,bench --rounds 2 --reps 50 "${variants[@]}"
        echo "pipe rc=$?" ;;
      *) echo "unknown step '$s' (gpu, check, bench, sm80, full or pipe)" >&2; exit 2 ;;
    esac
  done
done
