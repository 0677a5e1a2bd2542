//===- HopperGemm.cpp - warp-specialized wgmma K loops (sm_90a) -----------===//
//
// A K loop that ism-accelerate-dot put on wgmma and ism-pipeline scheduled
// becomes a warp-specialized, persistent kernel:
//
//   - The CTA gets one more warpgroup, the producer. Its first thread walks
//     the same programs and K steps as the consumers and, for each step,
//     waits for a free stage of the shared-memory ring (its `empty`
//     mbarrier), then has TMA (`cp.async.bulk.tensor`) load the A and B
//     tiles into it, completing on the stage's `full` mbarrier. The A tile
//     is one 128-byte-swizzled box; the B tile is one box per 64 columns.
//     When a memref cannot be described to TMA (a row stride that is not a
//     multiple of 16 bytes), the runtime passes no descriptor and all 128
//     producer threads copy the tiles element by element into the same
//     swizzled places instead.
//   - The consumer warps (the kernel's own num_warps) run the program: at
//     each K step they wait on the stage's `full` mbarrier, issue the
//     step's wgmma instructions reading both operands from shared memory,
//     keep one step in flight, and free the previous stage. The epilogue
//     after the loop is the tile program's own code, lowered in the
//     accumulator's layout; consumer barriers are the named barrier 1.
//   - setmaxnreg moves registers from the producer (40) to the consumers
//     (232).
//   - Persistent grid: both roles loop over the programs from blockIdx.x
//     with a stride of gridDim.x, in grouped order (group_size programs
//     along x at a time), so the producer's loads of the next program
//     overlap the consumers' epilogue of this one. The logical grid comes
//     in three trailing i32 parameters, after one i64 TMA descriptor
//     address per operand (prefetched by thread 0 at the start).
//   - Clusters of two CTAs: 2x1 / 1x2 pairs of programs that multicast the
//     shared operand's halves into both rings, or (cluster_k = 2) one
//     program whose K steps the pair splits, the second CTA's accumulator
//     added into the first's through distributed shared memory
//     (exchangeAccumulator) before the first runs the epilogue.
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
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::ism;

namespace {

/// Marks the scf.if after a ping-pong group's K loop that opens the other
/// group's turn.
constexpr llvm::StringLiteral kTurnAttrName = "ism.turn";

Value toI32(OpBuilder &b, Location loc, Value index) {
  return arith::IndexCastOp::create(b, loc, b.getI32Type(), index);
}
Value toIndex(OpBuilder &b, Location loc, Value v) {
  if (v.getType().isIndex())
    return v;
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
}

/// address = base + offset (bytes, i64) as a shared pointer.
Value sharedAt(OpBuilder &b, Location loc, Value base, Value offset) {
  return sharedPointer(b, loc, arith::AddIOp::create(b, loc, base, offset));
}

/// Stage `stage` (index) of the ring, as an i64 byte offset.
Value stageOffset(OpBuilder &b, Location loc, const WgmmaPipeline &p,
                  Value stage) {
  return arith::MulIOp::create(
      b, loc, arith::IndexCastOp::create(b, loc, b.getI64Type(), stage),
      i64Const(b, loc, p.stageBytes()));
}

Value fullBarrier(OpBuilder &b, Location loc, const WgmmaPipeline &p,
                  Value base, Value stage) {
  return stageBarrier(b, loc, base, p.stages * p.stageBytes(), stage);
}

Value emptyBarrier(OpBuilder &b, Location loc, const WgmmaPipeline &p,
                   Value base, Value stage) {
  return stageBarrier(b, loc, base, p.stages * p.stageBytes() + 8 * p.stages,
                      stage);
}

/// The stage and phase parity (i32) of ring step `it` (index).
std::pair<Value, Value> stageAndPhase(OpBuilder &b, Location loc,
                                      const WgmmaPipeline &p, Value it) {
  return {ringStage(b, loc, p.stages, it), ringPhase(b, loc, p.stages, it)};
}

/// K steps by which the first CTA of a cluster_k pair leads the second:
/// the second sends its accumulator when it is done (about a microsecond
/// through distributed shared memory), so it takes that many fewer steps
/// and its send overlaps the first's last ones.
constexpr int64_t kClusterKLead = 2;

/// The K steps [lb, ub) of cluster rank `rank` (i32) when a cluster's two
/// CTAs split a K loop (clusterK = 2): of its n steps, the first
/// min(n, ceil((n + kClusterKLead) / 2)) for rank 0, the rest for rank 1.
std::pair<Value, Value> splitKRange(OpBuilder &b, Location loc, Value lb,
                                    Value ub, Value step, Value rank) {
  // One op per statement: the order in which C++ evaluates arguments is
  // unspecified, and the IR must not depend on the compiler that built ism.
  Value zero = indexConstant(b, loc, 0);
  Value lead = indexConstant(b, loc, kClusterKLead);
  Value two = indexConstant(b, loc, 2);
  Value span = arith::SubIOp::create(b, loc, ub, lb);
  Value positive = arith::MaxSIOp::create(b, loc, span, zero);
  Value n = arith::CeilDivUIOp::create(b, loc, positive, step);
  Value led = arith::AddIOp::create(b, loc, n, lead);
  Value half = arith::CeilDivUIOp::create(b, loc, led, two);
  Value first = arith::MinUIOp::create(b, loc, n, half);
  Value firstSpan = arith::MulIOp::create(b, loc, first, step);
  Value split = arith::AddIOp::create(b, loc, lb, firstSpan);
  Value rank0 = i32Const(b, loc, 0);
  Value isFirst =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rank, rank0);
  Value begin = arith::SelectOp::create(b, loc, isFirst, lb, split);
  Value firstEnd = arith::MinSIOp::create(b, loc, ub, split);
  Value end = arith::SelectOp::create(b, loc, isFirst, firstEnd, ub);
  return {begin, end};
}

/// Whether `v` is a tile of zeros (a splat constant, through layout
/// conversions).
bool isZeroTile(Value v) {
  while (auto convert = v.getDefiningOp<ConvertLayoutOp>())
    v = convert.getSrc();
  DenseElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)) || !attr.isSplat())
    return false;
  if (auto f = dyn_cast<FloatAttr>(attr.getSplatValue<Attribute>()))
    return f.getValue().isZero();
  return false;
}

/// The persistent loop around the ops of `block` (before its terminator):
/// programs t = blockIdx.x, +gridDim.x, ... < gx * gy * gz, mapped to
/// (x, y, z) in groups of `group` along x. Replaces the program ids and
/// grid sizes inside, and threads the ring counter: `itInit` (an operand of
/// the block's K loop) starts from the loop's counter and `itNext` is what
/// the next program starts from.
/// With a cluster of two CTAs (`p.clusterSize()` == 2) the loop walks
/// pairs of programs, one per cluster (first = the cluster's index, stride
/// = the number of clusters): the pair (2u, y) and (2u + 1, y) along x
/// (clusterM), or along y; `rank` (i32) picks this CTA's program. On an odd
/// grid the second program of the last pair is past its end: `valid`, when
/// given, receives whether this CTA's program exists. With clusterK = 2
/// both CTAs take the cluster's program and `valid` is true on rank 0.
/// With `groups` consumer groups, group `consumerGroup` (index) walks every
/// groups-th of those programs, from its consumerGroup-th.
scf::ForOp wrapPersistent(OpBuilder &b, Location loc, Block *block,
                          ArrayRef<Value> grid, Value first, Value stride,
                          int64_t group, OpOperand &itInit, Value itNext,
                          const WgmmaPipeline &p, Value rank,
                          Value *valid = nullptr,
                          SmallVectorImpl<Value> *programId = nullptr,
                          unsigned groups = 1, Value consumerGroup = Value()) {
  SmallVector<Operation *> ops;
  for (Operation &op : block->without_terminator())
    ops.push_back(&op);
  b.setInsertionPoint(block->getTerminator());
  Value realX = toIndex(b, loc, grid[0]), realY = toIndex(b, loc, grid[1]),
        gz = toIndex(b, loc, grid[2]);
  // The grid of cluster units: pairs along x or y.
  auto units = [&](Value g, unsigned n) -> Value {
    if (n == 1)
      return g;
    return arith::CeilDivUIOp::create(b, loc, g, indexConstant(b, loc, n));
  };
  Value gx = units(realX, p.clusterM), gy = units(realY, p.clusterN);
  Value perZ = arith::MulIOp::create(b, loc, gx, gy);
  Value total = arith::MulIOp::create(b, loc, perZ, gz);
  // Per cluster: its index and the number of clusters.
  auto perCluster = [&](Value v) -> Value {
    if (p.clusterSize() == 1)
      return v;
    return arith::DivUIOp::create(b, loc, v,
                                  indexConstant(b, loc, p.clusterSize()));
  };
  if (!first)
    first = perCluster(gpu::BlockIdOp::create(b, loc, gpu::Dimension::x));
  if (!stride)
    stride = perCluster(gpu::GridDimOp::create(b, loc, gpu::Dimension::x));
  if (groups > 1) {
    // Consumer group g takes every groups-th of the CTA's programs, from
    // its g-th.
    first = arith::AddIOp::create(
        b, loc, first, arith::MulIOp::create(b, loc, consumerGroup, stride));
    stride =
        arith::MulIOp::create(b, loc, stride, indexConstant(b, loc, groups));
  }
  Value zero = indexConstant(b, loc, 0);
  auto loop = scf::ForOp::create(
      b, loc, first, total, stride, ValueRange{zero},
      [](OpBuilder &yb, Location yl, Value, ValueRange iter) {
        scf::YieldOp::create(yb, yl, iter);
      });
  Block *body = loop.getBody();
  for (Operation *op : ops)
    op->moveBefore(body->getTerminator());
  b.setInsertionPointToStart(body);
  Value t = loop.getInductionVar();
  Value z = arith::DivUIOp::create(b, loc, t, perZ);
  Value r = arith::RemUIOp::create(b, loc, t, perZ);
  Value g = indexConstant(b, loc, group);
  Value width = arith::MulIOp::create(b, loc, g, gy);
  Value groupId = arith::DivUIOp::create(b, loc, r, width);
  Value firstX = arith::MulIOp::create(b, loc, groupId, g);
  Value rows = arith::MinUIOp::create(
      b, loc, arith::SubIOp::create(b, loc, gx, firstX), g);
  Value inGroup = arith::RemUIOp::create(b, loc, r, width);
  Value x = arith::AddIOp::create(
      b, loc, firstX, arith::RemUIOp::create(b, loc, inGroup, rows));
  Value y = arith::DivUIOp::create(b, loc, inGroup, rows);
  if (p.clusterK == 2) {
    // Both CTAs compute the cluster's program; the first runs its
    // epilogue.
    if (valid)
      *valid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rank,
                                     i32Const(b, loc, 0));
  } else if (p.clusterSize() > 1) {
    Value r = toIndex(b, loc, rank);
    Value two = indexConstant(b, loc, 2);
    if (p.clusterM == 2)
      x = arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, x, two),
                                r);
    else
      y = arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, y, two),
                                r);
    if (valid)
      *valid = arith::AndIOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, realX),
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, y, realY));
  }
  if (programId)
    programId->assign({x, y, z});
  replaceGridQueries(body, {x, y, z}, {realX, realY, gz});
  itInit.set(loop.getRegionIterArg(0));
  auto yield = cast<scf::YieldOp>(body->getTerminator());
  yield->setOperands(ValueRange{itNext});
  return loop;
}

