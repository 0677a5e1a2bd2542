# -*- Python -*-
# lit configuration for the ism regression tests.

import os
import shutil
import subprocess
import sys

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "ism"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.ism_obj_root, "test")
config.excludes = ["CMakeLists.txt", "README.md", "lit.cfg.py", "lit.site.cfg.py",
                   "Inputs"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%ism_src_root", config.ism_src_root))
config.substitutions.append(("%ism_obj_root", config.ism_obj_root))
config.substitutions.append(
    ("%ism_examples", os.path.join(config.ism_src_root, "examples")))

# Every FileCheck variable is scoped to its CHECK-LABEL block.
config.environment["FILECHECK_OPTS"] = "--enable-var-scope"

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()
# FileCheck, not, count and split-file come from the LLVM tools directory.
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

# ism-run (and the Python package) cache compiled modules on disk
# (docs/runner.md, "Compile cache"): the suite's cache is a directory of the
# test tree, emptied when the suite starts, never the user's ~/.cache/ism.
# scripts/gpu-tests.sh points config.ism_obj_root at its own temporary tree.
ism_cache_dir = os.path.join(config.test_exec_root, "ism-cache")
shutil.rmtree(ism_cache_dir, ignore_errors=True)
config.environment["ISM_CACHE_DIR"] = ism_cache_dir
config.substitutions.append(("%ism_cache_dir", ism_cache_dir))

tool_dirs = [config.ism_tools_dir, config.llvm_tools_dir]
# scripts/gpu-tests.sh runs the GPU subset with only ism-run at hand.
gpu_subset = lit_config.params.get("gpu_subset") == "1"
tools = [ToolSubst("ism-opt", unresolved="ignore" if gpu_subset else "fatal"),
         ToolSubst("ism-run", unresolved="fatal")]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# The libFuzzer targets exist in the sanitizer build (scripts/sanitize.sh);
# there, test/Fuzz replays every input they ever crashed on.
fuzzers = ["ism-parse-fuzzer", "ism-pipeline-fuzzer", "ism-run-args-fuzzer",
           "ism-interpret-fuzzer"]
if all(os.path.exists(os.path.join(config.ism_tools_dir, f)) for f in fuzzers):
    config.available_features.add("fuzzers")
    llvm_config.add_tool_substitutions(fuzzers, [config.ism_tools_dir])

# ptxas assembles generated PTX for sm_90a where the CUDA toolkit is
# installed; tests that need it say `REQUIRES: ptxas`.
ptxas = shutil.which("ptxas") or (
    os.path.join(config.cuda_toolkit_dir, "bin", "ptxas")
    if config.cuda_toolkit_dir else None)
if ptxas and os.path.exists(ptxas):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))

# A C compiler builds test/Runner/Inputs/fake_libcuda.c, a stand-in CUDA
# driver with which tests check ism-run's GPU-side errors (device memory,
# --timeout) on any machine; they say `REQUIRES: host-cc`.
# They run ism-run with LD_LIBRARY_PATH=DIR:%ld_library_path (what the
# suite's environment had, for the libraries ism-run itself may need).
host_cc = shutil.which(os.environ.get("CC", "cc"))
if host_cc:
    config.available_features.add("host-cc")
    config.substitutions.append(("%host_cc", host_cc))
    config.substitutions.append(
        ("%ld_library_path", config.environment.get("LD_LIBRARY_PATH", "")))

# GPU tests say `REQUIRES: cuda-gpu`: the feature is set only when ism-run
# finds a CUDA driver and a GPU. Tests of tile-level kernels on the GPU also
# need `ism-to-gpu`, set when this build can lower ism.kernel to PTX.
ism_run = os.path.join(config.ism_tools_dir, "ism-run")


def ism_run_succeeds(*args):
    try:
        return subprocess.run([ism_run, *args], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL,
                              env={**os.environ,
                                   "ISM_CACHE_DIR": ism_cache_dir},
                              timeout=120).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


if ism_run_succeeds("--list-devices"):
    config.available_features.add("cuda-gpu")
if ism_run_succeeds("--emit=ptx", "--chip=sm_90a",
                    os.path.join(config.ism_src_root, "examples",
                                 "vector_add.mlir")):
    config.available_features.add("ism-to-gpu")

# NumPy checks --interpret results in tests that say `REQUIRES: numpy`; the
# Python that runs them is the first of lit's own and python3 on PATH that
# has it.
for python in [sys.executable, shutil.which("python3")]:
    if not python:
        continue
    probe = subprocess.run(
        [python, "-c", "import sys, numpy; print(sys.executable)"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    if probe.returncode == 0:
        config.available_features.add("numpy")
        # The real interpreter, not a shim that depends on the environment.
        config.substitutions.append(("%numpy_python", probe.stdout.strip()))
        break
