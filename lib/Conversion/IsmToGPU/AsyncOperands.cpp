//===- AsyncOperands.cpp - product operands loaded ahead with cp.async ----===//
//
// In a loop whose products are on tensor cores without a K loop of their
// own (attention: S = Q K^T and O += P V in the loop over key blocks), the
// B operands are tiles the loop body loads (K and V) and only the product
// uses. Lowered as they are, every thread loads its part into registers,
// stores it to shared memory, and the product waits for the load's whole
// latency each iteration. Here such a tile is instead copied by cp.async
// straight into a ring of stages in shared memory, S - 1 iterations ahead
// (the mma.sync K loop's schedule, AmpereGemm.cpp):
//
//   before the loop:  for s in 0 .. S-2: copy the tiles of iteration s into
//                     stage s (if it runs); cp.async.commit_group.
//   iteration i:      cp.async.wait_group S-2 (this thread's copies for i
//                     are done); fence.proxy.async (wgmma reads through the
//                     async proxy); barrier (everyone's copies visible, and
//                     everyone is done reading stage (i-1) % S); copy the
//                     tiles of iteration i+S-1 into stage (i+S-1) % S (if it
//                     runs); commit; the products read stage i % S.
//   after the loop:   cp.async.wait_group 0 (and a barrier when the loop is
//                     nested in another, or the kernel has other loops
//                     whose rings share these bytes: the next prologue
//                     writes stages the slowest warps may still read).
//
// The copies are 16-byte chunks zero-filled past the memref's edges (as
// ism.load pads with zeros), or element by element when the memref cannot
// be read in chunks (a uniform test). The tile offsets of later iterations
// are computed by clones of the loop body's scalar code with the induction
// variable replaced. The product's B operand becomes a zero constant that
// its lowering ignores: it reads the stage (LoweringContext::ringOperands).
//
// The kernel's num_stages attribute sets S (1: no ring, the tiles are
// loaded in the loop as written); by default 3 where the stages fit 160 KiB,
// else 2.
//
// A producer warpgroup (ring_producer; by default on kernels of two
// warpgroups or more, whose CTA is alone on its SM anyway). When every ring
// loop is at the kernel's top level and read only by wgmma, the CTA gets
// 128 threads more that fill the rings (one ring: the largest loop's stage,
// the fewest loop's stages), and the kernel's warps no longer copy or meet
// at a CTA barrier:
//
//   entry:            the scalar code of the loops' bounds and of the
//                     values their offsets use moves to the top; thread 0
//                     makes each stage's `full` mbarrier (1 arrival with
//                     TMA, else 128) and `empty` one (1 a warp); bar.sync 0;
//                     then the split (scf.if, ism.ring_split).
//   producer:         setmaxnreg 40; the loops again, counting iterations
//                     c over all of them (stage c % S, use c / S): wait for
//                     `empty` of the stage's previous use, then thread 0 has
//                     TMA load each tile (a box per 64 columns, 128-byte
//                     swizzle, at (column, row, leading indices): zeros
//                     past the memref's edges, as ism.load pads) with the
//                     stage's bytes expected on `full`. Without descriptors
//                     (the runtime passes 0 when TMA cannot describe a
//                     memref) all 128 threads copy element by element,
//                     fence.proxy.async, and arrive.
//   the kernel's warps: setmaxnreg 232 (or what the producer leaves); at
//                     the top of iteration c, lane 0 of each warp arrives on
//                     `empty` of stage c - 1 (its products completed in
//                     their iteration), then every thread waits on `full` of
//                     stage c and fences; after a loop, the last stage is
//                     freed. Their barriers are the named barrier 1.
//
// The kernel gets one i64 parameter per ring tile, its TMA descriptor
// (ism.tma: argument, box rows, box columns; the memref must be row-major,
// of rank 5 at most, with a multiple of 64 columns in the tile).
//
// A tile qualifies when the loop body loads it without a mask or padding
// from a memref defined outside the loop, its offsets come from the
// induction variable and values defined outside the loop through scalar
// code the lowering may repeat, its element type is 16-bit, all but its
// last two dimensions are 1, and it reaches the product's B operand through
// ism.reshape and at most one ism.trans, each used once. The loop must not
// write memory (its loads run ahead of it).
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
#include "llvm/ADT/MapVector.h"

using namespace mlir;
using namespace mlir::ism;

