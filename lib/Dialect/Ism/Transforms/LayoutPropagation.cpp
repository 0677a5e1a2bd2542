//===- LayoutPropagation.cpp - moving tiles to a new layout ---------------===//
//
// Gives a tile a new layout and has its users follow: elementwise math runs
// in it, loops carry it, expansions of row statistics take the parent
// layout, and anything else converts back. ism-accelerate-dot uses it for
// accumulators and their row statistics, ism-assign-layouts for the totals
// of reductions that stay within a warp.
//
//===----------------------------------------------------------------------===//

#include "ism/Dialect/Ism/Transforms/LayoutPropagation.h"

#include "ism/Dialect/Ism/IR/IsmOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;

namespace mlir::ism {

RankedTensorType withEncoding(RankedTensorType type, Attribute encoding) {
  return RankedTensorType::get(type.getShape(), type.getElementType(),
                               encoding);
}

/// Whether `op` computes its tile results element by element from its tile
/// operands (so it can run in any layout).
bool isElementwise(Operation *op) {
  if (!isa<arith::ArithDialect, math::MathDialect>(op->getDialect()) ||
      op->getNumResults() != 1 || isa<arith::ConstantOp>(op))
    return false;
  return op->hasTrait<OpTrait::Elementwise>();
}

/// Has `loop` carry its tile #i in the layout `encoding`: the iter_arg and
/// the result take it, the init and the yielded value adapt to it, and the
/// users of the iter_arg and of the result follow (converting back to the
/// layout the tile had where they cannot).
void carryInLayout(scf::ForOp loop, unsigned i, Attribute encoding,
                   OpBuilder &b) {
  BlockArgument arg = loop.getRegionIterArg(i);
  auto type = cast<RankedTensorType>(arg.getType());
  Attribute old = type.getEncoding();
  arg.setType(withEncoding(type, encoding));
  loop.getResult(i).setType(arg.getType());
  adapt(loop.getInitArgsMutable()[i], encoding, b);
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  adapt(yield->getOpOperand(i), encoding, b);
  propagateForward(arg, encoding, old, b);
  propagateForward(loop.getResult(i), encoding, old, b);
}

/// Whether `op` is an expansion whose result can take the 2-D accumulator
/// layout `encoding` with its source in the #ism.slice of it along the
/// expanded axis (a one-row or one-column accumulator tile: no data moves).
static bool expandsSlice(Operation *op, Attribute encoding) {
  auto expand = dyn_cast<ExpandDimsOp>(op);
  auto mma = dyn_cast<MmaEncodingAttr>(encoding);
  return expand && mma && mma.getWarpsPerCTA().size() == 2 &&
         expand.getType().getRank() == 2;
}

/// After `op` (a broadcast or expansion) was made in the layout `encoding`:
/// its source follows where that keeps the data in registers. A broadcast
/// into a 2-D accumulator layout has its source (a one-row or one-column
/// tile) in that layout too, and an expansion into it has its source in
/// the #ism.slice along the axis, so row or column values (e.g. the column
/// indices a mask compares) are computed where they are used instead of
/// being moved through shared memory.
static void adaptSourceOf(Operation *op, Attribute encoding, OpBuilder &b) {
  auto mma = dyn_cast<MmaEncodingAttr>(encoding);
  if (!mma || mma.getWarpsPerCTA().size() != 2)
    return;
  if (auto bc = dyn_cast<BroadcastOp>(op)) {
    auto src = cast<RankedTensorType>(bc.getSrc().getType());
    // A loaded one-row or one-column tile (a scale per row of a block)
    // is loaded in the layout as it is.
    if (src.getRank() == 2 && src.getEncoding() != encoding &&
        (bc.getSrc().getDefiningOp<ExpandDimsOp>() ||
         bc.getSrc().getDefiningOp<LoadOp>()))
      adapt(bc.getSrcMutable(), encoding, b);
    return;
  }
  if (auto expand = dyn_cast<ExpandDimsOp>(op))
    adapt(expand.getSrcMutable(),
          SliceEncodingAttr::get(op->getContext(), expand.getAxis(), encoding),
          b);
}

/// Gives the value `v` (a tile) the layout `encoding` for its use `use`:
/// retypes the producers that can produce any layout (splat constants,
/// loads, broadcasts, splats used only here) and loop-carried tiles, else
/// converts.
void adapt(OpOperand &use, Attribute encoding, OpBuilder &b) {
  Value v = use.get();
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || type.getEncoding() == encoding)
    return;
  RankedTensorType target = withEncoding(type, encoding);
  // A loop-carried tile: the loop carries it in the layout (its init and
  // the yielded value adapt in turn, its other users follow).
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
    if (loop && arg.getOwner() == loop.getBody() && arg.getArgNumber() > 0) {
      carryInLayout(loop, arg.getArgNumber() - 1, encoding, b);
      return;
    }
  }
  Operation *def = v.getDefiningOp();
  // A splat or broadcast already repeated in the layout earlier in the
  // block (see below) is reused.
  if (def && isa<BroadcastOp, SplatOp>(def)) {
    for (Operation *other : def->getOperand(0).getUsers())
      if (other != def && other->getName() == def->getName() &&
          other->getResult(0).getType() == target &&
          other->getBlock() == use.getOwner()->getBlock() &&
          other->isBeforeInBlock(use.getOwner())) {
        use.set(other->getResult(0));
        if (def->use_empty())
          def->erase();
        return;
      }
  }
  if (def && v.hasOneUse() &&
      (isa<LoadOp, BroadcastOp, SplatOp, RangeOp>(def) ||
       expandsSlice(def, encoding)) &&
      def->getNumResults() == 1) {
    v.setType(target);
    adaptSourceOf(def, encoding, b);
    return;
  }
  // A splat, broadcast, range or expansion used elsewhere too is repeated
  // here in the layout: that moves at most its source, not the whole tile
  // (a range moves nothing: every thread computes its own elements).
  if (def && (isa<BroadcastOp, SplatOp, RangeOp>(def) ||
              expandsSlice(def, encoding))) {
    if (isa<RangeOp>(def))
      b.setInsertionPointAfter(def);
    else
      b.setInsertionPoint(use.getOwner());
    Operation *copy = b.clone(*def);
    copy->getResult(0).setType(target);
    use.set(copy->getResult(0));
    if (def->use_empty())
      def->erase();
    adaptSourceOf(copy, encoding, b);
    return;
  }
  // Elementwise math feeding only this use runs in the layout too (its
  // operands adapt in turn), rather than converting its result.
  if (def && v.hasOneUse() && isElementwise(def)) {
    v.setType(target);
    for (OpOperand &operand : def->getOpOperands())
      adapt(operand, encoding, b);
    return;
  }
  b.setInsertionPoint(use.getOwner());
  if (auto constant = v.getDefiningOp<arith::ConstantOp>()) {
    if (auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
        dense && dense.isSplat()) {
      use.set(arith::ConstantOp::create(b, constant.getLoc(),
                                        dense.reshape(target)));
      return;
    }
  }
  // Converted once, where the tile is made (not in every iteration of a
  // loop that uses a tile from outside it).
  b.setInsertionPointAfterValue(v);
  use.set(ConvertLayoutOp::create(b, v.getLoc(), target, v));
}

