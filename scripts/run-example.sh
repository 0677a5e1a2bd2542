#!/usr/bin/env bash
# The main job: set up and build ism (scripts/setup.sh), compile an example
# kernel to PTX, and run it on the GPU with a check against the float64
# reference when there is one; without a GPU, show the PTX and say so.
#   scripts/run-example.sh [examples/NAME.mlir]   (default: examples/softmax.mlir)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${ISM_BUILD_DIR:-$root/build}
example=${1:-$root/examples/softmax.mlir}
name=$(basename "$example" .mlir)

if [ ! -f "$example" ]; then
  echo "run-example: no such file: $example" >&2
  exit 1
fi

bash "$root/scripts/setup.sh"

ptx=$(mktemp --suffix=.ptx)
trap 'rm -f "$ptx"' EXIT
echo "== compiling $example to PTX for sm_90a (ism-opt --ism-to-ptx)"
"$build/bin/ism-opt" "$example" --ism-to-ptx="chip=sm_90a" |
  python3 "$root/scripts/extract-ptx.py" > "$ptx"
echo "   $(grep -c '' "$ptx") lines of PTX; entry points:" \
  "$(grep -o '\.entry [a-z_0-9]*' "$ptx" | cut -d' ' -f2 | tr '\n' ' ')"

# Arguments for the examples' host functions (partial tiles on purpose).
# out: the index of the argument the kernel writes.
out=
case "$name" in
  vector_add) out=2; args=(--arg f32:1000003:randn --arg f32:1000003:randn --arg f32:1000003) ;;
  softmax) out=1; args=(--arg f16:1000x3000:randn --arg f16:1000x3000) ;;
  layernorm) out=3; args=(--arg f16:1000x3000:randn --arg f16:3000:randn --arg f16:3000:randn
                   --arg f16:1000x3000 --arg 1e-5) ;;
  rmsnorm) out=2; args=(--arg bf16:1000x3000:randn --arg bf16:3000:randn --arg bf16:1000x3000
                 --arg 1e-5) ;;
  rope) out=3; args=(--arg bf16:1000x32x128:randn --arg f32:1000x64:randn --arg f32:1000x64:randn
              --arg bf16:1000x32x128) ;;
  matmul) out=2; args=(--arg bf16:300x200:randn --arg bf16:200x260:randn --arg bf16:300x260) ;;
  *) args=() ;;
esac

if "$build/bin/ism-run" --list-devices >/dev/null 2>&1; then
  echo "== running $name on the GPU and checking it (ism-run --check)"
  "$build/bin/ism-run" "$example" --check "${args[@]}"
else
  echo "== no CUDA GPU here ($("$build/bin/ism-run" --list-devices 2>&1 | head -n 1));"
  echo "   showing the start of the PTX instead of running it:"
  sed -n '1,40p' "$ptx"
  echo "   ..."
  if [ -n "$out" ]; then
    echo "== the same program on the CPU reference interpreter (ism-run --interpret)"
    npy=$(mktemp --suffix=.npy)
    "$build/bin/ism-run" "$example" --interpret "${args[@]}" --save="$out:$npy"
    python3 - "$npy" "$name" <<'PY'
import sys
import numpy as np
y = np.load(sys.argv[1]).astype(np.float64)
print(f"   output: shape {y.shape}, min {y.min():.4g}, max {y.max():.4g}, "
      f"mean {y.mean():.4g}")
if sys.argv[2] == "softmax":
    sums = y.sum(axis=-1)
    print(f"   softmax rows sum to 1: max |sum - 1| = {abs(sums - 1).max():.2e}")
PY
    rm -f "$npy"
  fi
fi
