//===- AmpereGemm.cpp - mma.sync K loops on a cp.async pipeline (sm_80+) --===//
//
// A K loop that ism-accelerate-dot put on mma.sync (#ism.mma version 2) and
// ism-pipeline scheduled (ism.pipeline = {num_stages = S}) becomes a
// software-pipelined loop run by all the kernel's warps; there is no warp
// specialization and no persistent grid on this path. A product outside
// such a loop (MmaSyncDotLowering, at the end of the file) uses the same
// shared tiles and instructions without the pipeline.
//
// Shared memory: a ring of S stages in scratch region 2, each holding the A
// tile [BM, BK] and then the B tile [BK, BN]. A tile is stored as boxes of
// at most 128 bytes of columns (64 columns of 16-bit elements), each box
// its rows one after the other; inside a box, the 16-byte chunks of every
// 128-byte line are XOR-swizzled with the line's index (chunk ^= line % 8).
// For 128-byte box rows (BK = 64; B with BN >= 64) this is the TMA 128-byte
// swizzle of the wgmma path (chunk ^= row % 8); narrower rows pack 2 or 4
// rows a line. Either way the 8 rows an ldmatrix 8x8 matrix reads (8
// consecutive rows, one 16-byte chunk each) fall in 8 different bank
// groups: no bank conflicts.
//
// Schedule, for iteration i of the K loop (k = lb + i * step):
//
//   prologue:  for s in 0 .. S-2: copy the tiles of iteration s into stage
//              s (if k_s < ub); cp.async.commit_group.
//   loop i:    cp.async.wait_group S-2   (this thread's copies for i done)
//              barrier                    (everyone's copies for i visible;
//                                          everyone is done reading stage
//                                          (i-1) % S)
//              copy the tiles of iteration i+S-1 into stage (i+S-1) % S
//              (if k + (S-1) * step < ub); cp.async.commit_group
//              for each 16-wide K step kk of the stage (stage i % S):
//                ldmatrix.x4 the warp's A fragments (one per 16-row block),
//                ldmatrix.x4.trans the B fragments (two n8 blocks each),
//                mma.sync.m16n8k16.row.col into the accumulator registers.
//   after:     cp.async.wait_group 0; barrier (the ring is free again).
//
// Copies: every thread of the CTA takes the 16-byte chunks tid, tid + T, ...
// of each tile (row-major) and issues cp.async.cg with a source size of the
// bytes left in the row (0 for rows outside the memref), so edges and the
// K tail are zero-filled. cp.async needs 16-byte aligned sources: when a
// memref's inner stride is not 1, its base or row stride is not a multiple
// of 16 bytes, or a tile's column offset is not, the tile is copied element
// by element instead (bounds-checked loads, st.shared into the same
// swizzled places); the barriers of the schedule order those stores too.
// The test is uniform across the CTA.
//
// Fragments: warp w covers rows 16 * (w % wm) + 16 * wm * r (r < BM / (16
// wm)) and columns warpN * (w / wm) + 0 .. warpN (warpN = BN / wn), the
// #ism.mma accumulator distribution (Distribution.cpp), whose registers
// 4 * (j + (warpN / 8) * r) + 0..3 are exactly the m16n8 C fragment of
// instruction (r, j). For ldmatrix.x4 lane l gives the address of row
// l % 16 and column 8 * (l / 16) of the 16x16 A block (matrices: rows 0-7
// and 8-15 of k 0-7, then of k 8-15 = a0..a3), and for ldmatrix.x4.trans
// k-row l % 16 and column n0 + 8 * (l / 16) of B (b0, b1 of n-block n0,
// then of n0 + 8).
//
// The tile offsets of later iterations are computed by clones of the loop
// body's scalar code that computes them, with the induction variable
// replaced.
//
//===----------------------------------------------------------------------===//

#include "OperandTiles.h"

#include "ism/Dialect/Ism/IR/IsmOps.h"
#include "ism/Dialect/Ism/Transforms/DotLoop.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::ism;

namespace {

Value toI32(OpBuilder &b, Location loc, Value index) {
  return arith::IndexCastOp::create(b, loc, b.getI32Type(), index);
}
Value toI64(OpBuilder &b, Location loc, Value index) {
  return arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
}

Value sharedAt(OpBuilder &b, Location loc, Value ring, Value offset) {
  return LLVM::GEPOp::create(b, loc, ring.getType(), b.getI8Type(), ring,
                             ValueRange{offset});
}

/// The mma.sync instructions of one [BM, BK] x [BK, BN] product whose A
/// and B tiles lie in shared memory as `tileA` and `tileB` (see the file
/// comment) and whose accumulator has the #ism.mma version-2 layout `mma`:
/// the per-thread parts of the fragment addresses are computed once, then
/// accumulate() issues the ldmatrix and mma.sync of one product.
struct MmaSyncProduct {
  OperandTile tileA, tileB;
  /// Whether tileB holds B transposed ([BN, BK], K contiguous, e.g. the K
  /// tile of attention's Q K^T): then plain ldmatrix gives the B fragments.
  bool bTransposed;
  int64_t warpsM, warpsN, warpN, reps;
  Type inType;
  Value ring;
  OperandTile::Lane laneA, laneB;
  Value warpRow, warpCol;

