#!/usr/bin/env bash
# Layernorm experiments: which part of the kernel costs time (see
# docs/benchmarks.md). Usage: bench/experiments/run.sh ISM_RUN
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
run=${1:?usage: run.sh ISM_RUN}
args="--arg f16:16384x4096:randn --arg f16:4096:randn --arg f16:4096:randn --arg f16:16384x4096 --arg 1e-5"
for f in "$here"/ln_*.mlir; do
  for w in 4 8; do
    sed -E "s/num_warps = [0-9]+ : i32/num_warps = $w : i32/" "$f" > /tmp/exp.mlir
    # shellcheck disable=SC2086
    out=$("$run" /tmp/exp.mlir --bench --json $args)
    python3 -c 'import json,sys; b=json.load(sys.stdin)["bench"]; print("%-16s w=%s %8.4f ms %6.0f GB/s" % (sys.argv[1], sys.argv[2], b["median_ms"], b["gbps"]))' "$(basename "$f" .mlir)" "$w" <<<"$out"
  done
done
