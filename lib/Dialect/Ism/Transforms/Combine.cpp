//===- Combine.cpp - ism-combine: fold tile idioms into ism ops -----------===//

#include "ism/Dialect/Ism/IR/IsmOps.h"
#include "ism/Dialect/Ism/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::ism {
#define GEN_PASS_DEF_ISMCOMBINE
#include "ism/Dialect/Ism/Transforms/Passes.h.inc"
} // namespace mlir::ism

using namespace mlir;
using namespace mlir::ism;

namespace {

/// True when `value` is a constant tile whose every element is zero.
bool isZeroTile(Value value) {
  return matchPattern(value, m_AnyZeroFloat()) || matchPattern(value, m_Zero());
}

/// `add(dot(a, b, 0), c)` -> `dot(a, b, c)`, for either operand order of the
/// addition. The dot must have no other user, or it would be computed twice.
template <typename AddOp>
struct FoldAddIntoDotAccumulator : OpRewritePattern<AddOp> {
  using OpRewritePattern<AddOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(AddOp add,
                                PatternRewriter &rewriter) const override {
    for (unsigned i = 0; i < 2; ++i) {
      auto dot = add->getOperand(i).template getDefiningOp<DotOp>();
      Value other = add->getOperand(1 - i);
      if (!dot || !dot->hasOneUse() || !isZeroTile(dot.getC()) ||
          other.getType() != dot.getType())
        continue;
      rewriter.replaceOpWithNewOp<DotOp>(add, dot.getA(), dot.getB(), other,
                                         dot.getInputPrecision());
      rewriter.eraseOp(dot);
      return success();
    }
    return rewriter.notifyMatchFailure(
        add, "no operand is a single-use dot with a zero accumulator");
  }
};

/// `select(m, load(p), splat(c))` -> `load(p) mask m {padding = c}`, when
/// the load has no mask and no other user and `c` is a constant equal to the
/// load's padding (out-of-bounds elements then read `c` either way, so the
/// rewrite is exact whatever the mask says about bounds).
struct FoldSelectIntoMaskedLoad : OpRewritePattern<arith::SelectOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::SelectOp select,
                                PatternRewriter &rewriter) const override {
    auto load = select.getTrueValue().getDefiningOp<LoadOp>();
    if (!load || load.getMask() || !load->hasOneUse())
      return rewriter.notifyMatchFailure(select,
                                         "true value is not an unmasked load");
    if (!isa<RankedTensorType>(select.getCondition().getType()))
      return rewriter.notifyMatchFailure(select, "condition is a scalar");
    DenseElementsAttr other;
    if (!matchPattern(select.getFalseValue(), m_Constant(&other)) ||
        !other.isSplat())
      return rewriter.notifyMatchFailure(select,
                                         "false value is not a constant splat");
    auto padding = other.getSplatValue<TypedAttr>();
    TypedAttr loadPadding = load.getPaddingAttr();
    if (!loadPadding)
      loadPadding = rewriter.getZeroAttr(padding.getType());
    if (loadPadding != padding)
      return rewriter.notifyMatchFailure(
          select, "select value differs from the load's padding");
    rewriter.replaceOpWithNewOp<LoadOp>(select, load.getType(), load.getBase(),
                                        load.getOffsets(),
                                        select.getCondition(), padding);
    rewriter.eraseOp(load);
    return success();
  }
};

struct IsmCombinePass : mlir::ism::impl::IsmCombineBase<IsmCombinePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldAddIntoDotAccumulator<arith::AddFOp>,
                 FoldAddIntoDotAccumulator<arith::AddIOp>,
                 FoldSelectIntoMaskedLoad>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
