//===- DotLoop.h - matrix-product K loops -----------------------*- C++ -*-===//
//
// The loop shape the tensor-core passes and lowering work on: an scf.for
// whose loop-carried accumulator is updated by an ism.dot of two tiles that
// ism.load reads in the same iteration.
//
//===----------------------------------------------------------------------===//

#ifndef ISM_DIALECT_ISM_TRANSFORMS_DOTLOOP_H
#define ISM_DIALECT_ISM_TRANSFORMS_DOTLOOP_H

#include "ism/Dialect/Ism/IR/IsmOps.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

#include <algorithm>
#include <optional>
#include <string>

namespace mlir::ism {

/// Attribute of a K loop scheduled by ism-pipeline: {num_stages = S}.
/// Whether `type` is an 8-bit float a tensor-core product takes (f8E4M3FN,
/// f8E5M2).
inline bool isFloat8(Type type) {
  return isa<Float8E4M3FNType, Float8E5M2Type>(type);
}

inline constexpr llvm::StringLiteral kPipelineAttrName = "ism.pipeline";
/// Attribute of a kernel whose programs run on a persistent grid:
/// {group_size = G, cluster_m = M, cluster_n = N, consumer_groups = C}, and
/// cluster_k = 2 when the two CTAs of a cluster split each program's K loop.
inline constexpr llvm::StringLiteral kPersistentAttrName = "ism.persistent";
/// Attribute of a lowered persistent kernel (gpu.func) whose programs each
/// take several CTAs (a K loop split over a cluster): i32, the CTAs.
inline constexpr llvm::StringLiteral kCtasPerProgramAttrName =
    "ism.ctas_per_program";

/// What ism-pipeline records in kPersistentAttrName (missing entries keep
/// these defaults).
struct PersistentOptions {
  /// Programs along x per group of the tile order.
  int64_t groupSize = 8;
  /// CTAs of the thread-block cluster along x (sharing B) and y (sharing A).
  unsigned clusterM = 1, clusterN = 1;
  /// CTAs of the thread-block cluster along K (2: both compute the same
  /// program, each half of its K steps, and add their accumulators through
  /// distributed shared memory; the first CTA runs the epilogue).
  unsigned clusterK = 1;
  /// Copies of the consumer warps, each computing every `consumerGroups`-th
  /// program of the CTA (2: CUTLASS's ping-pong, one group's epilogue
  /// overlapping the other's tensor-core work).
  unsigned consumerGroups = 1;
  /// Whether the epilogue stores the accumulator tile through shared
  /// memory with TMA (tma_store = 1): each consumer warp writes its rows,
  /// 16 x 64 elements at a time, into one of its two staging boxes and one
  /// of its lanes has TMA store the box.
  bool tmaStore = false;
};
PersistentOptions getPersistentOptions(DictionaryAttr persistent);

/// Marks the ism.store of a warp-specialized wgmma kernel's epilogue that
/// the lowering writes through the TMA store's staging boxes.
inline constexpr llvm::StringLiteral kTmaStoreAttrName = "ism.tma_store";

/// A TMA store's staging box: 16 rows of 128 bytes (64 16-bit columns),
/// two a consumer warp.
inline constexpr int64_t kTmaStoreBoxRows = 16;
inline constexpr int64_t kTmaStoreBoxBytes = kTmaStoreBoxRows * 128;

/// Bytes of the TMA store's staging boxes for `consumerWarps` warps.
inline int64_t getTmaStoreStagingBytes(int64_t consumerWarps) {
  return consumerWarps * 2 * kTmaStoreBoxBytes;
}

/// Whether a wgmma kernel can run in a `clusterM` x `clusterN` cluster:
/// 1x1, 2x1 or 1x2.
inline bool isSupportedCluster(unsigned clusterM, unsigned clusterN) {
  return clusterM >= 1 && clusterN >= 1 && clusterM * clusterN <= 2;
}

/// Bytes of shared memory a cluster_k = 2 kernel adds to its ring: the
/// partner's accumulator (`accumulatorElements` f32) and two mbarriers.
inline int64_t getClusterKExchangeBytes(int64_t accumulatorElements) {
  return 4 * accumulatorElements + 16;
}

/// Shared memory of a Hopper SM (228 KiB), the most one CTA can have (227
/// KiB; no NVIDIA GPU gives a CTA more) and what the driver keeps of an
/// SM's for each resident CTA.
inline constexpr int64_t kSharedMemoryPerSM = 233472;
inline constexpr int64_t kMaxSharedMemoryPerCTA = 232448;
inline constexpr int64_t kSharedMemoryReservedPerCTA = 1024;

/// The shared memory each CTA can have when `ctasPerSM` of them share a
/// Hopper SM.
inline int64_t getSharedMemoryPerCTA(int64_t ctasPerSM) {
  return std::min(kMaxSharedMemoryPerCTA,
                  kSharedMemoryPerSM / ctasPerSM - kSharedMemoryReservedPerCTA);
}

/// Registers setmaxnreg raises a wgmma consumer thread to, and those of
/// them that addressing, loop state and the epilogue need beside the
/// accumulator.
inline constexpr unsigned kWgmmaConsumerRegisters = 232;
inline constexpr unsigned kWgmmaNonAccumulatorRegisters = 40;

/// Registers one m64nNk16 wgmma with an f32 accumulator needs: its N/2
/// accumulator registers and 26 more (ptxas C7602: 90 for N = 128, 154 for
/// N = 256). ptxas checks every instruction against the kernel's register
/// limit at launch, not against a warpgroup's raised setmaxnreg.
inline unsigned getWgmmaInstructionRegisters(int64_t n) {
  return unsigned(n / 2 + 26);
}

/// The N down to which a warpgroup's 64 x `warpN` piece of a pipelined
/// wgmma K loop may be split into several instructions (side by side in
/// the accumulator's registers, each reading its own columns of the B
/// stage): 128, the widest N that keeps one instruction's operands large.
inline constexpr int64_t kMinSplitWgmmaN = 128;

/// N of the instructions a warpgroup's 64 x `warpN` piece is issued as when
/// a thread starts with `registersAtLaunch` registers: `warpN` (one
/// instruction) when it fits, else its half while that is a multiple of
/// kMinSplitWgmmaN and the instruction does not fit.
inline int64_t getWgmmaInstructionN(int64_t warpN, int64_t registersAtLaunch) {
  int64_t n = warpN;
  while (getWgmmaInstructionRegisters(n) > registersAtLaunch &&
         n % (2 * kMinSplitWgmmaN) == 0)
    n /= 2;
  return n;
}

/// The most consumer groups a wgmma kernel may have.
inline constexpr unsigned kMaxConsumerGroups = 2;

struct DotLoop {
  scf::ForOp loop;
  DotOp dot;
  /// The loads of the A and B tiles: each the operand itself or, when
  /// `transA` / `transB`, the source of the ism.trans that is the operand
  /// (A loaded as a [K, M] tile, B as an [N, K] tile).
  LoadOp loadA, loadB;
  /// A convolution's K loop: A is this ism.im2col (not transposed) and
  /// loadA is null.
  Im2colOp im2colA;
  /// Position of the accumulator among the loop's iter_args.
  unsigned accIndex;
  bool transA = false, transB = false;
  /// The promoted form (block-scaled products): the dot starts from zero at
  /// every step and `promote`, an arith.addf of the accumulator and the
  /// product after elementwise math (its scaling), is what the loop
  /// yields; null when the dot updates the accumulator itself.
  Operation *promote = nullptr;

