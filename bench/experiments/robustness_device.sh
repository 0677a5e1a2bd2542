#!/usr/bin/env bash
# On the H200 host (issue #13): the GPU tests and every GPU kernel under
# compute-sanitizer with the runner package, and fuzz campaigns with the
# static fuzz targets of scripts/pack-fuzzers.sh on the host's CPU cores.
#   bench/experiments/robustness_device.sh OUT [gpu] [parse RUNS_PER_JOB]
#       [pipeline SECONDS] [jobs J]
# Expects dist/ism-runner-*.tar.xz and dist-fuzz/ism-fuzzers.tar.xz (carried),
# and optionally fuzz-corpus/TARGET (a corpus from an earlier campaign).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$1; shift
mkdir -p "$out" /tmp/r /tmp/f
tar xJf "$root"/dist/ism-runner-*.tar.xz -C /tmp/r
tar xJf "$root"/dist-fuzz/ism-fuzzers.tar.xz -C /tmp/f
run=/tmp/r/ism-runner/bin/ism-run
jobs=15
work=/tmp/fuzz-build/fuzz
while [ $# -gt 0 ]; do
  case $1 in
    jobs) jobs=$2; shift 2 ;;
    gpu)
      (cd /tmp/r/ism-runner && scripts/gpu-tests.sh > "$out/gpu-tests.log" 2>&1)
      echo "gpu-tests: exit $?; $(grep -E '^ +(Passed|Failed|Unsupported)' "$out/gpu-tests.log" | tr -s ' ' | tr '\n' ' ')"
      ISM_SANITIZE_JOBS=8 "$root/scripts/gpu-tests.sh" --sanitize --log-dir /tmp/san "$run" > "$out/sanitize.log" 2>&1
      echo "sanitize: exit $?; $(grep '^compute-sanitizer:' "$out/sanitize.log")"
      tar czf "$out/sanitize-logs.tgz" -C /tmp san
      shift ;;
    parse|pipeline)
      target=$1 amount=$2; shift 2
      mkdir -p "$work/$target/corpus"
      [ -d "$root/fuzz-corpus/$target" ] && cp -r "$root/fuzz-corpus/$target/." "$work/$target/corpus/"
      if [ "$target" = parse ]; then limit=(--runs "$amount"); else limit=(--time "$amount"); fi
      # alloc_dealloc_mismatch=0: in the static targets, LLVM's archives and
      # the static libstdc++ pair operator new[] and delete[] that ASan sees
      # as malloc and delete[] (the dynamically linked targets report
      # nothing on the same inputs).
      ASAN_OPTIONS=allow_user_poisoning=0:abort_on_error=1:detect_leaks=1:alloc_dealloc_mismatch=0 \
      ISM_FUZZ_BIN=/tmp/f/bin ISM_ASAN_BUILD_DIR=/tmp/fuzz-build \
        bash "$root/scripts/fuzz.sh" "${limit[@]}" --jobs "$jobs" "$target" \
        > "$out/fuzz-$target.out" 2>&1
      echo "$(grep '^fuzz' "$out/fuzz-$target.out")"
      # Executions per job from the last progress line when a job was cut.
      n=0
      for log in /tmp/fuzz-build/fuzz/$target/fuzz-*.log; do
        k=$(grep -oE '^#[0-9]+' "$log" | tail -n 1 | tr -d '#')
        n=$((n + ${k:-0}))
      done
      echo "fuzz $target: $n executions by the progress lines of $jobs jobs"
      ls /tmp/fuzz-build/fuzz/$target | grep -E '^(crash|timeout|leak|oom)-' || true
      mkdir -p "$out/corpus-$target" && cp -r /tmp/fuzz-build/fuzz/$target/corpus/. "$out/corpus-$target/"
      cp /tmp/fuzz-build/fuzz/$target/crash-* /tmp/fuzz-build/fuzz/$target/timeout-* "$out/" 2>/dev/null
      tail -n 3 /tmp/fuzz-build/fuzz/$target/fuzz-0.log > "$out/fuzz-$target-job0.tail" ;;
    *) echo "robustness_device: unknown step '$1'" >&2; exit 2 ;;
  esac
done
