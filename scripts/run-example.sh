#!/usr/bin/env bash
# The main job: set up and build ism (scripts/setup.sh), then compile an
# example kernel through ism-opt and print the result.
#   scripts/run-example.sh [examples/NAME.mlir]   (default: examples/softmax.mlir)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${ISM_BUILD_DIR:-$root/build}
example=${1:-$root/examples/softmax.mlir}

if [ ! -f "$example" ]; then
  echo "run-example: no such file: $example" >&2
  exit 1
fi

bash "$root/scripts/setup.sh"

echo "== $example: verified and simplified at the tile level (ism-combine, canonicalize, cse)"
"$build/bin/ism-opt" "$example" --ism-combine --canonicalize --cse
echo "== the lowering to PTX and the GPU runner are not built yet; this job"
echo "   stops at the verified tile-level IR (see docs/architecture.md)."
