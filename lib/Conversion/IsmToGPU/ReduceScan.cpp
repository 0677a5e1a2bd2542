//===- ReduceScan.cpp - tile reductions and scans -------------------------===//
//
// ism.reduce combines in three steps: the registers of each thread, then the
// lanes of each warp with butterfly shuffles, then the warps through shared
// memory, from which every thread reads the result elements its layout
// gives it. Lanes and warps that only replicate data are left out, so no
// element is counted twice.
//
// ism.scan is a Hillis-Steele scan through shared memory: log2(n) rounds in
// which each element combines with the one `step` before it.
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"

#include "ism/Dialect/Ism/IR/IsmOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/Support/MathExtras.h"

#include <map>

using namespace mlir;
using namespace mlir::ism;

namespace {

/// `value` from the lane whose id is this lane's xor `mask`. Types other
/// than 32-bit ones travel as (one or two) i32.
Value shuffleXor(OpBuilder &b, Location loc, Value value, unsigned mask) {
  Type type = value.getType();
  unsigned bits = type.getIntOrFloatBitWidth();
  auto shuffle = [&](Value v) {
    return gpu::ShuffleOp::create(b, loc, v, mask, 32, gpu::ShuffleMode::XOR)
        .getShuffleResult();
  };
  if (bits == 32 && (type.isF32() || type.isInteger(32)))
    return shuffle(value);
  Type intType = b.getIntegerType(bits);
  Value asInt = isa<FloatType>(type)
                    ? Value(arith::BitcastOp::create(b, loc, intType, value))
                    : value;
  Value result;
  if (bits < 32) {
    Value wide = arith::ExtUIOp::create(b, loc, b.getI32Type(), asInt);
    result = arith::TruncIOp::create(b, loc, intType, shuffle(wide));
  } else {
    Value lo = arith::TruncIOp::create(b, loc, b.getI32Type(), asInt);
    Value hi = arith::TruncIOp::create(
        b, loc, b.getI32Type(),
        arith::ShRUIOp::create(
            b, loc, asInt, arith::ConstantIntOp::create(b, loc, intType, 32)));
    Value lo2 = arith::ExtUIOp::create(b, loc, intType, shuffle(lo));
    Value hi2 = arith::ExtUIOp::create(b, loc, intType, shuffle(hi));
    result = arith::OrIOp::create(
        b, loc, lo2,
        arith::ShLIOp::create(
            b, loc, hi2, arith::ConstantIntOp::create(b, loc, intType, 32)));
  }
  return isa<FloatType>(type)
             ? Value(arith::BitcastOp::create(b, loc, type, result))
             : result;
}

/// Byte offsets of one shared-memory buffer of `count` elements per value of
/// `types`, each 16-byte aligned.
SmallVector<int64_t> bufferOffsets(TypeRange types, int64_t count) {
  SmallVector<int64_t> offsets;
  int64_t offset = 0;
  for (Type type : types) {
    offsets.push_back(offset);
    offset += (count * ((type.getIntOrFloatBitWidth() + 7) / 8) + 15) / 16 * 16;
  }
  return offsets;
}

struct ReduceOpLowering : IsmConversionPattern<ReduceOp> {
  using IsmConversionPattern::IsmConversionPattern;

