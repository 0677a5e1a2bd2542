//===- Dot.cpp - ism.dot on the SIMT path (FMA) ---------------------------===//
//
// The portable matrix product: A and B go to shared memory, then each
// thread accumulates its own elements of C with one multiply-add per K
// step. Tensor-core layouts (mma.sync, wgmma) are a separate lowering; this
// one makes every dot compile on any target.
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"

#include "ism/Dialect/Ism/IR/IsmOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <map>

using namespace mlir;
using namespace mlir::ism;

namespace {

/// Writes a tile to shared memory in row-major order.
void storeRowMajor(OpBuilder &b, Location loc, LoweringContext &context,
                   Value buffer, Value vector, const Distribution &dist) {
  SmallVector<int64_t> strides = rowMajorStrides(dist.getShape());
  Value lane = context.getLaneId(b, loc), warp = context.getWarpId(b, loc);
  SmallVector<Value> coord = dist.getThreadCoord(b, loc, lane, warp);
  Value base = indexConstant(b, loc, 0);
  for (auto [d, c] : llvm::enumerate(coord))
    base = arith::AddIOp::create(
        b, loc, base,
        arith::MulIOp::create(b, loc, c, indexConstant(b, loc, strides[d])));
  for (int64_t r = 0; r < dist.getNumRegs(); ++r) {
    int64_t offset = 0;
    for (auto [d, c] : llvm::enumerate(dist.getRegCoord(r)))
      offset += c * strides[d];
    Value index =
        arith::AddIOp::create(b, loc, base, indexConstant(b, loc, offset));
    memref::StoreOp::create(b, loc, extractReg(b, loc, vector, r), buffer,
                            index);
  }
}

/// Widens an operand element to the accumulator type.
Value widen(OpBuilder &b, Location loc, Value v, Type accType) {
  if (v.getType() == accType)
    return v;
  if (isa<FloatType>(accType))
    return arith::ExtFOp::create(b, loc, accType, v);
  return arith::ExtSIOp::create(b, loc, accType, v);
}

struct DotOpLowering : IsmConversionPattern<DotOp> {
  using IsmConversionPattern::IsmConversionPattern;

  LogicalResult
  matchAndRewrite(DotOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto aType = op.getA().getType(), bType = op.getB().getType();
    auto cType = op.getC().getType();
    for (Type type : {Type(aType), Type(bType), Type(cType)})
      if (failed(checkDistributable(rewriter, op, type)))
        return failure();
    if (cType.getRank() != 2)
      return op.emitOpError("batched (3-D) dot is not supported by the SIMT "
                            "lowering; loop over the batch with 2-D dots");
    Location loc = op.getLoc();
    Distribution distA(aType), distB(bType), distC(cType);
    int64_t m = aType.getDimSize(0), k = aType.getDimSize(1);
    int64_t n = bType.getDimSize(1);
    Type inType = aType.getElementType();
    Type accType = cType.getElementType();
    bool isFloat = isa<FloatType>(accType);

    int64_t bytesA = m * k * ((inType.getIntOrFloatBitWidth() + 7) / 8);
    unsigned region = context.beginScratch(op);
    Value bufA = context.getScratch(rewriter, loc, region, inType, m * k);
    Value bufB = context.getScratch(rewriter, loc, region, inType, k * n,
                                    (bytesA + 15) / 16 * 16);
    storeRowMajor(rewriter, loc, context, bufA, adaptor.getA(), distA);
    storeRowMajor(rewriter, loc, context, bufB, adaptor.getB(), distB);
    context.barrier(rewriter, loc);

    Value lane = context.getLaneId(rewriter, loc);
    Value warp = context.getWarpId(rewriter, loc);
    SmallVector<Value> cCoord = distC.getThreadCoord(rewriter, loc, lane, warp);
    // Row offsets into A (m * K) and columns of B, one per distinct static
    // coordinate of this thread's registers.
    std::map<int64_t, Value> rowBase, colBase;
    SmallVector<int64_t> rowOf, colOf;
    for (int64_t r = 0; r < distC.getNumRegs(); ++r) {
      SmallVector<int64_t> rc = distC.getRegCoord(r);
      if (!rowBase.count(rc[0]))
        rowBase[rc[0]] = arith::MulIOp::create(
            rewriter, loc,
            arith::AddIOp::create(rewriter, loc, cCoord[0],
                                  indexConstant(rewriter, loc, rc[0])),
            indexConstant(rewriter, loc, k));
      if (!colBase.count(rc[1]))
        colBase[rc[1]] = arith::AddIOp::create(
            rewriter, loc, cCoord[1], indexConstant(rewriter, loc, rc[1]));
      rowOf.push_back(rc[0]);
      colOf.push_back(rc[1]);
    }

    auto loop = scf::ForOp::create(
        rewriter, loc, indexConstant(rewriter, loc, 0),
        indexConstant(rewriter, loc, k), indexConstant(rewriter, loc, 1),
        ValueRange{adaptor.getC()},
        [&](OpBuilder &b, Location l, Value kv, ValueRange iterArgs) {
          std::map<int64_t, Value> aVals, bVals;
          Value kn = arith::MulIOp::create(b, l, kv, indexConstant(b, l, n));
          for (auto &[key, base] : rowBase)
            aVals[key] =
                widen(b, l,
                      memref::LoadOp::create(
                          b, l, bufA,
                          ValueRange{arith::AddIOp::create(b, l, base, kv)}),
                      accType);
          for (auto &[key, base] : colBase)
            bVals[key] =
                widen(b, l,
                      memref::LoadOp::create(
                          b, l, bufB,
                          ValueRange{arith::AddIOp::create(b, l, kn, base)}),
                      accType);
          SmallVector<Value> acc;
          for (int64_t r = 0; r < distC.getNumRegs(); ++r) {
            Value c = extractReg(b, l, iterArgs[0], r);
            Value a = aVals[rowOf[r]], bv = bVals[colOf[r]];
            if (isFloat)
              acc.push_back(LLVM::FMAOp::create(b, l, a, bv, c));
            else
              acc.push_back(arith::AddIOp::create(
                  b, l, arith::MulIOp::create(b, l, a, bv), c));
          }
          scf::YieldOp::create(b, l, buildVector(b, l, accType, acc));
        });
    if (context.needsTrailingBarrier(region))
      context.barrier(rewriter, loc);
    rewriter.replaceOp(op, loop.getResult(0));
    return success();
  }
};

} // namespace

void mlir::ism::populateDotPatterns(TileTypeConverter &converter,
                                    LoweringContext &context,
                                    RewritePatternSet &patterns) {
  patterns.add<DotOpLowering>(converter, patterns.getContext(), context);
}
