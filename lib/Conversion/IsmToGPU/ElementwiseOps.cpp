//===- ElementwiseOps.cpp - arith and math on tiles -----------------------===//
//
// Elementwise ops on tiles become the same ops on each thread's vector:
// all tiles of an elementwise op share one layout, so lane element i of
// every operand is the same tile element. Splat constants become vector
// constants. f32 exp, exp2, log, log2, sqrt and rsqrt (on tiles and
// scalars) become the GPU's approximate special-function instructions, and
// f32 division div.full.f32, as Triton emits them, instead of calls into
// libdevice or IEEE division sequences; fma, absf, floor, ceil, trunc and
// copysign become their instructions (IntrinsicLowering).
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::ism;

namespace {

bool isArithOrMath(Operation *op) {
  return isa_and_nonnull<arith::ArithDialect, math::MathDialect>(
      op->getDialect());
}

/// Whether `type` (or its elements) is an 8-bit float.
bool isFloat8OrTile(Type type) {
  return isa<Float8E4M3FNType, Float8E5M2Type>(getElementTypeOrSelf(type));
}

/// Whether `op` reads or produces 8-bit floats.
bool hasFloat8(Operation *op) {
  return llvm::any_of(op->getOperandTypes(), isFloat8OrTile) ||
         llvm::any_of(op->getResultTypes(), isFloat8OrTile);
}

/// Any arith or math op with tile operands or results -> the same op on the
/// converted (vector) types.
struct ElementwiseOpLowering : ConversionPattern {
  ElementwiseOpLowering(const TypeConverter &converter, MLIRContext *ctx)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), /*benefit=*/1, ctx) {}

  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isArithOrMath(op))
      return rewriter.notifyMatchFailure(op, "not an arith or math op");
    if (isa<arith::ConstantOp>(op) || op->getNumRegions() != 0)
      return rewriter.notifyMatchFailure(op, "handled elsewhere");
    // 8-bit floats are held as i8: only a select moves them as they are
    // (Float8ConversionLowering converts them).
    if (!isa<arith::SelectOp>(op) && hasFloat8(op))
      return rewriter.notifyMatchFailure(op, "8-bit float arithmetic");
    for (Type type : op->getResultTypes())
      if (failed(checkDistributable(rewriter, op, type)))
        return failure();
    SmallVector<Type> resultTypes;
    if (failed(getTypeConverter()->convertTypes(op->getResultTypes(),
                                                resultTypes)))
      return rewriter.notifyMatchFailure(op, "result types do not convert");
    OperationState state(op->getLoc(), op->getName(), operands, resultTypes,
                         op->getAttrs());
    Operation *converted = rewriter.create(state);
    rewriter.replaceOp(op, converted->getResults());
    return success();
  }
};

/// arith.constant of a splat tile -> a vector constant.
struct ConstantOpLowering : OpConversionPattern<arith::ConstantOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(arith::ConstantOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto tensorType = dyn_cast<RankedTensorType>(op.getType());
    if (!tensorType)
      return rewriter.notifyMatchFailure(op, "not a tile constant");
    if (failed(checkDistributable(rewriter, op, tensorType)))
      return failure();
    auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
    if (!dense || !dense.isSplat())
      return rewriter.notifyMatchFailure(op, "not a splat constant");
    auto vectorType =
        cast<VectorType>(getTypeConverter()->convertType(tensorType));
    Attribute splat = dense.getSplatValue<Attribute>();
    // An 8-bit float is held as its bits (getStorageType).
    if (auto f = dyn_cast<FloatAttr>(splat);
        f && vectorType.getElementType() != tensorType.getElementType())
      splat = rewriter.getIntegerAttr(vectorType.getElementType(),
                                      f.getValue().bitcastToAPInt());
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(
        op, vectorType, DenseElementsAttr::get(vectorType, splat));
    return success();
  }
};