namespace {

/// Stages of the ring when the kernel does not say (num_stages): two
/// iterations ahead when they fit the budget, else one, else no ring.
constexpr int64_t kRingStages = 3;
constexpr int64_t kRingBudgetBytes = 160 * 1024;
/// The most a ring the kernel asks for may take (of the 227 KiB a CTA may
/// have, the rest is left to the products' own tiles and scratch).
constexpr int64_t kRingLimitBytes = 192 * 1024;

/// A B operand the ring can hold.
struct Candidate {
  DotOp dot;
  LoadOp load;
  /// The reshapes and the transposition between the load and the product,
  /// from the product back.
  SmallVector<Operation *> chain;
  bool transposed = false;
  int64_t rows = 0, cols = 0;
  /// Bytes from the stage's start (a multiple of 1024).
  int64_t offset = 0;
};

std::optional<Candidate> matchOperand(DotOp dot, scf::ForOp loop) {
  auto mma = dyn_cast_or_null<MmaEncodingAttr>(dot.getType().getEncoding());
  if (!mma || dot->getBlock() != loop.getBody() ||
      dot.getB().getType().getRank() != 2)
    return std::nullopt;
  Candidate c;
  c.dot = dot;
  Value v = dot.getB();
  while (true) {
    Operation *def = v.getDefiningOp();
    if (!def || !def->hasOneUse() || def->getBlock() != loop.getBody())
      return std::nullopt;
    if (auto trans = dyn_cast<TransOp>(def)) {
      if (c.transposed || trans.getOrder().size() != 2 ||
          trans.getOrder()[0] != 1)
        return std::nullopt;
      c.transposed = true;
      c.chain.push_back(def);
      v = trans.getSrc();
      continue;
    }
    if (auto reshape = dyn_cast<ReshapeOp>(def)) {
      c.chain.push_back(def);
      v = reshape.getSrc();
      continue;
    }
    c.load = dyn_cast<LoadOp>(def);
    break;
  }
  if (!c.load || c.load.getMask() || c.load.getPaddingAttr())
    return std::nullopt;
  if (loop->isAncestor(c.load.getBase().getParentBlock()->getParentOp()))
    return std::nullopt;
  auto type = c.load.getType();
  if (type.getElementTypeBitWidth() != 16 || type.getRank() < 2)
    return std::nullopt;
  ArrayRef<int64_t> shape = type.getShape();
  for (int64_t d : shape.drop_back(2))
    if (d != 1)
      return std::nullopt;
  c.rows = shape[shape.size() - 2];
  c.cols = shape.back();
  // The loaded [rows, cols] is B or, transposed, B^T.
  auto bShape = dot.getB().getType().getShape();
  if (c.transposed ? (bShape[0] != c.cols || bShape[1] != c.rows)
                   : (bShape[0] != c.rows || bShape[1] != c.cols))
    return std::nullopt;
  // Whole 16-byte chunks per row; rows of at most 128 bytes per box.
  if (c.cols % 8 != 0 || c.rows % 8 != 0)
    return std::nullopt;
  return c;
}

/// Whether `loop`'s body writes memory (through ism ops or any other).
bool writesMemory(scf::ForOp loop) {
  WalkResult result = loop.getBody()->walk([&](Operation *op) {
    if (isa<StoreOp, ScatterOp, AtomicRMWOp>(op))
      return WalkResult::interrupt();
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (effects && effects.hasEffect<MemoryEffects::Write>())
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return result.wasInterrupted();
}

/// One loop's ring: the operands it holds and the scalar code of their
/// offsets.
struct LoopRing {
  scf::ForOp loop;
  SmallVector<Candidate> usable;
  /// The loop body's ops that compute the offsets, in order.
  SmallVector<Operation *> inner;
  int64_t stageBytes = 0, stages = 0;
  /// Whether every product reading the ring is a wgmma.
  bool wgmmaOnly = true;
};

/// The ring `loop`'s product operands can have (nullopt: none), or an error
/// (a num_stages the ring cannot have).
FailureOr<std::optional<LoopRing>> analyzeLoop(scf::ForOp loop,
                                               LoweringContext &context) {
  if (context.ringStages == 1 || writesMemory(loop))
    return std::optional<LoopRing>();
  SmallVector<Candidate> candidates;
  for (auto dot : loop.getBody()->getOps<DotOp>())
    if (std::optional<Candidate> c = matchOperand(dot, loop))
      candidates.push_back(*c);
  if (candidates.empty())
    return std::optional<LoopRing>();

  // The offsets of later iterations: the loop body's scalar code that
  // computes them, from the induction variable and values from outside.
  BackwardSliceOptions options;
  options.omitBlockArguments = true;
  options.inclusive = true;
  options.filter = [&](Operation *op) {
    return op->getBlock() == loop.getBody();
  };
  llvm::SetVector<Operation *> slice;
  LoopRing ring;
  ring.loop = loop;
  for (Candidate &c : candidates) {
    llvm::SetVector<Operation *> mine;
    bool ok = true;
    for (Value v : c.load.getOffsets()) {
      if (auto arg = dyn_cast<BlockArgument>(v)) {
        ok &= arg.getOwner() != loop.getBody() || arg.getArgNumber() == 0;
        continue;
      }
      if (v.getDefiningOp()->getBlock() != loop.getBody())
        continue;
      if (failed(getBackwardSlice(v.getDefiningOp(), &mine, options)))
        ok = false;
    }
    for (Operation *op : mine) {
      ok &= isReplicableScalar(op);
      for (Value operand : op->getOperands())
        if (auto arg = dyn_cast<BlockArgument>(operand))
          ok &= arg.getOwner() != loop.getBody() || arg.getArgNumber() == 0;
        else
          ok &= operand.getDefiningOp()->getBlock() == loop.getBody() ||
                !loop->isAncestor(operand.getDefiningOp());
    }
    if (!ok)
      continue;
    slice.insert(mine.begin(), mine.end());
    ring.usable.push_back(c);
  }
  if (ring.usable.empty())
    return std::optional<LoopRing>();
  for (Candidate &c : ring.usable) {
    c.offset = ring.stageBytes;
    ring.stageBytes += (c.rows * c.cols * 2 + 1023) / 1024 * 1024;
  }
  int64_t stages = context.ringStages;
  if (stages) {
    if (stages * ring.stageBytes > kRingLimitBytes)
      return loop.emitOpError("num_stages = ")
             << stages << ": the ring of the products' operands in this loop "
             << "needs " << stages * ring.stageBytes / 1024
             << " KiB of shared memory (" << ring.stageBytes / 1024
             << " KiB a stage), more than " << kRingLimitBytes / 1024
             << " KiB; use fewer stages or smaller tiles (num_stages = 1 "
             << "loads them in the loop)";
  } else {
    stages = kRingStages;
    while (stages > 2 && stages * ring.stageBytes > kRingBudgetBytes)
      --stages;
    if (stages * ring.stageBytes > kRingBudgetBytes)
      return std::optional<LoopRing>();
  }
  ring.stages = stages;
  for (Operation &op : *loop.getBody())
    if (slice.contains(&op))
      ring.inner.push_back(&op);
  ring.wgmmaOnly = llvm::all_of(ring.usable, [](Candidate c) {
    return cast<MmaEncodingAttr>(c.dot.getType().getEncoding()).getVersion() ==
           3;
  });
  return std::optional<LoopRing>(std::move(ring));
}

/// One tile of an iteration to copy into its stage.
struct TileCopy {
  OperandTile tile;
  GlobalMatrix g;
  Value o0, o1;
  /// Bytes (i32) from the ring's start.
  Value tileBase;
};

/// Clones the offset code of `r`'s body for the iteration with induction
/// value `k` and returns where each of its tiles goes in stage `stage`
/// (index). `outer` maps values from outside the loop to the ones to use.
SmallVector<TileCopy> iterationTiles(OpBuilder &b, Location loc, LoopRing &r,
                                     Value k, Value stage,
                                     const IRMapping &outer = IRMapping()) {
  IRMapping map = outer;
  map.map(r.loop.getInductionVar(), k);
  for (Operation *op : r.inner)
    b.clone(*op, map);
  Ints i(i32s(b, loc));
  Value stageBase = i.mul(
      arith::IndexCastOp::create(b, loc, b.getI32Type(), stage), r.stageBytes);
  SmallVector<TileCopy> tiles;
  for (Candidate &c : r.usable) {
    SmallVector<Value> offsets;
    for (Value v : c.load.getOffsets())
      offsets.push_back(map.lookupOrDefault(v));
    unsigned rank = offsets.size();
    tiles.push_back({OperandTile{c.rows, c.cols, 2, 0},
                     GlobalMatrix(b, loc, c.load.getBase(),
                                  ArrayRef<Value>(offsets).drop_back(2)),
                     offsets[rank - 2], offsets[rank - 1],
                     i.add(stageBase, c.offset)});
  }
  return tiles;
}

/// The products of `r`'s loop read their B operands from stage `stage`
/// (index) of the ring at `ringBase` (i64) instead of loading them; the
/// addresses are computed at `b`'s insertion point in the loop body.
void readFromRing(OpBuilder &b, LoopRing &r, Value ringBase, Value stage,
                  LoweringContext &context) {
  Location loc = r.loop.getLoc();
  Value readBase = arith::AddIOp::create(
      b, loc, ringBase,
      arith::MulIOp::create(
          b, loc, arith::IndexCastOp::create(b, loc, b.getI64Type(), stage),
          i64Const(b, loc, r.stageBytes)));
  for (Candidate &c : r.usable) {
    LoweringContext::RingOperand operand;
    operand.address =
        arith::AddIOp::create(b, loc, readBase, i64Const(b, loc, c.offset));
    operand.rows = c.rows;
    operand.cols = c.cols;
    operand.transposed = c.transposed;
    context.ringOperands[c.dot.getOperation()] = operand;
  }
  for (Candidate &c : r.usable) {
    OpBuilder db(c.dot);
    auto bType = c.dot.getB().getType();
    Value unused = arith::ConstantOp::create(
        db, loc, bType,
        DenseElementsAttr::get(bType, db.getZeroAttr(bType.getElementType())));
    c.dot.getBMutable().set(unused);
    for (Operation *op : c.chain)
      op->erase();
    c.load->erase();
  }
}

/// Gives `r`'s loop its ring, filled by every thread with cp.async (see the
/// file comment); `sharedRing`: other loops of the kernel have rings too,
/// at the same place in shared memory.
void fillByAllThreads(LoopRing &r, LoweringContext &context, bool sharedRing) {
  scf::ForOp loop = r.loop;
  int64_t stages = r.stages, stageBytes = r.stageBytes;
  Location loc = loop.getLoc();
  OpBuilder b(loop);
  Value scratch =
      context.getRingScratch(b, loc, b.getI8Type(), stages * stageBytes + 1023);
  Value ringBase = alignedSharedAddress(b, loc, scratch);
  Value ring = sharedPointer(b, loc, ringBase);
  Value tid = context.getThreadId(b, loc);
  int64_t threads = context.getNumThreads();
  Value lb = loop.getLowerBound(), ub = loop.getUpperBound(),
        step = loop.getStep();

  // Copies the tiles of the iteration with induction value `k` into stage
  // `stage` (index), when that iteration runs.
  auto issue = [&](OpBuilder &ob, Value k, Value stage) {
    Value runs =
        arith::CmpIOp::create(ob, loc, arith::CmpIPredicate::slt, k, ub);
    scf::IfOp::create(ob, loc, runs, [&](OpBuilder &tb, Location tl) {
      for (const TileCopy &t : iterationTiles(tb, tl, r, k, stage))
        copyTile(tb, tl, t.tile, t.g, t.o0, t.o1, ring, t.tileBase, tid,
                 threads);
      scf::YieldOp::create(tb, tl);
    });
    NVVM::CpAsyncCommitGroupOp::create(ob, loc);
  };

  // Prologue: iterations 0 .. S-2 into stages 0 .. S-2.
  for (int64_t s = 0; s + 1 < stages; ++s) {
    Value k = arith::AddIOp::create(
        b, loc, lb,
        arith::MulIOp::create(b, loc, step, indexConstant(b, loc, s)));
    issue(b, k, indexConstant(b, loc, s));
  }

  // Each iteration: wait for its stage, free the one read last, copy
  // S - 1 ahead.
  OpBuilder lb2(loop.getBody(), loop.getBody()->begin());
  Value iv = loop.getInductionVar();
  Value it = arith::DivUIOp::create(
      lb2, loc, arith::SubIOp::create(lb2, loc, iv, lb), step);
  Value stagesV = indexConstant(lb2, loc, stages);
  Value readStage = arith::RemUIOp::create(lb2, loc, it, stagesV);
  NVVM::CpAsyncWaitGroupOp::create(lb2, loc, stages - 2);
  if (llvm::any_of(r.usable, [](Candidate c) {
        return cast<MmaEncodingAttr>(c.dot.getType().getEncoding())
                   .getVersion() == 3;
      }))
    fenceAsyncProxy(lb2, loc);
  context.barrier(lb2, loc);
  Value ahead = arith::AddIOp::create(
      lb2, loc, iv,
      arith::MulIOp::create(lb2, loc, step,
                            indexConstant(lb2, loc, stages - 1)));
  Value writeStage = arith::RemUIOp::create(
      lb2, loc,
      arith::AddIOp::create(lb2, loc, it, indexConstant(lb2, loc, stages - 1)),
      stagesV);
  issue(lb2, ahead, writeStage);
  readFromRing(lb2, r, ringBase, readStage, context);

  OpBuilder after(loop->getBlock(), std::next(loop->getIterator()));
  NVVM::CpAsyncWaitGroupOp::create(after, loc, 0);
  // Where the loop can run again (inside another loop), or another loop's
  // ring shares its bytes, the next prologue must not overwrite stages
  // that slower warps still read.
  if (!runsOncePerKernel(loop->getBlock()) || sharedRing)
    context.barrier(after, loc);
}

/// The producer warpgroup of the rings: its threads, and the registers each
/// keeps (setmaxnreg; its element-by-element fallback spills at 24 with two
/// 128x128 tiles). The kernel's own threads get what is left, at most
/// kMaxConsumerRegisters (the GEMM's split).
constexpr int64_t kProducerThreads = 128;
constexpr unsigned kProducerRegisters = 40;
/// Marks the ring loops whose warpgroups take turns (takeTurns).
constexpr llvm::StringLiteral kTurnsAttrName = "ism.turns";
/// Named barrier of warpgroup g's turn: kTurnBarrier + g (1 is the kernel's
/// warps' own).
constexpr int32_t kTurnBarrier = 2;
constexpr unsigned kMaxConsumerRegisters = 232;
/// Columns of a TMA box: 128-byte rows of 16-bit elements.
constexpr int64_t kTmaBoxCols = 64;

/// Whether the rings of `root`'s loops can be filled by a producer
/// warpgroup of their own: `root` is a kernel that owns its CTA, every ring
/// loop is at its top level and read only by wgmma, and the loops' bounds
/// and the outside values their offsets use come from scalar code at the
/// top level (collected in `hoist`). (The rings then share their stages:
/// specialize gives them all the largest stage and the fewest stages.)
bool canSpecialize(Operation *root, MutableArrayRef<LoopRing> rings,
                   const LoweringContext &context,
                   llvm::SetVector<Operation *> &hoist) {
  auto func = dyn_cast<gpu::GPUFuncOp>(root);
  const PartitionInfo &partition = context.getPartition();
  if (!func || rings.empty() ||
      !context.ringProducer.value_or(context.getNumWarps() >= 8) ||
      context.pipeline || context.producerWarps || partition.warpBase ||
      partition.barrierId || partition.groups != 1 ||
      partition.sharedMemoryBase || !func.getBody().hasOneBlock() ||
      func->hasAttr("nvvm.minctasm") || func->hasAttr("nvvm.maxnreg") ||
      context.getNumThreads() + kProducerThreads > 1024)
    return false;
  Block *entry = &func.getBody().front();
  for (LoopRing &r : rings)
    if (!r.wgmmaOnly || r.loop->getBlock() != entry)
      return false;
  BackwardSliceOptions options;
  options.omitBlockArguments = true;
  options.inclusive = true;
  options.filter = [&](Operation *op) { return op->getBlock() == entry; };
  bool ok = true;
  auto add = [&](Value v) {
    Operation *def = v.getDefiningOp();
    if (def && def->getBlock() == entry)
      ok &= succeeded(getBackwardSlice(def, &hoist, options));
  };
  for (LoopRing &r : rings) {
    add(r.loop.getLowerBound());
    add(r.loop.getUpperBound());
    add(r.loop.getStep());
    for (Operation *op : r.inner)
      for (Value v : op->getOperands())
        add(v);
    for (Candidate &c : r.usable) {
      add(c.load.getBase());
      for (Value v : c.load.getOffsets())
        add(v);
    }
  }
  return ok && llvm::all_of(hoist, isReplicableScalar);
}

/// Splits the kernel: a producer warpgroup after its warps copies every
/// ring loop's tiles into the stages, S - 1 ahead at most, and the kernel's
/// warps run the program (see the file comment).
LogicalResult specialize(gpu::GPUFuncOp func, MutableArrayRef<LoopRing> rings,
                         const llvm::SetVector<Operation *> &hoist,
                         LoweringContext &context) {
  Block *entry = &func.getBody().front();
  Location loc = func.getLoc();
  MLIRContext *ctx = func.getContext();
  // TMA: a hidden parameter per ring tile, the address of its memref's
  // descriptor (box: one row of each leading dimension, the tile's rows,
  // 64 columns of 128 bytes, swizzled as the stage lays them out) or 0
  // when the runtime could not make one. Without all of them the
  // warpgroup copies element by element.
  bool tma = true;
  for (LoopRing &r : rings)
    for (Candidate &c : r.usable) {
      auto arg = dyn_cast<BlockArgument>(c.load.getBase());
      auto memref = cast<MemRefType>(c.load.getBase().getType());
      tma &= arg && arg.getOwner() == entry && memref.getRank() <= 5 &&
             memref.getLayout().isIdentity() && c.cols % kTmaBoxCols == 0 &&
             c.rows <= 256;
    }
  // Persistent grid: both roles walk the programs, the producer with its
  // own copy of the scalar code of each program's bounds and offsets.
  bool persistent = context.persistentGrid.value_or(false);
  if (persistent && !tma) {
    emitWarning(func.getLoc(),
                "persistent = true has no effect here: the ring's tiles "
                "cannot be described for TMA (row-major memrefs of rank 5 at "
                "most, a multiple of 64 columns), which a persistent grid "
                "needs");
    persistent = false;
  }
  // The scalar code both sides need goes first (once per program, on a
  // persistent grid, where the producer has its own copy).
  Operation *anchor = nullptr;
  for (Operation &op : *entry)
    if (persistent || !hoist.contains(&op)) {
      anchor = &op;
      break;
    }
  if (!persistent)
    for (Operation *op : llvm::to_vector(llvm::make_pointer_range(*entry)))
      if (hoist.contains(op))
        op->moveBefore(anchor);

  OpBuilder b(anchor);
  // One ring for all the loops, their stages counted on from loop to loop:
  // a stage as large as the largest loop's (a loop that loads fewer tiles,
  // e.g. only K or only V, leaves the rest of its stages unused), as many
  // as the loop with the fewest has (which its own stages' budget
  // allows, as the largest loop's stages fit theirs).
  int64_t stages = rings.front().stages, stageBytes = 0;
  for (LoopRing &r : rings) {
    stages = std::min(stages, r.stages);
    stageBytes = std::max(stageBytes, r.stageBytes);
  }
  for (LoopRing &r : rings) {
    r.stages = stages;
    r.stageBytes = stageBytes;
  }
  int64_t barriersAt = stages * stageBytes;
  Value scratch = context.getRingScratch(b, loc, b.getI8Type(),
                                         barriersAt + 16 * stages + 1023);
  Value ringBase = alignedSharedAddress(b, loc, scratch);
  Value ring = sharedPointer(b, loc, ringBase);
  // Stage s's `full` mbarrier (its tiles have landed) and `empty` one
  // (every warp is done reading it).
  auto barrier = [&](OpBuilder &ob, Value stage, bool full) {
    return stageBarrier(ob, loc, ringBase, barriersAt + (full ? 0 : 8 * stages),
                        stage);
  };
  auto stageOf = [&](OpBuilder &ob, Value count) {
    return ringStage(ob, loc, stages, count);
  };
  auto phaseOf = [&](OpBuilder &ob, Value count) {
    return ringPhase(ob, loc, stages, count);
  };
  int64_t consumerThreads = context.getNumThreads();
  unsigned numWarps = context.getNumWarps();

  llvm::MapVector<Operation *, Value> descriptors; // by product, in order
  Value useTMA;
  if (tma) {
    SmallVector<Attribute> operands;
    if (auto earlier = func->getAttrOfType<ArrayAttr>("ism.tma"))
      operands.append(earlier.begin(), earlier.end());
    for (LoopRing &r : rings)
      for (Candidate &c : r.usable) {
        operands.push_back(b.getDenseI64ArrayAttr(
            {int64_t(cast<BlockArgument>(c.load.getBase()).getArgNumber()),
             c.rows, kTmaBoxCols}));
        unsigned n = func.getNumArguments();
        if (failed(
                func.insertArgument(n, b.getI64Type(), DictionaryAttr(), loc)))
          return func.emitOpError("cannot add the kernel's hidden parameters");
        descriptors[c.dot] = func.getArgument(n);
      }
    func->setAttr("ism.tma", b.getArrayAttr(operands));
    Value null = i64Const(b, loc, 0);
    for (Value d : llvm::make_second_range(descriptors)) {
      Value ok =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, d, null);
      useTMA = useTMA ? arith::AndIOp::create(b, loc, useTMA, ok) : ok;
    }
  } else {
    useTMA = arith::ConstantIntOp::create(b, loc, 0, 1);
  }
  // The logical grid (three i32 parameters after the descriptors; ism-run
  // launches one CTA per SM, at most one per program), and this CTA's
  // programs: blockIdx.x, blockIdx.x + gridDim.x, ...
  SmallVector<Value> logical;
  Value programs, firstProgram, programStride;
  if (persistent) {
    for (int d = 0; d < 3; ++d) {
      unsigned n = func.getNumArguments();
      if (failed(func.insertArgument(n, b.getI32Type(), DictionaryAttr(), loc)))
        return func.emitOpError("cannot add the kernel's hidden parameters");
      logical.push_back(arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                                   func.getArgument(n)));
    }
    func->setAttr("ism.persistent", b.getUnitAttr());
    programs = arith::MulIOp::create(
        b, loc, arith::MulIOp::create(b, loc, logical[0], logical[1]),
        logical[2]);
    firstProgram = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
    programStride = gpu::GridDimOp::create(b, loc, gpu::Dimension::x);
  }
  // TMA: one thread's arrival (and the bytes); else the warpgroup's.
  Value fullCount = arith::SelectOp::create(b, loc, useTMA, i32Const(b, loc, 1),
                                            i32Const(b, loc, kProducerThreads));
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value isFirst = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid,
                                        indexConstant(b, loc, 0));
  scf::IfOp::create(b, loc, isFirst, [&](OpBuilder &tb, Location tl) {
    for (int64_t s = 0; s < stages; ++s) {
      Value stage = indexConstant(tb, tl, s);
      NVVM::MBarrierInitOp::create(tb, tl, barrier(tb, stage, true), fullCount,
                                   Value());
      NVVM::MBarrierInitOp::create(tb, tl, barrier(tb, stage, false),
                                   i32Const(tb, tl, numWarps), Value());
    }
    scf::YieldOp::create(tb, tl);
  });
  NVVM::Barrier0Op::create(b, loc);
  Value isLaneZero = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::eq,
      arith::RemUIOp::create(b, loc, tid, indexConstant(b, loc, 32)),
      indexConstant(b, loc, 0));
  Value isProducer =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, tid,
                            indexConstant(b, loc, consumerThreads));
  auto split = scf::IfOp::create(b, loc, isProducer, /*withElse=*/true);
  split->setAttr(kRingSplitAttrName, b.getUnitAttr());
  Block *consumer = split.elseBlock();
  for (Operation *op : llvm::to_vector(llvm::make_pointer_range(
           llvm::make_range(std::next(split->getIterator()),
                            entry->getTerminator()->getIterator()))))
    op->moveBefore(consumer->getTerminator());

  // The producer: every ring loop's iterations, counted on over the loops
  // (stage = count % S, its use count / S).
  OpBuilder pb(split.thenBlock()->getTerminator());
  NVVM::SetMaxRegisterOp::create(pb, loc, kProducerRegisters,
                                 NVVM::SetMaxRegisterAction::decrease);
  Value ptid = arith::SubIOp::create(pb, loc, tid,
                                     indexConstant(pb, loc, consumerThreads));
  // The scalar code of the bounds and offsets, in order (cloned for each
  // program on a persistent grid).
  SmallVector<Operation *> scalars(hoist.begin(), hoist.end());
  llvm::sort(scalars,
             [](Operation *x, Operation *y) { return x->isBeforeInBlock(y); });
  // One program's loops, counting on from `count`; `map` gives the values
  // of its bounds and offsets.
  auto programLoops = [&](OpBuilder &pb, Value count, const IRMapping &map,
                          bool withTMA) {
    for (LoopRing &r : rings) {
      auto loop = scf::ForOp::create(
          pb, loc, map.lookupOrDefault(r.loop.getLowerBound()),
          map.lookupOrDefault(r.loop.getUpperBound()),
          map.lookupOrDefault(r.loop.getStep()), ValueRange{count},
          [&](OpBuilder &lb, Location ll, Value k, ValueRange args) {
            Value c = args[0];
            Value stage = stageOf(lb, c);
            Value free = arith::XOrIOp::create(lb, ll, phaseOf(lb, c),
                                               i32Const(lb, ll, 1));
            waitParity(lb, ll, barrier(lb, stage, false), free);
            SmallVector<TileCopy> tiles =
                iterationTiles(lb, ll, r, k, stage, map);
            Value full = barrier(lb, stage, true);
            if (withTMA) {
              // The whole stage lands on `full`; each tile is a box per 64
              // columns, at its leading offsets.
              int64_t bytes = 0;
              for (TileCopy &t : tiles)
                bytes += t.tile.bytes();
              NVVM::MBarrierArriveExpectTxOp::create(
                  lb, ll, Type(), full, i32Const(lb, ll, bytes),
                  NVVM::MemScopeKind::CTA, false, Value());
              auto ptrType = LLVM::LLVMPointerType::get(ctx);
              for (auto [t, c] : llvm::zip_equal(tiles, r.usable)) {
                Value desc = LLVM::IntToPtrOp::create(
                    lb, ll, ptrType, descriptors.lookup(c.dot));
                Ints i(i32s(lb, ll));
                for (int64_t box = 0; box < t.tile.cols / kTmaBoxCols; ++box) {
                  // Coordinates innermost first: column, row, then the
                  // leading dimensions.
                  SmallVector<Value> coords = {
                      i.add(arith::IndexCastOp::create(lb, ll, lb.getI32Type(),
                                                       t.o1),
                            box * kTmaBoxCols),
                      arith::IndexCastOp::create(lb, ll, lb.getI32Type(),
                                                 t.o0)};
                  for (Value lead : llvm::reverse(t.g.leading))
                    coords.push_back(arith::IndexCastOp::create(
                        lb, ll, lb.getI32Type(), lead));
                  Value dst = arith::AddIOp::create(
                      lb, ll, ringBase,
                      arith::ExtUIOp::create(
                          lb, ll, lb.getI64Type(),
                          i.add(t.tileBase, box * t.tile.boxBytes())));
                  Value clusterDst = LLVM::AddrSpaceCastOp::create(
                      lb, ll, LLVM::LLVMPointerType::get(ctx, 7),
                      sharedPointer(lb, ll, dst));
                  NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
                      lb, ll, clusterDst, desc, coords, full, ValueRange{},
                      Value(), Value(), NVVM::TMALoadMode::TILE, false,
                      NVVM::CTAGroupKindAttr(), Value());
                }
              }
            } else {
              // Without TMA: element by element (a loop: cp.async's
              // unrolled 16-byte chunks of two 128x128 tiles would not fit
              // the producer's registers), then the proxy fence for wgmma,
              // and each thread's arrival.
              for (TileCopy &t : tiles)
                copyTileByElements(lb, ll, t.tile, t.g, t.o0, t.o1, ring,
                                   t.tileBase, ptid, kProducerThreads);
              fenceAsyncProxy(lb, ll);
              NVVM::MBarrierArriveOp::create(lb, ll, Type(), full, Value(),
                                             NVVM::MemScopeKind::CTA, false);
            }
            scf::YieldOp::create(lb, ll,
                                 ValueRange{arith::AddIOp::create(
                                     lb, ll, c, indexConstant(lb, ll, 1))});
          });
      count = loop.getResult(0);
    }
    return count;
  };
  auto fill = [&](OpBuilder &pb, bool withTMA) {
    if (!persistent) {
      programLoops(pb, indexConstant(pb, loc, 0), IRMapping(), withTMA);
      return;
    }
    scf::ForOp::create(
        pb, loc, firstProgram, programs, programStride,
        ValueRange{indexConstant(pb, loc, 0)},
        [&](OpBuilder &lb, Location ll, Value t, ValueRange args) {
          IRMapping map;
          cloneForProgram(lb, scalars, programCoords(lb, ll, t, logical),
                          logical, map);
          scf::YieldOp::create(lb, ll, programLoops(lb, args[0], map, withTMA));
        });
  };
  // TMA: the warpgroup's first thread issues every copy. Tiles no
  // descriptor can describe (known here) are copied element by element
  // only: there is no TMA path to build.
  if (tma) {
    auto mode = scf::IfOp::create(pb, loc, useTMA, /*withElse=*/true);
    {
      OpBuilder tb(mode.thenBlock()->getTerminator());
      Value first = arith::CmpIOp::create(tb, loc, arith::CmpIPredicate::eq,
                                          ptid, indexConstant(tb, loc, 0));
      auto one = scf::IfOp::create(tb, loc, first, /*withElse=*/false);
      OpBuilder ob(one.thenBlock()->getTerminator());
      fill(ob, true);
    }
    OpBuilder eb(mode.elseBlock()->getTerminator());
    fill(eb, false);
  } else {
    fill(pb, false);
  }

  // On a persistent grid the kernel's warps run the program once for each
  // of the CTA's programs, counting the rings' uses on over them.
  scf::ForOp consumerPrograms;
  if (persistent) {
    OpBuilder wb(consumer, consumer->begin());
    consumerPrograms = scf::ForOp::create(
        wb, loc, firstProgram, programs, programStride,
        ValueRange{indexConstant(wb, loc, 0)},
        [](OpBuilder &yb, Location yl, Value, ValueRange iter) {
          scf::YieldOp::create(yb, yl, iter);
        });
    Block *body = consumerPrograms.getBody();
    for (Operation *op : llvm::to_vector(llvm::make_pointer_range(
             llvm::make_range(std::next(consumerPrograms->getIterator()),
                              consumer->getTerminator()->getIterator()))))
      op->moveBefore(body->getTerminator());
    OpBuilder qb(body, body->begin());
    replaceGridQueries(
        body,
        programCoords(qb, loc, consumerPrograms.getInductionVar(), logical),
        logical);
  }

  // The kernel's warps: at the top of each iteration they free the stage
  // the previous one read (its products have completed: each waits in its
  // own iteration), wait for their own, and read it.
  OpBuilder cb(consumer, consumer->begin());
  // Lane 0 of each warp, where `when` holds, frees the stage of use
  // `next` - 1.
  auto freeStage = [&](OpBuilder &ob, Value when, Value next) {
    Value cond = arith::AndIOp::create(ob, loc, when, isLaneZero);
    scf::IfOp::create(ob, loc, cond, [&](OpBuilder &tb, Location tl) {
      Value last =
          arith::SubIOp::create(tb, tl, next, indexConstant(tb, tl, 1));
      NVVM::MBarrierArriveOp::create(tb, tl, Type(),
                                     barrier(tb, stageOf(tb, last), false),
                                     Value(), NVVM::MemScopeKind::CTA, false);
      scf::YieldOp::create(tb, tl);
    });
  };
  unsigned consumerRegisters = std::min<unsigned>(
      kMaxConsumerRegisters, (65536 - kProducerRegisters * kProducerThreads) /
                                 consumerThreads / 8 * 8);
  NVVM::SetMaxRegisterOp::create(cb, loc, consumerRegisters,
                                 NVVM::SetMaxRegisterAction::increase);
  // The iterations of all the ring loops, counted before the first (their
  // bounds are at the top): loop k's are bases[k] .. bases[k + 1] - 1.
  SmallVector<Value> trips, bases;
  {
    OpBuilder ob(rings.front().loop);
    Ints x(indices(ob, loc));
    bases.push_back(persistent ? consumerPrograms.getRegionIterArg(0) : x.c(0));
    for (LoopRing &r : rings) {
      scf::ForOp loop = r.loop;
      Value span = x.sub(loop.getUpperBound(), loop.getLowerBound());
      trips.push_back(x.select(
          x.cmp(arith::CmpIPredicate::sgt, span, x.c(0)),
          arith::CeilDivSIOp::create(ob, loc, span, loop.getStep()).getResult(),
          x.c(0)));
      bases.push_back(x.add(bases.back(), trips.back()));
    }
    if (persistent)
      consumerPrograms.getBody()->getTerminator()->setOperand(0, bases.back());
  }
  for (auto [k, r] : llvm::enumerate(rings)) {
    scf::ForOp loop = r.loop;
    OpBuilder ib(loop.getBody(), loop.getBody()->begin());
    Ints y(indices(ib, loc));
    Value it = arith::DivUIOp::create(
        ib, loc, y.sub(loop.getInductionVar(), loop.getLowerBound()),
        loop.getStep());
    Value c = y.add(bases[k], it);
    freeStage(ib, y.cmp(arith::CmpIPredicate::ne, it, y.c(0)), c);
    Value stage = stageOf(ib, c);
    waitParity(ib, loc, barrier(ib, stage, true), phaseOf(ib, c));
    // cp.async and st.shared wrote the stage through the generic proxy;
    // wgmma reads it through the async one.
    fenceAsyncProxy(ib, loc);
    readFromRing(ib, r, ringBase, stage, context);

    // After the loop: free the stage its last iteration read.
    OpBuilder after(loop->getBlock(), std::next(loop->getIterator()));
    Ints z(indices(after, loc));
    freeStage(after, z.cmp(arith::CmpIPredicate::sgt, trips[k], z.c(0)),
              bases[k + 1]);
  }

  // With ping_pong, two warpgroups or more take turns issuing an
  // iteration's products, where the lowering lets them (takeTurns, after
  // the conversion). Off by default: measured slower than the pipelined
  // loop without turns (docs/benchmarks.md).
  unsigned groups = consumerThreads % kProducerThreads
                        ? 0
                        : consumerThreads / kProducerThreads;
  if (groups < 2 && context.pingPong.value_or(false))
    emitWarning(func.getLoc(), "ping_pong = true has no effect with one "
                               "warpgroup (num_warps = ")
        << numWarps << "): it needs two or more to take turns";
  if (groups >= 2 && context.pingPong.value_or(false)) {
    context.turns = {groups, bases};
    for (LoopRing &r : rings)
      r.loop->setAttr(kTurnsAttrName, UnitAttr::get(ctx));
  }

  // The kernel's warps synchronise among themselves (named barrier 1), and
  // the CTA has the producer's 128 threads more; setmaxnreg needs the count
  // at entry fixed.
  context.producerWarps = kProducerThreads / 32;
  PartitionInfo consumers = context.getPartition();
  consumers.barrierId = 1;
  context.setPartition(consumers);
  unsigned threads = consumerThreads + kProducerThreads;
  OpBuilder fb(func);
  func->setAttr(kNumThreadsAttrName, fb.getI32IntegerAttr(threads));
  func.setKnownBlockSizeAttr(fb.getDenseI32ArrayAttr({int32_t(threads), 1, 1}));
  func->setAttr("nvvm.maxnreg",
                fb.getI32IntegerAttr(std::min<unsigned>(
                    consumerRegisters, 65536 / threads / 8 * 8)));
  return success();
}

} // namespace

