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

/// Gives `loop`'s product operands a ring; `sharedRing`: other loops of the
/// kernel may take rings too, at the same place in shared memory.
LogicalResult prepareLoop(scf::ForOp loop, LoweringContext &context,
                          bool sharedRing) {
  if (context.ringStages == 1 || writesMemory(loop))
    return success();
  SmallVector<Candidate> candidates;
  for (auto dot : loop.getBody()->getOps<DotOp>())
    if (std::optional<Candidate> c = matchOperand(dot, loop))
      candidates.push_back(*c);
  if (candidates.empty())
    return success();

  // The offsets of later iterations: the loop body's scalar code that
  // computes them, from the induction variable and values from outside.
  BackwardSliceOptions options;
  options.omitBlockArguments = true;
  options.inclusive = true;
  options.filter = [&](Operation *op) {
    return op->getBlock() == loop.getBody();
  };
  llvm::SetVector<Operation *> slice;
  SmallVector<Candidate> usable;
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
    usable.push_back(c);
  }
  if (usable.empty())
    return success();
  int64_t stageBytes = 0;
  for (Candidate &c : usable) {
    c.offset = stageBytes;
    stageBytes += (c.rows * c.cols * 2 + 1023) / 1024 * 1024;
  }
  int64_t stages = context.ringStages;
  if (stages) {
    if (stages * stageBytes > kRingLimitBytes)
      return loop.emitOpError("num_stages = ")
             << stages << ": the ring of the products' operands in this loop "
             << "needs " << stages * stageBytes / 1024 << " KiB of shared "
             << "memory (" << stageBytes / 1024 << " KiB a stage), more than "
             << kRingLimitBytes / 1024 << " KiB; use fewer stages or smaller "
             << "tiles (num_stages = 1 loads them in the loop)";
  } else {
    stages = kRingStages;
    while (stages > 2 && stages * stageBytes > kRingBudgetBytes)
      --stages;
    if (stages * stageBytes > kRingBudgetBytes)
      return success();
  }
  SmallVector<Operation *> inner;
  for (Operation &op : *loop.getBody())
    if (slice.contains(&op))
      inner.push_back(&op);
  bool wgmma = llvm::any_of(usable, [](Candidate c) {
    return cast<MmaEncodingAttr>(c.dot.getType().getEncoding()).getVersion() ==
           3;
  });

  Location loc = loop.getLoc();
  MLIRContext *ctx = loop.getContext();
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
      IRMapping map;
      map.map(loop.getInductionVar(), k);
      for (Operation *op : inner)
        tb.clone(*op, map);
      Ints i(i32s(tb, tl));
      Value stageBase =
          i.mul(arith::IndexCastOp::create(tb, tl, tb.getI32Type(), stage),
                stageBytes);
      for (Candidate c : usable) {
        SmallVector<Value> offsets;
        for (Value v : c.load.getOffsets())
          offsets.push_back(map.lookupOrDefault(v));
        unsigned rank = offsets.size();
        GlobalMatrix g(tb, tl, c.load.getBase(),
                       ArrayRef<Value>(offsets).drop_back(2));
        OperandTile tile{c.rows, c.cols, 2, 0};
        Value o0 = offsets[rank - 2], o1 = offsets[rank - 1];
        Value tileBase = i.add(stageBase, c.offset);
        copyTile(tb, tl, tile, g, o0, o1, ring, tileBase, tid, threads);
      }
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
  if (wgmma)
    NVVM::FenceProxyOp::create(
        lb2, loc, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(ctx, NVVM::SharedSpace::shared_cta));
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
  Value readBase = arith::AddIOp::create(
      lb2, loc, ringBase,
      arith::MulIOp::create(
          lb2, loc,
          arith::IndexCastOp::create(lb2, loc, lb2.getI64Type(), readStage),
          i64Const(lb2, loc, stageBytes)));

  // The products read the stage; their B operand is no longer loaded.
  for (Candidate c : usable) {
    LoweringContext::RingOperand operand;
    operand.address =
        arith::AddIOp::create(lb2, loc, readBase, i64Const(lb2, loc, c.offset));
    operand.rows = c.rows;
    operand.cols = c.cols;
    operand.transposed = c.transposed;
    context.ringOperands[c.dot.getOperation()] = operand;
  }
  // (After the builder at the body's start is done: it inserts before what
  // may be one of these loads.)
  for (Candidate c : usable) {
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

  OpBuilder after(loop->getBlock(), std::next(loop->getIterator()));
  NVVM::CpAsyncWaitGroupOp::create(after, loc, 0);
  // Where the loop can run again (inside another loop), or another loop's
  // ring shares its bytes, the next prologue must not overwrite stages
  // that slower warps still read.
  if (!isa<gpu::GPUFuncOp>(loop->getParentOp()) || sharedRing)
    context.barrier(after, loc);
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
  for (scf::ForOp loop : loops)
    if (failed(prepareLoop(loop, context, loops.size() > 1)))
      return failure();
  return success();
}
