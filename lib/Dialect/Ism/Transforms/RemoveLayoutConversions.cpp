//===- RemoveLayoutConversions.cpp - ism-remove-layout-conversions --------===//

#include "ism/Dialect/Ism/IR/IsmOps.h"
#include "ism/Dialect/Ism/Transforms/LayoutPropagation.h"
#include "ism/Dialect/Ism/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::ism {
#define GEN_PASS_DEF_ISMREMOVELAYOUTCONVERSIONS
#include "ism/Dialect/Ism/Transforms/Passes.h.inc"
} // namespace mlir::ism

using namespace mlir;
using namespace mlir::ism;

namespace {

/// `ism.store convert_layout(x)` -> `ism.store x`: a store writes a tile of
/// any layout. A mask must then have x's layout too, so stores with masks
/// are left alone.
struct StoreOfConversion : OpRewritePattern<StoreOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(StoreOp op,
                                PatternRewriter &rewriter) const override {
    auto convert = op.getValue().getDefiningOp<ConvertLayoutOp>();
    if (!convert || op.getMask())
      return rewriter.notifyMatchFailure(op, "value is not a conversion");
    rewriter.modifyOpInPlace(
        op, [&] { op.getValueMutable().assign(convert.getSrc()); });
    return success();
  }
};

/// `ism.reduce convert_layout(x)` -> `ism.reduce x` for single-source
/// reductions: the reduction reads a tile of any layout, and its result's
/// type does not depend on the source's layout.
struct ReduceOfConversion : OpRewritePattern<ReduceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReduceOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getSrcs().size() != 1)
      return rewriter.notifyMatchFailure(op, "several sources");
    auto convert = op.getSrcs()[0].getDefiningOp<ConvertLayoutOp>();
    if (!convert)
      return rewriter.notifyMatchFailure(op, "source is not a conversion");
    rewriter.modifyOpInPlace(op, [&] { op->setOperand(0, convert.getSrc()); });
    return success();
  }
};

/// An elementwise arith/math op whose tile operands are all conversions from
/// one layout runs in that layout instead, and its result is converted once.
struct ElementwiseOfConversions : RewritePattern {
  ElementwiseOfConversions(MLIRContext *ctx)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, ctx) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (!op->hasTrait<OpTrait::Elementwise>() || op->getNumResults() != 1 ||
        op->getNumRegions() != 0 || op->getNumOperands() < 2)
      return rewriter.notifyMatchFailure(op, "not an elementwise op");
    auto resultType = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!resultType)
      return rewriter.notifyMatchFailure(op, "not on tiles");
    Attribute source;
    SmallVector<Value> operands;
    for (Value operand : op->getOperands()) {
      auto convert = operand.getDefiningOp<ConvertLayoutOp>();
      if (!convert)
        return rewriter.notifyMatchFailure(op, "an operand is not converted");
      Attribute encoding = convert.getSrc().getType().getEncoding();
      if (source && encoding != source)
        return rewriter.notifyMatchFailure(op, "operands come from layouts");
      source = encoding;
      operands.push_back(convert.getSrc());
    }
    auto newType = RankedTensorType::get(resultType.getShape(),
                                         resultType.getElementType(), source);
    OperationState state(op->getLoc(), op->getName(), operands, {newType},
                         op->getAttrs());
    Operation *inSource = rewriter.create(state);
    rewriter.replaceOpWithNewOp<ConvertLayoutOp>(op, resultType,
                                                 inSource->getResult(0));
    return success();
  }
};

/// `convert_layout(x)` where x is computed only from ranges, splats, splat
/// constants and elementwise math on them (e.g. the column indices a mask
/// compares): x is computed again in the target layout, each op next to
/// its original, since every thread can make its own elements of such a
/// tile and nothing has to move between threads.
struct RematerializeConversion : OpRewritePattern<ConvertLayoutOp> {
  using OpRewritePattern::OpRewritePattern;

  /// Ops cloned at most for one conversion.
  static constexpr unsigned kMaxOps = 16;

  /// Collects the ops that make `v`, operands before users; false if one
  /// of them cannot be made in another layout.
  static bool collect(Value v, SmallVectorImpl<Operation *> &ops,
                      llvm::SmallPtrSetImpl<Operation *> &seen) {
    Operation *def = v.getDefiningOp();
    if (!def || def->getNumResults() != 1)
      return false;
    if (seen.contains(def))
      return true;
    if (auto constant = dyn_cast<arith::ConstantOp>(def)) {
      auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
      if (!dense || !dense.isSplat())
        return false;
    } else if (isElementwise(def)) {
      for (Value operand : def->getOperands())
        if (isa<RankedTensorType>(operand.getType()) &&
            !collect(operand, ops, seen))
          return false;
    } else if (!isa<RangeOp, SplatOp>(def)) {
      return false;
    }
    seen.insert(def);
    ops.push_back(def);
    return ops.size() <= kMaxOps;
  }

  LogicalResult matchAndRewrite(ConvertLayoutOp op,
                                PatternRewriter &rewriter) const override {
    SmallVector<Operation *> ops;
    llvm::SmallPtrSet<Operation *, 16> seen;
    if (!collect(op.getSrc(), ops, seen))
      return rewriter.notifyMatchFailure(op, "source is not made in place");
    Attribute encoding = op.getType().getEncoding();
    IRMapping mapping;
    for (Operation *original : ops) {
      rewriter.setInsertionPointAfter(original);
      auto type = cast<RankedTensorType>(original->getResult(0).getType());
      RankedTensorType target = withEncoding(type, encoding);
      Operation *copy;
      if (auto constant = dyn_cast<arith::ConstantOp>(original))
        copy = arith::ConstantOp::create(
            rewriter, original->getLoc(),
            cast<DenseElementsAttr>(constant.getValue()).reshape(target));
      else {
        copy = rewriter.clone(*original, mapping);
        copy->getResult(0).setType(target);
      }
      mapping.map(original->getResult(0), copy->getResult(0));
    }
    rewriter.replaceOp(op, mapping.lookup(op.getSrc()));
    return success();
  }
};

struct IsmRemoveLayoutConversionsPass
    : mlir::ism::impl::IsmRemoveLayoutConversionsBase<
          IsmRemoveLayoutConversionsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<StoreOfConversion, ReduceOfConversion,
                 ElementwiseOfConversions, RematerializeConversion>(
        &getContext());
    // The greedy driver also runs convert_layout's folder, which removes
    // identities and chains.
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns)))) {
      signalPassFailure();
      return;
    }
    // Tiles made again in a layout for two conversions of one source are
    // the same ops twice: keep one.
    IRRewriter rewriter(&getContext());
    DominanceInfo dominance(getOperation());
    eliminateCommonSubExpressions(rewriter, dominance, getOperation());
  }
};

} // namespace
