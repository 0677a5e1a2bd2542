#!/usr/bin/env bash
# The Python package on a GPU machine, from its wheel, in a fresh virtual
# environment (the machine's own torch, Triton, NumPy and pytest come in
# through --system-site-packages and a .pth naming the site-packages of the
# python3 on PATH, which may itself be a venv, e.g. /opt/torch/.venv;
# nothing is downloaded):
#   scripts/gpu-python.sh dist/ism-*-abi3-*.whl [OUT_DIR]
# 1. installs the wheel into a new venv and checks that it imports without
#    any LLVM/MLIR on the machine;
# 2. runs the Python suite against the installed package (test/python with
#    ISM_TEST_INSTALLED=1: the torch GPU tests, ism.run, the RoPE example,
#    the tutorials' CPU and GPU parts);
# 3. runs each tutorial as written (python/tutorials/*.py: its CPU part,
#    then its GPU part, checked against PyTorch);
# 4. benchmarks: launch overhead against Triton (bench/launch_overhead.py)
#    and the RoPE autograd example against PyTorch eager and Triton;
# 5. profiles an ism kernel with torch.profiler (python/examples/
#    profile_torch.py).
# Logs, JSON, CSV and plots go to OUT_DIR (default: a temporary directory).
set -uo pipefail

wheel=${1:?usage: scripts/gpu-python.sh WHEEL [OUT_DIR]}
root=$(cd "$(dirname "$0")/.." && pwd)
out=${2:-$(mktemp -d)}
mkdir -p "$out"
venv=$(mktemp -d)/venv
status=0
step() { echo; echo "== $*"; }

step "venv + wheel: $wheel"
python3 -m venv --system-site-packages "$venv" || exit 1
base_site=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
venv_site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
[ "$base_site" = "$venv_site" ] || echo "$base_site" > "$venv_site/_base_site.pth"
"$venv/bin/pip" install -q --no-index --no-deps "$wheel" || exit 1
py="$venv/bin/python"
export ISM_CACHE_DIR="$out/ism-cache"
(cd / && "$py" - <<'EOF') || status=1
import ism, ism._ism as ext, os
print("ism from", os.path.dirname(ism.__file__))
maps = open("/proc/self/maps").read()
assert "libMLIR" not in maps and "libLLVM" not in maps, "LLVM/MLIR dylib loaded"
print("no libMLIR/libLLVM in the process; extension:", os.path.basename(ext.__file__))
EOF

step "pytest test/python against the installed package"
(cd "$root" && ISM_TEST_INSTALLED=1 "$py" -m pytest -q -rs -p no:cacheprovider \
  test/python 2>&1 | tee "$out/pytest.log") || status=1

step "tutorials, as written"
for t in "$root"/python/tutorials/[0-9]*.py; do
  echo "-- $(basename "$t")"
  (cd "$root" && "$py" "$t" 2>&1 | tee "$out/tutorial-$(basename "$t" .py).log") ||
    status=1
done

step "launch overhead (ism vs Triton)"
(cd "$root" && "$py" bench/launch_overhead.py --json "$out/launch.json" 2>&1 |
  tee "$out/launch.log") || status=1

step "RoPE autograd: check and benchmark"
(cd "$root" && "$py" python/examples/rope_autograd.py --check 2>&1 |
  tee "$out/rope-check.log") || status=1
(cd "$root" && "$py" python/examples/rope_autograd.py --bench --out "$out/rope" \
  2>&1 | tee "$out/rope-bench.log") || status=1

step "torch.profiler"
(cd "$root" && "$py" python/examples/profile_torch.py 2>&1 |
  tee "$out/profile.log") || status=1

echo
echo "gpu-python: $([ $status = 0 ] && echo PASS || echo FAIL) (logs in $out)"
exit $status
