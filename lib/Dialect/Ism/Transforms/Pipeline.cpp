//===- Pipeline.cpp - ism-pipeline ----------------------------------------===//
//
// Chooses the software pipeline of each tensor-core K loop: how many stages
// of A and B buffers the loads run ahead by, and the persistent tile order
// of the kernel. The lowering builds what this records.
//
//===----------------------------------------------------------------------===//

#include "ism/Dialect/Ism/Transforms/Passes.h"

#include "ism/Dialect/Ism/IR/IsmOps.h"
#include "ism/Dialect/Ism/Transforms/DotLoop.h"

#include "mlir/IR/Builders.h"

namespace mlir::ism {
#define GEN_PASS_DEF_ISMPIPELINE
#include "ism/Dialect/Ism/Transforms/Passes.h.inc"
} // namespace mlir::ism

using namespace mlir;
using namespace mlir::ism;

namespace {

/// Shared memory an A100 (sm_80) CTA can have: the most stages chosen for an
/// mma.sync loop (which also runs there) fit in it.
constexpr int64_t kAmpereSharedMemory = 163 * 1024;
/// Left for the ring's alignment, its mbarriers and epilogue scratch when
/// choosing the number of stages.
constexpr int64_t kReserve = 16 * 1024;
constexpr unsigned kMaxAutoStages = 4;

int64_t tileBytes(RankedTensorType type) {
  return type.getNumElements() * type.getElementTypeBitWidth() / 8;
}

/// An unsigned attribute of `kernel` named `name`, else `fallback`.
unsigned kernelOption(KernelOp kernel, StringRef name, unsigned fallback) {
  if (auto attr = kernel->getAttrOfType<IntegerAttr>(name))
    return attr.getInt();
  return fallback;
}

struct IsmPipelinePass : mlir::ism::impl::IsmPipelineBase<IsmPipelinePass> {
  using Base::Base;

