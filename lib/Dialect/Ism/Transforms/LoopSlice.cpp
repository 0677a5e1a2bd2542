//===- LoopSlice.cpp - what a software pipeline may move ------------------===//

#include "ism/Dialect/Ism/Transforms/LoopSlice.h"

#include "ism/Dialect/Ism/IR/IsmOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;
using namespace mlir::ism;

bool mlir::ism::mayWriteMemory(Operation *op) {
  if (isMemoryEffectFree(op))
    return false;
  if (auto iface = dyn_cast<MemoryEffectOpInterface>(op)) {
    SmallVector<MemoryEffects::EffectInstance> effects;
    iface.getEffects(effects);
    return llvm::any_of(effects, [](const MemoryEffects::EffectInstance &e) {
      return !isa<MemoryEffects::Read>(e.getEffect());
    });
  }
  return !op->hasTrait<OpTrait::HasRecursiveMemoryEffects>();
}

LogicalResult
mlir::ism::collectLoopSlice(scf::ForOp loop, ValueRange roots,
                            llvm::SetVector<Operation *> &slice) {
  Block *body = loop.getBody();
  SmallVector<Value> worklist(roots.begin(), roots.end());
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg.getOwner() == body && arg != loop.getInductionVar())
        return failure();
      continue;
    }
    Operation *def = v.getDefiningOp();
    if (def->getBlock() != body || slice.contains(def))
      continue;
    if (!isa<LoadOp>(def) && !isMemoryEffectFree(def))
      return failure();
    slice.insert(def);
    llvm::append_range(worklist, def->getOperands());
    visitUsedValuesDefinedAbove(def->getRegions(), [&](OpOperand *operand) {
      worklist.push_back(operand->get());
    });
  }
  return success();
}

uint32_t mlir::ism::getFirstFreeRing(KernelOp kernel) {
  uint32_t next = 0;
  kernel.walk([&](Operation *op) {
    if (auto issue = dyn_cast<AsyncGatherOp>(op))
      next = std::max(next, issue.getRing() + 1);
    else if (auto wait = dyn_cast<AsyncGatherWaitOp>(op))
      next = std::max(next, wait.getRing() + 1);
    else if (auto copy = dyn_cast<AsyncCopyOp>(op); copy && copy.getRingId())
      next = std::max(next, *copy.getRingId() + 1);
  });
  return next;
}

Value mlir::ism::getRingSlot(OpBuilder &b, Location loc, scf::ForOp loop,
                             unsigned slots,
                             SmallVectorImpl<Operation *> &made) {
  auto diff = arith::SubIOp::create(b, loc, loop.getInductionVar(),
                                    loop.getLowerBound());
  auto count = arith::DivUIOp::create(b, loc, diff, loop.getStep());
  auto n = arith::ConstantIndexOp::create(b, loc, slots);
  auto slot = arith::RemUIOp::create(b, loc, count, n);
  made.append({diff, count, n, slot});
  return slot;
}
