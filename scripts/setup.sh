#!/usr/bin/env bash
# Sets up a fresh Debian/Ubuntu machine for ism and builds it.
#   - installs LLVM/MLIR 22 and the build tools with apt when they are missing
#   - installs the Python build and test packages (nanobind, pytest, numpy)
#     with pip when they are missing
#   - configures build/ with CMake + Ninja and builds ism-opt and the Python
#     package (build/python_packages/ism)
# With --sanitizers it installs clang-22 and its runtimes as well, and
# configures build-asan/ instead (ISM_ASAN_BUILD_DIR): ism's own code with
# AddressSanitizer + UndefinedBehaviorSanitizer and the libFuzzer targets
# (scripts/sanitize.sh runs the tests there).
# Safe to run again: it installs nothing that is there and rebuilds
# incrementally.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${ISM_BUILD_DIR:-$root/build}
llvm=/usr/lib/llvm-22
sanitizers=0
if [ "${1:-}" = --sanitizers ]; then
  sanitizers=1
  build=${ISM_ASAN_BUILD_DIR:-$root/build-asan}
elif [ $# -gt 0 ]; then
  echo "setup.sh: unknown option '$1' (expected --sanitizers or nothing)" >&2
  exit 2
fi

sudo_cmd=()
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null; then sudo_cmd=(sudo); fi
fi

packages=(llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools lld-22
          cmake ninja-build g++ python3 python3-dev python3-pip zlib1g-dev
          libzstd-dev)
if [ "$sanitizers" = 1 ]; then
  packages+=(clang-22 libclang-rt-22-dev)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
    missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  "${sudo_cmd[@]}" apt-get update -q
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -q \
    --no-install-recommends "${missing[@]}"
fi

# The Python package builds with nanobind and is tested with pytest and
# NumPy, all from PyPI. A python3 on PATH (a virtualenv, pyenv) is used as is;
# the system one may need --break-system-packages (PEP 668).
python=${PYTHON:-python3}
if ! "$python" -c "import nanobind, pytest, numpy" 2>/dev/null; then
  echo "setup: installing nanobind, pytest and numpy with pip"
  "$python" -m pip install -q nanobind pytest numpy ||
    "$python" -m pip install -q --break-system-packages nanobind pytest numpy
fi

configure=(-G Ninja -S "$root" -B "$build"
           -DCMAKE_BUILD_TYPE=Release
           -DMLIR_DIR="$llvm/lib/cmake/mlir"
           -DLLVM_EXTERNAL_LIT="$llvm/bin/lit"
           -DPython_EXECUTABLE="$(command -v "$python")"
           -DISM_ENABLE_PYTHON=ON)
targets=(ism-opt ism-run _ism)
marker=_ism # a target the configured build must have
if [ "$sanitizers" = 1 ]; then
  # -O1 keeps the build and the sanitized runs fast; line tables give the
  # sanitizers' reports file:line.
  configure+=(-DCMAKE_C_COMPILER="$llvm/bin/clang"
              -DCMAKE_CXX_COMPILER="$llvm/bin/clang++"
              -DCMAKE_CXX_FLAGS_RELEASE="-O1 -gline-tables-only -DNDEBUG"
              -DCMAKE_C_FLAGS_RELEASE="-O1 -gline-tables-only -DNDEBUG"
              -DISM_SANITIZE="address;undefined"
              -DISM_ENABLE_FUZZERS=ON)
  targets+=(ism-fuzzers mlir-doc)
  marker=ism-parse-fuzzer
fi
if [ ! -f "$build/build.ninja" ] || ! grep -q "$marker" "$build/build.ninja"; then
  cmake "${configure[@]}"
fi
cmake --build "$build" --target "${targets[@]}"
