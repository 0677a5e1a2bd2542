//===- Coschedule.cpp - ism-coschedule ------------------------------------===//
//
// Fuses the launches of each ism.coschedule into one kernel whose body is an
// ism.warp_specialize with one partition per launch, and decides the
// partitions' resources (warps, named barriers, shared memory, registers,
// work counters, CTAs per SM). See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "ism/Dialect/Ism/Transforms/Passes.h"

#include "ism/Dialect/Ism/IR/IsmOps.h"
#include "ism/Dialect/Ism/Transforms/DotLoop.h"
#include "ism/Dialect/Ism/Transforms/WorkLoop.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::ism {
#define GEN_PASS_DEF_ISMCOSCHEDULE
#include "ism/Dialect/Ism/Transforms/Passes.h.inc"
} // namespace mlir::ism

using namespace mlir;
using namespace mlir::ism;

namespace {

/// Hopper: registers and shared memory of an SM, and what one CTA can have.
constexpr int64_t kRegistersPerSM = 65536;
constexpr unsigned kMaxThreads = 1024;
constexpr unsigned kProducerRegisters = 40;
constexpr unsigned kMaxConsumerRegisters = kWgmmaConsumerRegisters;
/// The registers a thread has when a CTA of `threads` threads starts, with
/// `ctasPerSM` CTAs on an SM (the kernel's .maxnreg: a multiple of 8, at
/// most 248).
int64_t getRegistersAtLaunch(int64_t threads, int64_t ctasPerSM) {
  return std::min<int64_t>(248,
                           kRegistersPerSM / (threads * ctasPerSM) / 8 * 8);
}
/// The longest an ordered kernel's task waits by default.
constexpr int64_t kDefaultTimeoutMs = 1000;
/// Module attribute: the ism.coschedule ops (walk order) left unfused.
constexpr llvm::StringLiteral kUnfusedAttrName = "ism.unfused_coschedules";

/// One launch of the region and what its kernel needs.
struct Partition {
  mutable LaunchOp launch;
  mutable KernelOp kernel;
  /// The warp-specialized wgmma K loop's pipeline, if the kernel has one.
  scf::ForOp wgmmaLoop;
  int64_t stageBytes = 0;
  unsigned stages = 0;
  unsigned groupSize = 0;
  /// A wgmma kernel's thread-block cluster (ism-pipeline's cluster_m/n).
  unsigned clusterM = 1, clusterN = 1;
  /// Warps: the kernel's own (the consumers of a wgmma kernel).
  unsigned kernelWarps = 0;
  /// Shared memory a non-wgmma partition is estimated to need.
  int64_t sharedEstimate = 0;
  /// Registers a thread of a non-wgmma partition is estimated to need
  /// (without the tiles loaded one item ahead, `prefetchRegisters`).
  unsigned registerEstimate = 0;
  unsigned prefetchRegisters = 0;
  /// Bytes of one slot of the shared-memory ring that holds the tiles
  /// loaded ahead (0: the partition loads nothing ahead).
  int64_t ringSlotBytes = 0;
  /// Registers a wgmma consumer thread needs: its accumulator and ~32 more.
  unsigned consumerEstimate = 0;
  /// N of its m64nNk16 wgmma instructions (0: not a wgmma partition).
  unsigned wgmmaN = 0;
  /// Tensor-core products outside a pipelined K loop (attention's S = Q K^T
  /// and O += P V): whether it has any and whether one runs on wgmma (its
  /// warps must then start on a warpgroup), and the ring their B operands
  /// are copied ahead into (AsyncOperands.cpp): bytes a stage over all its
  /// loops, the alignment slack of the loops' rings, and its depth (1: no
  /// ring, the loop loads them).
  bool products = false, wgmmaProducts = false;
  int64_t operandStageBytes = 0, operandRingSlack = 0;
  unsigned operandStages = 0;
  /// The launch this partition runs, and which copy of it (the copies of a
  /// memory-bound launch share one work counter, so that more of its
  /// programs are in flight on each SM).
  unsigned launchIndex = 0, replica = 0;