  MmaSyncProduct(OpBuilder &b, Location loc, const OperandTile &tileA,
                 const OperandTile &tileB, MmaEncodingAttr mma, Type inType,
                 Value ring, Value warp, Value lane, bool bTransposed = false)
      : tileA(tileA), tileB(tileB), bTransposed(bTransposed),
        warpsM(mma.getWarpsPerCTA()[0]), warpsN(mma.getWarpsPerCTA()[1]),
        warpN((bTransposed ? tileB.rows : tileB.cols) / warpsN),
        reps(tileA.rows / (16 * warpsM)), inType(inType), ring(ring) {
    Ints i(i32s(b, loc));
    laneA = tileA.laneParts(b, loc, lane);
    laneB = tileB.laneParts(b, loc, lane);
    warpRow = i.mul(i.rem(warp, warpsM), 16);
    warpCol = i.mul(i.rem(i.div(warp, warpsM), warpsN), warpN);
  }

  /// Checks that `dot` (lowered as part of `op`) can be issued as m16n8k16
  /// instructions with the layout `mma` on `numWarps` warps: f16 or bf16
  /// inputs, an f32 accumulator, each warp taking whole 16-row stripes and
  /// 16-column blocks. Emits the error on `op` otherwise.
  static LogicalResult check(Operation *op, DotOp dot, MmaEncodingAttr mma,
                             int64_t numWarps) {
    auto aType = dot.getA().getType(), bType = dot.getB().getType();
    Type inType = aType.getElementType();
    if (!(inType.isBF16() || inType.isF16()) ||
        !dot.getType().getElementType().isF32())
      return op->emitOpError("mma.sync takes f16 or bf16 inputs with an f32 "
                             "accumulator here");
    int64_t blockM = aType.getDimSize(0), blockK = aType.getDimSize(1);
    int64_t blockN = bType.getDimSize(1);
    int64_t warpsM = mma.getWarpsPerCTA()[0], warpsN = mma.getWarpsPerCTA()[1];
    if (blockK % 16 == 0 && blockM % (16 * warpsM) == 0 &&
        blockN % warpsN == 0 && (blockN / warpsN) % 16 == 0 &&
        warpsM * warpsN == numWarps)
      return success();
    return op->emitOpError("the mma.sync layout ")
           << mma << " does not tile the " << blockM << "x" << blockN << "x"
           << blockK << " product with " << numWarps << " warps";
  }

  /// regs += A x B for the operands at `baseA` and `baseB` (i32 bytes from
  /// the ring); `regs` are the accumulator's registers in the #ism.mma
  /// order, whose registers 4 * (j + (warpN / 8) * r) + 0..3 are the m16n8
  /// C fragment of instruction (r, j).
  ///
  /// `aFragments`, when given, holds the A fragments (a0..a3 as i32) of
  /// k-step kk and row block r at kk * reps + r, taken from registers
  /// instead of shared memory (`baseA` is then unused).
  void accumulate(OpBuilder &b, Location l, Value baseA, Value baseB,
                  SmallVectorImpl<Value> &regs,
                  ArrayRef<std::array<Value, 4>> aFragments = {}) const {
    MLIRContext *ctx = b.getContext();
    Ints i(i32s(b, l));
    Type f32 = b.getF32Type(), i32 = b.getI32Type();
    auto fragType = LLVM::LLVMStructType::getLiteral(ctx, {i32, i32, i32, i32});
    auto accType = LLVM::LLVMStructType::getLiteral(ctx, {f32, f32, f32, f32});
    bool bf16 = inType.isBF16();
    auto ptxType = bf16 ? NVVM::MMATypes::bf16 : NVVM::MMATypes::f16;
    auto operand = [&](Value v) -> Value {
      if (bf16)
        return v;
      return LLVM::BitcastOp::create(b, l, VectorType::get({2}, b.getF16Type()),
                                     v);
    };
    auto ldmatrix = [&](Value offset, bool trans) {
      Value frag = NVVM::LdMatrixOp::create(
          b, l, fragType, sharedAt(b, l, ring, offset), 4,
          trans ? NVVM::MMALayout::col : NVVM::MMALayout::row,
          NVVM::LdStMatrixShapeAttr::get(ctx, 8, 8),
          NVVM::LdStMatrixEltType::B16);
      std::array<Value, 4> regs;
      for (int64_t r = 0; r < 4; ++r)
        regs[r] = LLVM::ExtractValueOp::create(b, l, frag, r);
      return regs;
    };
    for (int64_t kk = 0; kk < tileA.cols / 16; ++kk) {
      SmallVector<std::array<Value, 4>> a;
      for (int64_t r = 0; r < reps; ++r) {
        if (!aFragments.empty()) {
          a.push_back(aFragments[kk * reps + r]);
          continue;
        }
        Value row = i.add(warpRow, 16 * warpsM * r);
        Value off = tileA.ldmatrixOffset(b, l, laneA, row, i.c(kk * 16));
        a.push_back(ldmatrix(i.add(baseA, off), false));
      }
      for (int64_t jj = 0; jj < warpN / 16; ++jj) {
        Value col = i.add(warpCol, 16 * jj);
        // The four 8x8 matrices: .trans of [k, n] rows gives (b0, b1) of
        // n-block 0, then of n-block 1; plain ldmatrix of [n, k] rows gives
        // b0 of both n-blocks, then b1 of both.
        Value off =
            bTransposed
                ? tileB.ldmatrixOffset(b, l, laneB, col, i.c(kk * 16))
                : tileB.ldmatrixOffset(b, l, laneB, i.c(kk * 16), col);
        std::array<Value, 4> bq = ldmatrix(i.add(baseB, off), !bTransposed);
        if (bTransposed)
          std::swap(bq[1], bq[2]);
        for (int64_t half = 0; half < 2; ++half) {
          int64_t j = 2 * jj + half;
          for (int64_t r = 0; r < reps; ++r) {
            int64_t base = 4 * (j + (warpN / 8) * r);
            SmallVector<Value> opsA, opsB, opsC;
            for (Value v : a[r])
              opsA.push_back(operand(v));
            opsB.push_back(operand(bq[2 * half]));
            opsB.push_back(operand(bq[2 * half + 1]));
            for (int64_t c = 0; c < 4; ++c)
              opsC.push_back(regs[base + c]);
            Value d = NVVM::MmaOp::create(
                b, l, accType, opsA, opsB, opsC, ArrayRef<int64_t>{16, 8, 16},
                std::nullopt, std::nullopt,
                std::array<NVVM::MMATypes, 2>{ptxType, ptxType},
                std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                               NVVM::MMALayout::col});
            for (int64_t c = 0; c < 4; ++c)
              regs[base + c] = LLVM::ExtractValueOp::create(b, l, d, c);
          }
        }
      }
    }
  }
};

