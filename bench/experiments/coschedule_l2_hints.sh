#!/usr/bin/env bash
# L2 cache-hint experiment on the fused GEMM + RMSNorm kernel: the PTX in
# the compile cache is patched (bench/experiments/patch_ptx_l2_hints.py) and re-timed.
set -u
run=${1:?usage: coschedule_l2_hints.sh ISM_RUN}
ex=examples/coschedule_matmul_rmsnorm.mlir
R=${R:-49664}
G="--arg bf16:4096x4096:randn --arg bf16:4096x4096:randn --arg bf16:4096x4096"
N="--arg bf16:${R}x4096:randn --arg bf16:4096:randn --arg bf16:${R}x4096 --arg 1e-5"
$run $ex --cache-dir=/tmp/cc --coschedule=fused $G $N > /dev/null 2>&1
$run $ex --cache-dir=/tmp/cc --coschedule=sequential $G $N > /dev/null 2>&1
ls -R /tmp/cc | head
patch() { # dir mode
  rm -rf $1; cp -r /tmp/cc $1
  for f in $(find $1 -name '*.json'); do
    python3 - "$f" "$2" <<'PY'
import json, subprocess, sys
f, mode = sys.argv[1], sys.argv[2]
d = json.load(open(f))
d["module"]["ptx"] = subprocess.run(["python3", "bench/experiments/patch_ptx_l2_hints.py", mode], input=d["module"]["ptx"], capture_output=True, text=True, check=True).stdout
json.dump(d, open(f, "w"))
PY
  done
}
MODES=${MODES:-none nf ns gl nf,ns nf,ns,gl}
for m in $MODES; do patch /tmp/cc_$m $m; done
# Each patched fused kernel checked against the float64 reference first, at
# small sizes (partial GEMM tiles; the cache entry does not depend on them).
GS="--arg bf16:300x200:randn --arg bf16:200x260:randn --arg bf16:300x260:poison"
NS="--arg bf16:777x4096:randn --arg bf16:4096:randn --arg bf16:777x4096:poison --arg 1e-5"
for m in $MODES; do
  $run $ex --cache-dir=/tmp/cc_$m --coschedule=fused --check $GS $NS > /tmp/check_$m.log 2>&1
  echo "check $m rc=$? $(grep -E 'check:|error' /tmp/check_$m.log | tr '\n' ' ' | cut -c1-160)"
done
for round in 1 2 3; do
for m in $MODES; do
  $run $ex --cache-dir=/tmp/cc_$m --bench --json --reps 60 --warmup 5 $G $N 2>/dev/null | python3 -c "
import json,sys; d=json.load(sys.stdin)['coschedule']
print(f\"round $round hints %-10s seq {d['sequential']['median_ms']:.4f} streams {d['streams']['median_ms']:.4f} fused {d['fused']['median_ms']:.4f} x{d['fused_vs_sequential']:.3f} seq\" % '$m')"
done; done
