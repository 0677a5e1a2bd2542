//===- HopperDot.cpp - wgmma products outside K loops (sm_90a) ------------===//
//
// A product that ism-accelerate-dot put on wgmma without a K loop of its
// own (an #ism.mma version-3 result outside a pipelined loop: attention's
// S = Q K^T and O += P V, whose loop holds two products and the online
// softmax) becomes wgmma instructions issued by every warpgroup of the
// kernel:
//
//   - The accumulator has the layout #ism.mma<3, [num_warps, 1]>: warp w
//     holds the 16-row stripes 16 w + 16 num_warps r, so warpgroup g
//     computes the 64-row blocks starting at 64 g + 16 num_warps r, one
//     m64nNk16 instruction per block and 16-wide K step, N the whole width.
//     Its registers are those of the mma.sync layout with the same warps
//     (the m64nN accumulator of a warp is its m16n8 fragments side by
//     side), so the row statistics and the elementwise code around the
//     product lower the same way.
//   - B and, unless it stays in registers, A are written to shared memory
//     by every thread (storeOperandTile) in the 128-byte swizzled boxes of
//     64 columns that TMA writes for the K-loop GEMM, from a 1024-byte
//     aligned base; a proxy fence makes the writes visible to wgmma, a
//     barrier to every warp. A tile stored [rows, K] (A, and B^T when B is
//     contiguous along K, e.g. the transposed K tile of attention) is read
//     K-major; B stored [K, N] is read MN-major (transposed by the
//     instruction).
//   - An A defined outside the loop around the product (attention's Q) is
//     written once, where it is defined, to shared memory of its own (after
//     a barrier where that code can run again). A B
//     that a ring of loop stages holds (AsyncOperands.cpp: attention's K and
//     V, copied ahead with cp.async) is read there; a product that writes
//     nothing needs no barrier of its own (the ring's schedule has them).
//   - An A in the accumulator layout of another product with the same warps
//     (attention's P) stays in registers: two adjacent n8 blocks of the
//     accumulator are an m64k16 A fragment (the identity the mma.sync
//     lowering uses), which wgmma takes from registers.
//   - The instructions of one product are one wgmma group, waited for with
//     the accumulator passing through the wait. The wait goes where the
//     result is first used, in the product's block (deferredWait), with
//     wait_group N, N the wgmma products issued in between: groups complete
//     in order, so a product issued before another can be waited for while
//     the other still runs (attention with the next block's S issued before
//     this block's P V: the softmax of S runs under P V). A product that
//     writes its operands to scratch, or whose result is used elsewhere,
//     waits at once (wait_group 0).
//
//===----------------------------------------------------------------------===//

#include "OperandTiles.h"

#include "ism/Dialect/Ism/IR/IsmOps.h"
#include "ism/Dialect/Ism/Transforms/DotLoop.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include <string>

using namespace mlir;
using namespace mlir::ism;

