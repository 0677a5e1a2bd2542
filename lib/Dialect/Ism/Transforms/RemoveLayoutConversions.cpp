//===- RemoveLayoutConversions.cpp - ism-remove-layout-conversions --------===//

#include "ism/Dialect/Ism/IR/IsmOps.h"
#include "ism/Dialect/Ism/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/PatternMatch.h"
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

struct IsmRemoveLayoutConversionsPass
    : mlir::ism::impl::IsmRemoveLayoutConversionsBase<
          IsmRemoveLayoutConversionsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns
        .add<StoreOfConversion, ReduceOfConversion, ElementwiseOfConversions>(
            &getContext());
    // The greedy driver also runs convert_layout's folder, which removes
    // identities and chains.
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