/// The mma.sync K loop (see the file comment).
struct MmaSyncLoopLowering : IsmConversionPattern<scf::ForOp> {
  MmaSyncLoopLowering(const TypeConverter &converter, MLIRContext *ctx,
                      LoweringContext &context)
      : IsmConversionPattern(converter, ctx, context, /*benefit=*/10) {
    setHasBoundedRewriteRecursion();
  }

  LogicalResult
  matchAndRewrite(scf::ForOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto dims = op->getAttrOfType<DictionaryAttr>(kPipelineAttrName);
    if (!dims || op.getNumResults() == 0)
      return failure();
    auto dot = dyn_cast_or_null<DotOp>(
        op.getBody()->getTerminator()->getOperand(0).getDefiningOp());
    auto mma = dot ? dyn_cast<MmaEncodingAttr>(dot.getType().getEncoding())
                   : MmaEncodingAttr();
    if (!mma || mma.getVersion() != 2)
      return rewriter.notifyMatchFailure(op, "not an mma.sync K loop");
    std::optional<DotLoop> match = matchDotLoop(dot);
    if (!match)
      return op.emitOpError("is marked ism.pipeline but is not a K loop of "
                            "ism.dot the mma.sync lowering can take");
    DotLoop dl = *match;
    if (op.getNumRegionIterArgs() != 1)
      return op.emitOpError("a pipelined mma.sync K loop may carry only the "
                            "accumulator");
    auto stagesAttr = dims.getAs<IntegerAttr>("num_stages");
    int64_t stages = stagesAttr ? stagesAttr.getInt() : 0;
    if (stages < 2)
      return op.emitOpError("a pipelined mma.sync K loop needs at least 2 "
                            "stages");

    Location loc = op.getLoc();
    if (failed(MmaSyncProduct::check(op, dot, mma, context.getNumWarps())))
      return failure();
    auto aType = dot.getA().getType(), bType = dot.getB().getType();
    Type inType = aType.getElementType();
    int64_t blockM = aType.getDimSize(0), blockK = aType.getDimSize(1);
    int64_t blockN = bType.getDimSize(1);
    OperandTile tileA{blockM, blockK, 2, 0};
    OperandTile tileB{blockK, blockN, 2, tileA.bytes()};
    int64_t stageBytes = tileA.bytes() + tileB.bytes();
    int64_t threads = context.getNumThreads();

    // The loop body's scalar code that computes the tile offsets.
    Block *body = op.getBody();
    BackwardSliceOptions options;
    options.omitBlockArguments = true;
    options.inclusive = true;
    options.filter = [&](Operation *o) { return o->getBlock() == body; };
    llvm::SetVector<Operation *> slice;
    for (LoadOp load : {dl.loadA, dl.loadB}) {
      if (body->getParent()->isAncestor(load.getBase().getParentRegion()))
        return load.emitOpError("reads a memref defined inside its "
                                "pipelined K loop");
      for (Value v : load.getOffsets()) {
        Operation *def = v.getDefiningOp();
        if (!def || def->getBlock() != body)
          continue;
        if (failed(getBackwardSlice(def, &slice, options)))
          return op.emitOpError("cannot analyse the K loop's tile offsets");
      }
    }
    SmallVector<Operation *> offsetOps;
    for (Operation &o : *body)
      if (slice.contains(&o))
        offsetOps.push_back(&o);
    for (Operation *o : offsetOps) {
      if (!isReplicableScalar(o))
        return o->emitOpError("computes a tile offset of a pipelined K loop "
                              "with side effects or regions; compute it "
                              "with scalar arithmetic");
      for (Value operand : o->getOperands())
        if (auto arg = dyn_cast<BlockArgument>(operand);
            arg && arg.getOwner() == body && arg.getArgNumber() != 0)
          return o->emitOpError("computes a tile offset of a pipelined K "
                                "loop from a loop-carried value");
    }
    for (LoadOp load : {dl.loadA, dl.loadB})
      for (Value v : load.getOffsets())
        if (auto arg = dyn_cast<BlockArgument>(v);
            arg && arg.getOwner() == body && arg.getArgNumber() != 0)
          return load.emitOpError("has a tile offset that is a loop-carried "
                                  "value of its pipelined K loop");

    // Values from outside the loop, as the conversion has them now.
    auto outer = [&](Value v) {
      Value mapped = rewriter.getRemappedValue(v);
      return mapped ? mapped : v;
    };
    // The tile offsets (o0, o1) of A and B for the iteration at `k`.
    auto offsetsAt = [&](OpBuilder &b, Value k) {
      IRMapping map;
      map.map(op.getInductionVar(), k);
      for (Operation *o : offsetOps) {
        for (Value operand : o->getOperands())
          if (!map.contains(operand))
            map.map(operand, outer(operand));
        b.clone(*o, map);
      }
      SmallVector<Value, 4> result;
      for (LoadOp load : {dl.loadA, dl.loadB})
        for (Value v : load.getOffsets())
          result.push_back(map.contains(v) ? map.lookup(v) : outer(v));
      return result;
    };

    Ints x(indices(rewriter, loc));
    Value tid = context.getThreadId(rewriter, loc);
    Value warp = toI32(rewriter, loc, context.getWarpId(rewriter, loc));
    Value lane = toI32(rewriter, loc, context.getLaneId(rewriter, loc));
    Value scratch = context.getScratch(
        rewriter, loc, /*region=*/2, rewriter.getI8Type(), stages * stageBytes);
    Value ring = scratchPointer(rewriter, loc, scratch);
    GlobalMatrix globalA(rewriter, loc, outer(dl.loadA.getBase()));
    GlobalMatrix globalB(rewriter, loc, outer(dl.loadB.getBase()));

    // Copies the tiles of the iteration at `k` into `stage` (i32) when
    // `guard`, then commits the group (empty when not).
    auto issue = [&](OpBuilder &b, Location l, Value k, Value stage,
                     Value guard) {
      scf::IfOp::create(b, l, guard, [&](OpBuilder &tb, Location tl) {
        SmallVector<Value, 4> o = offsetsAt(tb, k);
        Ints i(i32s(tb, tl));
        Value stageBase = i.mul(stage, stageBytes);
        auto copy = [&](const OperandTile &t, const GlobalMatrix &g, Value o0,
                        Value o1) {
          copyTile(tb, tl, t, g, o0, o1, ring, i.add(stageBase, t.offset), tid,
                   threads);
        };
        copy(tileA, globalA, o[0], o[1]);
        copy(tileB, globalB, o[2], o[3]);
        scf::YieldOp::create(tb, tl);
      });
      NVVM::CpAsyncCommitGroupOp::create(b, l);
    };

    Value lb = adaptor.getLowerBound(), ub = adaptor.getUpperBound();
    Value step = adaptor.getStep();
    // Prologue: stages 0 .. S-2.
    for (int64_t s = 0; s + 1 < stages; ++s) {
      Value k = x.add(lb, x.mul(step, s));
      issue(rewriter, loc, k, i32s(rewriter, loc).c(s),
            x.cmp(arith::CmpIPredicate::slt, k, ub));
    }

    Ints i(i32s(rewriter, loc));
    MmaSyncProduct product(rewriter, loc, tileA, tileB, mma, inType, ring,
                           warp, lane);
    Type f32 = rewriter.getF32Type();

    auto loop = scf::ForOp::create(
        rewriter, loc, lb, ub, step,
        ValueRange{adaptor.getInitArgs()[0], i.c(0)},
        [&](OpBuilder &b, Location l, Value k, ValueRange iter) {
          Ints x(indices(b, l));
          Ints i(i32s(b, l));
          Value acc = iter[0], stage = iter[1];
          NVVM::CpAsyncWaitGroupOp::create(b, l, stages - 2);
          context.barrier(b, l);
          // Stage (i + S - 1) % S was read in iteration i - 1, which every
          // thread finished before the barrier.
          Value ahead = x.add(k, x.mul(step, stages - 1));
          Value writeStage =
              i.select(i.cmp(arith::CmpIPredicate::eq, stage, i.c(0)),
                       i.c(stages - 1), i.add(stage, -1));
          issue(b, l, ahead, writeStage,
                x.cmp(arith::CmpIPredicate::slt, ahead, ub));

          Value stageBase = i.mul(stage, stageBytes);
          SmallVector<Value> regs;
          int64_t numRegs = cast<VectorType>(acc.getType()).getNumElements();
          for (int64_t r = 0; r < numRegs; ++r)
            regs.push_back(extractReg(b, l, acc, r));
          product.accumulate(b, l, i.add(stageBase, tileA.offset),
                             i.add(stageBase, tileB.offset), regs);
          Value next = i.add(stage, 1);
          next = i.select(i.cmp(arith::CmpIPredicate::eq, next, i.c(stages)),
                          i.c(0), next);
          scf::YieldOp::create(b, l,
                               ValueRange{buildVector(b, l, f32, regs), next});
        });
    NVVM::CpAsyncWaitGroupOp::create(rewriter, loc, 0);
    context.barrier(rewriter, loc);
    rewriter.replaceOp(op, loop.getResult(0));
    return success();
  }
};