/// Element (row, col) of a [rows, cols] tile at its place in the ring:
/// boxes of `rowBytes`-byte rows (128: 64 columns of 16-bit elements; 64:
/// 32), 16-byte chunks XOR-swizzled with the row as TMA's swizzle of that
/// width does (128 bytes: chunk ^ row % 8; 64 bytes: chunk ^ (row / 2) % 4,
/// the smem address bits 7-8 of a 64-byte row). Returns the byte offset
/// (i64).
Value swizzledOffset(OpBuilder &b, Location loc, Value row, Value col,
                     int64_t rows, unsigned elementBytes,
                     int64_t rowBytes = 128) {
  int64_t perBox = rowBytes / elementBytes;
  Value box =
      arith::DivUIOp::create(b, loc, col, indexConstant(b, loc, perBox));
  Value c = arith::RemUIOp::create(b, loc, col, indexConstant(b, loc, perBox));
  Value bytes =
      arith::MulIOp::create(b, loc, c, indexConstant(b, loc, elementBytes));
  Value chunk =
      arith::DivUIOp::create(b, loc, bytes, indexConstant(b, loc, 16));
  Value within =
      arith::RemUIOp::create(b, loc, bytes, indexConstant(b, loc, 16));
  Value phase =
      rowBytes == 128
          ? arith::RemUIOp::create(b, loc, row, indexConstant(b, loc, 8))
          : arith::RemUIOp::create(
                b, loc,
                arith::DivUIOp::create(b, loc, row, indexConstant(b, loc, 2)),
                indexConstant(b, loc, 4));
  Value swizzled = arith::XOrIOp::create(b, loc, chunk, phase);
  Value offset = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, box,
                            indexConstant(b, loc, rows * rowBytes)),
      arith::MulIOp::create(b, loc, row, indexConstant(b, loc, rowBytes)));
  offset = arith::AddIOp::create(
      b, loc, offset,
      arith::AddIOp::create(
          b, loc,
          arith::MulIOp::create(b, loc, swizzled, indexConstant(b, loc, 16)),
          within));
  return arith::IndexCastOp::create(b, loc, b.getI64Type(), offset);
}

/// An element copy's step: `memref[indices]` where `inside` holds, else
/// zero, stored as bits (an 8-bit float is not an LLVM type) at (row, col)
/// of the swizzled [rows, rowBytes] tile at `dst`.
void storeElementOrZero(OpBuilder &b, Location loc, Value memref,
                        ValueRange indices, Value inside, Value dst, Value row,
                        Value col, int64_t rows, int64_t rowBytes) {
  auto type = cast<MemRefType>(memref.getType());
  unsigned elementBytes = type.getElementTypeBitWidth() / 8;
  Type elementType = b.getIntegerType(type.getElementTypeBitWidth());
  auto ifOp = scf::IfOp::create(
      b, loc, inside,
      [&](OpBuilder &tb, Location tl) {
        Value v = memref::LoadOp::create(tb, tl, memref, indices);
        v = arith::BitcastOp::create(tb, tl, elementType, v);
        scf::YieldOp::create(tb, tl, v);
      },
      [&](OpBuilder &eb, Location el) {
        Value v = arith::ConstantOp::create(eb, el, elementType,
                                            eb.getZeroAttr(elementType));
        scf::YieldOp::create(eb, el, v);
      });
  Value offset =
      swizzledOffset(b, loc, row, col, rows, elementBytes, rowBytes);
  LLVM::StoreOp::create(b, loc, ifOp.getResult(0), sharedAt(b, loc, dst, offset));
}

/// Whether 0 <= v < hi (index values).
Value inRange(OpBuilder &b, Location loc, Value v, Value hi) {
  return arith::AndIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, v,
                            indexConstant(b, loc, 0)),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, v, hi));
}

/// Copies a [rows, cols] tile into the ring at `dst` (i64 address),
/// element by element, spread over the producer's `threads` threads
/// (`ptid` is this one's): `element(b, loc, row, col)` gives the indices
/// in `memref` of the tile's element (row, col) and whether it lies inside
/// (zero where not).
void copyByElements(
    OpBuilder &b, Location loc, Value memref, int64_t rows, int64_t cols,
    Value dst, Value ptid, int64_t threads, int64_t rowBytes,
    function_ref<std::pair<SmallVector<Value, 4>, Value>(OpBuilder &, Location,
                                                        Value, Value)>
        element) {
  scf::ForOp::create(
      b, loc, ptid, indexConstant(b, loc, rows * cols),
      indexConstant(b, loc, threads), ValueRange{},
      [&](OpBuilder &lb, Location l, Value e, ValueRange) {
        Value row =
            arith::DivUIOp::create(lb, l, e, indexConstant(lb, l, cols));
        Value col =
            arith::RemUIOp::create(lb, l, e, indexConstant(lb, l, cols));
        auto [indices, inside] = element(lb, l, row, col);
        storeElementOrZero(lb, l, memref, indices, inside, dst, row, col,
                           rows, rowBytes);
        scf::YieldOp::create(lb, l);
      });
}

/// Copies a [rows, cols] tile of `memref` at (o0, o1) into the ring at
/// `dst` (i64 address), element by element with zeros outside the memref,
/// spread over the producer's `threads` threads (`ptid` is this one's).
void copyTileByElements(OpBuilder &b, Location loc, Value memref, Value o0,
                        Value o1, int64_t rows, int64_t cols, Value dst,
                        Value ptid, int64_t threads, int64_t rowBytes = 128) {
  Value d0 = memref::DimOp::create(b, loc, memref, 0);
  Value d1 = memref::DimOp::create(b, loc, memref, 1);
  copyByElements(
      b, loc, memref, rows, cols, dst, ptid, threads, rowBytes,
      [&](OpBuilder &lb, Location l, Value row, Value col) {
        Value r = arith::AddIOp::create(lb, l, o0, row);
        Value c = arith::AddIOp::create(lb, l, o1, col);
        Value inside = arith::AndIOp::create(lb, l, inRange(lb, l, r, d0),
                                             inRange(lb, l, c, d1));
        return std::make_pair(SmallVector<Value, 4>{r, c}, inside);
      });
}

/// A convolution's sizes, for an ism.im2col read by the producer: the
/// input's N, H, W, C and the output's P, Q (index values), and the op's
/// filter, stride, padding and dilation.
struct Im2colGeometry {
  Value n, h, w, c, p, q;
  ArrayRef<int64_t> filter, stride, pad, dil;

  Im2colGeometry(OpBuilder &b, Location loc, Im2colOp op, Value memref)
      : filter(op.getFilter()), stride(op.getStride()), pad(op.getPadding()),
        dil(op.getDilation()) {
    n = memref::DimOp::create(b, loc, memref, 0);
    h = memref::DimOp::create(b, loc, memref, 1);
    w = memref::DimOp::create(b, loc, memref, 2);
    c = memref::DimOp::create(b, loc, memref, 3);
    p = outSize(b, loc, h, 0);
    q = outSize(b, loc, w, 1);
  }

  /// (H + 2 pad - dil (R - 1) - 1) / stride + 1, and for W.
  Value outSize(OpBuilder &b, Location loc, Value in, unsigned d) {
    Value span = arith::AddIOp::create(
        b, loc, in,
        indexConstant(b, loc, 2 * pad[d] - dil[d] * (filter[d] - 1) - 1));
    Value q = arith::FloorDivSIOp::create(b, loc, span,
                                          indexConstant(b, loc, stride[d]));
    return arith::AddIOp::create(b, loc, q, indexConstant(b, loc, 1));
  }

  /// Output pixel m's image and its window's first input row and column
  /// (p * stride - pad, q * stride - pad: negative in the padding).
  std::array<Value, 3> window(OpBuilder &b, Location loc, Value m) {
    Value one = indexConstant(b, loc, 1);
    Value pq = arith::MaxSIOp::create(
        b, loc, arith::MulIOp::create(b, loc, p, q), one);
    Value qd = arith::MaxSIOp::create(b, loc, q, one);
    Value img = arith::DivUIOp::create(b, loc, m, pq);
    Value in = arith::RemUIOp::create(b, loc, m, pq);
    Value row = arith::DivUIOp::create(b, loc, in, qd);
    Value col = arith::RemUIOp::create(b, loc, in, qd);
    auto start = [&](Value out, unsigned d) -> Value {
      return arith::SubIOp::create(
          b, loc,
          arith::MulIOp::create(b, loc, out, indexConstant(b, loc, stride[d])),
          indexConstant(b, loc, pad[d]));
    };
    return {img, start(row, 0), start(col, 1)};
  }
};

/// Copies ism.im2col's [rows, cols] tile for output pixels m0.. and
/// channels c0.. of tap (r, s) into the ring at `dst`, element by element
/// (zeros in the padding, past the last pixel and past C), spread over the
/// producer's `threads` threads: where no tensor map describes the input.
void copyIm2colByElements(OpBuilder &b, Location loc, Value memref,
                          Im2colGeometry &g, Value m0, Value c0, Value r,
                          Value s, int64_t rows, int64_t cols, Value dst,
                          Value ptid, int64_t threads) {
  Value pixels = arith::MulIOp::create(
      b, loc, g.n, arith::MulIOp::create(b, loc, g.p, g.q));
  Value dh = arith::MulIOp::create(b, loc, r, indexConstant(b, loc, g.dil[0]));
  Value dw = arith::MulIOp::create(b, loc, s, indexConstant(b, loc, g.dil[1]));
  copyByElements(
      b, loc, memref, rows, cols, dst, ptid, threads, /*rowBytes=*/128,
      [&](OpBuilder &lb, Location l, Value row, Value col) {
        Value m = arith::AddIOp::create(lb, l, m0, row);
        Value c = arith::AddIOp::create(lb, l, c0, col);
        auto [img, h0, w0] = g.window(lb, l, m);
        Value h = arith::AddIOp::create(lb, l, h0, dh);
        Value w = arith::AddIOp::create(lb, l, w0, dw);
        Value inside = arith::AndIOp::create(
            lb, l,
            arith::AndIOp::create(lb, l, inRange(lb, l, m, pixels),
                                  inRange(lb, l, c, g.c)),
            arith::AndIOp::create(lb, l, inRange(lb, l, h, g.h),
                                  inRange(lb, l, w, g.w)));
        return std::make_pair(SmallVector<Value, 4>{img, h, w, c}, inside);
      });
}

