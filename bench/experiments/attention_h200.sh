#!/usr/bin/env bash
# The GPU checks and benchmarks of attention on tensor cores (wgmma products
# outside K loops on sm_90a). Run from a checkout on the H200 with the
# runner package and the abi3 wheel in dist/ (scripts/pack-runner.sh,
# scripts/build-wheel.sh), and OUT set to a directory for the logs:
#   OUT=/tmp/out bash bench/experiments/attention_h200.sh [gpu|sass|bench]...
# gpu: the GPU lit subset (attention --check at 1000 and 4097 tokens,
# causal and not, among them); sass: HGMMA/HMMA/LDS/STS counts and
# registers of the attention kernels (head dims 64 and 128); bench:
# bench/attention.py (checks every implementation against float64 at 1000
# tokens, then times ism, Triton and SDPA's backends).
set -uo pipefail
source "$(dirname "$0")/h200_setup.sh" wheel
export PATH=$PATH:${CUDA_HOME:-/usr/local/cuda}/bin
for step in "${@:-gpu sass bench}"; do
  for s in $step; do
    case $s in
      gpu)
        gpu_tests ;;
      sass)
        # head dim, block_m, block_n, warps, prefetch, num_stages
        for cfg in "64 64 64 4 0 1" "64 64 64 4 0 3" "128 128 64 8 0 1" \
                   "128 128 64 8 0 3" "128 128 128 8 0 2"; do
          set -- $cfg
          name=d$1-m$2-n$3-w$4-p$5-s$6
          /tmp/v/bin/python -c "
import sys; sys.path.insert(0, 'bench')
from attention import module_text
print(module_text($1, $2, $3, $4, bool($5), $6))" > "$OUT/$name.mlir"
          "$run" "$OUT/$name.mlir" --emit=ptx > "$OUT/$name.ptx" 2>&1 &&
            ptxas -arch=sm_90a -v "$OUT/$name.ptx" -o "$OUT/$name.cubin" \
              > "$OUT/$name.ptxas" 2>&1 &&
            cuobjdump --dump-sass "$OUT/$name.cubin" > "$OUT/$name.sass"
          printf '%-20s regs %-4s HGMMA %-4s HMMA %-4s LDSM %-4s STS %-4s LDG %-4s BAR %s\n' \
            "$name" "$(grep -o 'Used [0-9]*' "$OUT/$name.ptxas" | cut -d' ' -f2)" \
            "$(grep -c HGMMA "$OUT/$name.sass")" "$(grep -c 'HMMA' "$OUT/$name.sass")" \
            "$(grep -c LDSM "$OUT/$name.sass")" "$(grep -c 'STS' "$OUT/$name.sass")" \
            "$(grep -c 'LDG' "$OUT/$name.sass")" "$(grep -c 'BAR' "$OUT/$name.sass")"
        done ;;
      bench)
        /tmp/v/bin/python bench/attention.py --out "$OUT/att" \
          > "$OUT/attention.log" 2>&1
        echo "attention rc=$?"; grep -E "MISMATCH|unavailable" "$OUT/attention.log"
        tail -11 "$OUT/attention.log" ;;
      *) echo "attention_h200.sh: unknown step '$s' (gpu, sass or bench)" >&2
         exit 2 ;;
    esac
  done
done
