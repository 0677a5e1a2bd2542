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
    IsmToPTXOptions tileOptions;
    static_cast<PTXOptions &>(tileOptions) = options;
    return compileToPTX(module, tileOptions);
  }
  return compileGPUModuleToPTX(module, options);
}
