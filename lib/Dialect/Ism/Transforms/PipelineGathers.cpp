//===- PipelineGathers.cpp - ism-pipeline-gathers -------------------------===//
//
// Software-pipelines the SIMT loops whose gathers read at coordinates the
// loop loads (CSR SpMM: a chunk's column indices, then the rows of B they
// name). As written, each iteration waits for the index load, then for the
// gather, and holds one gather in flight. With S ring slots (the kernel's
// gather_stages: 1, the default, leaves the kernel alone), the loop is
// rescheduled into S + 1 stages:
//
//   stage 0      the loads the gathers' coordinates depend on (iteration
//                j + S), in registers: issued, not waited for;
//   stage 1      the rest of the coordinates, then each gather started
//                as an ism.async_gather into slot (j + S - 1) % S of its
//                ring (cp.async, no registers held while in flight);
//   stage S - 1  the loop's other small loads whose addresses depend only
//                on the induction variable (iteration j + 1);
//   stage S      the rest: ism.async_gather_wait of slot j % S where the
//                gather was, and everything that uses it.
//
// MLIR's scf::pipelineForLoop builds the prologue and the kernel loop; the
// epilogue is not peeled: the kernel loop runs every iteration, with the
// early stages' async gathers predicated off past the end (their groups
// still committed, so that each wait's count of younger groups holds), and
// the other early-stage ops (pure, or loads, which never leave their
// memref) left to run. The prologue is predicated the same way, so loops
// of any trip count, zero included, stay one loop.
//
//===----------------------------------------------------------------------===//

#include "ism/Dialect/Ism/Transforms/Passes.h"

#include "ism/Dialect/Ism/IR/IsmOps.h"
#include "ism/Dialect/Ism/Transforms/DotLoop.h"
#include "ism/Dialect/Ism/Transforms/LoopSlice.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::ism {
#define GEN_PASS_DEF_ISMPIPELINEGATHERS
#include "ism/Dialect/Ism/Transforms/Passes.h.inc"
} // namespace mlir::ism

using namespace mlir;
using namespace mlir::ism;