  bool isWgmma() const { return bool(wgmmaLoop); }
  /// Registers one of its wgmma instructions needs at least: ptxas checks
  /// each instruction against the kernel's register limit at launch (not
  /// the warpgroup's setmaxnreg). A wgmma K loop's instructions are split
  /// down to kMinSplitWgmmaN columns where the limit asks for it (the
  /// lowering's getWgmmaInstructionN); a product's are not.
  int64_t instructionN() const {
    return isWgmma() ? getWgmmaInstructionN(wgmmaN, 0) : wgmmaN;
  }
  unsigned instructionRegisters() const {
    return isWgmma() || wgmmaProducts
               ? getWgmmaInstructionRegisters(instructionN())
               : 0;
  }
  unsigned warps() const { return kernelWarps + (isWgmma() ? 4 : 0); }
  /// The ring of its products' operands with `stages` (at most 1: none).
  int64_t operandRingBytes(unsigned stages) const {
    return stages > 1 && operandStageBytes
               ? int64_t(stages) * operandStageBytes + operandRingSlack
               : 0;
  }
  /// Shared memory of a partition that is not a wgmma kernel, with that
  /// ring at `stages`.
  int64_t sharedBytes(unsigned stages) const {
    return sharedEstimate + operandRingBytes(stages);
  }
  /// Computes first (tensor cores), then the rest; wgmma kernels before
  /// wgmma products so that both start on a warpgroup.
  unsigned rank() const {
    return isWgmma() ? 0 : wgmmaProducts ? 1 : products ? 2 : 3;
  }
  unsigned numBarriers() const { return isWgmma() ? 3 : 1; }
  /// The ring of a wgmma partition with `s` stages: an alignment slack of
  /// up to 1023 bytes, the stages, and two mbarriers per stage.
  int64_t ringBytes(unsigned s) const {
    return 1024 + int64_t(s) * stageBytes + 16 * int64_t(s);
  }
};

int64_t alignTo16(int64_t v) { return (v + 15) / 16 * 16; }

/// Bytes of one element of `type` (at least one).
int64_t elementBytes(Type type) {
  return std::max<int64_t>(
      1, getElementTypeOrSelf(type).getIntOrFloatBitWidth() / 8);
}

/// Estimates the shared memory and registers of a partition that is not a
/// wgmma kernel: the ops that go through shared memory (reductions, scans,
/// shape and layout changes, the SIMT dot, mma.sync rings) need at most
/// twice their largest tile (two alternating scratch regions); registers
/// follow the largest tile a thread holds.
void estimate(Partition &p, bool prefetch) {
  int64_t shared = 0, maxPerThread = 0, ownShared = 0;
  llvm::SmallPtrSet<Operation *, 4> ringLoads;
  llvm::MapVector<Operation *, int64_t> ringBytes;
  llvm::SmallDenseSet<uint32_t> gatherRings;
  int64_t threads = 32 * int64_t(p.kernelWarps);
  p.kernel.walk([&](Operation *op) {
    for (Type type : op->getResultTypes()) {
      auto tile = dyn_cast<RankedTensorType>(type);
      if (!tile)
        continue;
      int64_t perThread = std::max<int64_t>(
          1, tile.getNumElements() *
                 std::max<int64_t>(1, elementBytes(tile) / 4) / threads);
      maxPerThread = std::max(maxPerThread, perThread);
      // A row's totals given back to the layout they came from
      // (expand_dims of a slice, then broadcast) stay in registers.
      Attribute from;
      if (isa<BroadcastOp, ExpandDimsOp>(op))
        if (auto src = dyn_cast<RankedTensorType>(op->getOperand(0).getType()))
          from = src.getEncoding();
      if (auto slice = dyn_cast_or_null<SliceEncodingAttr>(from);
          slice && isa<ExpandDimsOp>(op))
        from = slice.getUnslicedLayout();
      bool inRegisters = from && from == tile.getEncoding();
      // wgmma accumulators of different N hold the registers of the
      // mma.sync layout of the same warps: converting is a no-op.
      if (auto convert = dyn_cast<ConvertLayoutOp>(op)) {
        auto a = dyn_cast_or_null<MmaEncodingAttr>(
            convert.getSrc().getType().getEncoding());
        auto b = dyn_cast_or_null<MmaEncodingAttr>(tile.getEncoding());
        inRegisters = a && b && a.getVersion() == b.getVersion() &&
                      a.getWarpsPerCTA() == b.getWarpsPerCTA() &&
                      a.getInstrShape()[0] == b.getInstrShape()[0];
      }
      // A broadcast exchanges its source's elements, not the result's.
      RankedTensorType exchanged = tile;
      if (isa<BroadcastOp>(op))
        exchanged = cast<RankedTensorType>(op->getOperand(0).getType());
      if ((isa<ReduceOp, ScanOp, ConvertLayoutOp, ReshapeOp, TransOp,
               BroadcastOp, ExpandDimsOp>(op) &&
           !inRegisters) ||
          (isa<DotOp>(op) &&
           !isa_and_nonnull<MmaEncodingAttr>(tile.getEncoding())))
        shared = std::max(shared,
                          exchanged.getNumElements() * elementBytes(exchanged));
    }
    // The ring of a gather issued ahead (ism-pipeline-gathers): its slots
    // of each thread's elements, shared memory of its own.
    if (auto issue = dyn_cast<AsyncGatherOp>(op)) {
      RankedTensorType tile = issue.getTileType();
      int64_t perThread = (tile.getNumElements() + threads - 1) / threads;
      if (gatherRings.insert(issue.getRing()).second)
        ownShared += int64_t(issue.getSlots()) *
                     alignTo16(perThread * threads * elementBytes(tile));
    }
    // A tensor-core product stages its operands in scratch: mma.sync both,
    // wgmma its B (unless a ring holds it), with a loop-invariant A written
    // once to shared memory of its own and an A from registers (P) not at
    // all.
    if (auto dot = dyn_cast<DotOp>(op)) {
      auto mma = dyn_cast_or_null<MmaEncodingAttr>(dot.getType().getEncoding());
      auto loop = dyn_cast<scf::ForOp>(dot->getParentOp());
      if (!mma || (loop && loop->hasAttr(kPipelineAttrName)))
        return;
      p.products = true;
      RankedTensorType a = dot.getA().getType(), bType = dot.getB().getType();
      int64_t staged = bType.getNumElements() +
                       (mma.getVersion() == 3 ? 0 : a.getNumElements());
      shared = std::max(shared, staged * elementBytes(a));
      if (mma.getVersion() == 3) {
        p.wgmmaProducts = true;
        p.wgmmaN = std::max(p.wgmmaN, unsigned(dot.getType().getShape()[1]));
        Operation *def = dot.getA().getDefiningOp();
        bool inRegisters = isa_and_nonnull<MmaEncodingAttr>(a.getEncoding());
        if (!inRegisters && loop && (!def || !loop->isAncestor(def)))
          ownShared += a.getNumElements() * elementBytes(a) + 1023;
      }
      // B loaded in the product's loop (through reshapes and transposes):
      // a ring candidate, one 1 KiB-aligned slot a stage.
      Value bValue = dot.getB();
      while (Operation *def = bValue.getDefiningOp()) {
        if (!isa<ReshapeOp, TransOp>(def))
          break;
        bValue = def->getOperand(0);
      }
      auto load = bValue.getDefiningOp<LoadOp>();
      if (loop && load && load->getBlock() == loop.getBody() &&
          ringLoads.insert(load.getOperation()).second) {
        ringBytes[loop.getOperation()] +=
            (bType.getNumElements() * elementBytes(bType) + 1023) / 1024 * 1024;
      }
    }
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      auto dims = loop->getAttrOfType<DictionaryAttr>(kPipelineAttrName);
      if (!dims)
        return;
      for (DotLoop dl : getAcceleratedDotLoops(loop))
        if (dl.loop == loop) {
          auto stages = cast<IntegerAttr>(dims.get("num_stages")).getInt();
          int64_t bytes = (dl.dot.getA().getType().getNumElements() +
                           dl.dot.getB().getType().getNumElements()) *
                          elementBytes(dl.dot.getA().getType());
          shared = std::max(shared, stages * bytes / 2);
        }
    }
  });
  p.sharedEstimate = kWorkSlotBytes + 2 * alignTo16(shared) + ownShared;
  for (auto &[loop, bytes] : ringBytes) {
    p.operandStageBytes += bytes;
    p.operandRingSlack += 1023;
  }
  // The ring's depth: the kernel's num_stages, else the lowering's 3 (the
  // pass lowers it while the partitions do not fit).
  if (p.operandStageBytes) {
    auto stages = p.kernel->getAttrOfType<IntegerAttr>("num_stages");
    p.operandStages =
        stages ? unsigned(std::max<int64_t>(1, stages.getInt())) : 3;
  }
  // Measured with ptxas on the row kernels inside a work loop (which keeps
  // loop-invariant tiles such as a norm's weights live): about twice the
  // largest tile a thread holds, plus addressing and the loop.
  int64_t regs = 2 * maxPerThread + 40;
  // Tiles loaded ahead: through a shared-memory ring, or one item ahead in
  // registers when there is no room for the ring.
  if (prefetch)
    for (PrefetchableLoad &load :
         getPrefetchableLoads(&p.kernel.getBody().front()))
      if (!load.invariant) {
        RankedTensorType tile = load.load.getType();
        p.prefetchRegisters +=
            (tile.getNumElements() * elementBytes(tile) + 4 * threads - 1) /
            (4 * threads);
        p.ringSlotBytes += getRingSlotBytes(tile, threads);
      }
  p.registerEstimate =
      unsigned(std::clamp<int64_t>((regs + 7) / 8 * 8, 56, 200));
  // Tensor-core products: the tiles their loops carry (accumulators, row
  // statistics), the largest product that is not one of them and its
  // 16-bit copy (S and P), plus 56. Measured: the head-dim-128 attention
  // on two warpgroups (64 + 2 carried, a 32-register S) needs 155 alone
  // (ptxas), and beside split-KV decode on the H200 the pair ran fastest
  // at both size ratios with it at 176 (160: 6% slower when balanced).
  if (p.products) {
    auto perThread = [&](Type type) -> int64_t {
      auto tile = dyn_cast<RankedTensorType>(type);
      if (!tile)
        return 0;
      return std::max<int64_t>(
          1, (tile.getNumElements() *
                  std::max<int64_t>(1, elementBytes(tile) / 4) +
              threads - 1) /
                 threads);
    };
    int64_t carried = 0, product = 0;
    p.kernel.walk([&](Operation *op) {
      if (auto loop = dyn_cast<scf::ForOp>(op))
        for (Value arg : loop.getRegionIterArgs())
          carried += perThread(arg.getType());
      // (a product that accumulates into a carried tile is that tile: only
      // products that start from a constant count)
      if (auto dot = dyn_cast<DotOp>(op))
        if (isa_and_nonnull<MmaEncodingAttr>(dot.getType().getEncoding()) &&
            dot.getC().getDefiningOp<arith::ConstantOp>())
          product = std::max(product, perThread(dot.getType()));
    });
    p.registerEstimate = unsigned(std::clamp<int64_t>(
        (carried + 3 * product / 2 + 56 + 7) / 8 * 8, 64, 232));
  }
}

