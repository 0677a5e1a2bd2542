#!/usr/bin/env bash
# Runs every ism test: sets up and builds (scripts/setup.sh), then the lit
# suite and the Python (pytest) suite in test/python. Prints a closing line "tests: N passed, N failed, N skipped" and
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

if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
  failed=1 # the build or lit itself failed before any test ran
fi

# The Python suite, against the package in the build tree.
python=${PYTHON:-python3}
ISM_BUILD_DIR="$build" "$python" -m pytest -q -rs -p no:cacheprovider \
  "$root/test/python" 2>&1 | tee "$log"
pystatus=${PIPESTATUS[0]}
# pytest's summary line: "== 3 failed, 30 passed, 2 skipped in 1.2s ==".
pycount() {
  local n
  n=$(tail -n 1 "$log" | grep -o "[0-9][0-9]* $1" | grep -o "^[0-9]*")
  echo "${n:-0}"
}
pypassed=$(pycount passed)
pyfailed=$(( $(pycount failed) + $(pycount error) + $(pycount errors) ))
pyskipped=$(pycount skipped)
rm -f "$log"
if [ "$pystatus" -eq 5 ]; then
  echo "test.sh: pytest collected no tests from test/python" >&2
fi
if [ "$pystatus" -ne 0 ] && [ "$pyfailed" -eq 0 ]; then
  pyfailed=1 # pytest could not run, or collected nothing (exit code 5)
fi
passed=$(( passed + pypassed ))
failed=$(( failed + pyfailed ))
skipped=$(( skipped + pyskipped ))
[ "$pystatus" -eq 0 ] || status=1
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ "$status" -eq 0 ] && [ "$failed" -eq 0 ]