/// A matrix product outside a pipelined K loop (a loop with several
/// products, e.g. attention's S = Q K^T and O += P V, or a product of
/// computed tiles) on mma.sync: every thread writes its elements of A and
/// B into the swizzled shared tiles of the file comment, a barrier, then
/// each warp issues the ldmatrix and mma.sync instructions of its part of
/// the accumulator, whose registers the #ism.mma layout gives it. A and B
/// may have any layout.
struct MmaSyncDotLowering : IsmConversionPattern<DotOp> {
  MmaSyncDotLowering(const TypeConverter &converter, MLIRContext *ctx,
                     LoweringContext &context)
      : IsmConversionPattern(converter, ctx, context, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(DotOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    MmaEncodingAttr mma = matchProduct(op, rewriter, 2);
    if (!mma)
      return failure();
    auto aType = op.getA().getType(), bType = op.getB().getType();
    if (failed(MmaSyncProduct::check(op, op, mma, context.getNumWarps())))
      return failure();
    Type inType = aType.getElementType();
    int64_t blockM = aType.getDimSize(0), blockK = aType.getDimSize(1);
    int64_t blockN = bType.getDimSize(1);

    Location loc = op.getLoc();
    // A in the accumulator layout of a product with the same warp rows and
    // whole rows per warp (attention's P = exp(S - m), in S's layout): two
    // adjacent n8 blocks of the m16n8 accumulator are exactly an m16k16 A
    // fragment, so A stays in registers.
    auto aMma = dyn_cast_or_null<MmaEncodingAttr>(aType.getEncoding());
    bool aInRegisters = aMma && aMma.getVersion() == 2 &&
                        aMma.getWarpsPerCTA()[1] == 1 &&
                        mma.getWarpsPerCTA()[1] == 1 &&
                        aMma.getWarpsPerCTA()[0] == mma.getWarpsPerCTA()[0];
    // B contiguous along K (e.g. the transposed K tile of attention) is
    // stored as B^T, [BN, BK], so that its 16-byte pieces stay whole.
    // A B that a ring of loop stages holds (AsyncOperands.cpp) is read
    // there, stored as loaded.
    auto ringB = context.ringOperands.lookup(op.getOperation());
    Distribution distB(bType);
    bool bTransposed =
        ringB.address ? ringB.transposed
                      : distB.getFastDim() == 0 && distB.getContiguity() > 1;
    // A kept in registers takes no shared memory.
    OperandTile tileA{blockM, blockK, 2, 0};
    OperandTile tileB = bTransposed ? OperandTile{blockN, blockK, 2, 0}
                                    : OperandTile{blockK, blockN, 2, 0};
    tileB.offset = aInRegisters ? 0 : tileA.bytes();
    bool storeB = !ringB.address;
    Ints i(i32s(rewriter, loc));
    std::optional<unsigned> region;
    Value ring, baseB;
    if (!aInRegisters || storeB) {
      region = context.beginScratch(op);
      Value scratch = context.getScratch(
          rewriter, loc, *region, rewriter.getI8Type(),
          storeB ? tileB.offset + tileB.bytes() : tileA.bytes());
      ring = scratchPointer(rewriter, loc, scratch);
      if (!aInRegisters)
        storeOperandTile(rewriter, loc, context, tileA, adaptor.getA(),
                         Distribution(aType), ring, i.c(tileA.offset));
      if (storeB) {
        storeOperandTile(rewriter, loc, context, tileB, adaptor.getB(), distB,
                         ring, i.c(tileB.offset), bTransposed);
        baseB = i.c(tileB.offset);
      }
      context.barrier(rewriter, loc);
    }
    if (!storeB) {
      // The stage, as an offset from the pointer the product reads by.
      if (!ring) {
        ring = LLVM::IntToPtrOp::create(
            rewriter, loc, LLVM::LLVMPointerType::get(rewriter.getContext(), 3),
            ringB.address);
        baseB = i.c(0);
      } else {
        Value from = LLVM::PtrToIntOp::create(rewriter, loc,
                                              rewriter.getI64Type(), ring);
        baseB = arith::TruncIOp::create(
            rewriter, loc, rewriter.getI32Type(),
            arith::SubIOp::create(rewriter, loc, ringB.address, from));
      }
    }

    Value warp = toI32(rewriter, loc, context.getWarpId(rewriter, loc));
    Value lane = toI32(rewriter, loc, context.getLaneId(rewriter, loc));
    MmaSyncProduct product(rewriter, loc, tileA, tileB, mma, inType, ring,
                           warp, lane, bTransposed);
    Value acc = adaptor.getC();
    SmallVector<Value> regs;
    int64_t numRegs = cast<VectorType>(acc.getType()).getNumElements();
    for (int64_t r = 0; r < numRegs; ++r)
      regs.push_back(extractReg(rewriter, loc, acc, r));
    SmallVector<std::array<Value, 4>> aFragments;
    if (aInRegisters) {
      // Registers 4 * (j + (BK / 8) * r) + 0..3 of A are the m16n8 block
      // (r, j): c0, c1 (row, columns 2t, 2t+1), c2, c3 (row + 8). k-step kk
      // takes blocks j = 2kk (a0, a1) and 2kk + 1 (a2, a3).
      Type half = aType.getElementType();
      auto pack = [&](int64_t reg) -> Value {
        Value pair = buildVector(
            rewriter, loc, half,
            {extractReg(rewriter, loc, adaptor.getA(), reg),
             extractReg(rewriter, loc, adaptor.getA(), reg + 1)});
        return LLVM::BitcastOp::create(rewriter, loc, rewriter.getI32Type(),
                                       pair);
      };
      for (int64_t kk = 0; kk < blockK / 16; ++kk)
        for (int64_t r = 0; r < product.reps; ++r) {
          int64_t lo = 4 * (2 * kk + (blockK / 8) * r), hi = lo + 4;
          aFragments.push_back({pack(lo), pack(lo + 2), pack(hi), pack(hi + 2)});
        }
    }
    product.accumulate(rewriter, loc, i.c(tileA.offset), baseB, regs,
                       aFragments);
    if (region && context.needsTrailingBarrier(*region))
      context.barrier(rewriter, loc);
    rewriter.replaceOp(op,
                       buildVector(rewriter, loc, rewriter.getF32Type(), regs));
    return success();
  }
};

} // namespace

