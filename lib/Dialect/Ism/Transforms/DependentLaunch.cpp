//===- DependentLaunch.cpp - ism-dependent-launch -------------------------===//
//
// Starts every GPU kernel for sm_90 and newer with griddepcontrol.wait and
// griddepcontrol.launch_dependents, so that the runtime can launch it with
// programmatic stream serialization (its CTAs scheduled while the kernel
// before it finishes).
//
//===----------------------------------------------------------------------===//

#include "ism/Dialect/Ism/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace mlir::ism {
#define GEN_PASS_DEF_ISMDEPENDENTLAUNCH
#include "ism/Dialect/Ism/Transforms/Passes.h.inc"
} // namespace mlir::ism

using namespace mlir;

namespace {

struct IsmDependentLaunchPass
    : ism::impl::IsmDependentLaunchBase<IsmDependentLaunchPass> {
  using Base::Base;

  void runOnOperation() override {
    int64_t version = ism::getSMVersion(chip);
    if (version < 0) {
      getOperation().emitError("ism-dependent-launch: chip '")
          << chip << "' is not an NVIDIA target (sm_80, sm_90a, ...)";
      return signalPassFailure();
    }
    if (version < 90)
      return;
    getOperation().walk([&](gpu::GPUFuncOp fn) {
      if (!fn.isKernel() || fn.isExternal())
        return;
      Block &entry = fn.getBody().front();
      for (auto wait : entry.getOps<NVVM::GriddepcontrolOp>())
        if (wait.getKind() == NVVM::GridDepActionKind::wait)
          return;
      OpBuilder b = OpBuilder::atBlockBegin(&entry);
      NVVM::GriddepcontrolOp::create(b, fn.getLoc(),
                                     NVVM::GridDepActionKind::wait);
      NVVM::GriddepcontrolOp::create(
          b, fn.getLoc(), NVVM::GridDepActionKind::launch_dependents);
    });
  }
};

} // namespace