  LogicalResult
  matchAndRewrite(ReduceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto srcType = cast<RankedTensorType>(op.getSrcs()[0].getType());
    if (failed(checkDistributable(rewriter, op, srcType)))
      return failure();
    for (Type type : op.getResultTypes())
      if (failed(checkDistributable(rewriter, op, type)))
        return failure();
    Location loc = op.getLoc();
    Distribution dist(srcType);
    unsigned axis = op.getAxis();
    size_t n = op.getSrcs().size();
    SmallVector<Type> elementTypes;
    for (Value src : op.getSrcs())
      elementTypes.push_back(getElementTypeOrSelf(src.getType()));
    Region &combiner = op.getCombiner();

    // 1. Registers that share every coordinate but the axis' combine.
    std::map<SmallVector<int64_t>, size_t> groupOf;
    SmallVector<SmallVector<int64_t>> groupKeys;
    SmallVector<SmallVector<Value>> acc;
    for (int64_t r = 0; r < dist.getNumRegs(); ++r) {
      SmallVector<int64_t> key = dist.getRegCoord(r);
      key.erase(key.begin() + axis);
      SmallVector<Value> values;
      for (Value src : adaptor.getSrcs())
        values.push_back(extractReg(rewriter, loc, src, r));
      auto [it, inserted] = groupOf.try_emplace(key, groupKeys.size());
      if (inserted) {
        groupKeys.push_back(key);
        acc.push_back(values);
      } else {
        acc[it->second] =
            combine(rewriter, loc, combiner, acc[it->second], values);
      }
    }

    // 2. Lanes along the axis, with butterfly shuffles.
    unsigned firstBit = dist.getLaneBitOffset(axis);
    unsigned numBits = llvm::Log2_64(dist.getDistinctLanes(axis));
    for (unsigned bit = firstBit; bit < firstBit + numBits; ++bit) {
      for (SmallVector<Value> &values : acc) {
        SmallVector<Value> other;
        for (Value v : values)
          other.push_back(shuffleXor(rewriter, loc, v, 1u << bit));
        values = combine(rewriter, loc, combiner, values, other);
      }
    }

    int64_t warps = dist.getDistinctWarps(axis);
    bool scalar = srcType.getRank() == 1;
    if (scalar && warps == 1) {
      rewriter.replaceOp(op, acc.front());
      return success();
    }

    // Totals that stay within each warp, wanted in the slice of the
    // source's layout along the axis (#ism.slice): every thread already
    // holds the totals of its own elements, in its registers.
    auto resType = dyn_cast<RankedTensorType>(op.getResult(0).getType());
    auto slice = resType ? dyn_cast_or_null<SliceEncodingAttr>(
                               resType.getEncoding())
                         : SliceEncodingAttr();
    if (warps == 1 && slice && slice.getDim() == axis &&
        slice.getParent() == srcType.getEncoding()) {
      Distribution resDist(resType);
      SmallVector<Value> results;
      for (size_t i = 0; i < n; ++i) {
        SmallVector<Value> elements;
        for (int64_t r = 0; r < resDist.getNumRegs(); ++r) {
          auto it = groupOf.find(resDist.getRegCoord(r));
          if (it == groupOf.end())
            return op.emitOpError("result layout ")
                   << slice << " is not a slice of the source's registers";
          elements.push_back(acc[it->second][i]);
        }
        results.push_back(
            buildVector(rewriter, loc, elementTypes[i], elements));
      }
      rewriter.replaceOp(op, results);
      return success();
    }

    // 3. Warps, and the move to the result layout, through shared memory:
    // buffer i holds [warp][result element] partials of source i.
    SmallVector<int64_t> resShape(srcType.getShape());
    resShape.erase(resShape.begin() + axis);
    int64_t numResults = 1;
    for (int64_t s : resShape)
      numResults *= s;
    SmallVector<int64_t> resStrides = rowMajorStrides(resShape);
    SmallVector<int64_t> offsets =
        bufferOffsets(elementTypes, warps * numResults);
    unsigned region = context.beginScratch(op);
    SmallVector<Value> buffers;
    for (size_t i = 0; i < n; ++i)
      buffers.push_back(context.getScratch(rewriter, loc, region,
                                           elementTypes[i], warps * numResults,
                                           offsets[i]));
    Value lane = context.getLaneId(rewriter, loc);
    Value warp = context.getWarpId(rewriter, loc);
    SmallVector<Value> threadCoord =
        dist.getThreadCoord(rewriter, loc, lane, warp);
    threadCoord.erase(threadCoord.begin() + axis);
    Value warpAlong = arith::AndIOp::create(
        rewriter, loc, dist.getWarpCoord(rewriter, loc, warp, axis),
        indexConstant(rewriter, loc, warps - 1));
    Value threadBase = arith::MulIOp::create(
        rewriter, loc, warpAlong, indexConstant(rewriter, loc, numResults));
    for (auto [d, c] : llvm::enumerate(threadCoord))
      threadBase = arith::AddIOp::create(
          rewriter, loc, threadBase,
          arith::MulIOp::create(rewriter, loc, c,
                                indexConstant(rewriter, loc, resStrides[d])));
    for (auto [g, key] : llvm::enumerate(groupKeys)) {
      int64_t keyLinear = 0;
      for (auto [d, k] : llvm::enumerate(key))
        keyLinear += k * resStrides[d];
      Value index = arith::AddIOp::create(
          rewriter, loc, threadBase, indexConstant(rewriter, loc, keyLinear));
      for (size_t i = 0; i < n; ++i)
        memref::StoreOp::create(rewriter, loc, acc[g][i], buffers[i], index);
    }
    context.barrier(rewriter, loc);

    /// Combines the per-warp partials of the result element at `linear`.
    auto readResult = [&](Value linear) {
      SmallVector<Value> values;
      for (int64_t w = 0; w < warps; ++w) {
        Value index =
            arith::AddIOp::create(rewriter, loc, linear,
                                  indexConstant(rewriter, loc, w * numResults));
        SmallVector<Value> partial;
        for (size_t i = 0; i < n; ++i)
          partial.push_back(
              memref::LoadOp::create(rewriter, loc, buffers[i], index));
        values = w == 0 ? partial
                        : combine(rewriter, loc, combiner, values, partial);
      }
      return values;
    };

    SmallVector<Value> results;
    if (scalar) {
      results = readResult(indexConstant(rewriter, loc, 0));
    } else {
      Distribution to(cast<RankedTensorType>(op.getResultTypes()[0]));
      SmallVector<Value> toCoord = to.getThreadCoord(rewriter, loc, lane, warp);
      Value toBase = indexConstant(rewriter, loc, 0);
      for (auto [d, c] : llvm::enumerate(toCoord))
        toBase = arith::AddIOp::create(
            rewriter, loc, toBase,
            arith::MulIOp::create(rewriter, loc, c,
                                  indexConstant(rewriter, loc, resStrides[d])));
      SmallVector<SmallVector<Value>> elements(n);
      for (int64_t r = 0; r < to.getNumRegs(); ++r) {
        int64_t regLinear = 0;
        for (auto [d, c] : llvm::enumerate(to.getRegCoord(r)))
          regLinear += c * resStrides[d];
        Value linear = arith::AddIOp::create(
            rewriter, loc, toBase, indexConstant(rewriter, loc, regLinear));
        SmallVector<Value> values = readResult(linear);
        for (size_t i = 0; i < n; ++i)
          elements[i].push_back(values[i]);
      }
      for (size_t i = 0; i < n; ++i)
        results.push_back(
            buildVector(rewriter, loc, elementTypes[i], elements[i]));
    }
    if (context.needsTrailingBarrier(region))
      context.barrier(rewriter, loc);
    rewriter.replaceOp(op, results);
    return success();
  }
};

struct ScanOpLowering : IsmConversionPattern<ScanOp> {
  using IsmConversionPattern::IsmConversionPattern;