mlir::ism::GlobalMatrix::GlobalMatrix(OpBuilder &b, Location loc, Value memref,
                                      ValueRange leading)
    : memref(memref), leading(leading.begin(), leading.end()) {
  auto type = cast<MemRefType>(memref.getType());
  unsigned rank = type.getRank();
  assert(leading.size() + 2 == rank && "one leading index per outer dim");
  elementBytes = type.getElementTypeBitWidth() / 8;
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, memref);
  Ints i(indices(b, loc));
  for (unsigned d = 0; d < 2; ++d) {
    sizes[d] = meta.getSizes()[rank - 2 + d];
    strides[d] = meta.getStrides()[rank - 2 + d];
  }
  // Element (0, 0) of the matrix the leading indices select; when one of
  // them is outside the memref, every element counts as outside.
  Value offset = meta.getOffset();
  leadingInside = arith::ConstantIntOp::create(b, loc, 1, 1);
  for (unsigned d = 0; d + 2 < rank; ++d) {
    offset = i.add(offset, i.mul(leading[d], meta.getStrides()[d]));
    leadingInside =
        i.andi(leadingInside, i.inRange(leading[d], meta.getSizes()[d]));
  }
  Value rows = sizes[0];
  if (rank > 2)
    sizes[0] = i.select(leadingInside, rows, i.c(0));
  Value aligned =
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  Value address = i.add(aligned, i.mul(offset, elementBytes));
  base = toI64(b, loc, address);
  Value zero = i.c(0);
  chunked =
      i.andi(i.andi(i.cmp(arith::CmpIPredicate::eq, strides[1], i.c(1)),
                    i.cmp(arith::CmpIPredicate::eq, i.rem(address, 16), zero)),
             i.cmp(arith::CmpIPredicate::eq,
                   i.rem(i.mul(strides[0], elementBytes), 16), zero));
}

