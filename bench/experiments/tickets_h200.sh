#!/usr/bin/env bash
# The GPU checks and benchmarks of acquire-release tickets (ism.atomic_rmw
# sem = acq_rel): decode attention merged in one launch and one-pass
# split-K. Run from a checkout on the H200 with the runner package and the
# abi3 wheel in dist/ (scripts/pack-runner.sh, scripts/build-wheel.sh), and
# OUT set to a directory for the logs:
#   OUT=/tmp/out bash bench/experiments/tickets_h200.sh [gpu|decode|gemm]...
# gpu: the GPU lit subset and the torch GPU tests (incl. repeated launches
# on one set of counters); decode: one launch against the two-launch
# version (decode_merge.py) and bench/attention.py --decode; gemm: the
# skinny shapes, split-K in one and two passes side by side (bf16; DT=f16
# for f16).
set -uo pipefail
source "$(dirname "$0")/h200_setup.sh" wheel
for step in "${@:-gpu decode gemm}"; do
  for s in $step; do
    case $s in
      gpu)
        gpu_tests
        ISM_TEST_INSTALLED=1 /tmp/v/bin/python -m pytest -q -p no:cacheprovider \
          test/python/test_launch_gpu.py > "$OUT/pytest-gpu.log" 2>&1
        echo "pytest rc=$?"; tail -2 "$OUT/pytest-gpu.log" ;;
      decode)
        /tmp/v/bin/python bench/experiments/decode_merge.py 2>&1 |
          tee "$OUT/decode_merge.log"
        /tmp/v/bin/python bench/attention.py --decode --out "$OUT/att" \
          > "$OUT/decode.log" 2>&1
        echo "decode rc=$?"; tail -8 "$OUT/decode.log" ;;
      gemm)
        python3 bench/gemm.py bench --skinny --split-only --dtypes "${DT:-bf16}" \
          --ism-run /tmp/r/ism-runner/bin/ism-run --reps 30 --warmup 5 \
          --out "$OUT/gemm" > "$OUT/gemm-skinny.log" 2>&1
        echo "gemm rc=$?"; tail -14 "$OUT/gemm-skinny.log" ;;
      *) echo "tickets_h200.sh: unknown step '$s' (gpu, decode or gemm)" >&2
         exit 2 ;;
    esac
  done
done