  void runOnOperation() override {
    WalkResult result = getOperation().walk([&](KernelOp kernel) {
      return failed(schedule(kernel)) ? WalkResult::interrupt()
                                      : WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }

  LogicalResult schedule(KernelOp kernel) {
    SmallVector<DotLoop> loops = getAcceleratedDotLoops(kernel);
    if (loops.empty())
      return success();
    auto version = [](DotLoop loop) {
      return cast<MmaEncodingAttr>(loop.dot.getType().getEncoding())
          .getVersion();
    };
    // A wgmma kernel is warp-specialized around its one K loop; mma.sync
    // loops (version 2) are pipelined in place, any number of them.
    bool wgmma =
        llvm::any_of(loops, [&](DotLoop l) { return version(l) == 3; });
    if (wgmma && loops.size() > 1)
      return loops[1].dot.emitOpError(
          "is the second tensor-core K loop of its kernel; a kernel's "
          "producer warpgroup feeds one K loop: split the kernel");
    Builder b(&getContext());
    unsigned ck = kernelOption(kernel, "cluster_k", clusterK);
    unsigned ts = kernelOption(kernel, "tma_store", tmaStore);
    if (ts > 1)
      return kernel.emitOpError("tma_store = ")
             << ts
             << ": 0 (store the accumulator from registers) or 1 "
                "(through shared memory with TMA)";
    unsigned consumerWarps =
        kernel.getNumWarps() *
        kernelOption(kernel, "consumer_groups", consumerGroups);
    for (DotLoop loop : loops) {
      FailureOr<unsigned> stages =
          chooseStages(kernel, loop, /*ampere=*/version(loop) == 2, ck,
                       ts == 1 ? getTmaStoreStagingBytes(consumerWarps) : 0);
      if (failed(stages))
        return failure();
      if (version(loop) == 2 && *stages < 2)
        return loop.dot.emitOpError("num_stages = ")
               << *stages
               << ": the cp.async pipeline of an mma.sync K loop needs at "
                  "least 2 stages";
      loop.loop->setAttr(kPipelineAttrName,
                         b.getDictionaryAttr(b.getNamedAttr(
                             "num_stages", b.getI64IntegerAttr(*stages))));
    }
    if (!wgmma)
      return success();
    unsigned group = kernelOption(kernel, "group_size", groupSize);
    if (group == 0)
      return kernel.emitOpError("group_size must be at least 1");
    unsigned cm = kernelOption(kernel, "cluster_m", clusterM);
    unsigned cn = kernelOption(kernel, "cluster_n", clusterN);
    if (!isSupportedCluster(cm, cn))
      return kernel.emitOpError("cluster_m = ")
             << cm << " and cluster_n = " << cn
             << ": a wgmma kernel's cluster is 1x1, 2x1 or 1x2 CTAs";
    unsigned groups = kernelOption(kernel, "consumer_groups", consumerGroups);
    if (groups < 1 || groups > kMaxConsumerGroups)
      return kernel.emitOpError("consumer_groups = ")
             << groups << ": a wgmma kernel has 1 or " << kMaxConsumerGroups
             << " consumer groups";
    if (ck != 1 && ck != 2)
      return kernel.emitOpError("cluster_k = ")
             << ck << ": a wgmma kernel's K loop is split over 1 or 2 CTAs";
    if (ck == 2 && (cm != 1 || cn != 1 || groups != 1))
      return kernel.emitOpError("cluster_k = 2 (the two CTAs of a cluster "
                                "split each program's K loop) cannot be "
                                "combined with cluster_m = ")
             << cm << ", cluster_n = " << cn
             << " or consumer_groups = " << groups << "; set those to 1";
    SmallVector<NamedAttribute> persistent = {
        b.getNamedAttr("group_size", b.getI64IntegerAttr(group)),
        b.getNamedAttr("cluster_m", b.getI64IntegerAttr(cm)),
        b.getNamedAttr("cluster_n", b.getI64IntegerAttr(cn)),
        b.getNamedAttr("consumer_groups", b.getI64IntegerAttr(groups))};
    if (ck != 1)
      persistent.push_back(
          b.getNamedAttr("cluster_k", b.getI64IntegerAttr(ck)));
    if (ts != 0)
      persistent.push_back(
          b.getNamedAttr("tma_store", b.getI64IntegerAttr(ts)));
    kernel->setAttr(kPersistentAttrName, b.getDictionaryAttr(persistent));
    return success();
  }

  /// The number of stages of `loop`'s A and B buffers: the kernel's
  /// num_stages, the pass option, or as many as fit (up to 4; in an A100's
  /// shared memory for mma.sync loops, `ampere`), beside the partner's
  /// accumulator when the kernel's `cluster_k` (`kernelClusterK`) is 2,
  /// and `staging` bytes of a TMA-store epilogue (wgmma loops).
  FailureOr<unsigned> chooseStages(KernelOp kernel, DotLoop loop, bool ampere,
                                   unsigned kernelClusterK, int64_t staging) {
    int64_t stageBytes = tileBytes(loop.dot.getA().getType()) +
                         tileBytes(loop.dot.getB().getType());
    unsigned stages = kernelOption(kernel, "num_stages", numStages);
    // A K loop split over a cluster's two CTAs (cluster_k = 2) also holds
    // the partner's accumulator.
    int64_t exchange = 0;
    if (!ampere && kernelClusterK == 2)
      exchange = getClusterKExchangeBytes(loop.dot.getType().getNumElements());
    // The staging boxes start 1024-byte aligned after the barriers.
    if (ampere || !staging)
      staging = 0;
    else
      staging += 1024;
    if (stages == 0) {
      int64_t budget = ampere ? kAmpereSharedMemory
                              : kMaxSharedMemoryPerCTA - exchange - staging;
      stages =
          std::min<int64_t>(kMaxAutoStages, (budget - kReserve) / stageBytes);
      // A stage pair that fits only a Hopper CTA still runs there.
      if (stages < 2 && ampere)
        stages = std::min<int64_t>(
            kMaxAutoStages, (kMaxSharedMemoryPerCTA - kReserve) / stageBytes);
      if (stages < 2) {
        InFlightDiagnostic diag =
            loop.dot.emitOpError("one pipeline stage of the A and B tiles "
                                 "takes ")
            << stageBytes / 1024 << " KiB of shared memory, so two stages";
        if (exchange)
          diag << " and the partner's accumulator (" << exchange / 1024
               << " KiB, cluster_k = 2)";
        if (staging)
          diag << " and the TMA store's staging boxes (" << staging / 1024
               << " KiB, tma_store = 1)";
        return diag << " do not fit in the " << kMaxSharedMemoryPerCTA / 1024
                    << " KiB of a CTA; use a smaller BLOCK_M, BLOCK_N or "
                       "BLOCK_K";
      }
    }
    if (stages * stageBytes + 1024 + exchange + staging >
        kMaxSharedMemoryPerCTA) {
      InFlightDiagnostic diag = loop.dot.emitOpError("num_stages = ")
                                << stages << " needs "
                                << stages * stageBytes / 1024
                                << " KiB of shared memory for the A and B "
                                   "buffers ("
                                << stageBytes / 1024 << " KiB a stage)";
      if (exchange)
        diag << " and " << exchange / 1024
             << " KiB for the partner's accumulator (cluster_k = 2)";
      if (staging)
        diag << " and " << staging / 1024
             << " KiB for the TMA store's staging boxes (tma_store = 1)";
      return diag << ", more than the " << kMaxSharedMemoryPerCTA / 1024
                  << " KiB of a CTA; reduce num_stages or the block sizes";
    }
    return stages;
  }
};

} // namespace