LogicalResult mlir::ism::prepareAsyncOperands(Operation *root,
                                              LoweringContext &context) {
  SmallVector<scf::ForOp> loops;
  root->walk([&](scf::ForOp loop) {
    if (!loop->hasAttr(kPipelineAttrName))
      loops.push_back(loop);
  });
  SmallVector<LoopRing> rings;
  for (scf::ForOp loop : loops) {
    FailureOr<std::optional<LoopRing>> ring = analyzeLoop(loop, context);
    if (failed(ring))
      return failure();
    if (*ring)
      rings.push_back(std::move(**ring));
  }
  llvm::SetVector<Operation *> hoist;
  if (canSpecialize(root, rings, context, hoist)) {
    return specialize(cast<gpu::GPUFuncOp>(root), rings, hoist, context);
  }
  if (context.persistentGrid.value_or(false))
    emitWarning(root->getLoc(),
                "persistent = true has no effect here: a persistent grid is "
                "for kernels whose products' operands a producer warpgroup "
                "copies ahead (ring_producer, two warpgroups or more; a "
                "K-loop GEMM on wgmma is persistent already)");
  if (context.pingPong.value_or(false))
    emitWarning(root->getLoc(),
                "ping_pong = true has no effect here: the warpgroups take "
                "turns only where a producer warpgroup fills the ring of the "
                "products' operands (ring_producer, two warpgroups or more)");
  for (LoopRing &r : rings)
    fillByAllThreads(r, context, loops.size() > 1);
  return success();
}

