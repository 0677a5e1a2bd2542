#!/usr/bin/env bash
# Builds the ism wheels, self-contained (LLVM/MLIR, libstdc++, zlib and zstd
# linked into the extension, hidden; only PyInit__ism exported), into dist/:
#   dist/ism-<version>-cp3XY-cp3XY-linux_x86_64.whl  for this python3 (3.X.Y)
#   dist/ism-<version>-cp312-abi3-linux_x86_64.whl   CPython 3.12 and later
#                                                    (stable ABI, one binary)
# At run time they need only Python, NumPy and, for ism.run, the NVIDIA
# driver (libcuda is loaded when a GPU is first used).
#
#   bash scripts/build-wheel.sh
#
# One CMake tree, build-wheel/ (ISM_WHEEL_BUILD_DIR), configured with
# ISM_PYTHON_STATIC=ON, builds the ism libraries once and both extensions
# (ninja -j2, ISM_WHEEL_JOBS). The stable-ABI one is compiled against the
# headers of a CPython >= 3.12: this python3's own when it is 3.12 or later,
# ISM_ABI3_PYTHON_INCLUDE when set, else Debian trixie's libpython3.13-dev,
# downloaded with apt-get (a throwaway apt configuration under build-wheel/apt,
# nothing installed) and unpacked into build-wheel/abi3-python. The wheels are
# assembled by scripts/make-wheel.py from pyproject.toml's metadata.
# Needs what scripts/setup.sh installs (LLVM/MLIR 22 with their static
# archives, lld, the zlib and zstd static libraries); installs nanobind with
# pip when it is missing. Safe to run again (incremental).
#
# On the GPU machine (no internet; NumPy from the system's site-packages):
#   python3 -m venv --system-site-packages v
#   v/bin/pip install --no-index --no-deps dist/ism-*-cp312-abi3-*.whl
#   v/bin/python -c "import ism; print(ism.runtime_available())"
set -euo pipefail
shopt -s inherit_errexit

root=$(cd "$(dirname "$0")/.." && pwd)
build=${ISM_WHEEL_BUILD_DIR:-$root/build-wheel}
jobs=${ISM_WHEEL_JOBS:-2}
python=${PYTHON:-python3}
python=$("$python" -c 'import sys; print(sys.executable)')
llvm=/usr/lib/llvm-22
dist=$root/dist
start=$SECONDS
mkdir -p "$build"

if ! "$python" -c "import nanobind" 2>/dev/null; then
  echo "build-wheel: installing nanobind with pip"
  "$python" -m pip install -q nanobind ||
    "$python" -m pip install -q --break-system-packages nanobind
fi

