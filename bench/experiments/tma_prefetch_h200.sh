#!/usr/bin/env bash
# Before/after for the TMA descriptor prefetch: the same skinny GEMM
# programs through two runner packages (OLD and NEW, both in dist/),
# interleaved, ism-run --bench (median of 50, L2 flushed), then the new
# package's GPU lit subset. From a checkout on the H200 with OUT set:
#   OUT=/tmp/out OLD=b8ac347 NEW=<commit> bash bench/experiments/tma_prefetch_h200.sh
set -uo pipefail
: "${OUT:?}" "${OLD:?}" "${NEW:?}"
for v in old new; do
  c=$([ $v = old ] && echo "$OLD" || echo "$NEW")
  mkdir -p /tmp/$v && tar xJf dist/ism-runner-$c.tar.xz -C /tmp/$v
done
python3 - <<'PY'
import sys; sys.path.insert(0, "bench"); import gemm
progs = {
    "split2_2pass": gemm.splitk_program(bm=64, bn=128, warps=4, splits=2,
                                        stages=8, fixup=False),
    "ck2_64x128": gemm.program(bm=64, bn=128, warps=4, stages=8, ck=2),
    "ck2_64x64": gemm.program(bm=64, bn=64, warps=4, stages=8, ck=2),
}
for name, text in progs.items():
    open(f"/tmp/{name}.mlir", "w").write(text)
PY
printf "%-14s %-14s %10s %10s %8s\n" shape config old_us new_us new/old
for shape in 1x4096x4096 16x4096x4096 64x4096x4096 1x8192x8192; do
  IFS=x read -r m n k <<< "$shape"
  args="--arg bf16:${m}x${k}:randn --arg bf16:${k}x${n}:randn --arg bf16:${m}x${n}"
  for cfg in split2_2pass ck2_64x128 ck2_64x64; do
    declare -A t=()
    for round in 1 2; do
      for v in old new; do
        ms=$(/tmp/$v/ism-runner/bin/ism-run /tmp/$cfg.mlir $args --bench --json \
               --reps 50 --warmup 10 | python3 -c 'import json,sys; print(json.load(sys.stdin)["bench"]["median_ms"])')
        t[$v$round]=$ms
      done
    done
    python3 -c "
o=min($(echo ${t[old1]}),$(echo ${t[old2]}))*1e3; n=min($(echo ${t[new1]}),$(echo ${t[new2]}))*1e3
print('%-14s %-14s %10.2f %10.2f %8.3f' % ('$shape', '$cfg', o, n, n/o))"
  done
done | tee "$OUT/prefetch.txt"
/tmp/new/ism-runner/scripts/gpu-tests.sh > "$OUT/gpu-tests.log" 2>&1
echo "gpu-tests rc=$?"; grep -E "^(FAIL|  Passed|  Failed)" "$OUT/gpu-tests.log"
