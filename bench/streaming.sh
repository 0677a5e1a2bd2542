#!/usr/bin/env bash
# Issue 46's streaming benchmarks on a GPU machine, in one call, from a copy
# of the repository with the wheel of scripts/build-wheel.sh in dist/:
#   1. bench/smem_bandwidth.py: HBM -> shared memory (ld.global + st.shared,
#      cp.async, TMA bulk copies; 4-200 KB in flight per SM), built with
#      nvcc (PATH, $NVCC or /usr/local/cuda*/bin/nvcc; skipped with a
#      message when there is none);
#   2. bench/streaming.py: user-style streaming kernels, ism vs Triton vs
#      PyTorch against the read and copy rooflines (its table last).
#
#   bench/streaming.sh --out DIR [--wheel WHEEL] [--quick] [--no-smem]
#                      [--no-streaming] [-- MORE STREAMING.PY ARGUMENTS]
#
# --out defaults to $OUT. ism comes from WHEEL (default: the dist/ wheel for
# this python3: ism-*-cp312-abi3-*.whl on Python >= 3.12, else the
# ism-*-cpXY-cpXY-*.whl of its version), installed with
# `pip install --no-index --no-deps --target DIR/ism-pkg` and put first on
# PYTHONPATH; with no wheel there, the ism that python3 already imports
# (PYTHONPATH, a venv, build/python_packages). torch, Triton, NumPy,
# matplotlib and nvidia-ml-py are the machine's ($PYTHON, default python3).
# Writes DIR/smem/ (smem_bandwidth.csv/.log/.png), DIR/streaming/
# (streaming.csv/.json/.png), DIR/smem.log, DIR/streaming.log; the compile
# cache goes to DIR/ism-cache. Exits non-zero when a step fails (a failed
# correctness check included).
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-}
wheel=
quick=
smem=1
streaming=1
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --out=*) out=${1#--out=}; shift ;;
    --wheel) wheel=$2; shift 2 ;;
    --wheel=*) wheel=${1#--wheel=}; shift ;;
    --quick) quick=--quick; shift ;;
    --no-smem) smem=; shift ;;
    --no-streaming) streaming=; shift ;;
    --) shift; extra=("$@"); break ;;
    *) echo "streaming.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[ -n "$out" ] || { echo "streaming.sh: give --out DIR (or set OUT)" >&2; exit 2; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
py=${PYTHON:-python3}
status=0

if [ -z "$wheel" ]; then
  tag=$("$py" -c 'import sys; v = sys.version_info; print("abi3" if v >= (3, 12) else f"cp{v[0]}{v[1]}")')
  if [ "$tag" = abi3 ]; then
    wheel=$(ls "$root"/dist/ism-*-cp312-abi3-*.whl 2>/dev/null | tail -1)
  else
    wheel=$(ls "$root"/dist/ism-*-"$tag"-"$tag"-*.whl 2>/dev/null | tail -1)
  fi
fi
if [ -n "$wheel" ]; then
  [ -f "$wheel" ] || { echo "streaming.sh: no wheel at $wheel" >&2; exit 1; }
  pkg=$out/ism-pkg
  rm -rf "$pkg"
  if ! "$py" -m pip install -q --no-index --no-deps --target "$pkg" "$wheel"; then
    # No pip: a wheel is a zip of the package; unpacked it imports the same.
    echo "streaming.sh: pip install --target failed; unpacking $wheel instead"
    rm -rf "$pkg"
    "$py" -m zipfile -e "$wheel" "$pkg" || exit 1
  fi
  export PYTHONPATH=$pkg${PYTHONPATH:+:$PYTHONPATH}
  echo "streaming.sh: ism from $wheel"
fi
export ISM_CACHE_DIR=${ISM_CACHE_DIR:-$out/ism-cache}
(cd / && "$py" -c 'import ism, torch, triton; print("streaming.sh: ism", ism.__file__, "| torch", torch.__version__, "| triton", triton.__version__, "|", torch.cuda.get_device_name(0))') ||
  { echo "streaming.sh: ism, torch or triton does not import (or no GPU)" >&2; exit 1; }
command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv

if [ -n "$smem" ]; then
  nvcc=${NVCC:-$(command -v nvcc || ls /usr/local/cuda/bin/nvcc /usr/local/cuda-*/bin/nvcc 2>/dev/null | tail -1)}
  if [ -z "$nvcc" ] || [ ! -x "$nvcc" ]; then
    echo "streaming.sh: no nvcc; the shared-memory benchmark is skipped (set NVCC)"
  else
    echo; echo "== HBM -> shared memory ($nvcc)"
    smem_args=()
    [ -n "$quick" ] && smem_args=(--bytes 1073741824 --reps 5)
    "$py" "$root/bench/smem_bandwidth.py" --nvcc "$nvcc" --out "$out/smem" \
      "${smem_args[@]}" 2>&1 | tee "$out/smem.log"
    [ "${PIPESTATUS[0]}" -eq 0 ] || { echo "streaming.sh: smem_bandwidth failed"; status=1; }
  fi
fi

if [ -n "$streaming" ]; then
  echo; echo "== user-style streaming kernels"
  "$py" "$root/bench/streaming.py" --out "$out/streaming" $quick "${extra[@]}" \
    2>&1 | tee "$out/streaming.log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || { echo "streaming.sh: streaming.py failed (or a check failed)"; status=1; }
fi
echo "streaming.sh: $([ $status = 0 ] && echo PASS || echo FAIL); results in $out"
exit $status