/// Finds the launches' kernels and what each needs.
FailureOr<SmallVector<Partition>> analyze(CoscheduleOp op,
                                          SymbolTableCollection &symbols) {
  auto prefetchAttr = op->getAttrOfType<BoolAttr>("prefetch");
  bool prefetch = !prefetchAttr || prefetchAttr.getValue();
  SmallVector<Partition> parts;
  for (LaunchOp launch : op.getLaunches()) {
    Partition p;
    p.launch = launch;
    p.kernel = launch.getKernelOp(symbols);
    if (!p.kernel)
      return launch.emitOpError("@")
             << launch.getKernel() << " does not name an ism.kernel";
    p.kernelWarps = p.kernel.getNumWarps();
    for (DotLoop dl : getAcceleratedDotLoops(p.kernel)) {
      auto dims = dl.loop->getAttrOfType<DictionaryAttr>(kPipelineAttrName);
      auto mma = cast<MmaEncodingAttr>(dl.dot.getType().getEncoding());
      if (!dims || mma.getVersion() != 3)
        continue;
      if (p.wgmmaLoop)
        return p.kernel.emitOpError(
            "has more than one wgmma K loop; a warp-specialized kernel has "
            "one");
      p.wgmmaLoop = dl.loop;
      p.stages = cast<IntegerAttr>(dims.get("num_stages")).getInt();
      p.stageBytes = (dl.dot.getA().getType().getNumElements() +
                      dl.dot.getB().getType().getNumElements()) *
                     elementBytes(dl.dot.getA().getType());
      int64_t acc = dl.dot.getType().getNumElements() / (32 * p.kernelWarps);
      // ptxas fits a 64x128 f32 accumulator per warpgroup (64 a thread) in
      // 96 registers without spilling.
      p.consumerEstimate =
          unsigned(std::min<int64_t>(kMaxConsumerRegisters, (acc + 32 + 7) / 8 * 8));
      p.wgmmaN = unsigned(mma.getInstrShape()[1]);
    }
    if (p.isWgmma()) {
      PersistentOptions options = getPersistentOptions(
          p.kernel->getAttrOfType<DictionaryAttr>(kPersistentAttrName));
      p.groupSize = options.groupSize;
      p.clusterM = options.clusterM;
      p.clusterN = options.clusterN;
      if (options.clusterK > 1)
        return launch.emitOpError("@")
               << launch.getKernel() << " has cluster_k = " << options.clusterK
               << " (its K loop split over a cluster's CTAs), which a "
                  "co-scheduled partition does not support yet; co-schedule "
                  "it with cluster_k = 1";
      if (options.tmaStore)
        return launch.emitOpError("@")
               << launch.getKernel()
               << " has tma_store = 1 (its epilogue stored through shared "
                  "memory by TMA), which a co-scheduled partition does not "
                  "support yet; co-schedule it with tma_store = 0";
      if (options.consumerGroups > 1)
        return launch.emitOpError("@")
               << launch.getKernel()
               << " has consumer_groups = " << options.consumerGroups
               << " (ping-pong consumers), which a co-scheduled partition "
                  "does not support yet; co-schedule it with one consumer "
                  "group";
    } else {
      estimate(p, prefetch);
    }
    p.launchIndex = parts.size();
    parts.push_back(p);
  }
  return parts;
}

/// How each launch of a region uses the buffers (memref operands) it is
/// passed: per launch, the host values it reads and those it writes.
struct BufferUse {
  llvm::SmallPtrSet<Value, 8> reads, writes;
};
SmallVector<BufferUse> getBufferUses(ArrayRef<Partition> parts) {
  SmallVector<BufferUse> uses(parts.size());
  for (auto [i, p] : llvm::enumerate(parts))
    for (auto [j, value] : llvm::enumerate(p.launch.getArgs())) {
      if (!isa<BaseMemRefType>(value.getType()))
        continue;
      KernelOp::ArgumentAccess access = p.kernel.getArgumentAccess(j);
      if (access.reads)
        uses[i].reads.insert(value);
      if (access.writes)
        uses[i].writes.insert(value);
    }
  return uses;
}

/// The earlier launches each launch of an ordered region waits for: those
/// that write a buffer it reads or writes, or read a buffer it writes
/// (buffers are host values: distinct values are taken not to overlap),
/// less those that a launch it waits for already waits for.
SmallVector<SmallVector<int32_t>>
getOrderedDependencies(ArrayRef<BufferUse> uses) {
  unsigned n = uses.size();
  auto conflicts = [&](unsigned early, unsigned late) {
    for (Value v : uses[early].writes)
      if (uses[late].reads.contains(v) || uses[late].writes.contains(v))
        return true;
    for (Value v : uses[early].reads)
      if (uses[late].writes.contains(v))
        return true;
    return false;
  };
  // reach[i][j]: launch i runs after launch j finished (directly or not).
  SmallVector<llvm::BitVector> reach(n, llvm::BitVector(n));
  SmallVector<SmallVector<int32_t>> deps(n);
  for (unsigned i = 0; i < n; ++i) {
    for (unsigned j = i; j-- > 0;) {
      if (reach[i].test(j) || !conflicts(j, i))
        continue;
      deps[i].push_back(int32_t(j));
      reach[i].set(j);
      reach[i] |= reach[j];
    }
    llvm::sort(deps[i]);
  }
  return deps;
}

