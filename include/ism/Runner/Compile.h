//===- Compile.h - Compiling modules for ism-run ----------------*- C++ -*-===//
//
// The one place where ism-run turns a module into PTX.
//
//===----------------------------------------------------------------------===//

#ifndef ISM_RUNNER_COMPILE_H
#define ISM_RUNNER_COMPILE_H

#include "ism/Pipelines/Pipelines.h"

namespace mlir::ism::runner {

/// True when `module` holds tile-level kernels (`ism.kernel`).
bool hasTileKernels(ModuleOp module);

/// Compiles `module` to PTX: tile-level modules through the ism lowering,
/// GPU-level modules (kernels in `gpu.module`s) through
/// compileGPUModuleToPTX. `module` is not changed.
llvm::Expected<CompiledModule> compileModule(ModuleOp module,
                                             const PTXOptions &options);

} // namespace mlir::ism::runner

#endif // ISM_RUNNER_COMPILE_H