  LogicalResult
  matchAndRewrite(ScanOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getSrcs()[0].getType());
    if (failed(checkDistributable(rewriter, op, type)))
      return failure();
    Location loc = op.getLoc();
    Distribution dist(type);
    unsigned axis = op.getAxis();
    int64_t length = type.getDimSize(axis);
    size_t n = op.getSrcs().size();
    bool reverse = op.getReverse();
    SmallVector<Type> elementTypes;
    for (Value src : op.getSrcs())
      elementTypes.push_back(getElementTypeOrSelf(src.getType()));
    Region &combiner = op.getCombiner();

    SmallVector<SmallVector<Value>> regs(dist.getNumRegs());
    for (int64_t r = 0; r < dist.getNumRegs(); ++r)
      for (Value src : adaptor.getSrcs())
        regs[r].push_back(extractReg(rewriter, loc, src, r));

    if (length > 1) {
      int64_t numElements = type.getNumElements();
      SmallVector<int64_t> offsets = bufferOffsets(elementTypes, numElements);
      // Every round rewrites the same buffers, so rounds end with barriers.
      unsigned region = context.beginScratch(op, /*alwaysBarrier=*/true);
      SmallVector<Value> buffers;
      for (size_t i = 0; i < n; ++i)
        buffers.push_back(context.getScratch(
            rewriter, loc, region, elementTypes[i], numElements, offsets[i]));
      SmallVector<int64_t> strides = rowMajorStrides(type.getShape());
      Value lane = context.getLaneId(rewriter, loc);
      Value warp = context.getWarpId(rewriter, loc);
      SmallVector<Value> threadCoord =
          dist.getThreadCoord(rewriter, loc, lane, warp);
      Value threadBase = indexConstant(rewriter, loc, 0);
      for (auto [d, c] : llvm::enumerate(threadCoord))
        threadBase = arith::AddIOp::create(
            rewriter, loc, threadBase,
            arith::MulIOp::create(rewriter, loc, c,
                                  indexConstant(rewriter, loc, strides[d])));
      SmallVector<Value> linear, along;
      for (int64_t r = 0; r < dist.getNumRegs(); ++r) {
        SmallVector<int64_t> rc = dist.getRegCoord(r);
        int64_t regLinear = 0;
        for (auto [d, c] : llvm::enumerate(rc))
          regLinear += c * strides[d];
        linear.push_back(
            arith::AddIOp::create(rewriter, loc, threadBase,
                                  indexConstant(rewriter, loc, regLinear)));
        along.push_back(
            arith::AddIOp::create(rewriter, loc, threadCoord[axis],
                                  indexConstant(rewriter, loc, rc[axis])));
      }

      for (int64_t step = 1; step < length; step *= 2) {
        for (int64_t r = 0; r < dist.getNumRegs(); ++r)
          for (size_t i = 0; i < n; ++i)
            memref::StoreOp::create(rewriter, loc, regs[r][i], buffers[i],
                                    linear[r]);
        context.barrier(rewriter, loc);
        Value delta = indexConstant(rewriter, loc, step * strides[axis]);
        Value stepV = indexConstant(rewriter, loc, step);
        for (int64_t r = 0; r < dist.getNumRegs(); ++r) {
          Value pred, neighbor;
          if (reverse) {
            pred = arith::CmpIOp::create(
                rewriter, loc, arith::CmpIPredicate::slt,
                arith::AddIOp::create(rewriter, loc, along[r], stepV),
                indexConstant(rewriter, loc, length));
            neighbor = arith::AddIOp::create(rewriter, loc, linear[r], delta);
          } else {
            pred = arith::CmpIOp::create(
                rewriter, loc, arith::CmpIPredicate::sge, along[r], stepV);
            neighbor = arith::SubIOp::create(rewriter, loc, linear[r], delta);
          }
          SmallVector<Value> mine = regs[r];
          auto ifOp = scf::IfOp::create(
              rewriter, loc, pred,
              [&](OpBuilder &b, Location l) {
                SmallVector<Value> other;
                for (size_t i = 0; i < n; ++i)
                  other.push_back(
                      memref::LoadOp::create(b, l, buffers[i], neighbor));
                SmallVector<Value> combined =
                    reverse ? combine(b, l, combiner, mine, other)
                            : combine(b, l, combiner, other, mine);
                scf::YieldOp::create(b, l, combined);
              },
              [&](OpBuilder &b, Location l) {
                scf::YieldOp::create(b, l, mine);
              });
          regs[r] = SmallVector<Value>(ifOp.getResults());
        }
        context.barrier(rewriter, loc);
      }
    }

    SmallVector<Value> results;
    for (size_t i = 0; i < n; ++i) {
      SmallVector<Value> elements;
      for (int64_t r = 0; r < dist.getNumRegs(); ++r)
        elements.push_back(regs[r][i]);
      results.push_back(buildVector(rewriter, loc, elementTypes[i], elements));
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

} // namespace

void mlir::ism::populateReduceScanPatterns(TileTypeConverter &converter,
                                           LoweringContext &context,
                                           RewritePatternSet &patterns) {
  patterns.add<ReduceOpLowering, ScanOpLowering>(
      converter, patterns.getContext(), context);
}
