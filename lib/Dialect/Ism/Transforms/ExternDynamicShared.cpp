//===- ExternDynamicShared.cpp - ism-extern-dynamic-shared ----*- C++ -*-===//
//
// Gives the zero-length shared-memory globals that gpu.dynamic_shared_memory
// lowers to external linkage, so that NVPTX declares them as
// `.extern .shared .align 16 .b8 name[];` instead of demoting them to a
// one-byte variable of the kernel.
//
//===----------------------------------------------------------------------===//

#include "ism/Dialect/Ism/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace mlir::ism {
#define GEN_PASS_DEF_ISMEXTERNDYNAMICSHARED
#include "ism/Dialect/Ism/Transforms/Passes.h.inc"
} // namespace mlir::ism

using namespace mlir;

namespace {

/// True for the global `gpu.dynamic_shared_memory` lowers to: a declaration
/// of a zero-length array in the shared address space, with no initializer.
bool isDynamicSharedGlobal(LLVM::GlobalOp global) {
  auto array = dyn_cast<LLVM::LLVMArrayType>(global.getGlobalType());
  return global.getAddrSpace() ==
             static_cast<unsigned>(NVVM::NVVMMemorySpace::Shared) &&
         array && array.getNumElements() == 0 && !global.getValueOrNull() &&
         global.getInitializerRegion().empty();
}

struct IsmExternDynamicShared
    : mlir::ism::impl::IsmExternDynamicSharedBase<IsmExternDynamicShared> {
  void runOnOperation() override {
    getOperation()->walk([](LLVM::GlobalOp global) {
      if (isDynamicSharedGlobal(global))
        global.setLinkage(LLVM::Linkage::External);
    });
  }
};

} // namespace