/// The ops of `loop`'s lowered body from its first wgmma.fence to its last
/// commit, when every wgmma of the iteration is between them at the top
/// level and nothing between them waits: for a wgmma group, a barrier or
/// an mbarrier (a warpgroup holding its turn there could wait for the
/// other, which waits for the turn).
static std::optional<std::pair<Operation *, Operation *>>
turnSpan(scf::ForOp loop) {
  Block *body = loop.getBody();
  Operation *first = nullptr, *last = nullptr;
  bool nested = false;
  loop.getBody()->walk([&](Operation *op) {
    if (!isa<NVVM::WgmmaFenceAlignedOp, NVVM::WgmmaGroupSyncAlignedOp,
             NVVM::WgmmaMmaAsyncOp>(op))
      return;
    nested |= op->getBlock() != body;
    if (isa<NVVM::WgmmaFenceAlignedOp>(op) && !first)
      first = op;
    if (isa<NVVM::WgmmaGroupSyncAlignedOp>(op))
      last = op;
  });
  if (nested || !first || !last || !first->isBeforeInBlock(last))
    return std::nullopt;
  bool waits = false;
  for (Operation *it = first; it != last->getNextNode(); it = it->getNextNode())
    it->walk([&](Operation *op) {
      if (isa<NVVM::BarrierOp, NVVM::Barrier0Op, NVVM::BarrierArriveOp,
              NVVM::WgmmaWaitGroupSyncOp, gpu::BarrierOp>(op) ||
          op->getName().getStringRef().starts_with("nvvm.mbarrier"))
        waits = true;
      if (auto asmOp = dyn_cast<LLVM::InlineAsmOp>(op))
        waits |= asmOp.getAsmString().contains("wait") ||
                 asmOp.getAsmString().contains("bar");
    });
  if (waits)
    return std::nullopt;
  return std::make_pair(first, last);
}

