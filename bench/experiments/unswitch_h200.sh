#!/usr/bin/env bash
# The GPU checks and benchmarks of ism-unswitch-access-tests. Run from a
# checkout on the H200 with the runner package and the abi3 wheel in dist/
# (scripts/pack-runner.sh, scripts/build-wheel.sh), and OUT set to a
# directory for the logs:
#   OUT=/tmp/out bash bench/experiments/unswitch_h200.sh [gpu|rope|simt]...
# gpu: the GPU lit subset and the installed package's pytest suite; rope:
# the RoPE kernels with the pass on and off (rope_variants.py, 'u'
# configurations), then the example's --check and --bench; simt: the SIMT
# examples with the pass on and off (unswitch_variants.py), then
# bench/bench.py (ism against PyTorch and Triton).
set -uo pipefail
source "$(dirname "$0")/h200_setup.sh" wheel
py=/tmp/v/bin/python
for step in "${@:-gpu rope simt}"; do
  for s in $step; do
    case $s in
      gpu)
        gpu_tests
        ISM_TEST_INSTALLED=1 $py -m pytest -q -p no:cacheprovider \
          test/python > "$OUT/pytest-gpu.log" 2>&1
        echo "pytest rc=$?"; tail -2 "$OUT/pytest-gpu.log" ;;
      rope)
        $py bench/experiments/rope_variants.py --seqs "${SEQS:-512,1024,2048,8192}" \
          --configs "${CONFIGS:-1x8,1x8u,1x16b4,1x16b4u}" --fwd-only \
          > "$OUT/rope-variants.log" 2>&1
        echo "rope variants rc=$?"
        grep -E "^seq|median" "$OUT/rope-variants.log" |
          sed -E 's/ +[0-9.]+ +[0-9.]+ +[0-9.]+ +median/ median/'
        $py python/examples/rope_autograd.py --check > "$OUT/rope-check.log" 2>&1
        echo "rope check rc=$?"; tail -1 "$OUT/rope-check.log"
        $py python/examples/rope_autograd.py --bench --out "$OUT/rope" \
          > "$OUT/rope-bench.log" 2>&1
        echo "rope bench rc=$?"; sed -n '/^ *seq/,/^x torch/p' "$OUT/rope-bench.log" ;;
      simt)
        $py bench/experiments/unswitch_variants.py --ism-run "$run" \
          --out /tmp/unswitch > "$OUT/unswitch-simt.log" 2>&1
        echo "unswitch simt rc=$?"; cat "$OUT/unswitch-simt.log"
        $py bench/bench.py --ism-run "$run" --out "$OUT/bench" \
          > "$OUT/bench.log" 2>&1
        echo "bench rc=$?"; sed -n '/^kernel/,$p' "$OUT/bench.log" ;;
      *) echo "unswitch_h200.sh: unknown step '$s' (gpu, rope or simt)" >&2
         exit 2 ;;
    esac
  done
done
