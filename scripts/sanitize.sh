#!/usr/bin/env bash
# The sanitizer job of CI: builds ism's own code with AddressSanitizer +
# UndefinedBehaviorSanitizer (build-asan/, scripts/setup.sh --sanitizers;
# the LLVM/MLIR libraries stay as packaged), runs the lit suite and the
# Python suite there, and each libFuzzer target for a short bounded time
# (ISM_FUZZ_SECONDS, default 30) from the seed corpus. Any sanitizer report
# fails the run: the tools abort on the first one, which lit and pytest
# count as a failure. Prints "sanitize: N passed, N failed, N skipped".
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${ISM_ASAN_BUILD_DIR:-$root/build-asan}
export ISM_ASAN_BUILD_DIR=$build
llvm=/usr/lib/llvm-22

bash "$root/scripts/setup.sh" --sanitizers || exit 1

# abort_on_error: a report is a crash, which `not` does not turn into a
# pass. The symbolizer gives the reports file:line.
# verify_asan_link_order=0:allow_user_poisoning=0: the tools load the shared ASan runtime
# (-shared-libasan, so that Python can preload the same one) after
# libstdc++, which is harmless.
export ASAN_OPTIONS=verify_asan_link_order=0:allow_user_poisoning=0:abort_on_error=1:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:abort_on_error=1
export ASAN_SYMBOLIZER_PATH=$llvm/bin/llvm-symbolizer

log=$(mktemp)
trap 'rm -f "$log"' EXIT
source "$root/scripts/test-counts.sh"
"$llvm/bin/lit" -sv "$build/test" 2>&1 | tee "$log"
add_lit_counts "$log" "${PIPESTATUS[0]}"

# Python does not leak-check cleanly (interned objects live until exit), so
# LeakSanitizer is off for it; the extension uses the preloaded runtime.
asan_runtime=$("$llvm/bin/clang" -print-file-name=libclang_rt.asan-x86_64.so)
python=${PYTHON:-python3}
rm -rf "$build/test/ism-cache-python"
ISM_BUILD_DIR="$build" ISM_CACHE_DIR="$build/test/ism-cache-python" \
  LD_PRELOAD="$asan_runtime" \
  ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0" \
  "$python" -m pytest -q -rs -p no:cacheprovider "$root/test/python" 2>&1 |
  tee "$log"
add_pytest_counts "$log" "${PIPESTATUS[0]}"

# Each fuzz target, briefly: a crash, hang or report fails the run.
if bash "$root/scripts/fuzz.sh" --time "${ISM_FUZZ_SECONDS:-30}"; then
  passed=$(( passed + 1 ))
else
  failed=$(( failed + 1 ))
fi

echo "sanitize: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
