//===- Compile.h - Compiling modules for ism-run ----------------*- C++ -*-===//
//
// The one place where ism-run turns a module into PTX.
//
//===----------------------------------------------------------------------===//

#ifndef ISM_RUNNER_COMPILE_H
#define ISM_RUNNER_COMPILE_H

#include "ism/Pipelines/Pipelines.h"
#include "ism/Runner/HostExecutor.h"

namespace mlir::ism::runner {

/// True when `module` holds tile-level kernels (`ism.kernel`).
bool hasTileKernels(ModuleOp module);

/// The number of `ism.coschedule` ops in `module`.
unsigned getNumCoschedules(ModuleOp module);

/// Compiles `module` to PTX: tile-level modules through the ism lowering,
/// GPU-level modules (kernels in `gpu.module`s) through
/// compileGPUModuleToPTX. `module` is not changed.
///
/// `coschedule` says how the host function will run its `ism.coschedule`
/// regions. CoscheduleMode::Fused compiles with
/// IsmToPTXOptions::fuseCoschedules, and fails unless the result names a
/// fused kernel (CompiledModule::coschedules, with CompiledKernel::fused
/// facts) for every ism.coschedule of the module. The other modes move the
/// launches out of the regions before compiling, so that they compile as
/// ordinary launches.
///
/// `trace` (with CoscheduleMode::Fused, tile-level modules only) compiles
/// the fused kernels with per-work-item recording (IsmToPTXOptions::trace,
/// `ism-run --trace`), and fails unless every fused kernel of the result
/// says so (CompiledKernel::Fused::trace).
llvm::Expected<CompiledModule>
compileModule(ModuleOp module, const PTXOptions &options,
              CoscheduleMode coschedule = CoscheduleMode::Sequential,
              bool trace = false);

} // namespace mlir::ism::runner

#endif // ISM_RUNNER_COMPILE_H
