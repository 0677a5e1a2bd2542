#!/usr/bin/env bash
# Builds the self-contained ism-run (LLVM/MLIR, libstdc++, zlib and zstd
# linked statically; only libc/libm dynamic; stripped) and packs it with the
# GPU test subset into dist/ism-runner-<commit>.tar.xz:
#   bin/ism-run            the runner
#   bin/FileCheck, bin/not, bin/count, lib/libz3.so.4, lit/   test tools for the GPU subset
#   test/, examples/, scripts/gpu-tests.sh          the GPU lit tests
#   scripts/gpu-sanitize.sh         gpu-tests.sh --sanitize (compute-sanitizer)
#   scripts/plot-trace.py                           timeline of ism-run --trace
# On the GPU machine (Ubuntu 24.04, NVIDIA driver only, python3):
#   tar xJf ism-runner-*.tar.xz && cd ism-runner
#   bin/ism-run --list-devices
#   scripts/gpu-tests.sh            # runs exactly the GPU tests
# Environment: ISM_STATIC_BUILD_DIR (default build-static).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${ISM_STATIC_BUILD_DIR:-$root/build-static}
llvm=/usr/lib/llvm-22

if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR="$llvm/lib/cmake/mlir" -DLLVM_EXTERNAL_LIT="$llvm/bin/lit" \
    -DISM_STATIC_RUNNER=ON
fi
cmake --build "$build" --target ism-run-static

commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
stage=$(mktemp -d)
pkg=$stage/ism-runner
mkdir -p "$pkg/bin" "$pkg/lib" "$pkg/scripts" "$pkg/test"
cp "$build/bin/ism-run-static" "$pkg/bin/ism-run"
cp "$llvm/bin/FileCheck" "$llvm/bin/not" "$llvm/bin/count" "$pkg/bin/"
# FileCheck and not need libz3, which a bare Ubuntu lacks.
cp "$(ldd "$llvm/bin/FileCheck" | awk '/libz3/ {print $3}')" "$pkg/lib/"
cp -r "$llvm/utils/lit" "$pkg/lit"
cp "$root/test/lit.cfg.py" "$pkg/test/"
cp -r "$root/test/Runner" "$pkg/test/"
mkdir -p "$pkg/test/Pipelines"
cp -r "$root/test/Pipelines/Inputs" "$pkg/test/Pipelines/"
cp -r "$root/examples" "$pkg/"
cp "$root/scripts/gpu-tests.sh" "$root/scripts/gpu-sanitize.sh" \
  "$root/scripts/plot-trace.py" "$pkg/scripts/"
echo "$commit" > "$pkg/VERSION"
find "$pkg" -name __pycache__ -prune -exec rm -rf {} +

mkdir -p "$root/dist"
out=$root/dist/ism-runner-$commit.tar.xz
tar -C "$stage" -cf - ism-runner | xz -T0 -9 > "$out"
rm -rf "$stage"
echo "pack-runner: $out ($(du -h "$out" | cut -f1))"
