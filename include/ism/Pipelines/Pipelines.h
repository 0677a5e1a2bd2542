//===- Pipelines.h - ism compilation pipelines ------------------*- C++ -*-===//
//
// The pipelines that take ism modules to PTX, and the in-process entry point
// the runner and the Python bindings compile through.
//
//===----------------------------------------------------------------------===//

#ifndef ISM_PIPELINES_PIPELINES_H
#define ISM_PIPELINES_PIPELINES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

#include <string>

namespace mlir::ism {

/// Options shared by the pipelines to PTX.
struct PTXOptions {
  /// The target GPU architecture, e.g. "sm_90a" or "sm_80".
  std::string chip = "sm_90a";
  /// PTX ISA features passed to the NVPTX backend.
  std::string features = "+ptx80";
  /// LLVM optimisation level for the device code (0-3).
  unsigned optLevel = 3;
};

/// Adds the passes that take every `gpu.module` of a module (GPU dialect,
/// with arith/math/memref/scf/vector/nvgpu/nvvm ops inside) to a
/// `gpu.binary` holding PTX assembly: NVVM target attachment, lowering to
/// the LLVM/NVVM dialects, and the NVPTX backend. Host code is left alone.
void buildGPUToPTXPipeline(OpPassManager &pm, const PTXOptions &options);

/// What the runner needs to know to launch one compiled kernel.
struct CompiledKernel {
  /// The PTX entry name (the kernel's symbol name).
  std::string name;
  /// Threads per CTA (block size along x; y and z are 1).
  unsigned numThreads = 0;
  /// Dynamic shared memory the kernel needs, in bytes.
  unsigned sharedMemoryBytes = 0;
};

/// The PTX of a module's GPU code and the launch facts of its kernels.
struct CompiledModule {
  std::string ptx;
  llvm::StringMap<CompiledKernel> kernels;
};

/// Attribute names the lowering puts on each `gpu.func` kernel so that
/// compileToPTX can report launch facts after the code becomes PTX.
inline constexpr llvm::StringLiteral kNumThreadsAttrName = "ism.num_threads";
inline constexpr llvm::StringLiteral kSharedMemoryAttrName =
    "ism.shared_memory_bytes";

/// Compiles a copy of `module` (which must already be at the GPU level:
/// kernels in `gpu.module`s) to PTX. `module` itself is not changed. Kernels
/// take their block size from `ism.num_threads` or `known_block_size` and
/// their dynamic shared memory from `ism.shared_memory_bytes`.
llvm::Expected<CompiledModule> compileGPUModuleToPTX(ModuleOp module,
                                                     const PTXOptions &options);

} // namespace mlir::ism

#endif // ISM_PIPELINES_PIPELINES_H