/// Builds the producer's program into the block at `b`'s insertion point:
/// the slices of the consumers' program that compute the K loop's bounds
/// and the tile offsets, then a K loop that fills the ring. Returns the
/// K loop (its iter_arg 0 is the ring counter).
scf::ForOp buildProducerLoop(OpBuilder &b, Location loc, DotLoop dl,
                             ArrayRef<Operation *> outerSlice,
                             ArrayRef<Operation *> innerSlice,
                             const WgmmaPipeline &p, Value ringBase,
                             Value descA, Value descB, bool useTMA, Value ptid,
                             Value rank) {
  IRMapping map;
  for (Operation *op : outerSlice)
    b.clone(*op, map);
  scf::ForOp kLoop = dl.loop;
  Value zero = indexConstant(b, loc, 0);
  Value lb = map.lookupOrDefault(kLoop.getLowerBound()),
        ub = map.lookupOrDefault(kLoop.getUpperBound()),
        step = map.lookupOrDefault(kLoop.getStep());
  if (p.clusterK == 2)
    std::tie(lb, ub) = splitKRange(b, loc, lb, ub, step, rank);
  auto loop =
      scf::ForOp::create(b, loc, lb, ub, step, ValueRange{zero},
                         [](OpBuilder &, Location, Value, ValueRange) {});
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  map.map(kLoop.getInductionVar(), loop.getInductionVar());
  for (Operation *op : innerSlice)
    b.clone(*op, map);
  Value it = loop.getRegionIterArg(0);
  auto [stage, phase] = stageAndPhase(b, loc, p, it);
  Value flipped = arith::XOrIOp::create(b, loc, phase, i32Const(b, loc, 1));
  waitParity(b, loc, emptyBarrier(b, loc, p, ringBase, stage), flipped);
  Value full = fullBarrier(b, loc, p, ringBase, stage);
  Value stageBase =
      arith::AddIOp::create(b, loc, ringBase, stageOffset(b, loc, p, stage));
  Value bBase =
      arith::AddIOp::create(b, loc, stageBase, i64Const(b, loc, p.aBytes));
  auto offsets = [&](LoadOp load) {
    SmallVector<Value> o;
    for (Value v : load.getOffsets())
      o.push_back(map.lookupOrDefault(v));
    return o;
  };
  // An im2col A: its output pixel and channel offsets, its tap.
  Im2colOp im2col = dl.im2colA;
  SmallVector<Value> oa =
      im2col ? SmallVector<Value>{map.lookupOrDefault(im2col.getPixel()),
                                  map.lookupOrDefault(im2col.getChannel())}
             : offsets(dl.loadA);
  SmallVector<Value> ob = offsets(dl.loadB);
  int64_t elementBytes = p.elementType.getIntOrFloatBitWidth() / 8;
  std::optional<Im2colGeometry> geometry;
  Value tapR, tapS;
  if (im2col) {
    geometry.emplace(b, loc, im2col, map.lookupOrDefault(im2col.getBase()));
    tapR = map.lookupOrDefault(im2col.getR());
    tapS = map.lookupOrDefault(im2col.getS());
  }
  if (useTMA) {
    NVVM::MBarrierArriveExpectTxOp::create(
        b, loc, Type(), full, i32Const(b, loc, p.stageBytes()),
        NVVM::MemScopeKind::CTA, false, Value());
    // Every CTA expects the whole stage on its own barrier, also the half
    // of the shared tile that its partner multicasts.
    auto ptrType = LLVM::LLVMPointerType::get(b.getContext());
    // `multicast`: this CTA loads the rank-th half of the box's `rows` and
    // TMA writes it, and signals the barrier, at the same place in both
    // CTAs of the cluster.
    auto load = [&](Value desc, Value dst, Value inner, Value outer,
                    int64_t rows, int64_t rowBytes, bool multicast) {
      Value descPtr = LLVM::IntToPtrOp::create(b, loc, ptrType, desc);
      Value mask;
      if (multicast) {
        int64_t half = rows / 2;
        outer = arith::AddIOp::create(
            b, loc, outer,
            arith::MulIOp::create(b, loc, toIndex(b, loc, rank),
                                  indexConstant(b, loc, half)));
        dst = arith::AddIOp::create(
            b, loc, dst,
            arith::MulIOp::create(
                b, loc, arith::ExtUIOp::create(b, loc, b.getI64Type(), rank),
                i64Const(b, loc, half * rowBytes)));
        mask = arith::ConstantIntOp::create(b, loc, 0b11, 16);
      }
      // The CTA's shared memory is part of the cluster's (a cluster of one
      // without multicast).
      Value clusterDst = LLVM::AddrSpaceCastOp::create(
          b, loc, LLVM::LLVMPointerType::get(b.getContext(), 7),
          sharedPointer(b, loc, dst));
      NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
          b, loc, clusterDst, descPtr,
          ValueRange{toI32(b, loc, inner), toI32(b, loc, outer)}, full,
          ValueRange{}, mask, Value(), NVVM::TMALoadMode::TILE, false,
          NVVM::CTAGroupKindAttr(), Value());
    };
    // An im2col A: one box of blockM output pixels by 128 bytes of
    // channels, from the window of the first pixel, the tap as the
    // im2col offsets (W's first, as the coordinates).
    auto loadIm2col = [&](Value desc, Value dst) {
      Value descPtr = LLVM::IntToPtrOp::create(b, loc, ptrType, desc);
      auto [img, h0, w0] = geometry->window(b, loc, oa[0]);
      auto offset16 = [&](Value tap, int64_t dil) -> Value {
        Value v =
            arith::MulIOp::create(b, loc, tap, indexConstant(b, loc, dil));
        return arith::IndexCastOp::create(b, loc, b.getI16Type(), v);
      };
      Value clusterDst = LLVM::AddrSpaceCastOp::create(
          b, loc, LLVM::LLVMPointerType::get(b.getContext(), 7),
          sharedPointer(b, loc, dst));
      NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
          b, loc, clusterDst, descPtr,
          ValueRange{toI32(b, loc, oa[1]), toI32(b, loc, w0),
                     toI32(b, loc, h0), toI32(b, loc, img)},
          full,
          ValueRange{offset16(tapS, geometry->dil[1]),
                     offset16(tapR, geometry->dil[0])},
          Value(), Value(), NVVM::TMALoadMode::IM2COL, false,
          NVVM::CTAGroupKindAttr(), Value());
    };
    // A K-major tile is one box of `mn` rows; an MN-major one a box per
    // rowBytes of columns, each blockK rows.
    auto loadTile = [&](Value desc, Value base, ArrayRef<Value> o, bool isA) {
      if (isA && im2col)
        return loadIm2col(desc, base);
      bool mnMajor = isA ? p.aMNMajor : !p.bKMajor;
      int64_t mn = isA ? p.blockM : p.blockN;
      int64_t rowBytes = isA ? p.aRowBytes() : p.bRowBytes();
      int64_t rows = p.boxRows(isA);
      bool multicast = isA ? p.multicastA() : p.multicastB();
      if (!mnMajor)
        return load(desc, base, o[1], o[0], rows, rowBytes, multicast);
      int64_t perBox = rowBytes / elementBytes;
      for (int64_t box = 0; box < mn / perBox; ++box)
        load(desc,
             arith::AddIOp::create(b, loc, base,
                                   i64Const(b, loc, box * rows * rowBytes)),
             arith::AddIOp::create(b, loc, o[1],
                                   indexConstant(b, loc, box * perBox)),
             o[0], rows, rowBytes, multicast);
    };
    loadTile(descA, stageBase, oa, /*isA=*/true);
    loadTile(descB, bBase, ob, /*isA=*/false);
  } else {
    auto copyTile = [&](LoadOp load, Value base, ArrayRef<Value> o,
                        bool mnMajor, int64_t mn, int64_t rowBytes) {
      copyTileByElements(b, loc, map.lookupOrDefault(load.getBase()), o[0],
                         o[1], mnMajor ? p.blockK : mn, mnMajor ? mn : p.blockK,
                         base, ptid, 128, rowBytes);
    };
    if (im2col)
      copyIm2colByElements(b, loc, map.lookupOrDefault(im2col.getBase()),
                           *geometry, oa[0], oa[1], tapR, tapS, p.blockM,
                           p.blockK, stageBase, ptid, 128);
    else
      copyTile(dl.loadA, stageBase, oa, p.aMNMajor, p.blockM,
               p.aRowBytes());
    copyTile(dl.loadB, bBase, ob, !p.bKMajor, p.blockN, p.bRowBytes());
    // The generic-proxy writes must be visible to wgmma's async proxy.
    fenceAsyncProxy(b, loc);
    NVVM::BarrierOp::create(b, loc, TypeRange{},
                            i32Const(b, loc, p.producerBarrier),
                            i32Const(b, loc, 128), {}, Value{});
    Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, ptid,
                                        indexConstant(b, loc, 0));
    scf::IfOp::create(b, loc, first, [&](OpBuilder &tb, Location tl) {
      NVVM::MBarrierArriveOp::create(tb, tl, Type(), full, Value(),
                                     NVVM::MemScopeKind::CTA, false);
      scf::YieldOp::create(tb, tl);
    });
  }
  Value next = arith::AddIOp::create(b, loc, it, indexConstant(b, loc, 1));
  scf::YieldOp::create(b, loc, next);
  return loop;
}

/// Collects, in program order, the ops of `block` in `slice`.
SmallVector<Operation *> inOrder(Block *block,
                                 const llvm::SetVector<Operation *> &slice) {
  SmallVector<Operation *> ops;
  for (Operation &op : *block)
    if (slice.contains(&op))
      ops.push_back(&op);
  return ops;
}

} // namespace

LogicalResult mlir::ism::prepareWarpSpecializedKernel(
    Operation *funcOp, DictionaryAttr persistent, LoweringContext &context) {
  auto func = cast<gpu::GPUFuncOp>(funcOp);
  if (!func.getBody().hasOneBlock()) {
    if (!getAcceleratedDotLoops(func).empty())
      return func.emitOpError("a wgmma kernel must have a single-block body");
    return success();
  }
  WgmmaPartition config;
  config.block = &func.getBody().front();
  config.warpBase = context.getPartition().warpBase;
  config.sharedMemoryBase = context.getPartition().sharedMemoryBase;
  PersistentOptions options = getPersistentOptions(persistent);
  config.groupSize = options.groupSize;
  config.clusterM = options.clusterM;
  config.clusterN = options.clusterN;
  config.clusterK = options.clusterK;
  config.consumerGroups = options.consumerGroups;
  config.tmaStore = options.tmaStore;
  if (config.consumerGroups > 1) {
    // The consumers and the producer share the register file; what is left
    // after the producer's 40 is split over both groups.
    unsigned threads = 32 * context.getNumWarps() * config.consumerGroups;
    config.consumerRegisters = std::min<unsigned>(
        config.consumerRegisters,
        (65536 - 128 * config.producerRegisters) / threads / 8 * 8);
  }
  if (context.getPartition().warpBase != 0 ||
      context.getPartition().barrierId != 0) {
    for (DotLoop dl : getAcceleratedDotLoops(func))
      if (dl.loop->hasAttr(kPipelineAttrName) &&
          cast<MmaEncodingAttr>(dl.dot.getType().getEncoding()).getVersion() ==
              3)
        return dl.dot.emitOpError(
            "a warp-specialized wgmma kernel lowered on its own needs its own "
            "CTA; co-schedule it (ism.coschedule) to share one");
  }
  if (failed(prepareWarpSpecializedProgram(func, config, context)))
    return failure();
  if (context.pipeline && !func->hasAttr("nvvm.maxnreg")) {
    // setmaxnreg needs the register count at entry fixed (.maxnreg; ptxas
    // ignores it otherwise, C7508): what the CTA's threads share, and no
    // more than the consumers raise to.
    unsigned threads = 32 * (context.getNumWarps() * config.consumerGroups +
                             context.producerWarps);
    unsigned atEntry =
        std::min<unsigned>(config.consumerRegisters, 65536 / threads / 8 * 8);
    func->setAttr("nvvm.maxnreg",
                  Builder(func.getContext()).getI32IntegerAttr(atEntry));
  }
  return success();
}

