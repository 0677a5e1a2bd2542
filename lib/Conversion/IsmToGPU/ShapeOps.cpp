//===- ShapeOps.cpp - tile construction and shape changes -----------------===//
//
// splat and range build each thread's elements directly; the grid queries
// read the block index and grid size. broadcast, expand_dims, reshape,
// trans and convert_layout move elements between the source and result
// distributions (relayout): in registers when each thread already holds
// what it needs, through shared memory otherwise.
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"

#include "ism/Dialect/Ism/IR/IsmOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::ism;

namespace {

gpu::Dimension toGPUDimension(GridAxis axis) {
  switch (axis) {
  case GridAxis::X:
    return gpu::Dimension::x;
  case GridAxis::Y:
    return gpu::Dimension::y;
  case GridAxis::Z:
    return gpu::Dimension::z;
  }
  llvm_unreachable("unknown axis");
}

/// Casts an index value to `type` (index or an integer type).
Value castIndex(OpBuilder &b, Location loc, Value index, Type type) {
  if (type.isIndex())
    return index;
  return arith::IndexCastOp::create(b, loc, type, index);
}

/// ism.program_id -> gpu.block_id; ism.num_programs -> gpu.grid_dim.
template <typename OpTy, typename GPUOp>
struct GridQueryLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;

  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value id =
        GPUOp::create(rewriter, op.getLoc(), toGPUDimension(op.getAxis()));
    rewriter.replaceOp(op, castIndex(rewriter, op.getLoc(), id, op.getType()));
    return success();
  }
};

/// ism.splat -> vector.broadcast.
struct SplatOpLowering : OpConversionPattern<SplatOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(SplatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(checkDistributable(rewriter, op, op.getType())))
      return failure();
    Type type = getTypeConverter()->convertType(op.getType());
    rewriter.replaceOpWithNewOp<vector::BroadcastOp>(op, type,
                                                     adaptor.getSrc());
    return success();
  }
};

/// ism.range -> start + each element's coordinate.
struct RangeOpLowering : IsmConversionPattern<RangeOp> {
  using IsmConversionPattern::IsmConversionPattern;

  LogicalResult
  matchAndRewrite(RangeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(checkDistributable(rewriter, op, op.getType())))
      return failure();
    Location loc = op.getLoc();
    Distribution dist(op.getType());
    Type elementType = op.getType().getElementType();
    Value lane = context.getLaneId(rewriter, loc);
    Value warp = context.getWarpId(rewriter, loc);
    // Coordinates in 32 bits (tiles are small), widened if the tile is.
    Type i32 = rewriter.getI32Type();
    Value base = arith::AddIOp::create(
        rewriter, loc, dist.getThreadCoord(rewriter, loc, lane, warp, i32)[0],
        arith::ConstantIntOp::create(rewriter, loc, op.getStart(), 32));
    SmallVector<Value> elements;
    for (int64_t r = 0; r < dist.getNumRegs(); ++r) {
      Value v =
          arith::AddIOp::create(rewriter, loc, base,
                                arith::ConstantIntOp::create(
                                    rewriter, loc, dist.getRegCoord(r)[0], 32));
      unsigned width = elementType.getIntOrFloatBitWidth();
      if (width > 32)
        v = arith::ExtSIOp::create(rewriter, loc, elementType, v);
      else if (width < 32)
        v = arith::TruncIOp::create(rewriter, loc, elementType, v);
      elements.push_back(v);
    }
    rewriter.replaceOp(op, buildVector(rewriter, loc, elementType, elements));
    return success();
  }
};

/// A shape op lowered by relayout with coefficients computed from the
/// source and result types.
template <typename OpTy>
struct RelayoutLowering : IsmConversionPattern<OpTy> {
  using IsmConversionPattern<OpTy>::IsmConversionPattern;

  /// Coefficients mapping result coordinates to the source linear index.
  virtual SmallVector<int64_t> getCoefs(OpTy op) const = 0;

  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto srcType = cast<RankedTensorType>(op.getSrc().getType());
    auto resType = cast<RankedTensorType>(op.getType());
    if (failed(checkDistributable(rewriter, op, srcType)) ||
        failed(checkDistributable(rewriter, op, resType)))
      return failure();
    Distribution from(srcType), to(resType);
    if (from.getNumThreads() != to.getNumThreads())
      return op.emitOpError("source and result layouts use different numbers "
                            "of warps");
    Value result = relayout(rewriter, op, this->context, adaptor.getSrc(), from,
                            to, getCoefs(op));
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// reshape and convert_layout keep the row-major linear index.
template <typename OpTy>
struct SameLinearIndexLowering : RelayoutLowering<OpTy> {
  using RelayoutLowering<OpTy>::RelayoutLowering;
  SmallVector<int64_t> getCoefs(OpTy op) const override {
    return rowMajorStrides(cast<RankedTensorType>(op.getType()).getShape());
  }
};

struct TransOpLowering : RelayoutLowering<TransOp> {
  using RelayoutLowering::RelayoutLowering;
  SmallVector<int64_t> getCoefs(TransOp op) const override {
    SmallVector<int64_t> srcStrides =
        rowMajorStrides(op.getSrc().getType().getShape());
    SmallVector<int64_t> coefs;
    for (int32_t d : op.getOrder())
      coefs.push_back(srcStrides[d]);
    return coefs;
  }
};

struct ExpandDimsOpLowering : RelayoutLowering<ExpandDimsOp> {
  using RelayoutLowering::RelayoutLowering;
  SmallVector<int64_t> getCoefs(ExpandDimsOp op) const override {
    SmallVector<int64_t> coefs =
        rowMajorStrides(op.getSrc().getType().getShape());
    coefs.insert(coefs.begin() + op.getAxis(), 0);
    return coefs;
  }
};

struct BroadcastOpLowering : RelayoutLowering<BroadcastOp> {
  using RelayoutLowering::RelayoutLowering;
  SmallVector<int64_t> getCoefs(BroadcastOp op) const override {
    ArrayRef<int64_t> srcShape = op.getSrc().getType().getShape();
    SmallVector<int64_t> coefs = rowMajorStrides(srcShape);
    for (auto [d, size] : llvm::enumerate(srcShape))
      if (size == 1)
        coefs[d] = 0;
    return coefs;
  }
};

} // namespace

void mlir::ism::populateShapeOpPatterns(TileTypeConverter &converter,
                                        LoweringContext &context,
                                        RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns
      .add<GridQueryLowering<ProgramIdOp, gpu::BlockIdOp>,
           GridQueryLowering<NumProgramsOp, gpu::GridDimOp>, SplatOpLowering>(
          converter, ctx);
  patterns.add<RangeOpLowering, SameLinearIndexLowering<ReshapeOp>,
               SameLinearIndexLowering<ConvertLayoutOp>, TransOpLowering,
               ExpandDimsOpLowering, BroadcastOpLowering>(converter, ctx,
                                                          context);
}