/// Whether `op` (and every op nested in it) touches memory only by reading
/// buffers outside `unsafe`.
bool onlyReadsSafeBuffers(Operation *op,
                          const llvm::SmallPtrSetImpl<Value> &unsafe) {
  WalkResult result = op->walk([&](Operation *nested) {
    auto effects = dyn_cast<MemoryEffectOpInterface>(nested);
    if (!effects)
      return nested->hasTrait<OpTrait::HasRecursiveMemoryEffects>()
                 ? WalkResult::advance()
                 : WalkResult::interrupt();
    SmallVector<MemoryEffects::EffectInstance> list;
    effects.getEffects(list);
    for (const MemoryEffects::EffectInstance &effect : list) {
      Value value = effect.getValue();
      if (!isa<MemoryEffects::Read>(effect.getEffect()) || !value ||
          !isa<BlockArgument>(value) || unsafe.contains(value))
        return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return !result.wasInterrupted();
}

/// Puts `ism.task_wait deps` into a program of an ordered kernel (`block`,
/// its buffers the fused kernel's arguments), after the loads that may be
/// issued before it and the ops that compute their addresses: ops touching
/// no buffer in `unsafe` (one an earlier launch or this one writes),
/// computed only from such ops, that read memory or that such a read
/// needs. They move to the front of the block, in order; what only uses
/// the loaded tiles stays after the wait (so that the tiles are held as
/// loaded, not converted). With `!ahead`, the wait comes first. Returns
/// how many ops precede the wait.
unsigned placeTaskWait(Block *block, ArrayRef<int32_t> deps,
                       const llvm::SmallPtrSetImpl<Value> &unsafe,
                       bool ahead) {
  llvm::SmallPtrSet<Operation *, 16> early;
  SmallVector<Operation *> order;
  if (ahead)
    for (Operation &op : *block) {
      // Its operands and the values its regions use from above (the
      // block has no arguments) must come from early ops or from outside.
      bool fromEarly = true;
      op.walk([&](Operation *nested) {
        for (Value v : nested->getOperands()) {
          Operation *def = v.getDefiningOp();
          if (def && def->getBlock() == block && !early.contains(def))
            fromEarly = false;
        }
      });
      if (fromEarly && onlyReadsSafeBuffers(&op, unsafe))
        early.insert(&op);
    }
  // Of those, the reads and what they are computed from.
  llvm::SmallPtrSet<Operation *, 16> needed;
  for (Operation &op : llvm::reverse(*block)) {
    if (!early.contains(&op) ||
        (!needed.contains(&op) && isMemoryEffectFree(&op)))
      continue;
    needed.insert(&op);
    op.walk([&](Operation *nested) {
      for (Value v : nested->getOperands())
        if (Operation *def = v.getDefiningOp())
          if (def->getBlock() == block)
            needed.insert(def);
    });
  }
  for (Operation &op : *block)
    if (needed.contains(&op))
      order.push_back(&op);
  early = std::move(needed);
  Operation *firstLate = nullptr;
  for (Operation &op : *block)
    if (!early.contains(&op)) {
      firstLate = &op;
      break;
    }
  OpBuilder b(block, block->end());
  if (firstLate) {
    for (Operation *op : order)
      if (firstLate->isBeforeInBlock(op))
        op->moveBefore(firstLate);
    b.setInsertionPoint(firstLate);
  }
  TaskWaitOp::create(b, block->getParentOp()->getLoc(),
                     b.getDenseI32ArrayAttr(deps));
  return order.size();
}

/// The fused kernel's name: its kernels' names joined by "__", in launch
/// order; past 200 characters (a model's step: hundreds of launches), each
/// kernel once, in the order of its first launch, and the launch count
/// (its ism.coschedule attribute then lists the launches' kernels).
std::string getFusedKernelName(ArrayRef<std::string> names) {
  std::string name = llvm::join(names, "__");
  if (name.size() <= 200)
    return name;
  llvm::SetVector<StringRef> distinct;
  for (const std::string &n : names)
    distinct.insert(n);
  return llvm::join(distinct, "__") + "__x" + std::to_string(names.size());
}

struct IsmCoschedulePass
    : mlir::ism::impl::IsmCoscheduleBase<IsmCoschedulePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<CoscheduleOp> ops;
    module.walk([&](CoscheduleOp op) { ops.push_back(op); });
    SymbolTable symbolTable(module);
    SymbolTableCollection symbols;
    llvm::SetVector<KernelOp> fusedKernels;
    for (auto [index, op] : llvm::enumerate(ops)) {
      FailureOr<SmallVector<Partition>> parts = analyze(op, symbols);
      if (failed(parts) || failed(fuse(op, index, *parts, symbolTable)))
        return signalPassFailure();
      for (Partition &p : *parts)
        fusedKernels.insert(p.kernel);
    }
    // Kernels that no launch uses any more are not compiled.
    for (KernelOp kernel : fusedKernels)
      if (SymbolTable::symbolKnownUseEmpty(kernel, module))
        kernel.erase();
  }

  /// The resources the partitions get, or an error naming what does not
  /// fit.
  void joinAfterTiles(CoscheduleOp op, SmallVectorImpl<Partition> &parts,
                      SmallVectorImpl<PartitionAttr> &attrs,
                      std::string &summary);
  LogicalResult decide(CoscheduleOp op, CoschedulePolicy policy,
                       MutableArrayRef<Partition> parts,
                       SmallVectorImpl<PartitionAttr> &attrs,
                       unsigned &numWarps, unsigned &ctasPerSM,
                       unsigned &numCounters, std::string &summary);

  LogicalResult fuse(CoscheduleOp op, unsigned index,
                     MutableArrayRef<Partition> parts, SymbolTable &symbols);

  FailureOr<SmallVector<Partition>> replicate(CoscheduleOp op,
                                              CoschedulePolicy policy,
                                              ArrayRef<Partition> parts);
};

/// How many copies of each launch the fused kernel runs. A memory-bound
/// partition has one program in flight per copy: next to a wgmma
/// partition, which occupies one CTA per SM, one copy could not keep enough
/// loads in flight, so copies (sharing the launch's work counter) are added
/// while the CTA's threads and registers allow it with the wgmma consumers
/// keeping what their accumulators need; at most 4 a launch. The
/// `replicas` attribute (one count per launch) overrides the choice; with
/// `registers` given and no `replicas`, every launch runs once.
FailureOr<SmallVector<Partition>>
IsmCoschedulePass::replicate(CoscheduleOp op, CoschedulePolicy policy,
                             ArrayRef<Partition> parts) {
  SmallVector<unsigned> copies(parts.size(), 1);
  auto replicasAttr = op->getAttrOfType<DenseI32ArrayAttr>("replicas");
  auto countersAttr = op->getAttrOfType<BoolAttr>("work_counters");
  bool counted = policy == CoschedulePolicy::WarpSpecialized &&
                 (!countersAttr || countersAttr.getValue());
  bool anyCompute = llvm::any_of(
      parts, [](const Partition &p) { return p.isWgmma() || p.products; });
  if (replicasAttr) {
    ArrayRef<int32_t> values = replicasAttr.asArrayRef();
    if (values.size() != parts.size())
      return op.emitOpError("replicas needs one count per launch (")
             << parts.size() << "), got " << values.size();
    for (auto [i, p] : llvm::enumerate(parts)) {
      if (values[i] < 1 || values[i] > 8 ||
          (values[i] > 1 && (p.isWgmma() || !counted)))
        return op.emitOpError("replicas: @")
               << p.kernel.getName() << " can have 1"
               << (p.isWgmma() || !counted
                       ? " copy (only a counter-driven partition of a "
                         "warp_specialized kernel can have more)"
                       : " to 8 copies")
               << ", got " << values[i];
      copies[i] = values[i];
    }
  } else if (counted && anyCompute && !op->hasAttr("registers")) {
    // Threads and registers of a choice of copies: does it fit?
    auto fits = [&](ArrayRef<unsigned> c) {
      int64_t threads = 0, need = 0, shared = 0;
      for (auto [i, p] : llvm::enumerate(parts)) {
        // Copies must not cost a wgmma ring any of its stages.
        shared += p.isWgmma() ? p.ringBytes(p.stages)
                              : int64_t(c[i]) * p.sharedBytes(p.operandStages);
        threads += 32 * int64_t(p.warps()) * c[i];
        need +=
            p.isWgmma()
                ? 128 * 40 + 32 * int64_t(p.kernelWarps) * p.consumerEstimate
                : 32 * int64_t(p.warps()) * c[i] * p.registerEstimate;
      }
      if (threads > 1024 || shared > kMaxSharedMemoryPerCTA)
        return false;
      int64_t atLaunch = getRegistersAtLaunch(threads, 1);
      for (const Partition &p : parts)
        if (p.instructionRegisters() > atLaunch)
          return false;
      return need <= threads * atLaunch;
    };
    bool grew = true;
    while (grew) {
      grew = false;
      for (auto [i, p] : llvm::enumerate(parts)) {
        if (p.isWgmma() || p.products || copies[i] >= 4)
          continue;
        ++copies[i];
        if (fits(copies)) {
          grew = true;
        } else {
          --copies[i];
        }
      }
    }
  }
  SmallVector<Partition> expanded;
  for (auto [i, p] : llvm::enumerate(parts))
    for (unsigned r = 0; r < copies[i]; ++r) {
      Partition copy = p;
      copy.replica = r;
      expanded.push_back(copy);
    }
  return expanded;
}

LogicalResult IsmCoschedulePass::decide(
    CoscheduleOp op, CoschedulePolicy policy, MutableArrayRef<Partition> parts,
    SmallVectorImpl<PartitionAttr> &attrs, unsigned &numWarps,
    unsigned &ctasPerSM, unsigned &numCounters, std::string &summary) {
  MLIRContext *ctx = op.getContext();
  bool shared = policy == CoschedulePolicy::WarpSpecialized;
  bool ordered = policy == CoschedulePolicy::Ordered;
  bool anyWgmma =
      llvm::any_of(parts, [](const Partition &p) { return p.isWgmma(); });
  auto stagesAttr = op->getAttrOfType<IntegerAttr>("stages");
  auto registersAttr = op->getAttrOfType<DenseI32ArrayAttr>("registers");
  auto ctasAttr = op->getAttrOfType<IntegerAttr>("ctas_per_sm");
  auto countersAttr = op->getAttrOfType<BoolAttr>("work_counters");
  bool useCounters = !countersAttr || countersAttr.getValue();

  // Warps: wgmma kernels first, then the other tensor-core partitions
  // (wgmma products start on a warpgroup: their warps are whole
  // warpgroups), so that warpgroups line up.
  SmallVector<unsigned> order;
  for (auto [i, p] : llvm::enumerate(parts))
    order.push_back(i);
  llvm::stable_sort(order, [&](unsigned x, unsigned y) {
    return parts[x].rank() < parts[y].rank();
  });
  SmallVector<unsigned> warpBase(parts.size(), 0);
  numWarps = 0;
  for (unsigned i : order) {
    const Partition &p = parts[i];
    if (shared && anyWgmma && p.warps() % 4 != 0)
      return op.emitOpError("cannot give @")
             << p.kernel.getName() << " whole warpgroups: it has " << p.warps()
             << " warps, and next to a wgmma kernel every partition needs a "
                "multiple of 4 (setmaxnreg moves registers per warpgroup); "
                "set its num_warps to a multiple of 4";
    warpBase[i] = shared ? numWarps : 0;
    numWarps = shared ? numWarps + p.warps() : std::max(numWarps, p.warps());
  }
  unsigned threads = 32 * numWarps;
  if (threads > kMaxThreads) {
    std::string list;
    for (const Partition &p : parts)
      list += llvm::formatv("{0}@{1} {2}", list.empty() ? "" : ", ",
                            p.kernel.getName(), 32 * p.warps())
                  .str();
    return op.emitOpError("threads: the partitions need ")
           << threads << " threads in one CTA (" << list << "), more than the "
           << kMaxThreads << " a CTA can have";
  }

  // Named barriers, from 1.
  SmallVector<SmallVector<unsigned>> barriers(parts.size());
  unsigned nextBarrier = 1;
  for (unsigned i : order) {
    if (!shared)
      nextBarrier = 1;
    for (unsigned b = 0; b < parts[i].numBarriers(); ++b)
      barriers[i].push_back(nextBarrier++);
  }
  if (nextBarrier - 1 > 15)
    return op.emitOpError("named barriers: the partitions need ")
           << nextBarrier - 1
           << " named barriers, more than the 15 a CTA has besides the "
              "CTA-wide barrier 0";

  // CTAs per SM.
  ctasPerSM = 1;
  if (ctasAttr) {
    ctasPerSM = ctasAttr.getInt();
  } else if ((shared || ordered) && !anyWgmma) {
    unsigned maxRegs = 0;
    for (const Partition &p : parts)
      maxRegs = std::max(maxRegs, p.registerEstimate);
    ctasPerSM = std::max<int64_t>(
        1, std::min<int64_t>(2048 / threads,
                             kRegistersPerSM / (int64_t(threads) * maxRegs)));
  }
  if (ctasPerSM < 1 || ctasPerSM > 32)
    return op.emitOpError("ctas_per_sm must be from 1 to 32, got ")
           << ctasPerSM;

  // Shared memory: slices one after the other (or each from 0 when the
  // partitions take different CTAs).
  auto layout = [&](ArrayRef<unsigned> stages, ArrayRef<unsigned> operandStages,
                    SmallVectorImpl<int64_t> &base,
                    SmallVectorImpl<int64_t> &size) {
    base.assign(parts.size(), 0);
    size.assign(parts.size(), 0);
    int64_t end = 0, total = 0;
    for (unsigned i : order) {
      const Partition &p = parts[i];
      size[i] = p.isWgmma() ? p.ringBytes(stages[i])
                            : p.sharedBytes(operandStages[i]);
      // (An ordered kernel's slices start after its two work slots.)
      base[i] = shared ? end : ordered ? kWorkSlotBytes : 0;
      end = alignTo16(base[i] + size[i]);
      total = std::max(total, end);
    }
    return total;
  };
  // Rings lose stages down to 2 until everything fits; then (unless
  // ctas_per_sm is given) fewer CTAs share an SM; then the products load
  // their operands in their loops.
  SmallVector<unsigned> stages, operandStages;
  SmallVector<int64_t> base, size;
  int64_t sharedLimit = 0, total = 0;
  for (;;) {
    sharedLimit = getSharedMemoryPerCTA(ctasPerSM);
    stages.clear();
    operandStages.clear();
    for (const Partition &p : parts) {
      stages.push_back(
          p.isWgmma() ? (stagesAttr ? unsigned(stagesAttr.getInt()) : p.stages)
                      : 0);
      operandStages.push_back(p.operandStageBytes && stagesAttr
                                  ? unsigned(stagesAttr.getInt())
                                  : p.operandStages);
    }
    total = layout(stages, operandStages, base, size);
    while (total > sharedLimit) {
      bool reduced = false;
      for (auto [i, p] : llvm::enumerate(parts)) {
        if (p.isWgmma() && !stagesAttr && stages[i] > 2) {
          --stages[i];
          reduced = true;
        }
        if (!stagesAttr && operandStages[i] > 2) {
          --operandStages[i];
          reduced = true;
        }
      }
      if (!reduced)
        break;
      total = layout(stages, operandStages, base, size);
    }
    if (total <= sharedLimit || ctasAttr || ctasPerSM == 1)
      break;
    --ctasPerSM;
  }
  if (total > sharedLimit && !stagesAttr) {
    for (unsigned &s : operandStages)
      s = std::min(s, 1u);
    total = layout(stages, operandStages, base, size);
  }
  for (auto [i, p] : llvm::enumerate(parts)) {
    if (p.isWgmma() && stages[i] < 1)
      return op.emitOpError("stages must be at least 1, got ") << stages[i];
    if (p.operandStageBytes && (operandStages[i] < 1 || operandStages[i] > 8))
      return op.emitOpError("stages of @")
             << p.kernel.getName()
             << "'s operand ring must be from 1 (loads in the loop) to 8, got "
             << operandStages[i];
  }
  // With the ring depths given (`stages`), only what is known exactly (the
  // rings) must fit here: the rest is an estimate, and the lowering checks
  // the partitions' real shared memory.
  int64_t exact = 0;
  for (auto [i, p] : llvm::enumerate(parts))
    exact += p.isWgmma() ? p.ringBytes(stages[i])
                         : p.operandRingBytes(operandStages[i]);
  if (total > sharedLimit && !(stagesAttr && exact <= sharedLimit)) {
    std::string list;
    for (auto [i, p] : llvm::enumerate(parts))
      list += llvm::formatv(
                  "{0}@{1} {2}{3}", list.empty() ? "" : ", ",
                  p.kernel.getName(), size[i],
                  p.isWgmma() ? llvm::formatv(" ({0} stages)", stages[i]).str()
                  : !p.operandStageBytes ? ""
                  : operandStages[i] > 1
                      ? llvm::formatv(" (operand ring of {0} stages)",
                                      operandStages[i])
                            .str()
                      : " (operands loaded in the loop)")
                  .str();
    return op.emitOpError("shared memory: the partitions need ")
           << total << " bytes (" << list << "), more than the " << sharedLimit
           << " a CTA can have at " << ctasPerSM << " CTA(s) per SM";
  }

  // Registers: setmaxnreg per warpgroup when a wgmma partition is there.
  // The CTA starts with `atLaunch` registers a thread (the kernel's
  // .maxnreg); ptxas allocates the code after a warpgroup's
  // `setmaxnreg.inc` within the new count, so only the pool bounds what the
  // warpgroups ask for (a 640-thread kernel at .maxnreg 96 keeps 160 live
  // floats after setmaxnreg.inc 232 without spilling). One instruction,
  // though, must fit the limit at launch: a wgmma's accumulator fragment.
  int64_t atLaunch = getRegistersAtLaunch(threads, ctasPerSM);
  for (const Partition &p : parts)
    if (p.instructionRegisters() > atLaunch)
      return op.emitOpError("registers: a wgmma instruction of @")
             << p.kernel.getName() << " (m64n" << p.instructionN()
             << "k16) needs " << p.instructionRegisters()
             << " registers, but a CTA of " << threads
             << " threads starts with " << atLaunch
             << " a thread, and ptxas checks every instruction against that "
                "limit; use a smaller BLOCK_N or fewer warps in the other "
                "partitions";
  SmallVector<SmallVector<unsigned>> registers(parts.size());
  if (registersAttr) {
    ArrayRef<int32_t> values = registersAttr.asArrayRef();
    unsigned groups = 0;
    for (unsigned i : order)
      groups += parts[i].warps() / 4;
    if (values.size() != groups)
      return op.emitOpError("registers needs one value per warpgroup (")
             << groups << "), got " << values.size();
    unsigned next = 0;
    for (unsigned i : order)
      for (unsigned g = 0; g < parts[i].warps() / 4; ++g)
        registers[i].push_back(values[next++]);
  } else if (anyWgmma) {
    int64_t pool = int64_t(threads) * atLaunch;
    int64_t consumerThreads = 0, rest = pool;
    for (unsigned i : order) {
      const Partition &p = parts[i];
      if (p.isWgmma()) {
        consumerThreads += 32 * p.kernelWarps;
        rest -= 128 * kProducerRegisters;
      } else {
        rest -= 32 * int64_t(p.warps()) * p.registerEstimate;
      }
    }
    if (!shared) {
      // Each partition has its CTA to itself.
      rest = pool - 128 * kProducerRegisters;
      consumerThreads = 0;
      for (const Partition &p : parts)
        if (p.isWgmma())
          consumerThreads =
              std::max<int64_t>(consumerThreads, 32 * p.kernelWarps);
    }
    int64_t consumer =
        std::min<int64_t>(kMaxConsumerRegisters,
                          consumerThreads ? rest / consumerThreads / 8 * 8 : 0);
    unsigned needed = 64;
    for (const Partition &p : parts)
      if (p.isWgmma())
        needed = std::max(needed, p.consumerEstimate);
    if (consumer < needed) {
      std::string list;
      for (const Partition &p : parts)
        list += llvm::formatv("{0}@{1} {2} threads at {3}",
                              list.empty() ? "" : ", ", p.kernel.getName(),
                              32 * p.warps(),
                              p.isWgmma() ? "40 (producer) + consumers"
                                          : std::to_string(p.registerEstimate))
                    .str();
      return op.emitOpError("registers: the wgmma consumers would get ")
             << consumer << " registers a thread (" << list << "; " << pool
             << " in the CTA), fewer than the " << needed
             << " their accumulator needs; give the other partitions fewer "
                "warps (replicas) or the GEMM a smaller BLOCK_M x BLOCK_N";
    }
    for (unsigned i : order) {
      const Partition &p = parts[i];
      if (p.isWgmma()) {
        registers[i].assign(p.kernelWarps / 4, unsigned(consumer));
        registers[i].push_back(kProducerRegisters);
      } else if (shared) {
        registers[i].assign(p.warps() / 4, p.registerEstimate);
      }
    }
  } else if (shared && ctasPerSM == 1 &&
             llvm::any_of(parts,
                          [](const Partition &p) { return p.products; }) &&
             llvm::all_of(parts, [](const Partition &p) {
               return p.warps() % 4 == 0;
             })) {
    // Tensor-core products beside other partitions, all whole warpgroups
    // (setmaxnreg): the others keep their estimate, the products get the
    // rest up to theirs, and the others then share what is left. Measured
    // on the H200 with prefill + decode attention: the products at their
    // estimate (176) and the decode at 152 is 1.7% slower when the two are
    // balanced and 4.6% faster at 3:1 than both at 168 (what this gives
    // there); the products below (160, decode 184) 6% slower balanced.
    int64_t pool = int64_t(threads) * atLaunch, productThreads = 0,
            otherThreads = 0;
    unsigned productNeed = 0, otherNeed = 0;
    for (const Partition &p : parts) {
      if (p.products) {
        productThreads += 32 * p.warps();
        productNeed = std::max(productNeed, p.registerEstimate);
      } else {
        otherThreads += 32 * p.warps();
        otherNeed = std::max(otherNeed, p.registerEstimate);
      }
    }
    if (otherThreads) {
      int64_t product =
          std::min<int64_t>(productNeed, (pool - otherThreads * otherNeed) /
                                             productThreads / 8 * 8);
      int64_t other = std::min<int64_t>(248, (pool - productThreads * product) /
                                                 otherThreads / 8 * 8);
      if (product >= 64 && other >= 56)
        for (auto [i, p] : llvm::enumerate(parts))
          registers[i].assign(p.warps() / 4,
                              unsigned(p.products ? product : other));
    }
  }
  if (shared && !registers.empty()) {
    int64_t used = 0;
    for (auto [i, p] : llvm::enumerate(parts))
      for (unsigned r : registers[i])
        used += 128 * int64_t(r);
    if (used > int64_t(threads) * atLaunch)
      return op.emitOpError("registers: the partitions ask for ")
             << used << " registers, more than the "
             << int64_t(threads) * atLaunch << " the CTA starts with ("
             << threads << " threads at " << atLaunch << ")";
  }

  // Work: counters for the partitions that are not wgmma kernels. An
  // ordered kernel's: the task ticket, one done counter per launch, the
  // error record of a wait that timed out, and the CTAs that finished.
  numCounters = 0;
  SmallVector<int> counters(parts.size(), -1);
  if (ordered) {
    for (auto [i, p] : llvm::enumerate(parts))
      counters[i] = int(kOrderedDoneCounters + i);
    numCounters = getOrderedCounterCount(parts.size());
  } else if (shared && useCounters) {
    llvm::SmallDenseMap<unsigned, int> perLaunch;
    for (unsigned i : order)
      if (!parts[i].isWgmma()) {
        auto [it, inserted] =
            perLaunch.try_emplace(parts[i].launchIndex, int(numCounters));
        if (inserted)
          ++numCounters;
        counters[i] = it->second;
      }
  }

  attrs.clear();
  for (auto [i, p] : llvm::enumerate(parts)) {
    int64_t slice = base[i];
    attrs.push_back(PartitionAttr::get(
        ctx, warpBase[i], p.warps(), registers[i], barriers[i], unsigned(slice),
        stages[i], counters[i], p.isWgmma() ? p.groupSize : 0,
        // A CTA of block_interleaved runs one program: no pairs to share.
        shared ? p.clusterM : 1, shared ? p.clusterN : 1,
        p.operandStageBytes ? operandStages[i] : 0, /*after=*/-1));
  }

  summary = llvm::formatv("{0}, {1} threads, {2} CTA(s)/SM, {3} B shared "
                          "memory",
                          stringifyCoschedulePolicy(policy), threads, ctasPerSM,
                          total)
                .str();
  for (auto [i, p] : llvm::enumerate(parts)) {
    std::string regs =
        registers[i].empty()
            ? std::to_string(atLaunch)
            : llvm::join(
                  llvm::map_range(registers[i],
                                  [](unsigned r) { return std::to_string(r); }),
                  "/");
    summary +=
        llvm::formatv(
            "; @{0}{8}: warps {1}-{2}, registers {3}, barriers "
            "{4}, shared memory from {5}{6}{7}",
            p.kernel.getName(), warpBase[i], warpBase[i] + p.warps() - 1, regs,
            llvm::join(
                llvm::map_range(barriers[i],
                                [](unsigned b) { return std::to_string(b); }),
                ","),
            base[i],
            p.isWgmma()
                ? llvm::formatv(" ({0} stages{1})", stages[i],
                                shared && p.clusterM * p.clusterN > 1
                                    ? llvm::formatv(", {0}x{1} cluster",
                                                    p.clusterM, p.clusterN)
                                          .str()
                                    : "")
                      .str()
            : p.operandStageBytes
                ? llvm::formatv(" (operand ring of {0} stages)",
                                operandStages[i])
                      .str()
                : "",
            counters[i] >= 0
                ? llvm::formatv(", work counter {0}", counters[i]).str()
                : "",
            p.replica ? llvm::formatv(" (copy {0})", p.replica + 1).str() : "")
            .str();
  }
  return success();
}

/// A wgmma partition's consumer warpgroups compute their tiles, then sit
/// idle while the other launch still has items: each then runs one more
/// copy of that launch (`#ism.partition` `after`), taking items from its
/// counter, in the ring's shared memory that the GEMM no longer needs. A
/// copy joins when the launch is counter-driven, one warpgroup without
/// tensor-core products, its registers fit in the consumers' count (the
/// copy's setmaxnreg lowers it), its slice fits in the ring with one slice
/// per consumer warpgroup, and a named barrier is free for it. `join =
/// false` on the coschedule turns it off.
void IsmCoschedulePass::joinAfterTiles(CoscheduleOp op,
                                       SmallVectorImpl<Partition> &parts,
                                       SmallVectorImpl<PartitionAttr> &attrs,
                                       std::string &summary) {
  auto joinAttr = op->getAttrOfType<BoolAttr>("join");
  if ((joinAttr && !joinAttr.getValue()) ||
      op.getPolicy() != CoschedulePolicy::WarpSpecialized)
    return;
  unsigned nextBarrier = 1;
  for (PartitionAttr a : attrs)
    for (unsigned id : a.getBarriers())
      nextBarrier = std::max(nextBarrier, id + 1);
  unsigned n = parts.size();
  for (unsigned w = 0; w < n; ++w) {
    PartitionAttr gemm = attrs[w];
    if (!parts[w].isWgmma() || gemm.getRegisters().empty() ||
        gemm.getClusterM() * gemm.getClusterN() > 1)
      continue;
    std::optional<unsigned> copyOf;
    for (unsigned c = 0; c < n && !copyOf; ++c) {
      const Partition &p = parts[c];
      PartitionAttr a = attrs[c];
      if (!p.isWgmma() && !p.products && p.warps() == 4 &&
          a.getWorkCounter() >= 0 && a.getRegisters().size() == 1 &&
          a.getRegisters().front() <= gemm.getRegisters().front())
        copyOf = c;
    }
    if (!copyOf)
      continue;
    // A value, not a reference: the loop below appends to parts.
    const Partition copy = parts[*copyOf];
    int64_t slice = alignTo16(copy.sharedBytes(0));
    unsigned groups = parts[w].kernelWarps / 4;
    if (int64_t(groups) * slice > parts[w].ringBytes(gemm.getStages()) ||
        nextBarrier + groups > 16)
      continue;
    unsigned copies = 0;
    for (const Partition &p : parts)
      copies += p.launchIndex == copy.launchIndex;
    for (unsigned g = 0; g < groups; ++g) {
      Partition joined = copy;
      joined.replica = copies + g;
      parts.push_back(joined);
      unsigned warpBase = gemm.getWarpBase() + 4 * g;
      unsigned offset = unsigned(gemm.getSharedMemory() + g * slice);
      PartitionAttr a = attrs[*copyOf];
      attrs.push_back(PartitionAttr::get(
          op.getContext(), warpBase, 4, a.getRegisters(), {nextBarrier}, offset,
          0, a.getWorkCounter(), 0, 1, 1, 0, int(w)));
      summary += llvm::formatv("; @{0} (copy {1}): after @{2}'s tiles on "
                               "warps {3}-{4}, registers {5}, barriers {6}, "
                               "shared memory from {7}, work counter {8}",
                               copy.kernel.getName(), copies + g + 1,
                               parts[w].kernel.getName(), warpBase,
                               warpBase + 3, a.getRegisters().front(),
                               nextBarrier, offset, a.getWorkCounter())
                     .str();
      ++nextBarrier;
    }
  }
}

LogicalResult IsmCoschedulePass::fuse(CoscheduleOp op, unsigned index,
                                      MutableArrayRef<Partition> parts,
                                      SymbolTable &symbols) {
  MLIRContext *ctx = op.getContext();
  CoschedulePolicy policy = op.getPolicy();
  bool anyCompute = llvm::any_of(
      parts, [](const Partition &p) { return p.isWgmma() || p.products; });
  // Without a tensor-core partition (a wgmma GEMM, or tensor-core products
  // such as attention's) the kernels would only compete for the memory
  // system on a shared SM (and a fused CTA sized for the larger one runs
  // fewer CTAs of the smaller): the launches stay separate, one after the
  // other, and the module records it (ism.unfused_coschedules).
  auto fallbackAttr = op->getAttrOfType<BoolAttr>("fallback");
  if (policy == CoschedulePolicy::WarpSpecialized && !anyCompute &&
      (!fallbackAttr || fallbackAttr.getValue())) {
    op.emitRemark("no partition uses the tensor cores, so the kernels "
                  "would only compete for the memory system on a shared SM: "
                  "the launches stay separate and run one after the other "
                  "(fallback = false fuses them warp_specialized, "
                  "block_interleaved as a policy)");
    auto module = op->getParentOfType<ModuleOp>();
    SmallVector<int32_t> unfused;
    if (auto earlier =
            module->getAttrOfType<DenseI32ArrayAttr>(kUnfusedAttrName))
      llvm::append_range(unfused, earlier.asArrayRef());
    unfused.push_back(index);
    module->setAttr(kUnfusedAttrName,
                    DenseI32ArrayAttr::get(op.getContext(), unfused));
    Block &body = op.getBody().front();
    op->getBlock()->getOperations().splice(Block::iterator(op),
                                           body.getOperations());
    op.erase();
    return success();
  }

  // An ordered region runs programs that are not warp-specialized GEMMs
  // and have no tensor-core products as its tasks.
  if (policy == CoschedulePolicy::Ordered)
    for (const Partition &p : parts)
      if (p.isWgmma() || p.products)
        return p.launch.emitOpError("@")
               << p.kernel.getName()
               << (p.isWgmma() ? " is a warp-specialized wgmma GEMM"
                               : " has tensor-core products")
               << ", which an ordered ism.coschedule does not run as a task "
                  "yet; launch it before or after the region";

  // Copies first (threads and registers), then the rings: as many items
  // in flight (4 to 2) as the shared memory left beside the wgmma rings
  // (at their own stages) holds for every copy. Measured on the H200: a
  // GEMM that loses a stage, or deeper rings that take more of the L2,
  // slow the pair down. Without room for a ring the next item
  // is loaded into registers only when asked for (ring_stages = 0 with
  // prefetch), which costs registers the copies were not counted with.
  auto prefetchAttr = op->getAttrOfType<BoolAttr>("prefetch");
  bool prefetch = !prefetchAttr || prefetchAttr.getValue();
  auto ringAttr = op->getAttrOfType<IntegerAttr>("ring_stages");
  if (ringAttr && ringAttr.getInt() == 0 && prefetch)
    for (Partition &p : parts)
      if (!p.isWgmma())
        p.registerEstimate = unsigned(std::min<int64_t>(
            200, (p.registerEstimate + p.prefetchRegisters + 7) / 8 * 8));
  FailureOr<SmallVector<Partition>> expanded = replicate(op, policy, parts);
  if (failed(expanded))
    return failure();
  unsigned ringStages = 0;
  bool anyRing = llvm::any_of(
      parts, [](const Partition &p) { return p.ringSlotBytes > 0; });
  if (ringAttr) {
    ringStages = ringAttr.getInt();
  } else if (policy == CoschedulePolicy::WarpSpecialized && anyRing &&
             prefetch) {
    for (unsigned d = 4; d >= 2 && !ringStages; --d) {
      int64_t total = 0;
      for (const Partition &p : *expanded)
        total += p.isWgmma()
                     ? p.ringBytes(p.stages)
                     : p.sharedBytes(p.operandStages) + d * p.ringSlotBytes;
      if (total <= kMaxSharedMemoryPerCTA)
        ringStages = d;
    }
  }
  if (ringStages == 1 || ringStages > 8)
    return op.emitOpError("ring_stages must be 0 (registers) or 2 to 8, got ")
           << ringStages;
  // (An ordered kernel's task ring is the lowering's, from what is left.)
  for (Partition &p : *expanded)
    if (!p.isWgmma() && policy != CoschedulePolicy::Ordered)
      p.sharedEstimate += ringStages * p.ringSlotBytes;
  // No ring and not asked for registers: nothing is loaded ahead.
  bool loadAhead = prefetch && (ringStages >= 2 || ringAttr);

  SmallVector<PartitionAttr> attrs;
  unsigned numWarps = 0, ctasPerSM = 1, numCounters = 0;
  std::string summary;
  if (failed(decide(op, policy, *expanded, attrs, numWarps, ctasPerSM,
                    numCounters, summary)))
    return failure();
  joinAfterTiles(op, *expanded, attrs, summary);

  // A kernel's occupancy request (`__launch_bounds__`'s second value)
  // does not carry over: the fused kernel's CTAs per SM are the pass's.
  for (const Partition &p : parts)
    if (std::optional<uint32_t> min = p.kernel.getMinCtasPerSm())
      op.emitWarning() << "@" << p.kernel.getName()
                       << "'s min_ctas_per_sm = " << *min
                       << " does not apply inside the fused kernel, whose "
                          "CTAs per SM ism-coschedule decides (ctas_per_sm "
                          "on the ism.coschedule overrides it)";

  // The fused kernel's parameters: the distinct host values the launches
  // pass, arguments then grid sizes (getFusedParameters: the runner passes
  // them the same way). A buffer or size that several launches take is
  // one parameter: a model's step passes the same activations to many
  // launches, and a kernel's parameters have at most 32 KiB.
  Location loc = op.getLoc();
  SmallVector<LaunchOp> launchOps;
  SmallVector<std::string> names;
  for (const Partition &p : parts) {
    launchOps.push_back(p.launch);
    names.push_back(p.kernel.getName().str());
  }
  FusedParameters fusedParams = getFusedParameters(launchOps);
  const auto &argParam = fusedParams.argParam;
  const auto &gridParam = fusedParams.gridParam;
  IndexType indexType = IndexType::get(ctx);
  SmallVector<Type> types;
  for (const FusedParameters::Use &use : fusedParams.params)
    types.push_back(use.index >= 0 ? parts[use.launch]
                                         .kernel.getArgumentTypes()[use.index]
                                   : Type(indexType));
  OpBuilder b(ctx);
  b.setInsertionPointAfter(parts.back().kernel);
  std::string name = getFusedKernelName(names);
  auto kernel =
      KernelOp::create(b, loc, StringRef(name), b.getFunctionType(types, {}),
                       ArrayAttr(), ArrayAttr(), uint32_t(numWarps),
                       /*min_ctas_per_sm=*/IntegerAttr());
  symbols.insert(kernel);
  Block *entry = b.createBlock(&kernel.getBody());
  for (Type type : types)
    entry->addArgument(type, loc);
  ArrayRef<BlockArgument> args = entry->getArguments();

  b.setInsertionPointToStart(entry);
  SmallVector<Value> regionGrids;
  for (const Partition &p : *expanded)
    for (unsigned param : gridParam[p.launchIndex])
      regionGrids.push_back(args[param]);
  auto ws = WarpSpecializeOp::create(
      b, loc, policy, regionGrids,
      b.getArrayAttr(SmallVector<Attribute>(attrs.begin(), attrs.end())),
      expanded->size());
  for (auto [i, p] : llvm::enumerate(*expanded)) {
    IRMapping map;
    Block &body = p.kernel.getBody().front();
    for (auto [j, arg] : llvm::enumerate(body.getArguments()))
      map.map(arg, args[argParam[p.launchIndex][j]]);
    Region &region = ws.getBodies()[i];
    p.kernel.getBody().cloneInto(&region, map);
    Block &cloned = region.front();
    cloned.getTerminator()->erase();
    cloned.eraseArguments(0, cloned.getNumArguments());
    // The ring depth the split chose.
    if (p.isWgmma())
      region.walk([&](scf::ForOp loop) {
        if (auto dims = loop->getAttrOfType<DictionaryAttr>(kPipelineAttrName))
          loop->setAttr(
              kPipelineAttrName,
              b.getDictionaryAttr(b.getNamedAttr(
                  "num_stages", b.getI64IntegerAttr(attrs[i].getStages()))));
      });
  }
  // Ordered: each program waits for the launches it depends on, after
  // what it can issue before.
  if (policy == CoschedulePolicy::Ordered) {
    SmallVector<BufferUse> uses = getBufferUses(parts);
    SmallVector<SmallVector<int32_t>> deps = getOrderedDependencies(uses);
    for (auto [i, p] : llvm::enumerate(parts)) {
      if (deps[i].empty()) {
        summary += llvm::formatv("; @{0} waits for nothing", p.kernel.getName());
        continue;
      }
      llvm::SmallPtrSet<Value, 8> unsafe;
      for (auto [j, value] : llvm::enumerate(p.launch.getArgs())) {
        bool written = uses[i].writes.contains(value);
        for (unsigned e = 0; e < i && !written; ++e)
          written = uses[e].writes.contains(value);
        if (written)
          unsafe.insert(args[argParam[i][j]]);
      }
      unsigned before = placeTaskWait(&ws.getBodies()[i].front(), deps[i],
                                      unsafe, prefetch);
      summary += llvm::formatv(
          "; @{0} waits for launch(es) {1} after {2} op(s)", p.kernel.getName(),
          llvm::join(llvm::map_range(
                         deps[i], [](int32_t d) { return std::to_string(d); }),
                     ","),
          before);
    }
  }
  ReturnOp::create(b, loc);
  bool ordered = policy == CoschedulePolicy::Ordered;
  SmallVector<NamedAttribute> facts = {
      b.getNamedAttr("index", b.getI32IntegerAttr(index)),
      b.getNamedAttr("policy",
                     b.getStringAttr(stringifyCoschedulePolicy(policy))),
      b.getNamedAttr("ctas_per_sm", b.getI32IntegerAttr(ctasPerSM)),
      b.getNamedAttr("work_counters", b.getI32IntegerAttr(numCounters)),
      // (ordered: the task ring's depth asked for, -1 for the lowering's
      // choice)
      b.getNamedAttr("ring_stages",
                     b.getI32IntegerAttr(
                         ordered ? (ringAttr ? int32_t(ringAttr.getInt()) : -1)
                                 : int32_t(ringStages))),
      b.getNamedAttr("prefetch", b.getBoolAttr(ordered ? prefetch : loadAhead))};
  // The fused parameter list, as (launch, argument index or -1 - grid
  // dimension) pairs: the runner binds the parameters from these, not by
  // deduplicating the host values again, since the host IR it runs need not
  // have been canonicalized as the IR this pass saw (two equal grid sizes
  // this pass sees as one value may be two there).
  SmallVector<int32_t> paramUses;
  for (const FusedParameters::Use &use : fusedParams.params) {
    paramUses.push_back(int32_t(use.launch));
    paramUses.push_back(int32_t(use.index));
  }
  facts.push_back(
      b.getNamedAttr("params", b.getDenseI32ArrayAttr(paramUses)));
  if (ordered) {
    std::optional<APInt> timeout = op.getTimeoutMs();
    facts.push_back(b.getNamedAttr(
        "timeout_ms", b.getI32IntegerAttr(timeout ? timeout->getSExtValue()
                                                  : kDefaultTimeoutMs)));
  }
  // (a name that does not list the launches' kernels: the list)
  if (name != llvm::join(names, "__"))
    facts.push_back(b.getNamedAttr(
        "launches", b.getStrArrayAttr(SmallVector<StringRef>(
                        names.begin(), names.end()))));
  kernel->setAttr("ism.coschedule", b.getDictionaryAttr(facts));

  if (verbose)
    op.emitRemark() << "@" << kernel.getName() << ": " << summary;

  // The host side: one launch over the largest grid (warp_specialized: a
  // persistent grid of at most that many CTAs) or all the grids one after
  // the other (block_interleaved).
  b.setInsertionPoint(op);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  SmallVector<Value> operands;
  Value combined;
  for (const Partition &p : parts) {
    SmallVector<Value> grid(p.launch.getGrid());
    grid.resize(3, one);
    Value programs = arith::MulIOp::create(
        b, loc, arith::MulIOp::create(b, loc, grid[0], grid[1]), grid[2]);
    if (!combined)
      combined = programs;
    else if (policy == CoschedulePolicy::WarpSpecialized)
      combined = arith::MaxUIOp::create(b, loc, combined, programs);
    else
      combined = arith::AddIOp::create(b, loc, combined, programs);
  }
  for (const FusedParameters::Use &use : fusedParams.params)
    operands.push_back(use.value ? use.value : one);
  LaunchOp::create(b, loc, kernel.getName(), ValueRange{combined}, operands);
  op.erase();
  return success();
}

} // namespace
