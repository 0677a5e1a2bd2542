#!/usr/bin/env bash
# scripts/gpu-tests.sh --sanitize: runs each kernel of
# test/Runner/Inputs/sanitize-cases.txt with `ism-run --check` under
# compute-sanitizer, once per tool.
#   scripts/gpu-sanitize.sh ISM_RUN TOOLS [LOG_DIR]
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
sed 's/ism.coschedule warp_specialized/ism.coschedule block_interleaved/' \
  "$root/examples/coschedule_matmul_softmax.mlir" > "$scratch/interleaved.mlir"
sed 's/ism.coschedule warp_specialized {/ism.coschedule warp_specialized attributes {fallback = false} {/' \
  "$root/examples/coschedule_rmsnorm_softmax.mlir" > "$scratch/nofallback.mlir"

table=$scratch/table
failures=0
n=0
while IFS='|' read -r name args; do
  name=$(echo "$name" | sed 's/ *$//')
  case $name in ''|'#'*) continue ;; esac
  args=$(echo "$args" | sed "s#%ex#$root/examples#g; s#%pin#$root/test/Pipelines/Inputs#g; s#%in#$root/test/Runner/Inputs#g; s#%t#$scratch#g")
  control=0
  case $name in expect-error:*) control=1 ;; esac
  for tool in "${tools[@]}"; do
    [ "$control" = 1 ] && [ "$tool" != memcheck ] && continue
    n=$((n + 1))
    log=$log_dir/$(printf '%02d' "$n")-$tool-$(echo "$name" | tr -c 'a-zA-Z0-9\n' '_').log
    check=--check
    [ "$control" = 1 ] && check=
    # shellcheck disable=SC2086
    "$sanitizer" --tool "$tool" --print-limit 20 "$ism_run" $args $check \
      > "$log" 2>&1
    rc=$?
    if [ "$tool" = racecheck ]; then
      # "RACECHECK SUMMARY: 3 hazards displayed (2 errors, 1 warnings)"
      errors=$(sed -n 's/.*RACECHECK SUMMARY: .*(\([0-9]*\) errors*, \([0-9]*\) warnings*).*/\1+\2/p' "$log" | tail -n 1)
      summary=$(grep -c "RACECHECK SUMMARY" "$log")
      errors=$(( ${errors:-0} ))
    else
      errors=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) error.*/\1/p' "$log" | tail -n 1)
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
    elif [ "$rc" -ne 0 ] || ! grep -q "check: .*: ok" "$log" ||
         grep -q "check: .*FAILED" "$log"; then
      verdict="FAIL: ism-run exit $rc (check failed?)"
    else
      verdict=ok
    fi
    case $verdict in FAIL*) failures=$((failures + 1)) ;; esac
    printf '%-10s %-44s %6s  %s\n' "$tool" "$name" "$errors" "$verdict" |
      tee -a "$table"
  done
done < "$root/test/Runner/Inputs/sanitize-cases.txt"

echo
echo "compute-sanitizer: $n runs, $failures failed (logs: $log_dir)"
printf '%-10s %-44s %6s  %s\n' tool kernel errors verdict
cat "$table"
[ "$failures" -eq 0 ]
