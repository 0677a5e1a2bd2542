# Sourced by scripts/test.sh and scripts/sanitize.sh: adds the results of a
# lit run and a pytest run to the totals `passed`, `failed` and `skipped`.

passed=0
failed=0
skipped=0

# add_lit_counts LOG STATUS: lit's summary lines in LOG ("  Passed: 7
# (100.00%)", names padded to one width, "  Passed     : 12", when several
# kinds are listed; absent kinds count 0). A non-zero STATUS with no failed
# test counts one failure: the build or lit itself failed before any test.
add_lit_counts() {
  local log=$1 status=$2 f
  count() {
    local n
    n=$(sed -n "s/^ *$1 *: *\([0-9][0-9]*\).*/\1/p" "$log" | tail -n 1)
    echo "${n:-0}"
  }
  f=$(( $(count Failed) + $(count 'Unexpectedly Passed') ))
  [ "$status" -ne 0 ] && [ "$f" -eq 0 ] && f=1
  passed=$(( passed + $(count Passed) + $(count 'Expectedly Failed') ))
  failed=$(( failed + f ))
  skipped=$(( skipped + $(count Unsupported) ))
}

# add_pytest_counts LOG STATUS: pytest's summary line, the last of LOG
# ("== 3 failed, 30 passed, 2 skipped in 1.2s =="). A non-zero STATUS with
# no failed test counts one failure: pytest could not run, or collected
# nothing (exit code 5).
add_pytest_counts() {
  local log=$1 status=$2 f
  pycount() {
    local n
    n=$(tail -n 1 "$log" | grep -o "[0-9][0-9]* $1" | grep -o "^[0-9]*")
    echo "${n:-0}"
  }
  f=$(( $(pycount failed) + $(pycount error) + $(pycount errors) ))
  if [ "$status" -eq 5 ]; then
    echo "pytest collected no tests from test/python" >&2
  fi
  [ "$status" -ne 0 ] && [ "$f" -eq 0 ] && f=1
  passed=$(( passed + $(pycount passed) ))
  failed=$(( failed + f ))
  skipped=$(( skipped + $(pycount skipped) ))
}
