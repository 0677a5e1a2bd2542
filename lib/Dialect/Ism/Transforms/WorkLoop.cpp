//===- WorkLoop.cpp - loads a work loop may issue ahead -------------------===//

#include "ism/Dialect/Ism/Transforms/WorkLoop.h"

#include "ism/Dialect/Ism/Transforms/DotLoop.h"

#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::ism;

/// Whether `tile` is an operand of a tensor-core product (an ism.dot with an
/// mma layout), directly or through reshapes, transposes and layout
/// conversions.
static bool feedsTensorCoreProduct(Value tile) {
  for (Operation *user : tile.getUsers()) {
    if (auto dot = dyn_cast<DotOp>(user)) {
      if (isa_and_nonnull<MmaEncodingAttr>(dot.getType().getEncoding()) &&
          dot.getC() != tile)
        return true;
      continue;
    }
    if (isa<ReshapeOp, TransOp, ConvertLayoutOp>(user) &&
        feedsTensorCoreProduct(user->getResult(0)))
      return true;
  }
  return false;
}

SmallVector<PrefetchableLoad> mlir::ism::getPrefetchableLoads(Block *body) {
  SmallVector<PrefetchableLoad> loads;
  llvm::DenseSet<Value> written;
  auto recordWrite = [&](Operation *op) {
    if (auto store = dyn_cast<StoreOp>(op))
      written.insert(store.getBase());
    else if (auto scatter = dyn_cast<ScatterOp>(op))
      written.insert(scatter.getBase());
    else if (auto atomic = dyn_cast<AtomicRMWOp>(op))
      written.insert(atomic.getBase());
  };
  for (Operation &op : *body) {
    // Ops nested in regions (loops, branches) write too.
    op.walk(recordWrite);
    auto load = dyn_cast<LoadOp>(op);
    if (!load || load.getMask() || written.contains(load.getBase()))
      continue;
    // A product's operand goes to shared memory where the product's
    // lowering places it (a loop-invariant A once per program): loading it
    // ahead as well would hold it twice.
    if (feedsTensorCoreProduct(load.getResult()))
      continue;
    auto base = dyn_cast<BlockArgument>(load.getBase());
    if (!base ||
        !base.getOwner()->getParentOp()->isAncestor(body->getParentOp()))
      continue;
    // The operands' slice within the body.
    llvm::SetVector<Operation *> slice;
    SmallVector<Value> worklist(load.getOffsets());
    bool ok = true, invariant = true;
    while (ok && !worklist.empty()) {
      Value v = worklist.pop_back_val();
      Operation *def = v.getDefiningOp();
      if (!def || def->getBlock() != body)
        continue; // an argument or a value from outside the program
      if (!isReplicableScalar(def)) {
        ok = false;
        break;
      }
      if (isa<ProgramIdOp>(def))
        invariant = false;
      if (slice.insert(def))
        llvm::append_range(worklist, def->getOperands());
    }
    if (!ok)
      continue;
    PrefetchableLoad p;
    p.load = load;
    p.invariant = invariant;
    for (Operation &inBody : *body)
      if (slice.contains(&inBody))
        p.slice.push_back(&inBody);
    loads.push_back(std::move(p));
  }
  return loads;
}

int64_t mlir::ism::getRingSlotBytes(RankedTensorType tile, int64_t threads) {
  int64_t bytes = tile.getNumElements() *
                  std::max<int64_t>(1, tile.getElementTypeBitWidth() / 8);
  int64_t unit = 16 * threads;
  return (bytes + unit - 1) / unit * unit;
}
