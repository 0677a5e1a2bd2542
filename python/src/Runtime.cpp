//===- Runtime.cpp - running host functions from Python ---------*- C++ -*-===//
//
// The one place where the Python bindings call the GPU runner. The runner
// library (lib/Runtime, the CUDA driver wrapper `ism-run` uses) is not part
// of this build yet, so every run reports that it is unavailable; wiring it
// in means implementing runHostFunction on top of it and returning true from
// isRuntimeAvailable when it was linked.
//
//===----------------------------------------------------------------------===//

#include "IsmPython.h"

using namespace mlir::ism::python;

bool mlir::ism::python::isRuntimeAvailable() { return false; }

RunResult mlir::ism::python::runHostFunction(mlir::ModuleOp module,
                                             const std::string &entry,
                                             std::vector<HostArgument> &args,
                                             const RunOptions &options) {
  throw IsmError(
      ErrorKind::RuntimeUnavailable,
      "ism.run: this build has no GPU runner (the lib/Runtime CUDA driver "
      "wrapper that ism-run uses); host function @" +
          entry +
          " was not run. Detecting a missing CUDA driver or GPU is the "
          "runner's job once it is linked in.");
}