LogicalResult mlir::ism::prepareWarpSpecializedProgram(
    Operation *funcOp, const WgmmaPartition &config, LoweringContext &context) {
  auto func = cast<gpu::GPUFuncOp>(funcOp);
  Block *entry = config.block;
  Block *funcEntry = &func.getBody().front();
  SmallVector<DotLoop> loops;
  for (Operation &op : *entry)
    for (DotLoop dl : getAcceleratedDotLoops(&op))
      if (dl.loop->hasAttr(kPipelineAttrName) &&
          cast<MmaEncodingAttr>(dl.dot.getType().getEncoding()).getVersion() ==
              3)
        loops.push_back(dl);
  if (loops.empty())
    return success();
  DotLoop dl = loops.front();
  Location loc = dl.loop.getLoc();
  if (dl.loop->getBlock() != entry)
    return dl.loop.emitOpError("the pipelined K loop must be at the top level "
                               "of its kernel");
  if (dl.loop.getNumRegionIterArgs() != 1)
    return dl.loop.emitOpError("the pipelined K loop may carry only the "
                               "accumulator");
  // A promoted loop (block scales) waits for each step's product; the
  // ping-pong groups' turns and the K split over a cluster are not built
  // for it.
  if (dl.promote && (config.consumerGroups > 1 || config.clusterK > 1))
    return dl.loop.emitOpError(
        "a K loop that scales each step's product before adding it (block "
        "scales) takes neither consumer_groups = 2 nor cluster_k = 2");

  auto dims = dl.loop->getAttrOfType<DictionaryAttr>(kPipelineAttrName);
  WgmmaPipeline p;
  p.stages = config.stages ? config.stages
                           : cast<IntegerAttr>(dims.get("num_stages")).getInt();
  p.sharedBase = config.sharedMemoryBase;
  p.producerBarrier = config.producerBarrier;
  auto aType = dl.dot.getA().getType(), bType = dl.dot.getB().getType();
  auto mma = cast<MmaEncodingAttr>(dl.dot.getType().getEncoding());
  p.blockM = aType.getDimSize(0);
  p.blockK = aType.getDimSize(1);
  p.blockN = bType.getDimSize(1);
  p.elementType = aType.getElementType();
  p.bElementType = bType.getElementType();
  unsigned elementBytes = p.elementType.getIntOrFloatBitWidth() / 8;
  p.aBytes = p.blockM * p.blockK * elementBytes;
  p.bBytes = p.blockK * p.blockN * elementBytes;
  p.warpsM = mma.getWarpsPerCTA()[0];
  p.warpsN = mma.getWarpsPerCTA()[1];
  p.aMNMajor = dl.transA;
  p.bKMajor = dl.transB;
  p.swapped = dl.loop->hasAttr(kSwapABAttrName);
  // ptxas checks each wgmma against the registers a thread has at launch
  // (the fused kernel's .maxnreg, else what the CTA's threads share): a
  // warpgroup's piece that needs more is issued as several narrower
  // instructions.
  int64_t warpN = p.blockN / p.warpsN;
  int64_t atLaunch;
  if (auto maxnreg = func->getAttrOfType<IntegerAttr>("nvvm.maxnreg")) {
    atLaunch = maxnreg.getInt();
  } else {
    unsigned threads = 32 * (context.getNumWarps() * config.consumerGroups + 4);
    atLaunch =
        std::min<int64_t>(config.consumerRegisters, 65536 / threads / 8 * 8);
  }
  p.instrN = getWgmmaInstructionN(warpN, atLaunch);
  if (getWgmmaInstructionRegisters(p.instrN) > atLaunch)
    return dl.dot.emitOpError("a wgmma instruction (m64n")
           << p.instrN << "k" << p.instrK() << ") needs "
           << getWgmmaInstructionRegisters(p.instrN)
           << " registers, but the kernel's threads start with " << atLaunch
           << "; use a smaller BLOCK_N or fewer warps beside it";
  p.clusterM = config.clusterM;
  p.clusterN = config.clusterN;
  // The pair loads the rows of the shared tile's boxes in halves.
  if (!isSupportedCluster(p.clusterM, p.clusterN) ||
      (p.multicast() && p.boxRows(p.multicastA()) % 16 != 0))
    return dl.loop.emitOpError("a ")
           << p.clusterM << "x" << p.clusterN
           << " cluster is not one this lowering builds (1x1, 2x1 or 1x2, "
              "with the shared tile's rows a multiple of 16)";
  if (dl.im2colA && p.multicastA())
    return dl.loop.emitOpError(
        "an ism.im2col A tile is not shared across a cluster (cluster_n = "
        "2); use cluster_m = 2, which shares the filter tile");
  p.clusterK = config.clusterK;
  if (p.clusterK != 1) {
    if (p.clusterK != 2 || p.clusterM * p.clusterN != 1 ||
        config.consumerGroups != 1)
      return dl.loop.emitOpError("cluster_k = ")
             << p.clusterK
             << " is not one this lowering builds (2, in a 1x1 cluster "
                "otherwise, with one consumer group)";
    // Each CTA adds its half of the K steps to the loop's initial value.
    if (!isZeroTile(dl.loop.getInitArgs()[0]))
      return dl.loop.emitOpError(
          "with cluster_k = 2 the two CTAs of a cluster each compute half of "
          "the K steps from the loop's initial accumulator, which must be "
          "zeros; add a nonzero start after the loop");
  }
  int64_t group = config.groupSize;

  // The producer's slices: what the K loop's bounds and the tile offsets
  // are computed from.
  BackwardSliceOptions options;
  options.omitBlockArguments = true;
  options.inclusive = true;
  options.filter = [&](Operation *op) { return func->isProperAncestor(op); };
  llvm::SetVector<Operation *> slice;
  SmallVector<Value> roots = {dl.loop.getLowerBound(), dl.loop.getUpperBound(),
                              dl.loop.getStep()};
  for (Operation *read : {dl.getAReader(), dl.loadB.getOperation()})
    for (Value v : read->getOperands())
      roots.push_back(v);
  for (Value root : roots) {
    if (auto arg = dyn_cast<BlockArgument>(root)) {
      if (arg.getOwner() == dl.loop.getBody() && arg.getArgNumber() != 0)
        return dl.loop.emitOpError("the tile offsets of a pipelined K loop "
                                   "must not depend on loop-carried values");
      continue;
    }
    if (failed(getBackwardSlice(root.getDefiningOp(), &slice, options)))
      return dl.loop.emitOpError("cannot analyse the K loop's tile offsets");
  }
  for (Operation *op : slice) {
    for (Value operand : op->getOperands())
      if (auto arg = dyn_cast<BlockArgument>(operand);
          arg && arg.getOwner() == dl.loop.getBody() && arg.getArgNumber() != 0)
        return op->emitOpError("computes a tile offset of a pipelined K loop "
                               "from a loop-carried value");
    if (!isReplicableScalar(op))
      return op->emitOpError("computes the K loop's bounds or tile offsets "
                             "with side effects; the producer warpgroup "
                             "cannot repeat it");
    if (op->getBlock() != entry && op->getBlock() != dl.loop.getBody())
      return op->emitOpError("computes the K loop's tile offsets inside a "
                             "nested region; compute them at the kernel's or "
                             "the loop's top level");
  }
  unsigned groups = config.consumerGroups;
  if (groups > 1) {
    // Ping-pong: the groups take the ring's stages in turn, each skipping
    // the other's, so every program's K loop must take as many steps.
    llvm::SetVector<Operation *> bounds;
    for (Value v :
         {dl.loop.getLowerBound(), dl.loop.getUpperBound(), dl.loop.getStep()})
      if (Operation *def = v.getDefiningOp())
        if (failed(getBackwardSlice(def, &bounds, options)))
          return dl.loop.emitOpError("cannot analyse the K loop's bounds");
    for (Operation *op : bounds)
      if (isa<ProgramIdOp>(op))
        return dl.loop.emitOpError(
                   "has bounds that depend on the program id; with ")
               << groups
               << " consumer groups (consumer_groups) every program's K loop "
                  "must take the same number of steps";
    int64_t accRegs = Distribution(dl.dot.getType()).getNumRegs();
    int64_t room =
        int64_t(config.consumerRegisters) - kWgmmaNonAccumulatorRegisters;
    if (accRegs > room)
      return dl.dot.emitOpError("the ")
             << p.blockM << "x" << p.blockN << " accumulator needs " << accRegs
             << " registers per thread, and " << groups
             << " consumer groups of " << context.getNumWarps()
             << " warps leave each consumer thread " << config.consumerRegisters
             << " (room for an accumulator of " << room
             << "); use 4 warps per group, a smaller block, or "
                "consumer_groups = 1";
  }
  // The TMA-store epilogue takes the store of the accumulator tile after
  // the K loop: 16-bit elements in the accumulator's layout, 64-column
  // boxes, into a 2-D memref the kernel receives (the runtime describes
  // it). Partial tiles are clipped by TMA.
  StoreOp tmaStore;
  if (config.tmaStore) {
    if (config.warpBase != 0 || !config.grid.empty())
      return dl.loop.emitOpError(
          "tma_store = 1 is not built for a co-scheduled partition");
    std::string why = "no store of the accumulator tile after the K loop";
    for (Operation *op = dl.loop->getNextNode(); op; op = op->getNextNode()) {
      auto store = dyn_cast<StoreOp>(op);
      if (!store)
        continue;
      auto type = store.getValue().getType();
      auto mma = dyn_cast_or_null<MmaEncodingAttr>(type.getEncoding());
      auto arg = dyn_cast<BlockArgument>(store.getBase());
      if (!mma || mma.getVersion() != 3 || type.getRank() != 2) {
        why = "the stored tile is not in the accumulator's layout (a "
              "transposed or converted tile)";
        continue;
      }
      if (type.getElementTypeBitWidth() != 16 || type.getDimSize(1) % 64 ||
          type.getDimSize(0) % (16 * p.warpsM) || p.warpsN != 1) {
        why = "the stored tile must have 16-bit elements, 64-column boxes "
              "and its warps along M only (each a whole 16-row stripe)";
        continue;
      }
      if (store.getMask() || !arg || arg.getOwner() != funcEntry) {
        why = "the store must be unmasked, into a memref the kernel "
              "receives";
        continue;
      }
      tmaStore = store;
      break;
    }
    if (!tmaStore)
      return dl.loop.emitOpError("tma_store = 1: ") << why;
  }

  SmallVector<Operation *> outerSlice = inOrder(entry, slice);
  SmallVector<Operation *> innerSlice = inOrder(dl.loop.getBody(), slice);

  // Hidden parameters: the TMA descriptor addresses and the logical grid.
  MLIRContext *ctx = func.getContext();
  OpBuilder b(ctx);
  // The hidden parameters go at the end, or before the ones a fused kernel
  // added after its TMA descriptors.
  unsigned numArgs = func.getNumArguments() - config.hiddenAfterTma;
  SmallVector<Attribute> tma;
  for (Operation *read : {dl.getAReader(), dl.loadB.getOperation()}) {
    auto arg = dyn_cast<BlockArgument>(read->getOperand(0));
    int64_t index =
        arg && arg.getOwner() == funcEntry ? arg.getArgNumber() : -1;
    bool isA = read == dl.getAReader();
    if (isA && dl.im2colA) {
      // TMA's im2col mode: blockM pixels of 128 bytes of channels; the
      // runtime takes the convolution from the rest.
      Im2colOp op = dl.im2colA;
      SmallVector<int64_t> v = {index, p.blockM,
                                p.aRowBytes() / elementBytes};
      for (ArrayRef<int64_t> a : {op.getFilter(), op.getStride(),
                                  op.getPadding(), op.getDilation()})
        v.append(a.begin(), a.end());
      tma.push_back(b.getDenseI64ArrayAttr(v));
      continue;
    }
    int64_t rows = p.boxRows(isA);
    // A multicast tile is loaded in halves, one by each CTA of the pair.
    if (isA ? p.multicastA() : p.multicastB())
      rows /= 2;
    // The runtime swizzles a box's rows by their width (box columns x
    // element bytes: 128 or 64).
    int64_t cols = (isA ? p.aRowBytes() : p.bRowBytes()) / elementBytes;
    tma.push_back(b.getDenseI64ArrayAttr({index, rows, cols}));
  }
  Type i64 = b.getI64Type(), i32 = b.getI32Type();
  bool hiddenGrid = config.grid.empty();
  SmallVector<Type> extra = {i64, i64};
  if (tmaStore) {
    // One 16-row, 64-column box (128-byte rows of 16-bit elements) of the
    // stored memref.
    tma.push_back(b.getDenseI64ArrayAttr(
        {int64_t(cast<BlockArgument>(tmaStore.getBase()).getArgNumber()),
         kTmaStoreBoxRows, 64}));
    extra.push_back(i64);
    tmaStore->setAttr(kTmaStoreAttrName, b.getUnitAttr());
  }
  if (hiddenGrid)
    extra.append({i32, i32, i32});
  for (auto [i, t] : llvm::enumerate(extra))
    if (failed(func.insertArgument(numArgs + i, t, DictionaryAttr(), loc)))
      return func.emitOpError("cannot add the kernel's hidden parameters");
  Value descA = func.getArgument(numArgs),
        descB = func.getArgument(numArgs + 1);
  unsigned gridArg = numArgs + 2;
  if (tmaStore) {
    p.storeDescriptor = func.getArgument(gridArg++);
    p.stagingWarps = context.getNumWarps() * groups;
  }
  SmallVector<Value> grid(config.grid.begin(), config.grid.end());
  if (hiddenGrid)
    grid = {func.getArgument(gridArg), func.getArgument(gridArg + 1),
            func.getArgument(gridArg + 2)};
  if (auto earlier = func->getAttrOfType<ArrayAttr>("ism.tma"))
    tma.insert(tma.begin(), earlier.begin(), earlier.end());
  func->setAttr("ism.tma", b.getArrayAttr(tma));
  if (hiddenGrid)
    func->setAttr("ism.persistent", b.getUnitAttr());
  if (p.clusterSize() > 1)
    func->setAttr(NVVM::NVVMDialect::getClusterDimAttrName(),
                  b.getDenseI32ArrayAttr({int32_t(p.clusterSize()), 1, 1}));
  if (p.clusterK > 1)
    func->setAttr(kCtasPerProgramAttrName, b.getI32IntegerAttr(p.clusterK));

  // The consumer's K loop carries the ring counter.
  IRRewriter rewriter(ctx);
  rewriter.setInsertionPoint(dl.loop);
  Value zero = indexConstant(rewriter, loc, 0);
  FailureOr<LoopLikeOpInterface> withCounter =
      cast<LoopLikeOpInterface>(dl.loop.getOperation())
          .replaceWithAdditionalYields(
              rewriter, ValueRange{zero},
              /*replaceInitOperandUsesInLoop=*/false,
              [&](OpBuilder &yb, Location yl, ArrayRef<BlockArgument> args) {
                return SmallVector<Value>{arith::AddIOp::create(
                    yb, yl, args[0], indexConstant(yb, yl, 1))};
              });
  if (failed(withCounter))
    return dl.loop.emitOpError("cannot add the ring counter to the K loop");
  auto consumerLoop = cast<scf::ForOp>(withCounter->getOperation());
  consumerLoop->setAttr(kPipelineAttrName, dims);
  // Slices refer to the old loop's body, which the new loop took over.
  innerSlice = inOrder(consumerLoop.getBody(), [&] {
    llvm::SetVector<Operation *> s(innerSlice.begin(), innerSlice.end());
    return s;
  }());
  DotLoop consumerDl = dl;
  consumerDl.loop = consumerLoop;

  // Split the CTA: consumers first (warps 0..num_warps-1), then the
  // producer warpgroup.
  unsigned groupThreads = context.getNumThreads();
  unsigned consumerThreads = groupThreads * groups;
  Block *ops = entry;
  Operation *terminator = ops->getTerminator();
  SmallVector<Operation *> program;
  for (Operation &op : ops->without_terminator())
    program.push_back(&op);

  b.setInsertionPoint(terminator);
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  if (config.warpBase)
    tid = arith::SubIOp::create(b, loc, tid,
                                indexConstant(b, loc, 32 * config.warpBase));
  Value ringBase = getWgmmaRingBase(b, loc, p);
  Value isFirst = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid,
                                        indexConstant(b, loc, 0));
  scf::IfOp::create(b, loc, isFirst, [&](OpBuilder &tb, Location tl) {
    // The TMA descriptors live in global memory (the runtime's slab), which
    // a flushed L2 leaves in DRAM: fetch them while the barriers are set up
    // rather than at the producer's first copy.
    SmallVector<Value> descriptors = {descA, descB};
    if (p.storeDescriptor)
      descriptors.push_back(p.storeDescriptor);
    for (Value desc : descriptors) {
      Value present = arith::CmpIOp::create(tb, tl, arith::CmpIPredicate::ne,
                                            desc, i64Const(tb, tl, 0));
      scf::IfOp::create(tb, tl, present, [&](OpBuilder &pb, Location pl) {
        Value pointer = LLVM::IntToPtrOp::create(
            pb, pl, LLVM::LLVMPointerType::get(pb.getContext()), desc);
        NVVM::PrefetchOp::create(pb, pl, NVVM::PrefetchCacheLevelAttr(),
                                 NVVM::CacheEvictionPriorityAttr(), pointer,
                                 Value(), pb.getUnitAttr());
        scf::YieldOp::create(pb, pl);
      });
    }
    for (unsigned s = 0; s < p.stages; ++s) {
      Value stage = indexConstant(tb, tl, s);
      NVVM::MBarrierInitOp::create(tb, tl,
                                   fullBarrier(tb, tl, p, ringBase, stage),
                                   i32Const(tb, tl, 1), Value());
      // In a multicast cluster the consumers of both CTAs free a stage:
      // the partner multicasts into it too.
      NVVM::MBarrierInitOp::create(
          tb, tl, emptyBarrier(tb, tl, p, ringBase, stage),
          i32Const(tb, tl,
                   context.getNumWarps() *
                       (p.multicast() ? p.clusterSize() : 1)),
          Value());
    }
    if (p.clusterK == 2) {
      // The exchange: `full` completes when the partner's accumulator has
      // arrived (its bytes, which one consumer of this CTA expects),
      // `empty` when every consumer of the partner has read it.
      Value xfull =
          sharedAt(tb, tl, ringBase, i64Const(tb, tl, p.exchangeFullOffset()));
      Value xempty =
          sharedAt(tb, tl, ringBase, i64Const(tb, tl, p.exchangeEmptyOffset()));
      NVVM::MBarrierInitOp::create(tb, tl, xfull, i32Const(tb, tl, 1), Value());
      NVVM::MBarrierInitOp::create(tb, tl, xempty,
                                   i32Const(tb, tl, consumerThreads), Value());
    }
    if (p.clusterSize() > 1)
      NVVM::FenceMbarrierInitOp::create(tb, tl);
    scf::YieldOp::create(tb, tl);
  });
  if (p.clusterSize() > 1) {
    // Both CTAs' barriers exist before either multicasts into the other
    // (fence.mbarrier_init released them; the arrival itself is relaxed,
    // as CUTLASS's: a release would be a GPU-scope MEMBAR). The threads of
    // the kernel's other partitions arrive once on their own
    // (lowerPartitions).
    NVVM::ClusterArriveRelaxedOp::create(b, loc, UnitAttr());
    NVVM::ClusterWaitOp::create(b, loc, UnitAttr());
  } else if (config.allBarrier == 0) {
    NVVM::Barrier0Op::create(b, loc);
  } else {
    NVVM::BarrierOp::create(
        b, loc, TypeRange{}, i32Const(b, loc, config.allBarrier),
        i32Const(b, loc, consumerThreads + 128), {}, Value{});
  }
  Value rank;
  if (p.clusterSize() > 1)
    rank = NVVM::ClusterId::create(b, loc, b.getI32Type());
  // The consumer group of a thread and whether it is its group's first.
  Value groupId, isGroupFirst = isFirst;
  if (groups > 1) {
    groupId = arith::DivUIOp::create(b, loc, tid,
                                     indexConstant(b, loc, groupThreads));
    isGroupFirst = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq,
        arith::RemUIOp::create(b, loc, tid,
                               indexConstant(b, loc, groupThreads)),
        indexConstant(b, loc, 0));
  }
  Value isProducer =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, tid,
                            indexConstant(b, loc, consumerThreads));
  auto split = scf::IfOp::create(b, loc, isProducer, /*withElse=*/true);

  // Producer. Its slices are cloned from the consumers' program before
  // that is wrapped in its persistent loop.
  Block *producer = split.thenBlock();
  b.setInsertionPointToStart(producer);
  NVVM::SetMaxRegisterOp::create(b, loc, config.producerRegisters,
                                 NVVM::SetMaxRegisterAction::decrease);
  Value ptid = arith::SubIOp::create(b, loc, tid,
                                     indexConstant(b, loc, consumerThreads));
  Value nullDesc = i64Const(b, loc, 0);
  Value useTMA = arith::AndIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, descA, nullDesc),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, descB, nullDesc));
  auto mode = scf::IfOp::create(b, loc, useTMA, /*withElse=*/true);
  auto fill = [&](Block *block, bool tmaMode) {
    b.setInsertionPoint(block->getTerminator());
    scf::ForOp loop =
        buildProducerLoop(b, loc, consumerDl, outerSlice, innerSlice, p,
                          ringBase, descA, descB, tmaMode, ptid, rank);
    wrapPersistent(b, loc, block, grid, config.first, config.stride, group,
                   loop.getInitArgsMutable()[0], loop.getResult(0), p, rank);
  };
  // TMA: one thread issues every copy.
  {
    b.setInsertionPoint(mode.thenBlock()->getTerminator());
    Value elected = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          ptid, indexConstant(b, loc, 0));
    auto one = scf::IfOp::create(b, loc, elected, /*withElse=*/false);
    fill(one.thenBlock(), true);
  }
  fill(mode.elseBlock(), false);

  // Consumers: the program itself.
  Block *consumer = split.elseBlock();
  for (Operation *op : program)
    op->moveBefore(consumer->getTerminator());
  Value valid;
  SmallVector<Value> programId;
  scf::ForOp tiles = wrapPersistent(
      b, loc, consumer, grid, config.first, config.stride, group,
      consumerLoop.getInitArgsMutable()[1], consumerLoop.getResult(1), p, rank,
      &valid, &programId, groups, groupId);
  Block *tileBody = tiles.getBody();
  if (p.storeDescriptor) {
    // The TMA stores have read their staging boxes and written global
    // memory before the kernel ends.
    OpBuilder tb(tiles->getBlock(), std::next(tiles->getIterator()));
    NVVM::CpAsyncBulkWaitGroupOp::create(tb, loc, 0, UnitAttr());
  }
  if (p.clusterK == 2) {
    // This CTA's part of the program's K steps, as the producer's.
    OpBuilder cb(consumerLoop);
    auto [lb, ub] =
        splitKRange(cb, loc, consumerLoop.getLowerBound(),
                    consumerLoop.getUpperBound(), consumerLoop.getStep(), rank);
    consumerLoop.setLowerBound(lb);
    consumerLoop.setUpperBound(ub);
    // The exchange's phase: the program's index in this CTA's walk, mod 2.
    cb.setInsertionPointToStart(tileBody);
    Value index = arith::DivUIOp::create(
        cb, loc,
        arith::SubIOp::create(cb, loc, tiles.getInductionVar(),
                              tiles.getLowerBound()),
        tiles.getStep());
    Value index32 = toI32(cb, loc, index);
    Value one = i32Const(cb, loc, 1);
    p.exchangePhase = arith::AndIOp::create(cb, loc, index32, one);
  }
  if (valid) {
    // The second program of a cluster's last pair on an odd grid computes
    // its (zero) tile to keep the pair's ring in step, and stores nothing:
    // the epilogue runs only for programs of the grid.
    SmallVector<Operation *> epilogue;
    for (Operation *op = consumerLoop->getNextNode();
         op != tileBody->getTerminator(); op = op->getNextNode())
      epilogue.push_back(op);
    OpBuilder eb(tileBody->getTerminator());
    auto guard = scf::IfOp::create(eb, loc, valid, /*withElse=*/false);
    for (Operation *op : epilogue)
      op->moveBefore(guard.thenBlock()->getTerminator());
  }
  if (groups > 1) {
    // The ring counter: this group's program starts after the steps of
    // the groups before it in this round, and the next round after all
    // of them (every program takes the same number of steps).
    OpBuilder cb(consumerLoop);
    Value round = consumerLoop.getInitArgs()[1];
    Value steps = arith::CeilDivUIOp::create(
        cb, loc,
        arith::MaxSIOp::create(
            cb, loc,
            arith::SubIOp::create(cb, loc, consumerLoop.getUpperBound(),
                                  consumerLoop.getLowerBound()),
            indexConstant(cb, loc, 0)),
        consumerLoop.getStep());
    consumerLoop.getInitArgsMutable()[1].set(arith::AddIOp::create(
        cb, loc, round, arith::MulIOp::create(cb, loc, groupId, steps)));
    Operation *yield = tileBody->getTerminator();
    cb.setInsertionPoint(yield);
    yield->setOperand(
        0, arith::AddIOp::create(
               cb, loc, round,
               arith::MulIOp::create(cb, loc, steps,
                                     indexConstant(cb, loc, groups))));

    // The groups issue their K loops in turn (CUTLASS's ordered math
    // barrier): group g waits on named barrier orderBarrier + g before
    // its K loop and, after it, lets the next group start its own, so one
    // group's wgmma do not interleave with the other's and its epilogue
    // runs under them. The turns are also what keeps every wait on a
    // stage's `full` barrier at most one phase ahead of it: the parity
    // wait cannot tell a phase from the one two rounds later, and a group
    // that waited on its stages while the other still used the ring would
    // read an old phase as its own. A wait pairs with one arrival (256
    // threads), so a group arrives only when the next group has a program to
    // wait for: the CTA's next program is t + stride / groups. The last group
    // opens the first turn.
    OpBuilder ob(tiles);
    Value groupI32 =
        arith::IndexCastOp::create(ob, loc, ob.getI32Type(), groupId);
    Value pairThreads = i32Const(ob, loc, 2 * groupThreads);
    Value base = arith::DivUIOp::create(ob, loc, tiles.getStep(),
                                        indexConstant(ob, loc, groups));
    auto orderId = [&](OpBuilder &o, Value group) -> Value {
      return arith::AddIOp::create(
          o, loc, i32Const(o, loc, config.orderBarrier), group);
    };
    // Opens the next group's turn when it has program `next` to compute.
    auto arriveIf = [&](OpBuilder &o, Value next) {
      Value has = arith::CmpIOp::create(o, loc, arith::CmpIPredicate::ult, next,
                                        tiles.getUpperBound());
      return scf::IfOp::create(o, loc, has, [&](OpBuilder &tb, Location tl) {
        Value nextGroup = arith::RemUIOp::create(
            tb, tl,
            arith::AddIOp::create(tb, tl, groupI32, i32Const(tb, tl, 1)),
            i32Const(tb, tl, groups));
        NVVM::BarrierArriveOp::create(tb, tl, orderId(tb, nextGroup),
                                      pairThreads);
        scf::YieldOp::create(tb, tl);
      });
    };
    // Before the persistent loop the last group opens group 0's first
    // turn; group 0's first program is the last group's first minus
    // (groups - 1) * base.
    Value isLast =
        arith::CmpIOp::create(ob, loc, arith::CmpIPredicate::eq, groupId,
                              indexConstant(ob, loc, groups - 1));
    scf::IfOp::create(ob, loc, isLast, [&](OpBuilder &tb, Location tl) {
      arriveIf(tb, arith::SubIOp::create(
                       tb, tl, tiles.getLowerBound(),
                       arith::MulIOp::create(
                           tb, tl, base, indexConstant(tb, tl, groups - 1))));
      scf::YieldOp::create(tb, tl);
    });
    OpBuilder lb(consumerLoop);
    NVVM::BarrierOp::create(lb, loc, TypeRange{}, orderId(lb, groupI32),
                            pairThreads, {}, Value{});
    Value next = arith::AddIOp::create(lb, loc, tiles.getInductionVar(), base);
    lb.setInsertionPointAfter(consumerLoop);
    scf::IfOp handOff = arriveIf(lb, next);
    // The K loop's lowering issues the hand-off right after the last
    // wgmma, before waiting for them (WgmmaLoopLowering).
    handOff->setAttr(kTurnAttrName, lb.getUnitAttr());
  }
  if (config.traceBuffer) {
    // Each tile the consumers compute, from their first thread; the record
    // of program (x, y, z) is x + gx * (y + gy * z).
    OpBuilder tb(tileBody, tileBody->begin());
    Value start = NVVM::GlobalTimerOp::create(tb, loc, tb.getI64Type());
    tb.setInsertionPoint(tileBody->getTerminator());
    Value end = NVVM::GlobalTimerOp::create(tb, loc, tb.getI64Type());
    Value t = tiles.getInductionVar();
    Value record = t, record0 = isGroupFirst;
    if (valid) {
      Value gx = toIndex(tb, loc, grid[0]), gy = toIndex(tb, loc, grid[1]);
      record = arith::AddIOp::create(
          tb, loc, programId[0],
          arith::MulIOp::create(
              tb, loc, gx,
              arith::AddIOp::create(
                  tb, loc, programId[1],
                  arith::MulIOp::create(tb, loc, gy, programId[2]))));
      record0 = arith::AndIOp::create(tb, loc, isGroupFirst, valid);
    }
    emitTraceRecord(
        tb, loc, config.traceBuffer,
        arith::AddIOp::create(tb, loc, config.traceFirstRecord, record),
        record0, start, end, config.traceTag, record);
  }
  b.setInsertionPointToStart(consumer);
  // (Beside many other warps the consumers may get fewer than the CTA
  // starts with: setmaxnreg.inc below the current count is an illegal
  // instruction.)
  NVVM::SetMaxRegisterOp::create(b, loc, config.consumerRegisters,
                                 config.consumerRegisters >= atLaunch
                                     ? NVVM::SetMaxRegisterAction::increase
                                     : NVVM::SetMaxRegisterAction::decrease);
  if (p.clusterSize() > 1) {
    // No CTA leaves while its partner may still free a stage in its shared
    // memory (an execution barrier: relaxed).
    b.setInsertionPointAfter(split);
    NVVM::ClusterArriveRelaxedOp::create(b, loc, UnitAttr());
    NVVM::ClusterWaitOp::create(b, loc, UnitAttr());
  }

  context.pipeline = p;
  context.producerWarps = 4;
  // The consumers synchronise on their named barrier; their scratch
  // follows the ring.
  PartitionInfo consumers = context.getPartition();
  consumers.warpBase = config.warpBase;
  consumers.barrierId = config.consumerBarrier;
  consumers.groups = groups;
  consumers.barrierStep = config.groupBarrierStep;
  consumers.sharedMemoryBase = (p.ringEnd() + 15) / 16 * 16;
  context.setPartition(consumers);
  return success();
}

