//===- PipelineLoads.cpp - ism-pipeline-loads -----------------------------===//
//
// Software-pipelines the SIMT loops that stream memory in chunks (an online
// log-sum-exp over a row, a norm over rows wider than one tile, a GEMV).
// As written, each iteration waits for its loads before it computes, so a
// program has one chunk in flight. With S stages (the kernel's
// load_stages, or a default chosen from the bytes a thread loads), the
// loop becomes:
//
//   stage 0      the ism.loads whose addresses and masks depend only on the
//                induction variable and values from outside the loop, and
//                the ops computing those addresses, for iteration j + S - 1;
//   stage S - 1  everything else, for iteration j.
//
// The loaded tiles wait in registers, carried by the loop, so S - 1 chunks
// a program are in flight while an iteration computes; nothing waits for
// them before their first use. MLIR's scf::pipelineForLoop builds the
// prologue and the kernel loop; the epilogue is not peeled: in the
// iterations past the end the early loads are masked off (a splat of the
// predicate and-ed into their mask), so they move no memory, and loops of
// any trip count, zero included, stay one loop.
//
//===----------------------------------------------------------------------===//

#include "ism/Dialect/Ism/Transforms/Passes.h"

#include "ism/Dialect/Ism/IR/IsmOps.h"
#include "ism/Dialect/Ism/Transforms/DotLoop.h"
#include "ism/Dialect/Ism/Transforms/LoopSlice.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::ism {
#define GEN_PASS_DEF_ISMPIPELINELOADS
#include "ism/Dialect/Ism/Transforms/Passes.h.inc"
} // namespace mlir::ism

using namespace mlir;
using namespace mlir::ism;

