# -*- Python -*-
# lit configuration for the ism regression tests.

import os
import shutil

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "ism"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.ism_obj_root, "test")
config.excludes = ["CMakeLists.txt", "README.md", "lit.cfg.py", "lit.site.cfg.py"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%ism_src_root", config.ism_src_root))
config.substitutions.append(
    ("%ism_examples", os.path.join(config.ism_src_root, "examples")))

# Every FileCheck variable is scoped to its CHECK-LABEL block.
config.environment["FILECHECK_OPTS"] = "--enable-var-scope"

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()
# FileCheck, not, count and split-file come from the LLVM tools directory.
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tool_dirs = [config.ism_tools_dir, config.llvm_tools_dir]
tools = [ToolSubst("ism-opt", unresolved="fatal")]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# ptxas assembles generated PTX for sm_90a where the CUDA toolkit is
# installed; tests that need it say `REQUIRES: ptxas`.
ptxas = shutil.which("ptxas") or (
    os.path.join(config.cuda_toolkit_dir, "bin", "ptxas")
    if config.cuda_toolkit_dir else None)
if ptxas and os.path.exists(ptxas):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