namespace {

/// clusterK = 2, after the K loop: the two CTAs of the cluster computed the
/// same program over parts of its K steps and hold its accumulator in the
/// same layout. Rank 1's consumers write their registers (`regs`) into
/// rank 0's exchange buffer with `st.async` (16 bytes a store, chunk c of
/// thread t at (c * threads + t) * 16: consecutive threads write
/// consecutive addresses), each store completing its bytes on rank 0's
/// exchange `full` mbarrier, on which one of rank 0's consumers expects
/// them (no fence: the mbarrier tracks the stores themselves); rank 0's
/// consumers wait on it, read and add, and arrive on rank 1's `empty`
/// mbarrier, which rank 1 waits on before its next program's stores (as
/// CUTLASS's consumers free a multicast stage in the other CTA: release at
/// CTA scope; a cluster-scope release is a GPU-wide MEMBAR). Returns the sum
/// on rank 0 and the registers unchanged on rank 1 (whose epilogue does
/// not run). The phases alternate per program (p.exchangePhase).
Value exchangeAccumulator(OpBuilder &b, Location loc, const WgmmaPipeline &p,
                          const LoweringContext &context, Value ringBase,
                          ArrayRef<Value> regs) {
  MLIRContext *ctx = b.getContext();
  Type f32 = b.getF32Type(), i32 = b.getI32Type();
  int64_t n = regs.size(), threads = context.getNumThreads();
  Value tid = arith::IndexCastOp::create(b, loc, b.getI64Type(),
                                         context.getThreadId(b, loc));
  Value rank = NVVM::ClusterId::create(b, loc, i32);
  Value full = arith::AddIOp::create(b, loc, ringBase,
                                     i64Const(b, loc, p.exchangeFullOffset()));
  Value empty = arith::AddIOp::create(
      b, loc, ringBase, i64Const(b, loc, p.exchangeEmptyOffset()));
  Value buffer = arith::AddIOp::create(b, loc, ringBase,
                                       i64Const(b, loc, p.exchangeOffset()));
  Value tidBytes = arith::MulIOp::create(b, loc, tid, i64Const(b, loc, 16));
  Value mine = arith::AddIOp::create(b, loc, buffer, tidBytes);
  auto chunkAt = [&](OpBuilder &cb, Location cl, int64_t c) -> Value {
    return arith::AddIOp::create(cb, cl, mine,
                                 i64Const(cb, cl, c * threads * 16));
  };
  auto chunkType = VectorType::get({4}, f32);
  Value phase = p.exchangePhase;
  Value isFirst = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rank,
                                        i32Const(b, loc, 0));
  auto result = scf::IfOp::create(
      b, loc, isFirst,
      [&](OpBuilder &tb, Location tl) {
        Value fullPtr = sharedPointer(tb, tl, full);
        Value first = arith::CmpIOp::create(tb, tl, arith::CmpIPredicate::eq,
                                            tid, i64Const(tb, tl, 0));
        scf::IfOp::create(tb, tl, first, [&](OpBuilder &ab, Location al) {
          NVVM::MBarrierArriveExpectTxOp::create(
              ab, al, Type(), fullPtr, i32Const(ab, al, 4 * n * threads),
              NVVM::MemScopeKind::CTA, false, Value());
          scf::YieldOp::create(ab, al);
        });
        waitParity(tb, tl, fullPtr, phase);
        SmallVector<Value> sum;
        for (int64_t c = 0; c < n / 4; ++c) {
          Value chunk = LLVM::LoadOp::create(
              tb, tl, chunkType, sharedPointer(tb, tl, chunkAt(tb, tl, c)), 16);
          for (int64_t i = 0; i < 4; ++i)
            sum.push_back(arith::AddFOp::create(
                tb, tl, regs[4 * c + i],
                vector::ExtractOp::create(tb, tl, chunk, i)));
        }
        Value emptyPtr = sharedPointer(tb, tl, empty);
        Value rank1 = i32Const(tb, tl, 1);
        Value remote = NVVM::MapaOp::create(
            tb, tl, LLVM::LLVMPointerType::get(ctx, 7), emptyPtr, rank1);
        NVVM::MBarrierArriveOp::create(tb, tl, Type(), remote, Value(),
                                       NVVM::MemScopeKind::CTA, false);
        scf::YieldOp::create(tb, tl, buildVector(tb, tl, f32, sum));
      },
      [&](OpBuilder &eb, Location el) {
        // The partner has read the previous program's accumulator.
        Value emptyPtr = sharedPointer(eb, el, empty);
        Value one = i32Const(eb, el, 1);
        waitParity(eb, el, emptyPtr, arith::XOrIOp::create(eb, el, phase, one));
        Value full32 = arith::TruncIOp::create(eb, el, i32, full);
        Value rank0 = i32Const(eb, el, 0);
        for (int64_t c = 0; c < n / 4; ++c) {
          Value dst = arith::TruncIOp::create(eb, el, i32, chunkAt(eb, el, c));
          LLVM::InlineAsmOp::create(
              eb, el, TypeRange{},
              ValueRange{dst, regs[4 * c], regs[4 * c + 1], regs[4 * c + 2],
                         regs[4 * c + 3], full32, rank0},
              "{\n\t.reg .b32 d, m;\n\t"
              "mapa.shared::cluster.u32 d, $0, $6;\n\t"
              "mapa.shared::cluster.u32 m, $5, $6;\n\t"
              "st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32 "
              "[d], {$1, $2, $3, $4}, [m];\n\t}",
              "r,f,f,f,f,r,r", /*has_side_effects=*/true,
              /*is_align_stack=*/false, LLVM::tailcallkind::TailCallKind::None,
              LLVM::AsmDialectAttr(), ArrayAttr());
        }
        scf::YieldOp::create(eb, el, buildVector(eb, el, f32, regs));
      });
  return result.getResult(0);
}