void propagateForward(Value root, Attribute encoding, Attribute blocked,
                      OpBuilder &b) {
  SmallVector<Value> worklist{root};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (OpOperand &use : llvm::make_early_inc_range(v.getUses())) {
      Operation *user = use.getOwner();
      // A store writes the tile in its layout; its mask (a tile shaped
      // like the value) follows.
      if (auto store = dyn_cast<StoreOp>(user);
          store && use.getOperandNumber() == 0) {
        if (store.getMask())
          adapt(store.getMaskMutable()[0], encoding, b);
        continue;
      }
      // A conversion to this layout (made when an earlier propagation met
      // the tile) is no longer needed.
      if (auto convert = dyn_cast<ConvertLayoutOp>(user);
          convert && convert.getType() == v.getType()) {
        convert.getResult().replaceAllUsesWith(v);
        convert->erase();
        continue;
      }
      // Reductions and the operands of products read any layout; an
      // accumulator in this layout feeds a product in it directly.
      if (auto reduce = dyn_cast<ReduceOp>(user);
          reduce && reduce.getSrcs().size() == 1)
        continue;
      if (auto dot = dyn_cast<DotOp>(user)) {
        if (use.getOperandNumber() < 2 ||
            dot.getType().getEncoding() == encoding)
          continue;
      }
      // Row statistics expanded back to the rows of their accumulator: the
      // expansion takes the parent layout (a one-column tile), and so do
      // the broadcasts of it; no data moves between threads.
      if (auto expand = dyn_cast<ExpandDimsOp>(user)) {
        auto slice = dyn_cast<SliceEncodingAttr>(encoding);
        if (slice && expand.getAxis() == slice.getDim()) {
          Value e = expand.getResult();
          auto oldType = cast<RankedTensorType>(e.getType());
          e.setType(withEncoding(oldType, slice.getUnslicedLayout()));
          for (OpOperand &eu : llvm::make_early_inc_range(e.getUses())) {
            if (auto bc = dyn_cast<BroadcastOp>(eu.getOwner())) {
              auto bcType = cast<RankedTensorType>(bc.getType());
              bc.getResult().setType(withEncoding(bcType, slice.getParent()));
              propagateForward(bc.getResult(), slice.getParent(),
                               bcType.getEncoding(), b);
              continue;
            }
            b.setInsertionPoint(eu.getOwner());
            eu.set(ConvertLayoutOp::create(b, e.getLoc(), oldType, e));
          }
          continue;
        }
      }
      // A tile carried by a loop: the loop carries it in this layout.
      if (auto yield = dyn_cast<scf::YieldOp>(user)) {
        if (auto loop = dyn_cast<scf::ForOp>(yield->getParentOp())) {
          unsigned i = use.getOperandNumber();
          auto argType =
              cast<RankedTensorType>(loop.getRegionIterArg(i).getType());
          if (argType.getEncoding() != encoding)
            carryInLayout(loop, i, encoding, b);
          continue;
        }
      }
      auto result =
          user->getNumResults() == 1
              ? dyn_cast<RankedTensorType>(user->getResult(0).getType())
              : RankedTensorType();
      if (isElementwise(user) && result &&
          result.getShape() == cast<RankedTensorType>(v.getType()).getShape() &&
          result.getEncoding() != encoding) {
        user->getResult(0).setType(withEncoding(result, encoding));
        for (OpOperand &operand : user->getOpOperands())
          if (operand.get() != v)
            adapt(operand, encoding, b);
        worklist.push_back(user->getResult(0));
        continue;
      }
      if (isElementwise(user) && result && result.getEncoding() == encoding)
        continue;
      // Anything else sees the tile in the layout it was assigned.
      b.setInsertionPoint(user);
      use.set(ConvertLayoutOp::create(
          b, v.getLoc(),
          withEncoding(cast<RankedTensorType>(v.getType()), blocked), v));
    }
  }
}

} // namespace mlir::ism