  /// The op that reads A (loadA or im2colA), its tile and its memref.
  Operation *getAReader() {
    return im2colA ? im2colA.getOperation() : loadA.getOperation();
  }
  RankedTensorType getATileType() {
    return cast<RankedTensorType>(getAReader()->getResult(0).getType());
  }
  Value getABase() {
    return im2colA ? im2colA.getBase() : loadA.getBase();
  }
};

/// Matches the K loop around `dot`: the accumulator is an iter_arg that the
/// dot alone updates and the loop yields, or (the promoted form) the dot
/// starts from a zero tile and the loop yields `acc + g(dot)`, g a chain of
/// single-use elementwise ops (e.g. `dot * scales`); A and B are unmasked
/// 2-D loads of 2-D memrefs in the loop body, used only by the dot, each
/// directly or through an ism.trans (order [1, 0]) used only by the dot;
/// or A is an ism.im2col in the loop body used only by the dot.
std::optional<DotLoop> matchDotLoop(DotOp dot);

/// Marks a K loop whose product ism-accelerate-dot swapped (swap-AB: the
/// program's C = A B computed as C^T = B^T A^T, its dot's A the tile of the
/// program's B): the pairs of a 2x1 cluster share the dot's A, of a 1x2
/// cluster its B.
inline constexpr llvm::StringLiteral kSwapABAttrName = "ism.swap_ab";
/// Kernel attribute (i32) that asks ism-accelerate-dot to swap its K loop's
/// product: 0 never, 1 always; without it, when only the swapped product
/// can use wgmma.
inline constexpr llvm::StringLiteral kSwapABOptionName = "swap_ab";

/// The K loops of `op` that a tensor-core loop lowering takes: their dot has
/// an #ism.mma result and its A and B tiles an #ism.shared layout (a product
/// whose operands stay in registers is lowered by itself).
SmallVector<DotLoop> getAcceleratedDotLoops(Operation *op);

/// Why `dot`, a product outside a K loop the loop lowerings take, cannot
/// run on wgmma (empty when it can) with `numWarps` warps in the layout
/// #ism.mma<3, [numWarps, 1]>: f16 or bf16 inputs and an f32 accumulator,
/// whole warpgroups each taking 64-row blocks of the accumulator, and
/// operands the instruction reads from 128-byte swizzled rows (K and N
/// multiples of 64, N at most 256).
std::string checkWgmmaProduct(DotOp dot, unsigned numWarps);

/// Whether `op` computes scalars without side effects, so that the
/// tensor-core lowerings may repeat it: the wgmma producer warpgroup
/// recomputes the K loop's bounds and tile offsets, the mma.sync loop the
/// offsets of later iterations. Integer division counts although it is not
/// "pure" (it may trap on zero): repeating the program's own arithmetic adds
/// no new failure.
bool isReplicableScalar(Operation *op);

} // namespace mlir::ism

#endif // ISM_DIALECT_ISM_TRANSFORMS_DOTLOOP_H
