//===- IsmToGPU.h - lowering ism tiles to per-thread GPU code ---*- C++ -*-===//

#ifndef ISM_CONVERSION_ISMTOGPU_ISMTOGPU_H
#define ISM_CONVERSION_ISMTOGPU_ISMTOGPU_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::ism {

/// Attributes the lowering puts on each `gpu.func` kernel so that launch
/// facts survive until the code becomes PTX: threads per CTA and bytes of
/// dynamic shared memory.
inline constexpr llvm::StringLiteral kNumThreadsAttrName = "ism.num_threads";
inline constexpr llvm::StringLiteral kSharedMemoryAttrName =
    "ism.shared_memory_bytes";
/// The gpu.module that holds the lowered kernels.
inline constexpr llvm::StringLiteral kKernelModuleName = "ism_kernels";

/// Where a kernel's code sits in its CTA: the lowering never assumes it owns
/// the whole CTA, so that partitions of a co-scheduled launch can share one.
struct PartitionInfo {
  /// First warp of the CTA that runs this kernel.
  unsigned warpBase = 0;
  /// Named barrier (1-15) for the kernel's own warps; 0 = CTA-wide bar.sync 0.
  unsigned barrierId = 0;
  /// Byte offset of the kernel's slice of dynamic shared memory.
  unsigned sharedMemoryBase = 0;
};

/// State the lowering patterns of one kernel share: its partition and warp
/// count, and the shared-memory scratch the lowered ops need.
class LoweringContext {
public:
  LoweringContext(PartitionInfo partition, unsigned numWarps)
      : partition(partition), numWarps(numWarps) {}

  const PartitionInfo &getPartition() const { return partition; }
  unsigned getNumWarps() const { return numWarps; }
  unsigned getNumThreads() const { return 32 * numWarps; }

  /// The thread's index within the kernel's warps (relative to warpBase).
  Value getThreadId(OpBuilder &b, Location loc) const;
  /// The lane (0-31) and the warp (relative to warpBase) of the thread.
  Value getLaneId(OpBuilder &b, Location loc) const;
  Value getWarpId(OpBuilder &b, Location loc) const;

  /// Synchronises the kernel's threads: `bar.sync 0` for a whole CTA, or the
  /// named barrier `bar.sync id, threads` of a partition.
  void barrier(OpBuilder &b, Location loc) const;

  /// A 1-D view of `numElements` elements of `elementType` in the kernel's
  /// shared-memory scratch, `byteOffset` bytes (a multiple of 16) into it.
  /// Scratch is reused by every op; each use is bracketed by barriers.
  Value getScratch(OpBuilder &b, Location loc, Type elementType,
                   int64_t numElements, int64_t byteOffset = 0);

  /// Bytes of dynamic shared memory the kernel needs (from byte 0, so the
  /// partition's base is included).
  unsigned getSharedMemoryBytes() const {
    return scratchBytes ? partition.sharedMemoryBase + scratchBytes : 0;
  }

private:
  PartitionInfo partition;
  unsigned numWarps;
  unsigned scratchBytes = 0;
};

/// Converts tiles with #ism.blocked layouts to one vector per thread.
class TileTypeConverter : public TypeConverter {
public:
  TileTypeConverter();
};

/// Adds the patterns that lower the ism tile ops, and arith/math ops on
/// tiles, inside a kernel body to per-thread GPU code.
void populateIsmToGPUConversionPatterns(TileTypeConverter &typeConverter,
                                        LoweringContext &context,
                                        RewritePatternSet &patterns);

} // namespace mlir::ism

#endif // ISM_CONVERSION_ISMTOGPU_ISMTOGPU_H