void mlir::ism::copyTileAsync(OpBuilder &b, Location loc, const OperandTile &t,
                              const GlobalMatrix &g, Value o0, Value o1,
                              Value ring, Value tileBase, Value tid,
                              int64_t threads) {
  Ints x(indices(b, loc));
  int64_t perRow = t.chunksPerRow();
  int64_t chunks = t.chunks();
  int64_t elemsPerChunk = 16 / g.elementBytes;
  // Uniform: the memref's rows and columns left from the tile's origin.
  Value rowsLeft = x.sub(g.sizes[0], o0);
  Value colsLeft = x.sub(g.sizes[1], o1);
  Value negO0 = x.sub(x.c(0), o0), negO1 = x.sub(x.c(0), o1);
  Value origin = x.add(x.mul(o0, g.strides[0]), o1);
  // Copies every chunk of this thread; `whole`: the tile is inside the
  // memref, so no chunk needs a bounds test or a zero fill.
  auto copyChunks = [&](OpBuilder &cb, Location cl, bool whole) {
    Ints x(indices(cb, cl));
    Ints i(i32s(cb, cl));
    Value zero32 = i.c(0);
    for (int64_t n = 0; n * threads < chunks; ++n) {
      // Chunk tid + n * threads: its row and chunk within the row.
      Value row, chunk;
      if (threads % perRow == 0) {
        row = x.add(x.div(tid, perRow), n * threads / perRow);
        chunk = x.rem(tid, perRow);
      } else {
        Value c = x.add(tid, n * threads);
        row = x.div(c, perRow);
        chunk = x.rem(c, perRow);
      }
      auto body = [&](OpBuilder &bb, Location l) {
        Ints bx(indices(bb, l));
        Ints bi(i32s(bb, l));
        Value col = bx.mul(chunk, elemsPerChunk);
        Value element =
            bx.add(origin, bx.add(bx.mul(row, g.strides[0]), col));
        Value address = arith::AddIOp::create(
            bb, l, g.base, toI64(bb, l, bx.mul(element, g.elementBytes)));
        Value size;
        if (!whole) {
          // Bytes of the chunk inside the memref: the rest of the row, at
          // most 16; none when the row is outside.
          Value rowInside =
              bx.andi(bx.cmp(arith::CmpIPredicate::sge, row, negO0),
                      bx.cmp(arith::CmpIPredicate::slt, row, rowsLeft));
          Value colInside = bx.cmp(arith::CmpIPredicate::sge, col, negO1);
          Value left = bx.mul(bx.sub(colsLeft, col), g.elementBytes);
          left = bx.smax(bx.smin(left, bx.c(16)), bx.c(0));
          size = bi.select(bx.andi(rowInside, colInside), toI32(bb, l, left),
                           zero32);
          // Nothing is read for a size of 0; point at the base anyway.
          address = arith::SelectOp::create(
              bb, l, bi.cmp(arith::CmpIPredicate::eq, size, zero32), g.base,
              address);
        }
        Value src = LLVM::IntToPtrOp::create(
            bb, l, LLVM::LLVMPointerType::get(bb.getContext(), 1), address);
        Value dst =
            sharedAt(bb, l, ring,
                     bi.add(tileBase, t.elementOffset(bb, l, toI32(bb, l, row),
                                                      toI32(bb, l, col))));
        NVVM::CpAsyncOp::create(bb, l, dst, src, 16,
                                NVVM::LoadCacheModifierKind::CG, size);
      };
      if ((n + 1) * threads <= chunks) {
        body(cb, cl);
        continue;
      }
      Value mine = x.cmp(arith::CmpIPredicate::ult, x.add(tid, n * threads),
                         x.c(chunks));
      scf::IfOp::create(cb, cl, mine, [&](OpBuilder &tb, Location tl) {
        body(tb, tl);
        scf::YieldOp::create(tb, tl);
      });
    }
  };
  Value zero = x.c(0);
  Value whole = x.andi(
      x.andi(x.cmp(arith::CmpIPredicate::sge, o0, zero),
             x.cmp(arith::CmpIPredicate::sge, rowsLeft, x.c(t.rows))),
      x.andi(x.cmp(arith::CmpIPredicate::sge, o1, zero),
             x.cmp(arith::CmpIPredicate::sge, colsLeft, x.c(t.cols))));
  scf::IfOp::create(
      b, loc, whole,
      [&](OpBuilder &wb, Location wl) {
        copyChunks(wb, wl, true);
        scf::YieldOp::create(wb, wl);
      },
      [&](OpBuilder &eb, Location el) {
        copyChunks(eb, el, false);
        scf::YieldOp::create(eb, el);
      });
}