/// f32 math op -> an NVVM approximate intrinsic per element, with an
/// optional scale of the input (exp(x) = ex2(x * log2(e))) and of the
/// output (log(x) = lg2(x) * ln(2)).
template <typename MathOp>
struct FastMathLowering : OpConversionPattern<MathOp> {
  FastMathLowering(const TypeConverter &converter, MLIRContext *ctx,
                   StringRef intrinsic, double inScale, double outScale)
      : OpConversionPattern<MathOp>(converter, ctx, /*benefit=*/2),
        intrinsic(intrinsic), inScale(inScale), outScale(outScale) {}

  LogicalResult
  matchAndRewrite(MathOp op, typename MathOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type type = this->getTypeConverter()->convertType(op.getType());
    if (!type || !getElementTypeOrSelf(type).isF32())
      return rewriter.notifyMatchFailure(op, "not f32");
    Location loc = op.getLoc();
    Value input = adaptor.getOperands()[0];
    auto vectorType = dyn_cast<VectorType>(type);
    int64_t n = vectorType ? vectorType.getNumElements() : 1;
    Type f32 = rewriter.getF32Type();
    auto scalar = [&](Value x) -> Value {
      if (inScale != 1.0)
        x = arith::MulFOp::create(
            rewriter, loc, x,
            arith::ConstantFloatOp::create(rewriter, loc, cast<FloatType>(f32),
                                           APFloat(float(inScale))));
      Value y = LLVM::CallIntrinsicOp::create(rewriter, loc, f32,
                                              rewriter.getStringAttr(intrinsic),
                                              ValueRange{x})
                    .getResult(0);
      if (outScale != 1.0)
        y = arith::MulFOp::create(
            rewriter, loc, y,
            arith::ConstantFloatOp::create(rewriter, loc, cast<FloatType>(f32),
                                           APFloat(float(outScale))));
      return y;
    };
    if (!vectorType) {
      rewriter.replaceOp(op, scalar(input));
      return success();
    }
    SmallVector<Value> elements;
    for (int64_t i = 0; i < n; ++i)
      elements.push_back(scalar(extractReg(rewriter, loc, input, i)));
    rewriter.replaceOp(op, buildVector(rewriter, loc, f32, elements));
    return success();
  }

  std::string intrinsic;
  double inScale, outScale;
};

/// f32 arith.divf -> div.full.f32 (at most 2 ulp off), per element, as
/// Triton lowers f32 division; division by a broadcast row sum is the hot
/// path of softmax, and IEEE div.rn expands to a slow multi-instruction
/// sequence.
struct FastDivLowering : OpConversionPattern<arith::DivFOp> {
  FastDivLowering(const TypeConverter &converter, MLIRContext *ctx)
      : OpConversionPattern<arith::DivFOp>(converter, ctx, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(arith::DivFOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type type = getTypeConverter()->convertType(op.getType());
    if (!type || !getElementTypeOrSelf(type).isF32())
      return rewriter.notifyMatchFailure(op, "not f32");
    Location loc = op.getLoc();
    Type f32 = rewriter.getF32Type();
    auto divide = [&](Value a, Value b) -> Value {
      return LLVM::CallIntrinsicOp::create(
                 rewriter, loc, f32,
                 rewriter.getStringAttr("llvm.nvvm.div.full"), ValueRange{a, b})
          .getResult(0);
    };
    auto vectorType = dyn_cast<VectorType>(type);
    if (!vectorType) {
      rewriter.replaceOp(op, divide(adaptor.getLhs(), adaptor.getRhs()));
      return success();
    }
    SmallVector<Value> elements;
    for (int64_t i = 0; i < vectorType.getNumElements(); ++i)
      elements.push_back(
          divide(extractReg(rewriter, loc, adaptor.getLhs(), i),
                 extractReg(rewriter, loc, adaptor.getRhs(), i)));
    rewriter.replaceOp(op, buildVector(rewriter, loc, f32, elements));
    return success();
  }
};

/// Math the GPU has instructions for -> the LLVM intrinsic, on tiles and
/// scalars: math.fma -> llvm.intr.fma (fma.rn), math.absf -> llvm.fabs
/// (abs), math.floor / math.ceil / math.trunc -> llvm.floor / llvm.ceil /
/// llvm.trunc (cvt.rmi / cvt.rpi / cvt.rzi), math.copysign ->
/// llvm.copysign. Left to the NVVM lowering they would be libdevice calls
/// (__nv_fmaf, __nv_fabsf, ...), which stay unresolved where libdevice is
/// not linked; and that lowering takes the dedicated LLVM ops of all but
/// fma (llvm.intr.fabs, ...) for libdevice calls too, so those are
/// `llvm.call_intrinsic`s, which it leaves alone.
template <typename MathOp>
struct IntrinsicLowering : OpConversionPattern<MathOp> {
  IntrinsicLowering(const TypeConverter &converter, MLIRContext *ctx,
                    StringRef intrinsic)
      : OpConversionPattern<MathOp>(converter, ctx, /*benefit=*/2),
        intrinsic(intrinsic) {}