namespace {

/// Registers a thread may spend on chunks in flight by default (32
/// registers): 3 stages when two chunks fit, 2 when one does.
constexpr int64_t kAheadBytes = 128;
/// The most stages a kernel may ask for (load_stages; the verifier's
/// bound).
constexpr unsigned kMaxStages = 8;

int64_t tileBytes(RankedTensorType type) {
  return type.getNumElements() * type.getElementTypeBitWidth() / 8;
}

/// Whether `v` is `loop`'s induction variable, or it plus a value defined
/// outside the loop.
bool isInductionOffset(scf::ForOp loop, Value v) {
  if (v == loop.getInductionVar())
    return true;
  auto add = v.getDefiningOp<arith::AddIOp>();
  if (!add)
    return false;
  auto invariant = [&](Value x) { return loop.isDefinedOutsideOfLoop(x); };
  return (add.getLhs() == loop.getInductionVar() && invariant(add.getRhs())) ||
         (add.getRhs() == loop.getInductionVar() && invariant(add.getLhs()));
}

/// Whether `store`, in an iteration before `load`'s, never writes what
/// `load` reads: another memref (different arguments are taken not to
/// overlap in part), or the same offsets, each defined outside the loop or
/// the induction variable plus such a value, and along at least one of the
/// latter a tile no longer than the loop's step, so iterations touch
/// disjoint chunks.
bool storeIsDisjoint(scf::ForOp loop, StoreOp store, LoadOp load) {
  if (store.getBase() != load.getBase())
    return true;
  if (store.getOffsets() != load.getOffsets())
    return false;
  std::optional<int64_t> step = getConstantIntValue(loop.getStep());
  ArrayRef<int64_t> shape = load.getType().getShape();
  bool disjoint = false;
  for (auto [d, offset] : llvm::enumerate(load.getOffsets())) {
    if (loop.isDefinedOutsideOfLoop(offset))
      continue;
    if (!isInductionOffset(loop, offset))
      return false;
    if (step && *step >= shape[d] &&
        shape[d] == store.getValue().getType().getShape()[d])
      disjoint = true;
  }
  return disjoint;
}

struct IsmPipelineLoadsPass
    : mlir::ism::impl::IsmPipelineLoadsBase<IsmPipelineLoadsPass> {
  using Base::Base;

  void runOnOperation() override {
    getOperation().walk([&](KernelOp kernel) {
      std::optional<unsigned> stages;
      if (auto attr = kernel->getAttrOfType<IntegerAttr>("load_stages"))
        stages = unsigned(attr.getInt());
      else if (defaultStages > 0)
        stages = std::min<unsigned>(defaultStages, kMaxStages);
      if (stages && *stages < 2)
        return;
      int64_t threads = 32 * int64_t(kernel.getNumWarps());
      SmallVector<scf::ForOp> loops;
      kernel.walk([&](scf::ForOp loop) { loops.push_back(loop); });
      for (scf::ForOp loop : loops)
        pipeline(loop, stages, threads);
    });
  }

  /// The loads of `loop` to issue ahead: directly in its body, addressed
  /// from the induction variable and values from outside only. Empty when
  /// the loop does not qualify (see the pass description).
  SmallVector<LoadOp> aheadLoads(scf::ForOp loop) {
    Block *body = loop.getBody();
    if (loop->hasAttr(kPipelineAttrName))
      return {};
    bool ok = true;
    SmallVector<StoreOp> stores;
    body->walk([&](Operation *op) {
      if (isa<scf::ForOp, DotOp, GatherOp, AsyncGatherOp, AsyncCopyOp,
              AsyncLoadOp>(op) &&
          op != loop)
        ok = false;
      if (auto store = dyn_cast<StoreOp>(op)) {
        if (store->getBlock() == body)
          stores.push_back(store);
        else
          ok = false;
      } else if (mayWriteMemory(op)) {
        ok = false;
      }
    });
    if (!ok)
      return {};
    // scf::pipelineForLoop carries only values the body makes.
    for (Value v : body->getTerminator()->getOperands())
      if (!v.getDefiningOp() || v.getDefiningOp()->getBlock() != body)
        return {};
    SmallVector<LoadOp> loads;
    for (auto load : body->getOps<LoadOp>()) {
      llvm::SetVector<Operation *> slice;
      if (failed(collectLoopSlice(loop, load->getOperands(), slice)))
        continue;
      // Issued ahead, a load reads before the stores of the iterations in
      // between have written.
      if (llvm::all_of(stores, [&](StoreOp store) {
            return storeIsDisjoint(loop, store, load);
          }))
        loads.push_back(load);
    }
    return loads;
  }

  /// Pipelines `loop` with `stages` (or the default for its loads, the
  /// kernel having `threads` threads) when it qualifies.
  void pipeline(scf::ForOp loop, std::optional<unsigned> stages,
                int64_t threads) {
    SmallVector<LoadOp> loads = aheadLoads(loop);
    if (loads.empty())
      return;
    unsigned s = stages.value_or(0);
    if (!stages) {
      int64_t bytes = 0;
      for (LoadOp load : loads)
        bytes += tileBytes(load.getType());
      int64_t perThread = llvm::divideCeil(bytes, threads);
      s = 2 * perThread <= kAheadBytes ? 3 : perThread <= kAheadBytes ? 2 : 1;
      if (s < 2)
        return;
    }
    Block *body = loop.getBody();
    unsigned last = s - 1;
    llvm::SetVector<Operation *> early;
    for (LoadOp load : loads) {
      (void)collectLoopSlice(loop, load->getOperands(), early);
      early.insert(load);
    }
    // A value the loop carries must be made in its last stage (so that the
    // kernel loop yields each iteration's own).
    for (Value v : body->getTerminator()->getOperands())
      if (early.contains(v.getDefiningOp()))
        return;

    std::vector<std::pair<Operation *, unsigned>> schedule;
    for (Operation &op : body->without_terminator())
      if (early.contains(&op))
        schedule.push_back({&op, 0});
    for (Operation &op : body->without_terminator())
      if (!early.contains(&op))
        schedule.push_back({&op, last});

    scf::PipeliningOption options;
    options.getScheduleFn =
        [&](scf::ForOp, std::vector<std::pair<Operation *, unsigned>> &out) {
          out = schedule;
        };
    options.peelEpilogue = false;
    options.supportDynamicLoops = true;
    options.predicateFn = [](RewriterBase &rewriter, Operation *op,
                             Value pred) -> Operation * {
      auto load = dyn_cast<LoadOp>(op);
      if (!load)
        return op; // pure: computes an address
      rewriter.setInsertionPoint(op);
      Location loc = op->getLoc();
      RankedTensorType type = load.getType();
      auto maskType = RankedTensorType::get(
          type.getShape(), rewriter.getI1Type(), type.getEncoding());
      Value mask = SplatOp::create(rewriter, loc, maskType, pred);
      if (Value old = load.getMask())
        mask = arith::AndIOp::create(rewriter, loc, old, mask);
      rewriter.modifyOpInPlace(op, [&] { load.getMaskMutable().assign(mask); });
      return op;
    };
    IRRewriter rewriter(loop.getContext());
    rewriter.setInsertionPoint(loop);
    bool modified = false;
    FailureOr<scf::ForOp> result =
        scf::pipelineForLoop(rewriter, loop, options, &modified);
    if (failed(result)) {
      // Nothing above makes a schedule scf::pipelineForLoop refuses.
      loop.emitError("ism-pipeline-loads: could not pipeline this loop");
      signalPassFailure();
      return;
    }
    (*result)->setAttr("ism.load_stages", rewriter.getI32IntegerAttr(s));
  }
};

} // namespace