void mlir::ism::copyTileByElements(OpBuilder &b, Location loc,
                                   const OperandTile &t, const GlobalMatrix &g,
                                   Value o0, Value o1, Value ring,
                                   Value tileBase, Value tid, int64_t threads) {
  Type elementType = cast<MemRefType>(g.memref.getType()).getElementType();
  Ints x(indices(b, loc));
  scf::ForOp::create(
      b, loc, tid, x.c(t.rows * t.cols), x.c(threads), ValueRange{},
      [&](OpBuilder &lb, Location l, Value e, ValueRange) {
        Ints x(indices(lb, l));
        Ints i(i32s(lb, l));
        Value row = x.div(e, t.cols), col = x.rem(e, t.cols);
        Value r = x.add(o0, row), c = x.add(o1, col);
        Value inside =
            x.andi(g.leadingInside,
                   x.andi(x.inRange(r, g.sizes[0]), x.inRange(c, g.sizes[1])));
        auto ifOp = scf::IfOp::create(
            lb, l, inside,
            [&](OpBuilder &tb, Location tl) {
              SmallVector<Value> at(g.leading);
              at.append({r, c});
              Value v = memref::LoadOp::create(tb, tl, g.memref, at);
              scf::YieldOp::create(tb, tl, v);
            },
            [&](OpBuilder &eb, Location el) {
              Value v = arith::ConstantOp::create(eb, el, elementType,
                                                  eb.getZeroAttr(elementType));
              scf::YieldOp::create(eb, el, v);
            });
        Value off = i.add(tileBase, t.elementOffset(lb, l, toI32(lb, l, row),
                                                    toI32(lb, l, col)));
        LLVM::StoreOp::create(lb, l, ifOp.getResult(0),
                              sharedAt(lb, l, ring, off));
        scf::YieldOp::create(lb, l);
      });
}

