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
    // ism-run runs the launches of an ism.coschedule one after the other
    // (the sequential baseline); the kernels compile as ordinary launches.
    OwningOpRef<ModuleOp> copy(module.clone());
    SmallVector<CoscheduleOp> coschedules;
    copy->walk([&](CoscheduleOp op) { coschedules.push_back(op); });
    for (CoscheduleOp op : coschedules) {
      Block &body = op.getBody().front();
      op->getBlock()->getOperations().splice(Block::iterator(op),
                                             body.getOperations());
      op.erase();
    }
    return compileToPTX(*copy, tileOptions);
  }
  return compileGPUModuleToPTX(module, options);
}
