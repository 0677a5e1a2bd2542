#!/usr/bin/env bash
# Sweeps the co-scheduler's choices on GEMM 4096^3 + RMSNorm ROWSx4096 (bf16)
# with ism-run --bench: the pass's own choice, forced copies of the row
# kernel, static striding instead of the work counter, and each partition
# with the other one's work shrunk to nothing (what each costs inside the
# fused kernel).
#   bench/experiments/coschedule_sweep.sh ISM_RUN [ROWS]
set -uo pipefail
run=$1
rows=${2:-32768}
ex=$(dirname "$0")/../../examples/coschedule_matmul_rmsnorm.mlir
tmp=$(mktemp -d)
variant() { # name attributes
  sed "s/ism.coschedule warp_specialized {/ism.coschedule warp_specialized attributes {$2} {/" \
    "$ex" > "$tmp/$1.mlir"
}
bench() { # name M rows
  local m=$2 r=$3
  "$run" "$tmp/$1.mlir" --bench --json --reps 50 --warmup 5 \
    --arg bf16:${m}x4096:randn --arg bf16:4096x4096:randn --arg bf16:${m}x4096 \
    --arg bf16:${r}x4096:randn --arg bf16:4096:randn --arg bf16:${r}x4096 \
    --arg 1e-5 | python3 -c "
import json, sys
d = json.load(sys.stdin)['coschedule']
print(f\"$1 M=$m rows=$r: seq {d['sequential']['median_ms']:.4f} streams {d['streams']['median_ms']:.4f} fused {d['fused']['median_ms']:.4f}  x{d['fused_vs_sequential']:.2f} seq\")"
}
variant auto ""
variant copies1 "replicas = array<i32: 1, 1>"
variant copies2 "replicas = array<i32: 1, 2>"
variant copies3 "replicas = array<i32: 1, 3>, registers = array<i32: 96, 96, 40, 80, 80, 80>"
variant noprefetch "prefetch = false"
variant static "work_counters = false"
for v in auto copies1 copies2 copies3 noprefetch static; do bench $v 4096 "$rows"; done
# Each partition nearly alone inside the fused kernel.
bench auto 4096 132
bench auto 128 "$rows"
bench copies1 128 "$rows"
bench copies3 128 "$rows"
bench noprefetch 128 "$rows"
