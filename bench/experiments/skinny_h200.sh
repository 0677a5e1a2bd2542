#!/usr/bin/env bash
# Skinny GEMM (issue 10): where the split-K kernel's time goes, against
# cuBLAS, at one decode shape (default 16x4096x4096, bf16), and whether a
# deeper pipeline helps. From a checkout on the H200 with the runner package
# in dist/ and OUT set:
#   OUT=/tmp/out [M=16] [NK=4096] [SPLITS=4] [FIXUP=1] [SWEEP=1] \
#     bash bench/experiments/skinny_h200.sh
# (FIXUP=0: the two-pass split-K; SWEEP=0: the ncu part only)
# 1. ncu, same metrics side by side: every kernel of ism's one-pass split-K
#    (64x128 tiles, 4 warps) and cuBLAS's (torch.matmul), caches flushed
#    between replays (ncu's default);
# 2. bench/gemm.py on the skinny shapes with split-K candidates at the
#    compiler's stage count and at 6 and 8 stages.
set -uo pipefail
source "$(dirname "$0")/h200_setup.sh"
m=${M:-16}
nk=${NK:-4096}
splits=${SPLITS:-4}
python3 - "$splits" "${FIXUP:-1}" <<'PY'
import sys; sys.path.insert(0, "bench"); import gemm
s, fixup = int(sys.argv[1]), sys.argv[2] != "0"
for st in (0, 8):
    open(f"/tmp/skinny_s{st}.mlir", "w").write(gemm.splitk_program(
        dtype="bf16", bm=64, bn=128, warps=4, splits=s, stages=st,
        fixup=fixup))
PY
metrics=gpu__time_duration.sum,sm__cycles_active.avg,sm__cycles_elapsed.max,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__block_size,launch__registers_per_thread,launch__shared_mem_per_block_dynamic
args="--arg bf16:${m}x${nk}:randn --arg bf16:${nk}x${nk}:randn --arg bf16:${m}x${nk}"
for st in 0 8; do
  echo "== ism split-K x$splits 64x128 w4, stages $st (every kernel)"
  ncu --clock-control none --metrics $metrics -c 4 \
    "$run" /tmp/skinny_s$st.mlir $args 2>&1 |
    grep -E "^\s+(gpu__|sm__|dram__|lts__|launch__)|^  [a-zA-Z_]"
done
echo "== cuBLAS"
ncu --clock-control none --metrics $metrics -s 2 -c 2 \
  python3 -c "
import torch
a = torch.randn($m, $nk, dtype=torch.bfloat16, device='cuda')
b = torch.randn($nk, $nk, dtype=torch.bfloat16, device='cuda')
for _ in range(2): torch.matmul(a, b)
torch.cuda.synchronize()" 2>&1 |
  grep -E "^\s+(gpu__|sm__|dram__|lts__|launch__)|^  [a-zA-Z_]"
ncu --clock-control none --set full -c 1 -k regex:gemm_split \
  "$run" /tmp/skinny_s8.mlir $args > "$OUT/ism-skinny-full.txt" 2>&1
echo "full rc=$?"
grep -E "Duration|Warp Cycles Per Issued|Issue Slots Busy|Achieved Occupancy|DRAM Throughput|Memory Throughput" \
  "$OUT/ism-skinny-full.txt" | head -12
[ "${SWEEP:-1}" = 0 ] && exit 0
python3 bench/gemm.py bench --split-only --dtypes bf16 \
  --shapes 1x4096x4096,16x4096x4096,64x4096x4096,128x4096x4096,16x8192x8192,128x8192x8192 \
  --stages 0,6,8 --only 64x128x64_w4 --reps 30 --warmup 5 \
  --ism-run "$run" --out "$OUT/skinny" > "$OUT/skinny-stages.log" 2>&1
echo "stages rc=$?"
grep -E "TFLOP/s" "$OUT/skinny-stages.log" | grep -v "^bf16" | sort -t: -k1,1 -s | tail -80 > "$OUT/skinny-stages-rows.log"
sed -n '/^| dtype/,$p' "$OUT/skinny-stages.log"
