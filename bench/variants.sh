#!/usr/bin/env bash
# Times the memory-bound examples at several num_warps with ism-run --bench
# (median, L2 flushed), to pick each example's warp count.
#   bench/variants.sh ISM_RUN [warps...]      (default warps: 4 8 16)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
run=${1:?usage: bench/variants.sh ISM_RUN [warps...]}
shift
if [ $# -gt 0 ]; then warps=("$@"); else warps=(4 8 16); fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
declare -A args=(
  [softmax]="--arg f16:16384x4096:randn --arg f16:16384x4096"
  [layernorm]="--arg f16:16384x4096:randn --arg f16:4096:randn --arg f16:4096:randn --arg f16:16384x4096 --arg 1e-5"
  [rmsnorm]="--arg bf16:16384x4096:randn --arg bf16:4096:randn --arg bf16:16384x4096 --arg 1e-5"
  [rope]="--arg bf16:16384x32x128:randn --arg f32:16384x64:randn --arg f32:16384x64:randn --arg bf16:16384x32x128"
)
printf '%-10s %6s %10s %8s\n' kernel warps median_ms GB/s
for k in softmax layernorm rmsnorm rope; do
  for w in "${warps[@]}"; do
    sed -E "s/num_warps = [0-9]+ : i32/num_warps = $w : i32/" \
      "$root/examples/$k.mlir" > "$tmp/$k-$w.mlir"
    # shellcheck disable=SC2086
    out=$("$run" "$tmp/$k-$w.mlir" --bench --json ${args[$k]})
    python3 -c 'import json,sys; b=json.load(sys.stdin)["bench"]; print("%-10s %6s %10.4f %8.0f" % (sys.argv[1], sys.argv[2], b["median_ms"], b["gbps"]))' "$k" "$w" <<<"$out"
  done
done
