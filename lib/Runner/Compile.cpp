//===- Compile.cpp - Compiling modules for ism-run ------------------------===//

#include "ism/Runner/Compile.h"

#include "ism/Dialect/Ism/IR/IsmOps.h"

using namespace mlir;
using namespace mlir::ism;

bool mlir::ism::runner::hasTileKernels(ModuleOp module) {
  return !module.getOps<KernelOp>().empty();
}

llvm::Expected<CompiledModule>
mlir::ism::runner::compileModule(ModuleOp module, const PTXOptions &options) {
  if (hasTileKernels(module)) {
#ifdef ISM_HAVE_COMPILE_TO_PTX
    return compileToPTX(module, options);
#else
    return llvm::createStringError(
        "lowering of ism.kernel is not available in this build (the module "
        "has tile-level kernels; --interpret runs them on the CPU)");
#endif
  }
  return compileGPUModuleToPTX(module, options);
}
