//===- PipelineLoads.cpp - ism-pipeline-loads -----------------------------===//
//
// Software-pipelines the SIMT loops that stream memory in chunks (an online
// log-sum-exp over a row, a norm over rows wider than one tile, a GEMV).
// As written, each iteration waits for its loads before it computes, so a
// program has one chunk in flight. With S stages (the kernel's
// load_stages, or a default chosen from the ring's shared memory), each
// qualifying ism.load becomes
//
//   stage 0      an ism.async_copy of iteration j + S - 1's tile into slot
//                (j + S - 1) % S of a ring of S slots in shared memory
//                (cp.async, 16 bytes a thread at a time: no registers held
//                while in flight), with the ops computing its address;
//   stage S - 1  an ism.async_load where the load was: wait until the
//                copy of iteration j has landed (cp.async.wait_group,
//                leaving the S - 1 later iterations' copies in flight),
//                then read the thread's own chunks back.
//
// A tile the copy cannot take whole (the partial last chunk of a row, rows
// not 16-byte aligned) is left to the ism.async_load, which reads it from
// global memory as ism.load does. Each thread reads back only what it
// copied itself, so the ring needs no barrier. Registers are the wrong
// place for chunks in flight: the loop carries them, and the copy the loop
// back edge makes of a register waits for its load, one iteration after
// it was issued, whatever S is (measured on the H200: no gain).
//
// MLIR's scf::pipelineForLoop builds the prologue and the kernel loop; the
// epilogue is not peeled: in the last S - 1 iterations the copies of the
// iterations past the end still run (their tiles lie past the loop's end,
// usually outside the memref, so nothing is copied, but every copy commits
// its group, which keeps each wait's count of younger groups right), and
// loops of any trip count, zero included, stay one loop.
//
//===----------------------------------------------------------------------===//

#include "ism/Dialect/Ism/Transforms/Passes.h"

#include "ism/Dialect/Ism/IR/IsmOps.h"
#include "ism/Dialect/Ism/Transforms/DotLoop.h"
#include "ism/Dialect/Ism/Transforms/LoopSlice.h"
#include "ism/Dialect/Ism/Transforms/WorkLoop.h"

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

