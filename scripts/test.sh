#!/usr/bin/env bash
# Runs every ism test: sets up and builds (scripts/setup.sh), then the lit
# suite. Prints a closing line "tests: N passed, N failed, N skipped" and
# exits non-zero when anything failed.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${ISM_BUILD_DIR:-$root/build}

bash "$root/scripts/setup.sh" || exit 1

log=$(mktemp)
cmake --build "$build" --target check-ism 2>&1 | tee "$log"
status=${PIPESTATUS[0]}

# lit's summary lines: "  Passed: 7 (100.00%)", names padded to one width
# ("  Passed     : 12") when several kinds are listed; absent kinds count 0.
count() {
  local n
  n=$(sed -n "s/^ *$1 *: *\([0-9][0-9]*\).*/\1/p" "$log" | tail -n 1)
  echo "${n:-0}"
}
passed=$(( $(count Passed) + $(count 'Expectedly Failed') ))
failed=$(( $(count Failed) + $(count 'Unexpectedly Passed') ))
skipped=$(count Unsupported)
rm -f "$log"

if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
  failed=1 # the build or lit itself failed before any test ran
fi
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ "$status" -eq 0 ] && [ "$failed" -eq 0 ]