namespace {

Value plus(OpBuilder &b, Location loc, Value address, int64_t bytes) {
  if (!bytes)
    return address;
  return arith::AddIOp::create(b, loc, address, i64Const(b, loc, bytes));
}

/// Whether `value` is defined outside the loop (or other region) that holds
/// `op`, in a region around it.
bool definedAround(Value value, Operation *op) {
  Region *def = value.getParentRegion();
  Region *use = op->getParentRegion();
  return def != use && def->isProperAncestor(use);
}

/// One m64nNk16 wgmma with A in registers (`a`: a0..a3 as i32), B at the
/// descriptor `descB`: `acc` (a struct of N / 2 f32) += A x B.
Value wgmmaRegisterA(OpBuilder &b, Location loc, Value acc, ArrayRef<Value> a,
                     Value descB, int64_t n, Type inType, bool transposeB) {
  int64_t r = n / 2;
  SmallVector<Value> operands;
  for (int64_t i = 0; i < r; ++i)
    operands.push_back(LLVM::ExtractValueOp::create(b, loc, acc, i));
  operands.append(a.begin(), a.end());
  operands.push_back(descB);
  operands.push_back(i32Const(b, loc, 1)); // scale-d: accumulate
  // Operands: r outputs, r inputs tied to them, then a, descB, scale-d.
  auto arg = [](int64_t i) { return "$" + std::to_string(i); };
  std::string type = inType.isBF16() ? "bf16" : "f16";
  std::string text = "{\n.reg .pred p;\nsetp.ne.b32 p, " + arg(2 * r + 5) +
                     ", 0;\nwgmma.mma_async.sync.aligned.m64n" +
                     std::to_string(n) + "k16.f32." + type + "." + type + " {";
  std::string constraints;
  for (int64_t i = 0; i < r; ++i) {
    text += (i ? ", " : "") + arg(i);
    constraints += (i ? ",=f" : "=f");
  }
  text += "}, {" + arg(2 * r) + ", " + arg(2 * r + 1) + ", " + arg(2 * r + 2) +
          ", " + arg(2 * r + 3) + "}, " + arg(2 * r + 4) + ", p, 1, 1, " +
          (transposeB ? "1" : "0") + ";\n}";
  for (int64_t i = 0; i < r; ++i)
    constraints += "," + std::to_string(i);
  constraints += ",r,r,r,r,l,r";
  return LLVM::InlineAsmOp::create(
             b, loc, acc.getType(), operands, text, constraints,
             /*has_side_effects=*/true, /*is_align_stack=*/false,
             LLVM::tailcallkind::TailCallKind::None, LLVM::AsmDialectAttr(),
             ArrayAttr())
      .getResult(0);
}

/// Where the wait of product `op` can go: before the first op of its block
/// that uses the result (itself or inside its regions), with the number of
/// wgmma products issued in between (each commits a group). None when a
/// use lies outside the block, or an op in between holds products of its
/// own (a loop or a branch), or nothing uses the result.
static std::optional<std::pair<Operation *, int64_t>> deferredWait(DotOp op) {
  Block *block = op->getBlock();
  // The result and its conversions between #ism.mma layouts that differ
  // only in the instruction's N (the same registers: they lower to nothing,
  // e.g. P V's accumulator, made with m64n128, carried in S's m64n64
  // layout): the first other use needs the wait.
  SmallVector<Value> results{op.getResult()};
  auto sameRegisters = [](ConvertLayoutOp convert) {
    auto from =
        dyn_cast<MmaEncodingAttr>(convert.getSrc().getType().getEncoding());
    auto to = dyn_cast<MmaEncodingAttr>(convert.getType().getEncoding());
    return from && to && from.getVersion() == to.getVersion() &&
           from.getWarpsPerCTA() == to.getWarpsPerCTA();
  };
  int64_t pending = 0;
  for (Operation *it = op->getNextNode(); it; it = it->getNextNode()) {
    bool uses = false, products = false;
    it->walk([&](Operation *inner) {
      for (Value v : results)
        uses |= llvm::is_contained(inner->getOperands(), v);
      products |= inner != it && isa<DotOp>(inner);
    });
    auto convert = dyn_cast<ConvertLayoutOp>(it);
    if (uses && convert && sameRegisters(convert)) {
      results.push_back(convert.getResult());
      continue;
    }
    if (uses) {
      for (Value v : results)
        for (Operation *user : v.getUsers())
          if (!block->findAncestorOpInBlock(*user))
            return std::nullopt;
      return std::make_pair(it, pending);
    }
    if (products)
      return std::nullopt;
    if (auto dot = dyn_cast<DotOp>(it)) {
      // A wgmma product commits one group (this pattern lowers it).
      if (!isProduct(dot, 3))
        return std::nullopt;
      ++pending;
    }
  }
  return std::nullopt;
}

/// A product outside a pipelined K loop on wgmma (see the file comment).
struct WgmmaDotLowering : IsmConversionPattern<DotOp> {
  WgmmaDotLowering(const TypeConverter &converter, MLIRContext *ctx,
                   LoweringContext &context)
      : IsmConversionPattern(converter, ctx, context, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(DotOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    MmaEncodingAttr mma = matchProduct(op, rewriter, 3);
    if (!mma)
      return failure();
    auto aType = op.getA().getType(), bType = op.getB().getType();
    unsigned numWarps = context.getNumWarps();
    // (checked before the conversion too: checkTiles, lowerPartitions)
    if (failed(
            checkWgmmaProductOp(op, numWarps, context.getPartition().warpBase)))
      return failure();
    Type inType = aType.getElementType();
    int64_t blockM = aType.getDimSize(0), blockK = aType.getDimSize(1);
    int64_t blockN = bType.getDimSize(1);
    int64_t reps = blockM / (16 * numWarps);
    Location loc = op.getLoc();

    auto aMma = dyn_cast_or_null<MmaEncodingAttr>(aType.getEncoding());
    bool aInRegisters = aMma && aMma.getVersion() == 3 &&
                        aMma.getWarpsPerCTA() == mma.getWarpsPerCTA();
    // B in a ring stage (AsyncOperands.cpp), stored as loaded; else
    // written here, contiguous along K (K-major) when its layout is.
    auto ringB = context.ringOperands.lookup(op.getOperation());
    Distribution distB(bType);
    bool bKMajor = ringB.address
                       ? ringB.transposed
                       : distB.getFastDim() == 0 && distB.getContiguity() > 1;
    OperandTile tileA{blockM, blockK, 2, 0};
    OperandTile tileB = bKMajor ? OperandTile{blockN, blockK, 2, 0}
                                : OperandTile{blockK, blockN, 2, 0};
    Type i8 = rewriter.getI8Type();
    Ints i(i32s(rewriter, loc));

    // A loop-invariant A: written once, where it is defined.
    Value aBase;
    bool ownA = !aInRegisters && definedAround(op.getA(), op);
    if (ownA)
      aBase = context.ownOperands.lookup(op.getA());
    if (ownA && !aBase) {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointAfterValue(adaptor.getA());
      // Where the definition can run again (a loop over programs or
      // blocks), every warp must be done with the previous A first.
      Block *defBlock = rewriter.getInsertionBlock();
      if (!runsOncePerKernel(defBlock))
        context.barrier(rewriter, loc);
      Value scratch =
          context.getOwnScratch(rewriter, loc, i8, tileA.bytes() + 1023);
      aBase = alignedSharedAddress(rewriter, loc, scratch);
      storeOperandTile(rewriter, loc, context, tileA, adaptor.getA(),
                       Distribution(aType), sharedPointer(rewriter, loc, aBase),
                       Ints(i32s(rewriter, loc)).c(0));
      // Every warp's generic-proxy writes visible to every warpgroup's
      // wgmma (a ring filled by a producer warpgroup leaves no barrier in
      // the loop that would order them).
      fenceAsyncProxy(rewriter, loc);
      context.barrier(rewriter, loc);
      context.ownOperands[op.getA()] = aBase;
    }
    // What this product writes to shared memory itself: B unless a ring
    // holds it, A unless it is in registers or has its own place.
    bool storeA = !aInRegisters && !ownA;
    Value bBase = ringB.address;
    std::optional<unsigned> region;
    if (storeA || !bBase) {
      region = context.beginScratch(op);
      int64_t offsetB = storeA ? tileA.bytes() : 0;
      Value scratch =
          context.getScratch(rewriter, loc, *region, i8,
                             offsetB + (bBase ? 0 : tileB.bytes()) + 1023);
      Value base = alignedSharedAddress(rewriter, loc, scratch);
      Value ring = sharedPointer(rewriter, loc, base);
      if (storeA) {
        aBase = base;
        storeOperandTile(rewriter, loc, context, tileA, adaptor.getA(),
                         Distribution(aType), ring, i.c(0));
      }
      if (!bBase) {
        storeOperandTile(rewriter, loc, context, tileB, adaptor.getB(), distB,
                         ring, i.c(offsetB), bKMajor);
        bBase = plus(rewriter, loc, base, offsetB);
      }
      // The generic-proxy writes must be visible to wgmma's async proxy.
      fenceAsyncProxy(rewriter, loc);
      context.barrier(rewriter, loc);
    }

    // This warpgroup's first row, as bytes into a K-major box.
    Value warpGroup =
        arith::DivUIOp::create(rewriter, loc, context.getWarpId(rewriter, loc),
                               indexConstant(rewriter, loc, 4));
    Value groupRow = arith::MulIOp::create(
        rewriter, loc,
        arith::IndexCastOp::create(rewriter, loc, rewriter.getI64Type(),
                                   warpGroup),
        i64Const(rewriter, loc, 64 * 128));
    NVVM::WgmmaFenceAlignedOp::create(rewriter, loc);
    SmallVector<Value> structs =
        wgmmaAccumulators(rewriter, loc, adaptor.getC(), reps, blockN / 2);
    // A from registers: registers 4 * (j + (BK / 8) * r) + 0..3 of A are the
    // m16n8 block (r, j) of the warp's stripe: c0, c1 (row, columns 2t,
    // 2t + 1), c2, c3 (row + 8). k-step kk takes blocks 2 kk (a0..a3) and
    // 2 kk + 1 (a4..a7), packed in pairs.
    // The fragments are packed where A is made (the start of the loop body
    // for a carried P), not here: ptxas serializes every wgmma when
    // instructions defining a wgmma's input registers come between another
    // wgmma and its wait (C7513), as they would when the previous product
    // is still running (deferredWait).
    SmallVector<SmallVector<Value>> fragments;
    if (aInRegisters) {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointAfterValue(adaptor.getA());
      auto pack = [&](int64_t reg) -> Value {
        Value pair =
            buildVector(rewriter, loc, inType,
                        {extractReg(rewriter, loc, adaptor.getA(), reg),
                         extractReg(rewriter, loc, adaptor.getA(), reg + 1)});
        return LLVM::BitcastOp::create(rewriter, loc, rewriter.getI32Type(),
                                       pair);
      };
      for (int64_t kk = 0; kk < blockK / 16; ++kk)
        for (int64_t r = 0; r < reps; ++r) {
          int64_t lo = 4 * (2 * kk + (blockK / 8) * r), hi = lo + 4;
          fragments.push_back({pack(lo), pack(lo + 2), pack(hi), pack(hi + 2)});
        }
    }
    auto fragment = [&](int64_t kk, int64_t r) {
      return fragments[kk * reps + r];
    };
    for (int64_t kk = 0; kk < blockK / 16; ++kk) {
      // K-major tiles: 64-column boxes of [rows, 64], 32 bytes per k-step
      // inside a box. MN-major B: boxes of 64 columns of N, [BK, 64] each,
      // one k-step is 16 rows.
      Value descB =
          bKMajor
              ? wgmmaDescriptor(rewriter, loc,
                                plus(rewriter, loc, bBase,
                                     (kk / 4) * blockN * 128 + (kk % 4) * 32),
                                16, 1024)
              : wgmmaDescriptor(rewriter, loc,
                                plus(rewriter, loc, bBase, kk * 16 * 128),
                                blockK * 128, 1024);
      for (int64_t r = 0; r < reps; ++r) {
        if (aInRegisters) {
          structs[r] = wgmmaRegisterA(rewriter, loc, structs[r],
                                      fragment(kk, r), descB, blockN, inType,
                                      /*transposeB=*/!bKMajor);
          continue;
        }
        Value rowBytes = arith::AddIOp::create(
            rewriter, loc, aBase,
            arith::AddIOp::create(rewriter, loc, groupRow,
                                  i64Const(rewriter, loc,
                                           (kk / 4) * blockM * 128 +
                                               r * 16 * numWarps * 128 +
                                               (kk % 4) * 32)));
        Value descA = wgmmaDescriptor(rewriter, loc, rowBytes, 16, 1024);
        structs[r] = wgmmaFromShared(rewriter, loc, structs[r], descA, descB,
                                     blockN, inType, inType,
                                     /*transposeB=*/!bKMajor);
      }
    }
    NVVM::WgmmaGroupSyncAlignedOp::create(rewriter, loc);
    SmallVector<Value> registers = wgmmaRegisters(rewriter, loc, structs);
    // Waited for here, or (writing no scratch) where the result is first
    // used.
    std::optional<std::pair<Operation *, int64_t>> later;
    if (!region)
      later = deferredWait(op);
    OpBuilder::InsertionGuard guard(rewriter);
    if (later)
      rewriter.setInsertionPoint(later->first);
    SmallVector<Value> done =
        waitForWgmma(rewriter, loc, registers, later ? later->second : 0);
    if (region && context.needsTrailingBarrier(*region))
      context.barrier(rewriter, loc);
    rewriter.replaceOp(op,
                       buildVector(rewriter, loc, rewriter.getF32Type(), done));
    return success();
  }
};

} // namespace

Value mlir::ism::alignedSharedAddress(OpBuilder &b, Location loc,
                                      Value scratch) {
  Value address = arith::IndexCastOp::create(
      b, loc, b.getI64Type(),
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, scratch));
  Value up = arith::AddIOp::create(b, loc, address, i64Const(b, loc, 1023));
  return arith::AndIOp::create(b, loc, up, i64Const(b, loc, ~int64_t(1023)));
}

void mlir::ism::populateWgmmaProductPatterns(TileTypeConverter &converter,
                                             LoweringContext &context,
                                             RewritePatternSet &patterns) {
  patterns.add<WgmmaDotLowering>(converter, patterns.getContext(), context);
}
