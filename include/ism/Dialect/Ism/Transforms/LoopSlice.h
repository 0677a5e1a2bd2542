//===- LoopSlice.h - what a software pipeline may move ----------*- C++ -*-===//
//
// Helpers the loop pipelining passes (ism-pipeline-gathers,
// ism-pipeline-loads) share: which ops write memory, the ops of a loop
// body that a set of values depends on (when they depend only on the
// induction variable, values defined outside the loop and loads), and the
// numbering and slots of the shared-memory rings they make.
//
//===----------------------------------------------------------------------===//

#ifndef ISM_DIALECT_ISM_TRANSFORMS_LOOPSLICE_H
#define ISM_DIALECT_ISM_TRANSFORMS_LOOPSLICE_H

#include "ism/Dialect/Ism/IR/IsmOps.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::ism {

/// Whether `op` (not its nested ops) may write memory or has effects the
/// pipelining passes cannot see.
bool mayWriteMemory(Operation *op);

/// Adds to `slice` the ops of `loop`'s body that `roots` depend on (through
/// operands and values used in nested regions). Fails when they depend on
/// one of the loop's iteration arguments other than the induction variable,
/// or on an op that is neither pure nor an ism.load.
LogicalResult collectLoopSlice(scf::ForOp loop, ValueRange roots,
                               llvm::SetVector<Operation *> &slice);

/// The first ring number no async op of `kernel` uses: the rings of
/// ism.async_gather / ism.async_gather_wait and of ism.async_copy with a
/// ring_id share the lowering's numbering (LoweringContext::getGatherRing).
uint32_t getFirstFreeRing(KernelOp kernel);

/// Builds (iv - lb) / step % slots, the ring slot of `loop`'s iteration
/// `iv`, appending the ops it makes to `made`.
Value getRingSlot(OpBuilder &b, Location loc, scf::ForOp loop, unsigned slots,
                  SmallVectorImpl<Operation *> &made);

} // namespace mlir::ism

#endif // ISM_DIALECT_ISM_TRANSFORMS_LOOPSLICE_H