/// The consumers' K loop: wait for a stage, wgmma on it, free the previous
/// one.
struct WgmmaLoopLowering : IsmConversionPattern<scf::ForOp> {
  WgmmaLoopLowering(const TypeConverter &converter, MLIRContext *ctx,
                    LoweringContext &context)
      : IsmConversionPattern(converter, ctx, context, /*benefit=*/10) {
    setHasBoundedRewriteRecursion();
  }

  /// Moves the promoted loop `op`'s own code after its product (the
  /// scales' loads and the scaled add: the ops the add depends on, but the
  /// product and its operands, which the ring holds) before the yield of
  /// `loop`, its replacement, for the conversion to lower as it lowers any
  /// op; the product is `product`, the accumulator the new loop's, both
  /// per-thread vectors. Makes the yield carry the new accumulator.
  void movePromotion(ConversionPatternRewriter &rewriter, scf::ForOp op,
                     DotOp dot, Operation *promote, scf::ForOp loop,
                     Value product) const {
    auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
    rewriter.setInsertionPoint(yield);
    llvm::SmallPtrSet<Operation *, 16> needed;
    SmallVector<Operation *> worklist = {promote};
    while (!worklist.empty()) {
      Operation *o = worklist.pop_back_val();
      if (o == dot || !needed.insert(o).second)
        continue;
      for (Value operand : o->getOperands())
        if (Operation *def = operand.getDefiningOp();
            def && def->getBlock() == op.getBody())
          worklist.push_back(def);
    }
    rewriter.replaceOp(dot, product);
    rewriter.replaceAllUsesWith(op.getRegionIterArg(0),
                                loop.getRegionIterArg(0));
    rewriter.replaceAllUsesWith(op.getInductionVar(), loop.getInductionVar());
    for (Operation &o :
         llvm::make_early_inc_range(op.getBody()->without_terminator()))
      if (needed.contains(&o))
        rewriter.moveOpBefore(&o, yield);
    // The yield's tile operand converts with it (scf's structural types).
    rewriter.modifyOpInPlace(
        yield, [&] { yield->setOperand(0, promote->getResult(0)); });
  }