// FA3's ping-pong: the kernel's warpgroups issue their iteration's wgmma
// in turn (warpgroup g waits on named barrier kTurnBarrier + g before its
// first wgmma.fence and, after its last commit, opens the turn of g + 1
// mod G), so that one warpgroup's softmax runs while the other's products
// have the tensor cores instead of all of them meeting at the tensor cores
// at once. Only where the lowered iteration issues its products together,
// waiting for none of them in between (attention with the next block's S
// before this block's P V): a turn held across a wait would serialise the
// warpgroups. Every warpgroup runs the same iterations (the loops' bounds
// are scalars, uniform in the CTA), so the turns pair up: before the first
// loop the last warpgroup opens warpgroup 0's first turn, and after the
// last iteration it opens none (a wait pairs with one arrival, and none is
// left over at the end).
LogicalResult mlir::ism::takeTurns(Operation *root, LoweringContext &context) {
  unsigned groups = context.turns.groups;
  ArrayRef<Value> bases = context.turns.bases;
  if (!groups)
    return success();
  SmallVector<scf::ForOp> loops;
  root->walk([&](scf::ForOp loop) {
    if (loop->hasAttr(kTurnsAttrName))
      loops.push_back(loop);
  });
  if (loops.size() + 1 != bases.size())
    return root->emitError("internal error: ")
           << loops.size() << " loops marked for warpgroup turns, "
           << bases.size() - 1 << " counted";
  SmallVector<std::pair<Operation *, Operation *>> spans;
  for (scf::ForOp loop : loops) {
    loop->removeAttr(kTurnsAttrName);
    if (std::optional<std::pair<Operation *, Operation *>> span =
            turnSpan(loop);
        span && loop->getBlock() == loops.front()->getBlock())
      spans.push_back(*span);
    else
      emitWarning(loop.getLoc(),
                  "ping_pong = true: the warpgroups take no turns in this "
                  "kernel, as this loop waits for one of its products (or a "
                  "barrier) before issuing the next; issue them together "
                  "(the next block's S before this block's P V) for turns");
  }
  if (loops.empty() || spans.size() != loops.size())
    return success();
  Location loc = loops.front().getLoc();
  int32_t pair = 2 * kProducerThreads;
  auto group = [&](OpBuilder &b) {
    Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
    return arith::DivUIOp::create(b, loc, tid,
                                  indexConstant(b, loc, kProducerThreads));
  };
  // Waits for warpgroup g's turn / opens the turn of g + 1.
  auto wait = [&](OpBuilder &b, Value g) {
    Value id = arith::AddIOp::create(
        b, loc, i32Const(b, loc, kTurnBarrier),
        arith::IndexCastOp::create(b, loc, b.getI32Type(), g));
    NVVM::BarrierOp::create(b, loc, TypeRange{}, id, i32Const(b, loc, pair), {},
                            Value{});
  };
  auto open = [&](OpBuilder &b, Value g) {
    Value next = arith::RemUIOp::create(
        b, loc, arith::AddIOp::create(b, loc, g, indexConstant(b, loc, 1)),
        indexConstant(b, loc, groups));
    Value id = arith::AddIOp::create(
        b, loc, i32Const(b, loc, kTurnBarrier),
        arith::IndexCastOp::create(b, loc, b.getI32Type(), next));
    NVVM::BarrierArriveOp::create(b, loc, id, i32Const(b, loc, pair));
  };
  // Iterations over all the loops (counted by specialize): the last
  // warpgroup's turn after the last one opens nothing (warpgroup 0 has no
  // turn left to take).
  Value total = bases.back();
  OpBuilder b(loops.front());
  Ints x(indices(b, loc));
  Value g = group(b);
  Value isLast = x.cmp(arith::CmpIPredicate::eq, g, x.c(groups - 1));
  // The last warpgroup opens warpgroup 0's first turn.
  scf::IfOp::create(b, loc, isLast, [&](OpBuilder &tb, Location tl) {
    open(tb, g);
    scf::YieldOp::create(tb, tl);
  });
  for (auto [loop, span, base] :
       llvm::zip_equal(loops, spans, bases.drop_back())) {
    auto [first, last] = span;
    OpBuilder ib(first);
    Value mine = group(ib);
    wait(ib, mine);
    ib.setInsertionPointAfter(last);
    Ints y(indices(ib, loc));
    Value c = y.add(base, arith::DivUIOp::create(ib, loc,
                                                 y.sub(loop.getInductionVar(),
                                                       loop.getLowerBound()),
                                                 loop.getStep()));
    Value more = y.cmp(arith::CmpIPredicate::ult, y.add(c, y.c(1)), total);
    Value notLast = y.cmp(arith::CmpIPredicate::ne, mine, y.c(groups - 1));
    scf::IfOp::create(ib, loc, arith::OrIOp::create(ib, loc, notLast, more),
                      [&](OpBuilder &tb, Location tl) {
                        open(tb, mine);
                        scf::YieldOp::create(tb, tl);
                      });
  }
  return success();
}