# Headers of a CPython >= 3.12 for the stable-ABI extension.
abi3_headers() {
  if "$python" -c 'import sys; sys.exit(sys.version_info < (3, 12))'; then
    "$python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])'
    return
  fi
  if [ -n "${ISM_ABI3_PYTHON_INCLUDE:-}" ]; then
    echo "$ISM_ABI3_PYTHON_INCLUDE"
    return
  fi
  local dir=$build/abi3-python
  local inc=$dir/include/python3.13
  if [ ! -f "$inc/Python.h" ]; then
    echo "build-wheel: fetching CPython 3.13 headers (Debian trixie" \
      "libpython3.13-dev)" >&2
    local apt=$build/apt
    mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/deb"
    echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg]" \
      "http://deb.debian.org/debian trixie main" > "$apt/sources.list"
    local opts=(-o "Dir::Etc::SourceList=$apt/sources.list"
                -o Dir::Etc::SourceParts=/dev/null
                -o "Dir::State::Lists=$apt/lists"
                -o "Dir::Cache=$apt/cache"
                -o Dir::State::status=/dev/null
                -o APT::Sandbox::User=root -q)
    apt-get "${opts[@]}" update >&2
    rm -f "$apt/deb"/*.deb
    (cd "$apt/deb" && apt-get "${opts[@]}" download libpython3.13-dev >&2)
    rm -rf "$dir" "$apt/x"
    dpkg-deb -x "$apt/deb"/libpython3.13-dev_*.deb "$apt/x"
    mkdir -p "$dir/include"
    cp -r "$apt/x/usr/include/python3.13" "$inc"
    # Debian's pyconfig.h dispatches to the multiarch one: use that directly.
    cp "$apt/x/usr/include/x86_64-linux-gnu/python3.13/pyconfig.h" \
      "$inc/pyconfig.h"
    rm -rf "$apt/x"
  fi
  echo "$inc"
}
abi3_include=$(abi3_headers)

# Configured every time (a few seconds): the options follow this script.
cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
  -DMLIR_DIR="$llvm/lib/cmake/mlir" -DPython_EXECUTABLE="$python" \
  -DISM_ENABLE_PYTHON=ON -DISM_PYTHON_STATIC=ON \
  -DISM_PYTHON_ABI3_INCLUDE_DIR="$abi3_include" > "$build/cmake.log" ||
  { cat "$build/cmake.log" >&2; exit 1; }
ninja -C "$build" -j "$jobs" _ism _ism_abi3 ism-python-sources

pkg=$build/python_packages/ism
ext=$("$python" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
so=$pkg/_ism$ext
abi3_so=$build/python_packages_abi3/ism/_ism.abi3.so

# What the wheels promise: only PyInit__ism exported, only the C library
# needed, no libMLIR.so for the loader to preload.
check_extension() {
  local so=$1 exports needed lib
  exports=$(nm -D --defined-only "$so" | awk '{print $NF}' | sort -u)
  if [ "$exports" != PyInit__ism ]; then
    echo "build-wheel: $so exports more than PyInit__ism:" $exports >&2
    exit 1
  fi
  needed=$(readelf -d "$so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  for lib in $needed; do
    case $lib in
      libc.so.6 | libm.so.6 | libpthread.so.0 | libdl.so.2 | librt.so.1 |\
      ld-linux-x86-64.so.2) ;;
      *) echo "build-wheel: $so needs $lib" >&2; exit 1 ;;
    esac
  done
  echo "build-wheel: $(basename "$so"): exports only PyInit__ism, needs" $needed
}
check_extension "$so"
check_extension "$abi3_so"
if ! grep -qx 'MLIR_DYLIB = ""' "$pkg/_config.py"; then
  echo "build-wheel: $pkg/_config.py names a libMLIR.so" >&2
  exit 1
fi

# The wheels: the package's Python sources with one of the extensions.
version=$(sed -n 's/^version *= *"\(.*\)"/\1/p' "$root/pyproject.toml" | head -1)
cp=$("$python" -c 'import sys; print("cp%d%d" % sys.version_info[:2])')
pyver=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
make_wheel() {
  "$python" "$root/scripts/make-wheel.py" --pyproject "$root/pyproject.toml" \
    --package "$pkg" --exclude '_ism.*so' --out "$dist" "$@"
}
make_wheel --extra "$so" --tag "$cp-$cp-linux_x86_64" \
  --requires-python ">=$pyver"
make_wheel --extra "$abi3_so" --tag cp312-abi3-linux_x86_64 \
  --requires-python ">=3.12"

# Every CPython symbol _ism.abi3.so uses must be in the stable ABI of 3.12
# (abi3audit, from PyPI, in a venv of its own; skipped when pip cannot get it).
audit=$build/abi3audit-venv
if [ ! -x "$audit/bin/abi3audit" ]; then
  { "$python" -m venv "$audit" && "$audit/bin/pip" install -q abi3audit; } ||
    rm -rf "$audit"
fi
if [ -x "$audit/bin/abi3audit" ]; then
  "$audit/bin/abi3audit" --strict --summary \
    "$dist/ism-$version-cp312-abi3-linux_x86_64.whl"
else
  echo "build-wheel: abi3audit unavailable, the stable-ABI audit is skipped" >&2
fi
echo "build-wheel: done in $((SECONDS - start)) s"