  LogicalResult
  matchAndRewrite(scf::ForOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!op->hasAttr(kPipelineAttrName) || !context.pipeline)
      return failure();
    const WgmmaPipeline &p = *context.pipeline;
    // The dot's own loop, or the promoted form: the loop yields
    // `acc + g(dot)` (each step's product from zero, scaled before it is
    // added: block scales).
    Operation *yielded =
        op.getBody()->getTerminator()->getOperand(0).getDefiningOp();
    auto dot = dyn_cast_or_null<DotOp>(yielded);
    Operation *promote = nullptr;
    if (!dot && isa_and_nonnull<arith::AddFOp>(yielded)) {
      for (DotOp d : op.getBody()->getOps<DotOp>()) {
        std::optional<DotLoop> dl = matchDotLoop(d);
        if (dl && dl->promote == yielded) {
          dot = d;
          promote = yielded;
        }
      }
    }
    auto mma = dot ? dyn_cast<MmaEncodingAttr>(dot.getType().getEncoding())
                   : MmaEncodingAttr();
    if (!mma || mma.getVersion() != 3)
      return rewriter.notifyMatchFailure(op, "not a wgmma K loop");
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Distribution dist(dot.getType());
    int64_t warpN = p.blockN / p.warpsN;
    // Each of the warpgroup's `reps` 64-row pieces is `splits` instructions
    // side by side; their accumulators are consecutive runs of registers
    // (an m64nNk16 fragment holds its columns 8 at a time, in order).
    int64_t splits = warpN / p.instrN;
    int64_t regsPerInstr = p.instrN / 2;
    int64_t reps = dist.getNumRegs() / (warpN / 2);
    Type f32 = rewriter.getF32Type();

    Value ringBase = getWgmmaRingBase(rewriter, loc, p);
    Value warp = context.getWarpId(rewriter, loc);
    Value lane = context.getLaneId(rewriter, loc);
    Value warpGroup = arith::DivUIOp::create(rewriter, loc, warp,
                                             indexConstant(rewriter, loc, 4));
    int64_t groupsM = p.warpsM / 4;
    Value mBase = arith::MulIOp::create(
        rewriter, loc,
        arith::RemUIOp::create(rewriter, loc, warpGroup,
                               indexConstant(rewriter, loc, groupsM)),
        indexConstant(rewriter, loc, 64));
    Value nBase = arith::MulIOp::create(
        rewriter, loc,
        arith::DivUIOp::create(rewriter, loc, warpGroup,
                               indexConstant(rewriter, loc, groupsM)),
        indexConstant(rewriter, loc, warpN));
    auto toI64 = [&](OpBuilder &b, Value v) {
      return arith::IndexCastOp::create(b, loc, b.getI64Type(), v);
    };
    // A tile in a stage: K-major, rows of rowBytes (8-row groups 1024 bytes
    // apart, instruction K steps 32 bytes on: k16 of 16-bit elements, k32
    // of 8-bit ones); or MN-major (16-bit only), boxes of blockK rows of
    // `perBox` columns each, a box apart (8-row groups 8 rows apart, k16
    // steps 16 rows on). `tileOffset` is the byte offset of row / column
    // `first` (a multiple of 64, or of perBox) of either.
    int64_t elementBytes = p.elementType.getIntOrFloatBitWidth() / 8;
    int64_t aRowBytes = p.aRowBytes(), bRowBytes = p.bRowBytes();
    auto tileOffset = [&](OpBuilder &b, Location l, Value first, bool mnMajor,
                          int64_t rowBytes) -> Value {
      if (!mnMajor)
        return arith::MulIOp::create(b, l, toI64(b, first),
                                     i64Const(b, l, rowBytes));
      Value box = arith::DivUIOp::create(
          b, l, first, indexConstant(b, l, rowBytes / elementBytes));
      return arith::MulIOp::create(b, l, toI64(b, box),
                                   i64Const(b, l, p.blockK * rowBytes));
    };
    // The descriptor of instruction K step kk at row / column `first`
    // (static) of a tile at `base`.
    auto tileDescriptor = [&](OpBuilder &b, Location l, Value base,
                              int64_t first, int64_t kk, bool mnMajor,
                              int64_t rowBytes) {
      int64_t perBox = rowBytes / elementBytes;
      int64_t offset = mnMajor ? (first / perBox) * p.blockK * rowBytes +
                                     kk * p.instrK() * rowBytes
                               : first * rowBytes + kk * 32;
      Value address = arith::AddIOp::create(b, l, base, i64Const(b, l, offset));
      return mnMajor
                 ? wgmmaDescriptor(b, l, address, p.blockK * rowBytes,
                                   8 * rowBytes, rowBytes)
                 : wgmmaDescriptor(b, l, address, 16, 8 * rowBytes, rowBytes);
    };
    // This warpgroup's first A row and B column.
    Value aRow = tileOffset(rewriter, loc, mBase, p.aMNMajor, aRowBytes);
    Value bCol = tileOffset(rewriter, loc, nBase, !p.bKMajor, bRowBytes);
    Value isLane0 =
        arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, lane,
                              indexConstant(rewriter, loc, 0));
    auto release = [&](OpBuilder &b, Value stage) {
      Value barrier = emptyBarrier(b, loc, p, ringBase, stage);
      scf::IfOp::create(b, loc, isLane0, [&](OpBuilder &tb, Location tl) {
        if (!p.multicast()) {
          NVVM::MBarrierArriveOp::create(tb, tl, Type(), barrier, Value(),
                                         NVVM::MemScopeKind::CTA, false);
        } else {
          // Free the stage in every CTA of the cluster: each multicasts
          // into it.
          auto clusterPtr = LLVM::LLVMPointerType::get(ctx, 7);
          for (unsigned r = 0; r < p.clusterSize(); ++r) {
            Value remote = NVVM::MapaOp::create(tb, tl, clusterPtr, barrier,
                                                i32Const(tb, tl, r));
            // Release at CTA scope, as CUTLASS's cluster barriers do: a
            // cluster-scope release made the 2-CTA kernels 1.75-2.8x slower
            // on the H200.
            NVVM::MBarrierArriveOp::create(tb, tl, Type(), remote, Value(),
                                           NVVM::MemScopeKind::CTA, false);
          }
        }
        scf::YieldOp::create(tb, tl);
      });
    };

    // When `cond`, frees the stage of ring step `it` - 1.
    auto releaseBefore = [&](OpBuilder &b, Value cond, Value it) {
      scf::IfOp::create(b, loc, cond, [&](OpBuilder &tb, Location tl) {
        Value prev = arith::RemUIOp::create(
            tb, tl,
            arith::AddIOp::create(tb, tl, it,
                                  indexConstant(tb, tl, p.stages - 1)),
            indexConstant(tb, tl, p.stages));
        release(tb, prev);
        scf::YieldOp::create(tb, tl);
      });
    };

    Value lb = adaptor.getLowerBound();
    Value promoted; // a promoted step's product
    auto loop = scf::ForOp::create(
        rewriter, loc, lb, adaptor.getUpperBound(), adaptor.getStep(),
        adaptor.getInitArgs(),
        [&](OpBuilder &b, Location l, Value k, ValueRange iter) {
          Value acc = iter[0], it = iter[1];
          auto [stage, phase] = stageAndPhase(b, l, p, it);
          waitParity(b, l, fullBarrier(b, l, p, ringBase, stage), phase);
          Value stageBase = arith::AddIOp::create(b, l, ringBase,
                                                  stageOffset(b, l, p, stage));
          Value aBase = arith::AddIOp::create(b, l, stageBase, aRow);
          Value bBase = arith::AddIOp::create(
              b, l, stageBase,
              arith::AddIOp::create(b, l, bCol, i64Const(b, l, p.aBytes)));
          NVVM::WgmmaFenceAlignedOp::create(b, l);
          // A promoted step's product starts from zero.
          Value start = acc;
          if (promote)
            start = arith::ConstantOp::create(
                b, l, acc.getType(),
                b.getZeroAttr(cast<VectorType>(acc.getType())));
          SmallVector<Value> structs =
              wgmmaAccumulators(b, l, start, reps * splits, regsPerInstr);
          for (int64_t kk = 0; kk < p.blockK / p.instrK(); ++kk) {
            // Instruction s of B starts s * instrN columns (rows of a
            // K-major B) on, piece r of A r * 16 * warpsM rows.
            SmallVector<Value> descB;
            for (int64_t s = 0; s < splits; ++s)
              descB.push_back(tileDescriptor(b, l, bBase, s * p.instrN, kk,
                                             !p.bKMajor, bRowBytes));
            for (int64_t r = 0; r < reps; ++r) {
              Value descA = tileDescriptor(b, l, aBase, r * 16 * p.warpsM, kk,
                                           p.aMNMajor, aRowBytes);
              for (int64_t s = 0; s < splits; ++s)
                structs[r * splits + s] = wgmmaFromShared(
                    b, l, structs[r * splits + s], descA, descB[s], p.instrN,
                    p.elementType, p.bElementType, /*transposeB=*/!p.bKMajor,
                    /*transposeA=*/p.aMNMajor);
            }
          }
          NVVM::WgmmaGroupSyncAlignedOp::create(b, l);
          Value newAcc;
          if (!promote) {
            NVVM::WgmmaWaitGroupSyncOp::create(b, l, 1);
            newAcc = buildVector(b, l, f32, wgmmaRegisters(b, l, structs));
            // The previous step's wgmma are done: free its stage.
            releaseBefore(
                b, arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne, k, lb),
                it);
          } else {
            // The step's product is needed now: wait for it and free its
            // stage; the loop's own code then runs on it (movePromotion).
            NVVM::WgmmaWaitGroupSyncOp::create(b, l, 0);
            promoted = buildVector(b, l, f32, wgmmaRegisters(b, l, structs));
            release(b, stage);
            newAcc = acc;
          }
          Value next = arith::AddIOp::create(b, l, it, indexConstant(b, l, 1));
          scf::YieldOp::create(b, l, ValueRange{newAcc, next});
        });
    if (promote) {
      OpBuilder::InsertionGuard guard(rewriter);
      movePromotion(rewriter, op, dot, promote, loop, promoted);
    }
    // A ping-pong group hands the tensor cores to the other group as soon
    // as its last wgmma are issued, as CUTLASS does: the other group's
    // wgmma queue behind them. Its stages are safe to wait on: the producer
    // fills the next group's first stage after this group's step n - S,
    // which is freed.
    Operation *after = op->getNextNode();
    while (after && !isa<scf::IfOp>(after) && isPure(after))
      after = after->getNextNode(); // the hand-off's condition
    if (auto handOff = dyn_cast_or_null<scf::IfOp>(after);
        handOff && handOff->hasAttr(kTurnAttrName))
      rewriter.setInsertionPointAfter(handOff);
    // Wait for the last wgmma group with the accumulator passing through
    // the wait, so that nothing that reads it (the epilogue's conversions)
    // is scheduled before it.
    Value accEnd = loop.getResult(0);
    SmallVector<Value> accRegs;
    for (int64_t i = 0; i < dist.getNumRegs(); ++i)
      accRegs.push_back(extractReg(rewriter, loc, accEnd, i));
    SmallVector<Value> waited = waitForWgmma(rewriter, loc, accRegs, 0);
    Value accDone = buildVector(rewriter, loc, f32, waited);
    Value itEnd = loop.getResult(1);
    // A promoted loop freed every stage it used.
    if (!promote) {
      Value ran = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ne,
                                        itEnd, adaptor.getInitArgs()[1]);
      releaseBefore(rewriter, ran, itEnd);
    }
    if (p.clusterK == 2)
      accDone =
          exchangeAccumulator(rewriter, loc, p, context, ringBase, waited);
    rewriter.replaceOp(op, ValueRange{accDone, itEnd});
    return success();
  }
};

} // namespace

