#!/usr/bin/env bash
# Runs ism's libFuzzer targets (tools/fuzz; built by
# scripts/setup.sh --sanitizers into build-asan/bin, or ISM_FUZZ_BIN: the
# static ones of scripts/pack-fuzzers.sh) with AddressSanitizer +
# UndefinedBehaviorSanitizer, from a seed corpus made of examples/ and
# test/ and an MLIR-aware dictionary.
#   scripts/fuzz.sh [--time SECONDS | --runs N] [--jobs J] [TARGET...]
# TARGET is parse, pipeline, run-args or interpret (default: all four, one
# after another). Each target keeps its corpus in build-asan/fuzz/TARGET/
# (grown across runs) and writes any crashing input there as crash-*,
# timeout-* or leak-*. Prints one line per target with the executions and
# the findings, and exits non-zero when any target found something.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${ISM_ASAN_BUILD_DIR:-$root/build-asan}
llvm=/usr/lib/llvm-22
limit=(-max_total_time=60)
jobs=1
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --time) limit=(-max_total_time="$2"); shift 2 ;;
    --runs) limit=(-runs="$2"); shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    parse|pipeline|run-args|interpret) targets+=("$1"); shift ;;
    *) echo "fuzz.sh: unknown argument '$1' (expected --time S, --runs N," \
            "--jobs J, parse, pipeline, run-args or interpret)" >&2
       exit 2 ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=(parse pipeline run-args interpret)

# The options and their reasons: scripts/sanitize.sh.
export ASAN_OPTIONS=${ASAN_OPTIONS:-verify_asan_link_order=0:allow_user_poisoning=0:abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:abort_on_error=1}
export ASAN_SYMBOLIZER_PATH=$llvm/bin/llvm-symbolizer

# Seeds: every module of examples/ and test/ (split-input-file tests cut at
# their `// -----` lines), and for run-args every --arg list of the lit
# tests plus small .npy files.
seed_modules() {
  local out=$1 n=0
  mkdir -p "$out"
  while IFS= read -r f; do
    if grep -q -- '^// -----' "$f"; then
      awk -v out="$out" -v base="$(basename "$f")" '
        /^\/\/ -----/ { n++; next }
        { print > (out "/" base "." n) }' "$f"
    else
      cp "$f" "$out/$(basename "$f")"
    fi
    n=$((n + 1))
  done < <(find "$root/examples" "$root/test" -name '*.mlir' | sort)
}
seed_args() {
  local out=$1
  mkdir -p "$out"
  # One seed per lit RUN command that passes --arg: its specs, one a line.
  grep -rhoE -- "(--arg [^ ]+ *(RUN: *)?(\\\\)? *)+" "$root/test" |
    sed -E 's/RUN://g; s/\\//g' | awk '{
      line = ""; for (i = 1; i <= NF; i++) if ($i != "--arg") line = line $i "\n";
      printf "%s", line > (out "/args." NR) }' out="$out"
  python3 - "$out" <<'PY'
import sys, numpy as np
out = sys.argv[1]
arrays = {"f32": np.arange(6, dtype=np.float32).reshape(2, 3),
          "f16": np.ones(5, dtype=np.float16), "i32": np.arange(4, dtype=np.int32),
          "bf16": np.zeros((2, 2), dtype=np.uint16), "f64": np.array([1.5]),
          "fortran": np.asfortranarray(np.ones((2, 3), dtype=np.float32))}
for name, a in arrays.items():
    path = f"{out}/npy.{name}.npy"
    np.save(path, a)
    data = open(path, "rb").read()
    open(f"{out}/npy.{name}", "wb").write(b"npy:x.npy\n\0" + data)
    open(path, "wb").write(b"\0" + data)
PY
}

status=0
for target in "${targets[@]}"; do
  bin=${ISM_FUZZ_BIN:-$build/bin}/ism-$target-fuzzer
  if [ ! -x "$bin" ]; then
    echo "fuzz.sh: no $bin (build it: scripts/setup.sh --sanitizers)" >&2
    exit 1
  fi
  work=$build/fuzz/$target
  seeds=$work/seeds
  rm -rf "$seeds"
  if [ "$target" = run-args ]; then
    seed_args "$seeds"; dict=$root/tools/fuzz/run-args.dict
  else
    seed_modules "$seeds"; dict=$root/tools/fuzz/mlir.dict
  fi
  mkdir -p "$work/corpus"
  rm -f "$work"/fuzz-*.log
  parallel=()
  [ "$jobs" -gt 1 ] && parallel=(-jobs="$jobs" -workers="$jobs")
  log=$work/last.log
  # -timeout and -report_slow_units: one input may take 30 s (a sanitized
  # pipeline run of the largest seeds, the warp-specialized GEMMs, takes
  # 10-15 s on two cores; that is not a hang); -rss_limit_mb: a leak or a
  # huge allocation is a finding.
  (cd "$work" && "$bin" -dict="$dict" -max_len=16384 -timeout=30 \
      -report_slow_units=30 \
      -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="$work/" \
      "${parallel[@]}" "${limit[@]}" \
      "$work/corpus" "$seeds") > "$log" 2>&1
  rc=$?
  stats=("$log")
  # With jobs, each job's log has its own final stats (and the main log
  # repeats them).
  if [ "$jobs" -gt 1 ]; then stats=("$work"/fuzz-*.log); fi
  runs=$(cat "${stats[@]}" | sed -n 's/^stat::number_of_executed_units: *//p' |
         awk '{s += $1} END {print s + 0}')
  findings=$(ls "$work" | grep -cE '^(crash|timeout|leak|oom|slow-unit)-')
  echo "fuzz $target: $runs executions, $findings findings, exit $rc (log: $log)"
  if [ "$rc" -ne 0 ] || [ "$findings" -ne 0 ]; then
    status=1
    grep -m 5 -E "ERROR|runtime error|deadly signal|Timeout" "$log" >&2
  fi
done
exit $status
