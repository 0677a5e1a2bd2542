#!/usr/bin/env bash
# scripts/gpu-tests.sh --sanitize: runs each kernel of
# test/Runner/Inputs/sanitize-cases.txt with `ism-run --check` under
# compute-sanitizer, once per tool.
#   scripts/gpu-sanitize.sh ISM_RUN TOOLS [LOG_DIR]
# ISM_SANITIZE_JOBS (default 4) runs run side by side on the GPU;
# ISM_SANITIZE_FILTER (an extended regular expression) keeps the cases
# whose names match it.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
ism_run=$1
IFS=, read -r -a tools <<< "$2"
log_dir=${3:-}
for tool in "${tools[@]}"; do
  case $tool in
    memcheck|racecheck|synccheck) ;;
    *) echo "gpu-tests: unknown compute-sanitizer tool '$tool' (expected" \
            "memcheck, racecheck or synccheck)" >&2; exit 2 ;;
  esac
done
sanitizer=$(command -v compute-sanitizer ||
            echo /usr/local/cuda/bin/compute-sanitizer)
[ -x "$sanitizer" ] || { echo "gpu-tests: no compute-sanitizer" >&2; exit 1; }

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
[ -n "$log_dir" ] || log_dir=$scratch/logs
mkdir -p "$log_dir"
# The inputs the cases name under %t.
python3 "$root/test/Runner/Inputs/make_csr.py" 500 700 40 7 "$scratch/csr." ||
  exit 1
python3 "$root/test/Runner/Inputs/make_row_ids.py" 100 90 3 "$scratch/ids.npy" ||
  exit 1
sed 's/ism.coschedule warp_specialized/ism.coschedule block_interleaved/' \
  "$root/examples/coschedule_matmul_softmax.mlir" > "$scratch/interleaved.mlir"
sed 's/ism.coschedule warp_specialized {/ism.coschedule warp_specialized attributes {fallback = false} {/' \
  "$root/examples/coschedule_rmsnorm_softmax.mlir" > "$scratch/nofallback.mlir"
# The SpMM's gathers pipelined through a shared-memory ring
# (ism-pipeline-gathers), alone and in the fused pair.
sed 's/num_warps = 4 : i32}/num_warps = 4 : i32, gather_stages = 2 : i32}/' \
  "$root/examples/spmm.mlir" > "$scratch/spmm_gathers2.mlir"
sed 's/num_warps = 4 : i32}/num_warps = 4 : i32, gather_stages = 2 : i32}/' \
  "$root/examples/coschedule_matmul_spmm.mlir" > "$scratch/pair_gathers2.mlir"

results=$scratch/results
mkdir -p "$results"
jobs=${ISM_SANITIZE_JOBS:-4}

# One run: NAME TOOL CONTROL INDEX ARGS...; writes results/INDEX.
run_case() {
  local name=$1 tool=$2 control=$3 index=$4
  shift 4
  local log check=--check rc errors summary verdict
  log=$log_dir/$index-$tool-$(echo "$name" | tr -c 'a-zA-Z0-9\n' '_').log
  [ "$control" != 0 ] && check=
  "$sanitizer" --tool "$tool" --print-limit 20 "$ism_run" "$@" $check \
    > "$log" 2>&1
  rc=$?
  if [ "$tool" = racecheck ]; then
    # "RACECHECK SUMMARY: 3 hazards displayed (2 errors, 1 warnings)"
    errors=$(sed -n 's/.*RACECHECK SUMMARY: .*(\([0-9]*\) errors*, \([0-9]*\) warnings*).*/\1+\2/p' "$log" | tail -n 1)
    summary=$(grep -c "RACECHECK SUMMARY" "$log")
    errors=$(( ${errors:-0} ))
  else
    errors=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) errors*$/\1/p' "$log" | tail -n 1)
    summary=$(grep -c "ERROR SUMMARY" "$log")
    errors=${errors:-0}
  fi
  if [ "$control" = 1 ]; then
    if [ "$errors" -gt 0 ]; then verdict="ok (reported, as it must be)"
    else verdict="FAIL: the out-of-bounds store went unreported"; fi
  elif [ "$summary" -eq 0 ]; then
    verdict="FAIL: no summary from compute-sanitizer (exit $rc)"
  elif [ "$errors" -ne 0 ]; then
    verdict="FAIL: $errors errors/hazards"
  elif [ "$rc" -ne 0 ] || { [ -n "$check" ] &&
       { ! grep -q "check: .*: ok" "$log" || grep -q "check: .*FAILED" "$log"; }; }; then
    verdict="FAIL: ism-run exit $rc (check failed?)"
  else
    verdict=ok
  fi
  printf '%-10s %-44s %6s  %s\n' "$tool" "$name" "$errors" "$verdict" |
    tee "$results/$index"
}

n=0
while IFS='|' read -r name args; do
  name=$(echo "$name" | sed 's/ *$//')
  case $name in ''|'#'*) continue ;; esac
  if [ -n "${ISM_SANITIZE_FILTER:-}" ] &&
     ! echo "$name" | grep -Eq -- "$ISM_SANITIZE_FILTER"; then
    continue
  fi
  args=$(echo "$args" | sed "s#%ex#$root/examples#g; s#%pin#$root/test/Pipelines/Inputs#g; s#%in#$root/test/Runner/Inputs#g; s#%t#$scratch#g")
  control=0
  case $name in expect-error:*) control=1 ;; run:*) control=2 ;; esac
  for tool in "${tools[@]}"; do
    [ "$control" = 1 ] && [ "$tool" != memcheck ] && continue
    n=$((n + 1))
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
    # shellcheck disable=SC2086
    run_case "$name" "$tool" "$control" "$(printf '%03d' "$n")" $args &
  done
done < "$root/test/Runner/Inputs/sanitize-cases.txt"
wait
failures=$(cat "$results"/* | grep -c "FAIL")
table=$scratch/table
cat "$results"/* | sort -s -k1,1 > "$table"

echo
echo "compute-sanitizer: $n runs, $failures failed (logs: $log_dir)"
printf '%-10s %-44s %6s  %s\n' tool kernel errors verdict
cat "$table"
[ "$failures" -eq 0 ]