  LogicalResult
  matchAndRewrite(MathOp op, typename MathOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(checkDistributable(rewriter, op, op.getType())))
      return failure();
    Type type = this->getTypeConverter()->convertType(op.getType());
    if (!type)
      return rewriter.notifyMatchFailure(op, "type does not convert");
    if constexpr (std::is_same_v<MathOp, math::FmaOp>)
      rewriter.replaceOpWithNewOp<LLVM::FMAOp>(op, type, adaptor.getA(),
                                               adaptor.getB(), adaptor.getC());
    else
      rewriter.replaceOpWithNewOp<LLVM::CallIntrinsicOp>(
          op, type, rewriter.getStringAttr(intrinsic), adaptor.getOperands());
    return success();
  }

  std::string intrinsic;
};

/// arith.extf from and arith.truncf to an 8-bit float tile (f8E4M3FN,
/// f8E5M2; its elements held as i8, getStorageType): pairs of elements
/// through the cvt instructions sm_89 and later chips have,
/// cvt.rn.f16x2.{e4m3,e5m2}x2 to f16 (exact; then to f32 or bf16, exact
/// too) and cvt.rn.satfinite.{e4m3,e5m2}x2.f32 from f32 (from f16 or bf16
/// through f32, exact): round to nearest even, saturating to the largest
/// finite value. Other arithmetic on 8-bit floats is an error: convert
/// first.
struct Float8ConversionLowering : ConversionPattern {
  Float8ConversionLowering(const TypeConverter &converter, MLIRContext *ctx)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), /*benefit=*/3, ctx) {}

  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isArithOrMath(op) || !hasFloat8(op))
      return rewriter.notifyMatchFailure(op, "no 8-bit float arithmetic");
    // Moving the bits needs no conversion.
    if (isa<arith::SelectOp, arith::ConstantOp>(op))
      return rewriter.notifyMatchFailure(op, "bits only");
    // Other arithmetic on 8-bit floats is rejected before the conversion
    // (checkTiles in IsmToGPU.cpp), scalars are not converted.
    if (!isa<arith::ExtFOp, arith::TruncFOp>(op) ||
        !isa<VectorType>(operands[0].getType()))
      return rewriter.notifyMatchFailure(op, "not an 8-bit tile conversion");
    Location loc = op->getLoc();
    Type resultType =
        getTypeConverter()->convertType(op->getResult(0).getType());
    auto vectorType = cast<VectorType>(resultType);
    int64_t n = vectorType.getNumElements();
    Value input = operands[0];
    Type f16 = rewriter.getF16Type(), f32 = rewriter.getF32Type();
    Type i8 = rewriter.getI8Type();
    auto pairType = VectorType::get({2}, i8);
    SmallVector<Value> elements;
    if (auto ext = dyn_cast<arith::ExtFOp>(op)) {
      Type f8 = getElementTypeOrSelf(ext.getIn().getType());
      Type out = vectorType.getElementType();
      for (int64_t i = 0; i < n; i += 2) {
        int64_t j = std::min(i + 1, n - 1);
        Value pair = vector::ShuffleOp::create(rewriter, loc, input, input,
                                               ArrayRef<int64_t>{i, j});
        Value halves = NVVM::ConvertF8x2ToF16x2Op::create(
            rewriter, loc, VectorType::get({2}, f16), pair,
            /*relu=*/false, f8);
        for (int64_t k = i; k <= j; ++k) {
          Value h = extractReg(rewriter, loc, halves, k - i);
          if (out.isF16()) {
            elements.push_back(h);
            continue;
          }
          Value x = arith::ExtFOp::create(rewriter, loc, f32, h);
          if (!out.isF32())
            x = arith::TruncFOp::create(rewriter, loc, out, x);
          elements.push_back(x);
        }
      }
      rewriter.replaceOp(op, buildVector(rewriter, loc, out, elements));
      return success();
    }
    auto trunc = cast<arith::TruncFOp>(op);
    Type f8 = getElementTypeOrSelf(trunc.getType());
    auto toF32 = [&](Value x) -> Value {
      return x.getType().isF32() ? x
                                 : arith::ExtFOp::create(rewriter, loc, f32, x);
    };
    for (int64_t i = 0; i < n; i += 2) {
      int64_t j = std::min(i + 1, n - 1);
      Value lo = toF32(extractReg(rewriter, loc, input, i));
      Value hi = toF32(extractReg(rewriter, loc, input, j));
      // `a` goes to the upper byte (element 1), `b` to the lower.
      Value pair = NVVM::ConvertF32x2ToF8x2Op::create(
          rewriter, loc, pairType, hi, lo, NVVM::FPRoundingMode::RN,
          NVVM::SaturationMode::SATFINITE, /*relu=*/false, f8);
      for (int64_t k = i; k <= j; ++k)
        elements.push_back(extractReg(rewriter, loc, pair, k - i));
    }
    rewriter.replaceOp(op, buildVector(rewriter, loc, i8, elements));
    return success();
  }
};

} // namespace

