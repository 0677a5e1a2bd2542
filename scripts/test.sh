#!/usr/bin/env bash
# Runs every ism test: sets up and builds (scripts/setup.sh), then the lit
# suite, the Python (pytest) suite in test/python (the tutorials' CPU parts
# included), and the docs site build (scripts/docs.sh: the generated
# reference pages, the figures check, mkdocs build --strict), which counts
# as one test. Prints a closing line "tests: N passed, N failed, N skipped"
# and exits non-zero when anything failed.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${ISM_BUILD_DIR:-$root/build}

bash "$root/scripts/setup.sh" || exit 1

source "$root/scripts/test-counts.sh"
log=$(mktemp)
cmake --build "$build" --target check-ism 2>&1 | tee "$log"
add_lit_counts "$log" "${PIPESTATUS[0]}"

# The Python suite, against the package in the build tree; its compile
# cache is in the build tree too (docs/runner.md, "Compile cache"), emptied
# first, as lit's.
python=${PYTHON:-python3}
rm -rf "$build/test/ism-cache-python"
ISM_BUILD_DIR="$build" ISM_CACHE_DIR="$build/test/ism-cache-python" \
  "$python" -m pytest -q -rs -p no:cacheprovider \
  "$root/test/python" 2>&1 | tee "$log"
add_pytest_counts "$log" "${PIPESTATUS[0]}"
rm -f "$log"

# The docs site: broken links, missing pages or figures fail it.
if ISM_BUILD_DIR="$build" PYTHON="$python" bash "$root/scripts/docs.sh"; then
  passed=$(( passed + 1 ))
else
  echo "docs: scripts/docs.sh failed" >&2
  failed=$(( failed + 1 ))
fi
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