/// The most shared memory a loop's rings may take.
constexpr int64_t kRingBytes = 96 * 1024;
/// The most stages a kernel may ask for (load_stages; the verifier's
/// bound).
constexpr unsigned kMaxStages = 8;

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
      // A kernel with products leaves its shared memory to their pipelines
      // (a split-K GEMM's reduction loop beside its K loop would take rings
      // the GEMM's stages need) unless load_stages asks for rings.
      bool products = false;
      kernel.walk([&](DotOp) { products = true; });
      if (!stages && products)
        return;
      if (!stages)
        stages = std::min<unsigned>(defaultStages, kMaxStages);
      if (*stages < 2)
        return;
      int64_t threads = 32 * int64_t(kernel.getNumWarps());
      SmallVector<scf::ForOp> loops;
      kernel.walk([&](scf::ForOp loop) { loops.push_back(loop); });
      uint32_t ring = getFirstFreeRing(kernel);
      for (scf::ForOp loop : loops)
        pipeline(loop, stages, threads, ring);
    });
  }

  /// The loads of `loop` to issue ahead: directly in its body, without a
  /// mask, addressed from the induction variable and values from outside
  /// only. Empty when the loop does not qualify (see the pass
  /// description).
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
      if (load.getMask() ||
          failed(collectLoopSlice(loop, load->getOperands(), slice)))
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
  /// kernel having `threads` threads) when it qualifies; its rings take
  /// numbers from `ring` on.
  void pipeline(scf::ForOp loop, std::optional<unsigned> stages,
                int64_t threads, uint32_t &ring) {
    SmallVector<LoadOp> loads = aheadLoads(loop);
    if (loads.empty())
      return;
    SmallVector<int64_t> slotBytes;
    int64_t bytes = 0;
    for (LoadOp load : loads) {
      slotBytes.push_back(getRingSlotBytes(load.getType(), threads));
      bytes += slotBytes.back();
    }
    unsigned s = stages.value_or(defaultStages);
    if (s < 2)
      return;
    // A ring must fit beside the kernel's other shared memory.
    if (int64_t(s) * bytes > kRingBytes) {
      loop.emitWarning("ism-pipeline-loads: ")
          << s << " stages of this loop's loads need " << s * bytes
          << " bytes of shared memory, more than " << kRingBytes
          << "; not pipelined";
      return;
    }
    Block *body = loop.getBody();
    unsigned last = s - 1;
    // A value the loop carries must be made in its last stage; a load's
    // address ops may move to stage 0 only if nothing the loop carries
    // comes from them.
    llvm::SetVector<Operation *> early;
    for (LoadOp load : loads)
      (void)collectLoopSlice(loop, load->getOperands(), early);
    for (Value v : body->getTerminator()->getOperands())
      if (early.contains(v.getDefiningOp()) ||
          llvm::is_contained(loads, v.getDefiningOp()))
        return;

    OpBuilder b(loop.getContext());
    int64_t numLoads = loads.size();
    SmallVector<Operation *> copyOps, waitOps;
    for (auto [k, load] : llvm::enumerate(loads)) {
      Location loc = load.getLoc();
      b.setInsertionPoint(load);
      SmallVector<Operation *> copySlot, readSlot;
      Value slot = getRingSlot(b, loc, loop, s, copySlot);
      auto copy = AsyncCopyOp::create(
          b, loc, load.getBase(), load.getOffsets(), slot,
          TypeAttr::get(load.getType()), b.getI64IntegerAttr(0),
          b.getI64IntegerAttr(slotBytes[k]), b.getI32IntegerAttr(ring),
          b.getI32IntegerAttr(s));
      Value readSlotValue = getRingSlot(b, loc, loop, s, readSlot);
      // Younger groups at the wait: the later copies of its iteration and
      // all copies of the s - 1 iterations issued after it.
      auto pending = int32_t((s - 1) * numLoads + (numLoads - 1 - int64_t(k)));
      auto read = AsyncLoadOp::create(
          b, loc, load.getType(), load.getBase(), load.getOffsets(),
          readSlotValue, b.getI64IntegerAttr(0),
          b.getI64IntegerAttr(slotBytes[k]), b.getI32IntegerAttr(pending),
          load.getPaddingAttr(), b.getI32IntegerAttr(ring),
          b.getI32IntegerAttr(s));
      load.getResult().replaceAllUsesWith(read.getResult());
      load.erase();
      ++ring;
      llvm::append_range(copyOps, copySlot);
      copyOps.push_back(copy);
      llvm::append_range(waitOps, readSlot);
      waitOps.push_back(read);
    }
    // Stage 0: the copies, their slots and the address ops they need.
    llvm::SetVector<Operation *> stage0(copyOps.begin(), copyOps.end());
    for (Operation *op : copyOps)
      (void)collectLoopSlice(loop, op->getOperands(), stage0);
    std::vector<std::pair<Operation *, unsigned>> schedule;
    for (Operation &op : body->without_terminator())
      if (stage0.contains(&op))
        schedule.push_back({&op, 0});
    for (Operation &op : body->without_terminator())
      if (!stage0.contains(&op))
        schedule.push_back({&op, last});

    scf::PipeliningOption options;
    options.getScheduleFn =
        [&](scf::ForOp, std::vector<std::pair<Operation *, unsigned>> &out) {
          out = schedule;
        };
    options.peelEpilogue = false;
    options.supportDynamicLoops = true;
    // Copies past the end run (see the file comment); the rest of stage 0
    // computes addresses.
    options.predicateFn = [](RewriterBase &, Operation *op,
                             Value) -> Operation * { return op; };
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