bool mlir::ism::isProduct(DotOp op, unsigned version) {
  auto mma = dyn_cast_or_null<MmaEncodingAttr>(op.getType().getEncoding());
  return mma && mma.getVersion() == version &&
         !op->getParentOp()->hasAttr(kPipelineAttrName);
}

MmaEncodingAttr mlir::ism::matchProduct(DotOp op,
                                        ConversionPatternRewriter &rewriter,
                                        unsigned version) {
  if (!isProduct(op, version)) {
    (void)rewriter.notifyMatchFailure(
        op, "not a product of this instruction, or lowered with its K loop");
    return {};
  }
  for (Type type : {Type(op.getA().getType()), Type(op.getB().getType()),
                    Type(op.getC().getType())})
    if (failed(checkDistributable(rewriter, op, type)))
      return {};
  return cast<MmaEncodingAttr>(op.getType().getEncoding());
}

void mlir::ism::copyTile(OpBuilder &b, Location loc, const OperandTile &t,
                         const GlobalMatrix &g, Value o0, Value o1, Value ring,
                         Value tileBase, Value tid, int64_t threads) {
  Ints x(indices(b, loc));
  Value aligned =
      x.andi(g.chunked, x.cmp(arith::CmpIPredicate::eq,
                              x.rem(x.mul(o1, g.elementBytes), 16), x.c(0)));
  scf::IfOp::create(
      b, loc, aligned,
      [&](OpBuilder &fb, Location fl) {
        copyTileAsync(fb, fl, t, g, o0, o1, ring, tileBase, tid, threads);
        scf::YieldOp::create(fb, fl);
      },
      [&](OpBuilder &sb, Location sl) {
        copyTileByElements(sb, sl, t, g, o0, o1, ring, tileBase, tid, threads);
        scf::YieldOp::create(sb, sl);
      });
}

Value mlir::ism::scratchPointer(OpBuilder &b, Location loc, Value scratch) {
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), 3),
      toI64(b, loc,
            memref::ExtractAlignedPointerAsIndexOp::create(b, loc, scratch)));
}

void mlir::ism::storeOperandTile(OpBuilder &b, Location loc,
                                 LoweringContext &context, const OperandTile &t,
                                 Value vector, const Distribution &dist,
                                 Value ring, Value tileBase, bool transposed) {
  Ints i(i32s(b, loc));
  Type elementType = cast<VectorType>(vector.getType()).getElementType();
  SmallVector<Value> coord =
      dist.getThreadCoord(b, loc, context.getLaneId(b, loc),
                          context.getWarpId(b, loc), b.getI32Type());
  // Tile element (row, col) is element (d0, d1) of the value, or (d1, d0)
  // when `transposed`.
  unsigned rowDim = transposed ? 1 : 0, colDim = 1 - rowDim;
  int64_t group = dist.getFastDim() == colDim
                      ? std::min<int64_t>(dist.getContiguity(), 8)
                      : 1;
  for (int64_t r = 0; r < dist.getNumRegs(); r += group) {
    SmallVector<int64_t> rc = dist.getRegCoord(r);
    Value off = t.elementOffset(b, loc, i.add(coord[rowDim], rc[rowDim]),
                                i.add(coord[colDim], rc[colDim]));
    SmallVector<Value> elements;
    for (int64_t g = 0; g < group; ++g)
      elements.push_back(extractReg(b, loc, vector, r + g));
    Value value =
        group == 1 ? elements[0] : buildVector(b, loc, elementType, elements);
    LLVM::StoreOp::create(b, loc, value,
                          sharedAt(b, loc, ring, i.add(tileBase, off)),
                          /*alignment=*/group * t.elementBytes);
  }
}

void mlir::ism::populateMmaSyncPatterns(TileTypeConverter &converter,
                                        LoweringContext &context,
                                        RewritePatternSet &patterns) {
  patterns.add<MmaSyncLoopLowering, MmaSyncDotLowering>(
      converter, patterns.getContext(), context);
}
