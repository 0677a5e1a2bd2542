# Sourced by the *_h200.sh experiment scripts, from a checkout on the H200
# with the runner package (and, for the Python path, the abi3 wheel) in
# dist/: checks OUT, unpacks the runner into /tmp/r (run= its ism-run), with
# `wheel` as the first argument installs the wheel into the venv /tmp/v
# (system site packages visible: torch, triton), and sets ISM_CACHE_DIR.
: "${OUT:?set OUT to a directory for the logs}"
mkdir -p "$OUT"
if [ ! -x /tmp/r/ism-runner/bin/ism-run ]; then
  mkdir -p /tmp/r && tar xJf dist/ism-runner-*.tar.xz -C /tmp/r
fi
run=/tmp/r/ism-runner/bin/ism-run
if [ "${1:-}" = wheel ] && [ ! -x /tmp/v/bin/python ]; then
  python3 -m venv --system-site-packages /tmp/v
  base=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  site=$(/tmp/v/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  [ "$base" = "$site" ] || echo "$base" > "$site/_base_site.pth"
  /tmp/v/bin/pip install -q --no-index --no-deps dist/ism-*abi3*.whl
fi
export ISM_CACHE_DIR=/tmp/ism-cache
# The package's GPU lit subset: the log in $OUT/gpu-tests.log, its status
# and summary lines on stdout.
gpu_tests() {
  /tmp/r/ism-runner/scripts/gpu-tests.sh > "$OUT/gpu-tests.log" 2>&1
  echo "gpu-tests rc=$?"
  grep -E "^(FAIL|  Passed|  Failed|  Unsupported)" "$OUT/gpu-tests.log"
}
# bench/gemm.py check on the variants whose names contain one of $2
# (comma-separated): the log in $OUT/check-$1.log, its status, failures and
# summary on stdout.
gemm_check() {
  python3 bench/gemm.py check --ism-run "$run" --only "$2" --out "$OUT/check" \
    > "$OUT/check-$1.log" 2>&1
  echo "check rc=$?"
  grep -E "^(FAIL|gemm checks)" "$OUT/check-$1.log"
}
# bench/coschedule.py on the three GEMM pairs: the log in
# $OUT/bench-TAG.log, the CSV and chart in $OUT/co-TAG, its status and
# table on stdout; further arguments go to bench/coschedule.py.
gemm_pairs_bench() {
  local tag=$1
  shift
  python3 bench/coschedule.py --ism-run "$run" \
    --only matmul_rmsnorm,matmul_softmax,matmul_spmm "$@" \
    --out "$OUT/co-$tag" > "$OUT/bench-$tag.log" 2>&1
  echo "bench $tag rc=$?"
  sed -n '/^pair /,$p' "$OUT/bench-$tag.log"
}
# compute-sanitizer memcheck, racecheck and synccheck on GEMM programs of
# test/Runner/Inputs/gemm under --check, bf16 A and B random and C
# poisoned; each argument is NAME:AROWSxACOLS:BROWSxBCOLS:CROWSxCCOLS. The
# logs go to $OUT/sanitize-NAME-TOOL.txt, a summary line each to stdout.
sanitize_gemm() {
  local t f a b c tool log
  for t in "$@"; do
    IFS=: read -r f a b c <<< "$t"
    for tool in memcheck racecheck synccheck; do
      log="$OUT/sanitize-$f-$tool.txt"
      compute-sanitizer --tool $tool --print-limit 5 "$run" \
        "test/Runner/Inputs/gemm/$f.mlir" --check --arg bf16:$a:randn \
        --arg bf16:$b:randn --arg bf16:$c:poison > "$log" 2>&1
      echo "$f $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tr '\n' ' ') $(grep -E 'check: arg' "$log" | cut -c1-60)"
    done
  done
}
# The benchmark's CSR matrix at $1 rows (4096 columns, 32-96 nonzeros a
# row, bench/coschedule.py's csr()) written to /tmp; prints the SpMM's
# ism-run arguments: rowptr, colind, values, B (4096 x 512 f32), Y.
spmm_csr_args() {
  local rows=$1
  python3 - "$rows" <<'PY'
import sys, types
sys.modules.setdefault("torch", types.ModuleType("torch"))
sys.path.insert(0, "bench")
import coschedule
rows = int(sys.argv[1])
coschedule.csr(rows, 4096, 64, rows, "/tmp")
PY
  echo "--arg npy:/tmp/rowptr_${rows}_${rows}.npy --arg npy:/tmp/colind_${rows}_${rows}.npy" \
    "--arg npy:/tmp/values_${rows}_${rows}.npy --arg f32:4096x512:randn --arg f32:${rows}x512"
}
