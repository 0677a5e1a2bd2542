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

/// The options compileModule compiles a tile-level module with: `options`,
/// IsmToPTXOptions::fuseCoschedules for CoscheduleMode::Fused, and `trace`
/// (GPU-level modules compile with `options` alone). With the module's text,
/// they determine the result (CompileCache::computeKey hashes them).
IsmToPTXOptions getCompileOptions(const PTXOptions &options,
                                  CoscheduleMode coschedule, bool trace);

/// What compileModule checks before compiling: `trace` needs
/// CoscheduleMode::Fused and tile-level kernels.
llvm::Error checkCompileRequest(ModuleOp module, CoscheduleMode coschedule,
                                bool trace);

/// What compileModule checks of its result: with CoscheduleMode::Fused,
/// a fused kernel with CompiledKernel::fused facts for every ism.coschedule
/// of `module` (or the region listed in CompiledModule::unfused); with
/// `trace`, every fused kernel compiled for tracing. compileModuleCached
/// applies the same checks to what it reads from the cache.
llvm::Error checkCompiledModule(ModuleOp module, const CompiledModule &compiled,
                                CoscheduleMode coschedule, bool trace);

} // namespace mlir::ism::runner

#endif // ISM_RUNNER_COMPILE_H