void mlir::ism::populateElementwisePatterns(TileTypeConverter &converter,
                                            LoweringContext &context,
                                            RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<ElementwiseOpLowering, ConstantOpLowering, FastDivLowering,
               Float8ConversionLowering>(converter, ctx);
  patterns.add<IntrinsicLowering<math::FmaOp>>(converter, ctx, "llvm.fma");
  patterns.add<IntrinsicLowering<math::AbsFOp>>(converter, ctx, "llvm.fabs");
  patterns.add<IntrinsicLowering<math::FloorOp>>(converter, ctx,
                                                 "llvm.floor");
  patterns.add<IntrinsicLowering<math::CeilOp>>(converter, ctx, "llvm.ceil");
  patterns.add<IntrinsicLowering<math::TruncOp>>(converter, ctx,
                                                 "llvm.trunc");
  patterns.add<IntrinsicLowering<math::CopySignOp>>(converter, ctx,
                                                    "llvm.copysign");
  const double log2e = 1.4426950408889634, ln2 = 0.6931471805599453;
  patterns.add<FastMathLowering<math::ExpOp>>(
      converter, ctx, "llvm.nvvm.ex2.approx.ftz.f", log2e, 1.0);
  patterns.add<FastMathLowering<math::Exp2Op>>(
      converter, ctx, "llvm.nvvm.ex2.approx.ftz.f", 1.0, 1.0);
  patterns.add<FastMathLowering<math::LogOp>>(
      converter, ctx, "llvm.nvvm.lg2.approx.ftz.f", 1.0, ln2);
  patterns.add<FastMathLowering<math::Log2Op>>(
      converter, ctx, "llvm.nvvm.lg2.approx.ftz.f", 1.0, 1.0);
  patterns.add<FastMathLowering<math::RsqrtOp>>(
      converter, ctx, "llvm.nvvm.rsqrt.approx.ftz.f", 1.0, 1.0);
  patterns.add<FastMathLowering<math::SqrtOp>>(
      converter, ctx, "llvm.nvvm.sqrt.approx.ftz.f", 1.0, 1.0);
}