namespace {

/// The most shared memory the rings of one loop may take.
constexpr int64_t kMaxRingBytes = 48 * 1024;
/// The largest tile (bytes) the loop's other loads may be to be issued an
/// iteration ahead into registers.
constexpr int64_t kMaxAheadLoadBytes = 4096;
/// Off unless asked for: measured on the H200, the CSR SpMM (L2-bound
/// alone and beside a GEMM) is 12% slower with 2 slots (docs/coschedule.md).
constexpr unsigned kDefaultGatherStages = 1;

int64_t tileBytes(RankedTensorType type) {
  return type.getNumElements() * type.getElementTypeBitWidth() / 8;
}

bool isZeroPadding(GatherOp gather) {
  std::optional<TypedAttr> padding = gather.getPadding();
  if (!padding)
    return true;
  if (auto f = dyn_cast<FloatAttr>(*padding))
    return f.getValue().isPosZero();
  if (auto i = dyn_cast<IntegerAttr>(*padding))
    return i.getValue().isZero();
  return false;
}

struct IsmPipelineGathersPass
    : mlir::ism::impl::IsmPipelineGathersBase<IsmPipelineGathersPass> {
  using Base::Base;

  void runOnOperation() override {
    getOperation().walk([&](KernelOp kernel) {
      unsigned stages = kDefaultGatherStages;
      if (auto attr = kernel->getAttrOfType<IntegerAttr>("gather_stages"))
        stages = unsigned(attr.getInt());
      if (stages < 2)
        return;
      SmallVector<scf::ForOp> loops;
      kernel.walk([&](scf::ForOp loop) { loops.push_back(loop); });
      uint32_t ring = getFirstFreeRing(kernel);
      for (scf::ForOp loop : loops)
        pipeline(loop, stages, ring);
    });
  }

  /// Pipelines `loop` when it qualifies (see the pass description), its
  /// gathers taking rings `ring`, `ring` + 1, ...
  void pipeline(scf::ForOp loop, unsigned slots, uint32_t &ring) {
    if (loop->hasAttr(kPipelineAttrName))
      return;
    Block *body = loop.getBody();
    bool writes = false;
    loop.getBody()->walk([&](Operation *op) {
      if (mayWriteMemory(op))
        writes = true;
    });
    if (writes)
      return;
    // The loop's yielded values must be made in it (scf::pipelineForLoop
    // carries only those).
    for (Value v : body->getTerminator()->getOperands())
      if (!v.getDefiningOp() || v.getDefiningOp()->getBlock() != body)
        return;

    SmallVector<GatherOp> gathers;
    int64_t ringBytes = 0;
    // Ops that may move to an early stage (a superset: the gathers'
    // coordinates, the small loads and their addresses).
    llvm::SetVector<Operation *> early;
    for (auto gather : body->getOps<GatherOp>()) {
      llvm::SetVector<Operation *> slice;
      if (!isZeroPadding(gather) ||
          failed(collectLoopSlice(loop, gather->getOperands(), slice)))
        continue;
      gathers.push_back(gather);
      ringBytes += int64_t(slots) * tileBytes(gather.getType());
      early.insert(slice.begin(), slice.end());
    }
    if (gathers.empty() || ringBytes > kMaxRingBytes)
      return;
    for (auto load : body->getOps<LoadOp>()) {
      llvm::SetVector<Operation *> slice;
      if (succeeded(collectLoopSlice(loop, load->getOperands(), slice))) {
        early.insert(slice.begin(), slice.end());
        early.insert(load);
      }
    }
    // A value the loop carries must be made in its last stage (so that the
    // kernel loop yields each iteration's own); leave loops that carry one
    // of the early ops' values alone.
    for (Value v : body->getTerminator()->getOperands())
      if (early.contains(v.getDefiningOp()))
        return;

    // Stages: 0 the loads the coordinates depend on, 1 the coordinates and
    // the async gathers, slots - 1 the other small loads, slots the rest.
    unsigned last = slots;
    DenseMap<Operation *, unsigned> stage;
    for (Operation &op : body->without_terminator())
      stage[&op] = last;
    auto lower = [&](Operation *op, unsigned s) {
      stage[op] = std::min(stage[op], s);
    };
    auto anchor = [&](ValueRange roots, unsigned s) {
      llvm::SetVector<Operation *> slice;
      (void)collectLoopSlice(loop, roots, slice);
      for (Operation *op : slice)
        lower(op, s);
      return slice;
    };

    OpBuilder b(loop.getContext());
    int64_t numGathers = gathers.size();
    SmallVector<Operation *> issues;
    for (auto [g, gather] : llvm::enumerate(gathers)) {
      Location loc = gather.getLoc();
      b.setInsertionPoint(gather);
      SmallVector<Operation *> issueSlot, waitSlot;
      Value slot = getRingSlot(b, loc, loop, slots, issueSlot);
      auto issue =
          AsyncGatherOp::create(b, loc, gather.getBase(), gather.getIndices(),
                                gather.getMask(), slot, Value(), ring, slots);
      Value waitSlotValue = getRingSlot(b, loc, loop, slots, waitSlot);
      // Younger groups at the wait: the later gathers of its iteration and
      // all gathers of the slots - 1 iterations issued after it.
      auto pending =
          uint32_t((slots - 1) * numGathers + (numGathers - 1 - int64_t(g)));
      auto wait = AsyncGatherWaitOp::create(
          b, loc, gather.getType(), waitSlotValue, ring, slots, pending);
      gather.getResult().replaceAllUsesWith(wait.getResult());
      gather.erase();
      ++ring;
      for (Operation *op : issueSlot)
        stage[op] = 1;
      stage[issue] = 1;
      for (Operation *op : waitSlot)
        stage[op] = last;
      stage[wait] = last;
      issues.push_back(issue);
    }
    // The coordinates' slices: loads (and their addresses) in stage 0, the
    // rest in stage 1.
    for (Operation *op : issues) {
      auto issue = cast<AsyncGatherOp>(op);
      SmallVector<Value> roots(issue.getIndices());
      if (Value mask = issue.getMask())
        roots.push_back(mask);
      llvm::SetVector<Operation *> slice = anchor(roots, 1);
      for (Operation *op : slice) {
        if (auto load = dyn_cast<LoadOp>(op)) {
          anchor(load->getOperands(), 0);
          lower(load, 0);
        }
      }
    }
    // Other small loads whose addresses need no gathered data: one
    // iteration ahead.
    for (auto load : body->getOps<LoadOp>()) {
      if (stage[load] != last || tileBytes(load.getType()) > kMaxAheadLoadBytes)
        continue;
      llvm::SetVector<Operation *> slice;
      if (failed(collectLoopSlice(loop, load->getOperands(), slice)))
        continue;
      anchor(load->getOperands(), last - 1);
      lower(load, last - 1);
    }

    std::vector<std::pair<Operation *, unsigned>> schedule;
    for (unsigned s = 0; s <= last; ++s)
      for (Operation &op : body->without_terminator())
        if (stage[&op] == s)
          schedule.push_back({&op, s});

    scf::PipeliningOption options;
    options.getScheduleFn =
        [&](scf::ForOp, std::vector<std::pair<Operation *, unsigned>> &out) {
          out = schedule;
        };
    options.peelEpilogue = false;
    options.supportDynamicLoops = true;
    options.predicateFn = [](RewriterBase &rewriter, Operation *op,
                             Value pred) -> Operation * {
      auto issue = dyn_cast<AsyncGatherOp>(op);
      if (!issue)
        return op; // pure, or a load (never outside its memref)
      rewriter.setInsertionPoint(op);
      Value all = pred;
      if (Value old = issue.getPred())
        all = arith::AndIOp::create(rewriter, op->getLoc(), old, pred);
      rewriter.modifyOpInPlace(op, [&] { issue.getPredMutable().assign(all); });
      return op;
    };
    IRRewriter rewriter(loop.getContext());
    rewriter.setInsertionPoint(loop);
    bool modified = false;
    FailureOr<scf::ForOp> result =
        scf::pipelineForLoop(rewriter, loop, options, &modified);
    if (failed(result)) {
      // Nothing above makes a schedule scf::pipelineForLoop refuses.
      loop.emitError("ism-pipeline-gathers: could not pipeline this loop");
      signalPassFailure();
    }
  }
};

} // namespace