Value mlir::ism::getWgmmaRingBase(OpBuilder &b, Location loc,
                                  const WgmmaPipeline &p) {
  auto workgroup = gpu::AddressSpaceAttr::get(
      b.getContext(), gpu::GPUDialect::getWorkgroupAddressSpace());
  auto raw = MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                             MemRefLayoutAttrInterface{}, workgroup);
  Value base = gpu::DynamicSharedMemoryOp::create(b, loc, raw);
  Value address = arith::IndexCastOp::create(
      b, loc, b.getI64Type(),
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, base));
  Value up = arith::AddIOp::create(b, loc, address,
                                   i64Const(b, loc, p.sharedBase + 1023));
  return arith::AndIOp::create(b, loc, up, i64Const(b, loc, ~int64_t(1023)));
}

Value mlir::ism::wgmmaDescriptor(OpBuilder &b, Location loc, Value address,
                                 int64_t lbo, int64_t sbo,
                                 int64_t swizzleBytes) {
  Value start = arith::ShRUIOp::create(
      b, loc, arith::AndIOp::create(b, loc, address, i64Const(b, loc, 0x3FFFF)),
      i64Const(b, loc, 4));
  // Bits 62-63, the layout: 1 the 128-byte swizzle, 2 the 64-byte one.
  assert((swizzleBytes == 128 || swizzleBytes == 64) && "unsupported swizzle");
  int64_t layout = swizzleBytes == 128 ? 1 : 2;
  int64_t fixed =
      ((lbo >> 4) << 16) | ((sbo >> 4) << 32) | (int64_t(layout) << 62);
  return arith::OrIOp::create(b, loc, start, i64Const(b, loc, fixed));
}

Value mlir::ism::wgmmaFromShared(OpBuilder &b, Location loc, Value acc,
                                 Value descA, Value descB, int64_t n,
                                 Type aType, Type bType, bool transposeB,
                                 bool transposeA) {
  MLIRContext *ctx = b.getContext();
  auto wgType = [](Type t) {
    if (isa<Float8E4M3FNType>(t))
      return NVVM::WGMMATypes::e4m3;
    if (isa<Float8E5M2Type>(t))
      return NVVM::WGMMATypes::e5m2;
    return t.isBF16() ? NVVM::WGMMATypes::bf16 : NVVM::WGMMATypes::f16;
  };
  // 32 bytes of K: k16 of 16-bit elements, k32 of 8-bit ones.
  int64_t k = 256 / aType.getIntOrFloatBitWidth();
  return NVVM::WgmmaMmaAsyncOp::create(
      b, loc, acc.getType(), acc, descA, descB,
      NVVM::MMAShapeAttr::get(ctx, 64, n, k),
      NVVM::WGMMATypesAttr::get(ctx, wgType(aType)),
      NVVM::WGMMATypesAttr::get(ctx, wgType(bType)),
      NVVM::WGMMATypesAttr::get(ctx, NVVM::WGMMATypes::f32),
      NVVM::WGMMAScaleOutAttr::get(ctx, NVVM::WGMMAScaleOut::one),
      NVVM::WGMMAScaleInAttr::get(ctx, NVVM::WGMMAScaleIn::one),
      NVVM::WGMMAScaleInAttr::get(ctx, NVVM::WGMMAScaleIn::one),
      // A "row" is K-major, "col" (MN-major) the instruction's transpose;
      // B "row" (MN-major) is the instruction's transpose; "col" K-major.
      NVVM::MMALayoutAttr::get(ctx, transposeA ? NVVM::MMALayout::col
                                               : NVVM::MMALayout::row),
      NVVM::MMALayoutAttr::get(ctx, transposeB ? NVVM::MMALayout::row
                                               : NVVM::MMALayout::col),
      NVVM::MMAIntOverflowAttr());
}

SmallVector<Value> mlir::ism::wgmmaAccumulators(OpBuilder &b, Location loc,
                                                Value acc, int64_t reps,
                                                int64_t regsPerInstr) {
  auto structType = LLVM::LLVMStructType::getLiteral(
      b.getContext(), SmallVector<Type>(regsPerInstr, b.getF32Type()));
  SmallVector<Value> structs;
  for (int64_t r = 0; r < reps; ++r) {
    Value s = LLVM::UndefOp::create(b, loc, structType);
    for (int64_t i = 0; i < regsPerInstr; ++i)
      s = LLVM::InsertValueOp::create(
          b, loc, s, extractReg(b, loc, acc, r * regsPerInstr + i), i);
    structs.push_back(s);
  }
  return structs;
}

SmallVector<Value> mlir::ism::wgmmaRegisters(OpBuilder &b, Location loc,
                                             ArrayRef<Value> structs) {
  SmallVector<Value> regs;
  for (Value s : structs) {
    auto type = cast<LLVM::LLVMStructType>(s.getType());
    for (size_t i = 0; i < type.getBody().size(); ++i)
      regs.push_back(LLVM::ExtractValueOp::create(b, loc, s, i));
  }
  return regs;
}

SmallVector<Value> mlir::ism::waitForWgmma(OpBuilder &b, Location loc,
                                           ArrayRef<Value> regs,
                                           int64_t pending) {
  int64_t numRegs = regs.size();
  std::string constraints;
  for (int64_t i = 0; i < numRegs; ++i)
    constraints += (i ? ",=f" : "=f");
  for (int64_t i = 0; i < numRegs; ++i)
    constraints += "," + std::to_string(i);
  Type f32 = b.getF32Type();
  auto waitType = LLVM::LLVMStructType::getLiteral(
      b.getContext(), SmallVector<Type>(numRegs, f32));
  auto wait = LLVM::InlineAsmOp::create(
      b, loc, waitType, regs,
      "wgmma.wait_group.sync.aligned " + std::to_string(pending) + ";",
      constraints, /*has_side_effects=*/true, /*is_align_stack=*/false,
      LLVM::tailcallkind::TailCallKind::None, LLVM::AsmDialectAttr(),
      ArrayAttr());
  SmallVector<Value> waited;
  for (int64_t i = 0; i < numRegs; ++i)
    waited.push_back(
        LLVM::ExtractValueOp::create(b, loc, wait.getResult(0), i));
  return waited;
}

void mlir::ism::populateWgmmaPatterns(TileTypeConverter &converter,
                                      LoweringContext &context,
                                      RewritePatternSet &patterns) {
  patterns.add<WgmmaLoopLowering>(converter, patterns.getContext(), context);
}
