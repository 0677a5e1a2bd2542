#!/usr/bin/env bash
# Links the fuzz targets of build-asan (scripts/setup.sh --sanitizers)
# statically against the LLVM/MLIR archives (ASan + UBSan + libFuzzer
# runtimes included; only libc, libm and the loader stay dynamic), strips
# them and packs them into dist-fuzz/ism-fuzzers.tar.xz, so that a
# campaign can run on a machine without LLVM/MLIR and with more cores:
#   tar xJf ism-fuzzers.tar.xz -C DIR
#   ISM_FUZZ_BIN=DIR/bin ISM_ASAN_BUILD_DIR=WORK scripts/fuzz.sh --jobs 15 ...
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${ISM_ASAN_BUILD_DIR:-$root/build-asan}
llvm=/usr/lib/llvm-22
cmake --build "$build" --target ism-fuzzers

mlir_archives=$(ls "$llvm"/lib/libMLIR*.a | grep -vE 'libMLIR(CAPI|Python)')
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
mkdir -p "$out/bin"
for target in parse pipeline run-args interpret; do
  name=ism-$target-fuzzer
  # shellcheck disable=SC2086
  "$llvm/bin/clang++" -fuse-ld=lld -fsanitize=address,undefined,fuzzer \
    -static-libstdc++ -static-libgcc -Wl,--gc-sections \
    "$build/tools/fuzz/CMakeFiles/$name.dir/$name.cpp.o" \
    -Wl,--start-group "$build"/lib/libMLIRIsm*.a $mlir_archives \
    "$llvm"/lib/libLLVM*.a -Wl,--end-group \
    -l:libzstd.a -l:libz.a -ldl -lpthread -lrt -lm -o "$out/bin/$name"
  "$llvm/bin/llvm-strip" "$out/bin/$name"
done
mkdir -p "$root/dist-fuzz"
tar cJf "$root/dist-fuzz/ism-fuzzers.tar.xz" -C "$out" bin
echo "pack-fuzzers: $root/dist-fuzz/ism-fuzzers.tar.xz ($(du -h "$root/dist-fuzz/ism-fuzzers.tar.xz" | cut -f1))"
