#!/usr/bin/env bash
# Runs exactly the GPU subset of the lit suite (test/Runner/gpu-*.test) with
# a given ism-run binary, from a source checkout or from the package that
# scripts/pack-runner.sh makes.
#   scripts/gpu-tests.sh [ISM_RUN]
#   scripts/gpu-tests.sh --sanitize[=TOOLS] [--log-dir DIR] [ISM_RUN]
# ISM_RUN defaults to bin/ism-run (package) or build/bin/ism-run (checkout).
# --sanitize runs instead every GPU kernel of the suite (the examples, every
# GEMM variant, the fused co-scheduled kernels: the list is
# test/Runner/Inputs/sanitize-cases.txt) on small shapes with --check under
# compute-sanitizer, once per tool (TOOLS: a comma-separated subset of
# memcheck,racecheck,synccheck; default all three), prints one line per
# kernel and tool and a table last, keeps each log under DIR (default: a
# temporary directory), and fails on any error, hazard or failed check, or
# when the control kernel's out-of-bounds store goes unreported.
# FileCheck and not come from the package's bin/ or /usr/lib/llvm-22/bin,
# lit from the package's lit/ or /usr/lib/llvm-22/utils/lit.
# Fails when no GPU is found, so that an all-unsupported run cannot pass.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
sanitize=
log_dir=
while [ $# -gt 0 ]; do
  case "$1" in
    --sanitize) sanitize=memcheck,racecheck,synccheck; shift ;;
    --sanitize=*) sanitize=${1#--sanitize=}; shift ;;
    --log-dir) log_dir=$2; shift 2 ;;
    -*) echo "gpu-tests: unknown option '$1'" >&2; exit 2 ;;
    *) break ;;
  esac
done
if [ -x "$root/bin/ism-run" ]; then
  default_run=$root/bin/ism-run
  tools=$root/bin
  lit_dir=$root/lit
  export LD_LIBRARY_PATH=$root/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
else
  default_run=$root/build/bin/ism-run
  tools=/usr/lib/llvm-22/bin
  lit_dir=/usr/lib/llvm-22/utils/lit
fi
ism_run=$(readlink -f "${1:-$default_run}")
[ -x "$ism_run" ] || { echo "gpu-tests: no ism-run at $ism_run" >&2; exit 1; }

if ! "$ism_run" --list-devices; then
  echo "gpu-tests: ism-run finds no GPU; the GPU tests cannot run" >&2
  exit 1
fi

if [ -n "$sanitize" ]; then
  exec bash "$root/scripts/gpu-sanitize.sh" "$ism_run" "$sanitize" "$log_dir"
fi

# lit needs a site configuration: point it at this ism-run and these tools.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin" "$work/test"
ln -s "$ism_run" "$work/bin/ism-run"
cat > "$work/test/lit.site.cfg.py" <<CFG
import lit.llvm
config.llvm_tools_dir = "$tools"
config.mlir_obj_dir = "$work"
config.ism_obj_root = "$work"
config.ism_tools_dir = "$work/bin"
config.ism_src_root = "$root"
config.cuda_toolkit_dir = ""
lit.llvm.initialize(lit_config, config)
lit_config.load_config(config, "$root/test/lit.cfg.py")
CFG
PYTHONPATH=$lit_dir${PYTHONPATH:+:$PYTHONPATH} \
  python3 -c 'import sys; from lit.main import main; sys.argv[0] = "lit"; main()' \
  -v --param gpu_subset=1 --filter 'Runner/gpu-' "$work/test"
