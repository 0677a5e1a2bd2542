//===- IsmToGPU.h - lowering ism tiles to per-thread GPU code ---*- C++ -*-===//

#ifndef ISM_CONVERSION_ISMTOGPU_ISMTOGPU_H
#define ISM_CONVERSION_ISMTOGPU_ISMTOGPU_H

#include "ism/Dialect/Ism/Transforms/DotLoop.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

#include <optional>

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
  /// Copies of the kernel's warps that run its code side by side (consumer
  /// groups of a ping-pong wgmma kernel), from warpBase one after the
  /// other. Each copy has its own named barrier (barrierId + g *
  /// barrierStep) and its own shared-memory scratch.
  unsigned groups = 1;
  unsigned barrierStep = 0;
};

/// State the lowering patterns of one kernel share: its partition and warp
/// count, and the shared-memory scratch the lowered ops need.
/// The shared-memory pipeline of a warp-specialized wgmma K loop (see
/// HopperGemm.cpp): a ring of `stages` buffers of the A and B tiles from a
/// 1024-byte aligned base, then the `full` and `empty` mbarriers of each
/// stage; with cluster_k = 2, then the exchange's `full` and `empty`
/// mbarriers and its buffer (the partner's accumulator).
struct WgmmaPipeline {
  unsigned stages = 0;
  int64_t blockM = 0, blockN = 0, blockK = 0;
  int64_t aBytes = 0, bBytes = 0;
  unsigned warpsM = 0, warpsN = 0;
  /// N of the wgmma instructions: a warpgroup's blockN / warpsN columns, or
  /// a part of them when one instruction would need more registers than a
  /// thread has at launch (getWgmmaInstructionN).
  int64_t instrN = 0;
  /// Input element types: A's (f16, bf16, f8E4M3FN or f8E5M2; the ring's
  /// layout follows its size) and B's (A's, or the other 8-bit float).
  Type elementType, bElementType;
  /// K of one wgmma instruction: 32 bytes of a row (16 16-bit elements, 32
  /// 8-bit ones).
  int64_t instrK() const { return 256 / elementType.getIntOrFloatBitWidth(); }
  /// Byte offset in dynamic shared memory from which the ring's 1024-byte
  /// aligned base is found.
  int64_t sharedBase = 0;
  /// Named barrier of the producer warpgroup (its element-copy fallback).
  unsigned producerBarrier = 2;
  /// CTAs of the thread-block cluster along x (they share B) and y (they
  /// share A); at most one is 2. Each CTA of a pair loads half of the shared
  /// tile and multicasts it to both.
  unsigned clusterM = 1, clusterN = 1;
  /// CTAs of the cluster along K (2: both compute each program of the pair,
  /// each half of its K steps; the second sends its accumulator to the
  /// first through distributed shared memory and skips the epilogue).
  unsigned clusterK = 1;
  /// With clusterK = 2, the parity (i32) of the exchange's mbarrier phase
  /// for the consumers' current program: the program's index in this CTA's
  /// walk, mod 2.
  Value exchangePhase;
  unsigned clusterSize() const { return clusterM * clusterN * clusterK; }
  /// Whether the CTAs of the cluster multicast a shared tile into each
  /// other's ring (and so free each other's stages).
  bool multicast() const { return clusterM * clusterN > 1; }
  int64_t stageBytes() const { return aBytes + bBytes; }
  /// How each tile sits in a stage. A K-major ([blockM, blockK]: one box of
  /// 128-byte rows) unless `aMNMajor` (loaded as its transpose, [blockK,
  /// blockM]: boxes of columns); B MN-major ([blockK, blockN]: boxes of
  /// columns) unless `bKMajor` (loaded as its transpose, [blockN, blockK]:
  /// one box of 128-byte rows).
  bool aMNMajor = false, bKMajor = false;
  /// Whether the 2x1 / 1x2 pairs' shared tiles are swapped (swap-AB: the
  /// dot's A is the program's B): a 2x1 pair then shares A, a 1x2 pair B.
  bool swapped = false;
  /// Whether the pairs of the cluster multicast the A tile (else B).
  bool multicastA() const { return swapped ? clusterM == 2 : clusterN == 2; }
  bool multicastB() const { return swapped ? clusterN == 2 : clusterM == 2; }
  /// Bytes of a row of one box of a tile: 128 for a K-major tile (blockK =
  /// 64 16-bit elements); for an MN-major tile 128 (64 columns, the 128-byte
  /// swizzle), or 64 for a 32-column tile (the 64-byte swizzle). The boxes'
  /// rows are swizzled by their own width.
  int64_t rowBytes(bool mnMajor, int64_t mn) const {
    int64_t elementBytes = elementType.getIntOrFloatBitWidth() / 8;
    return mnMajor ? std::min<int64_t>(128, mn * elementBytes)
                   : blockK * elementBytes;
  }
  int64_t aRowBytes() const { return rowBytes(aMNMajor, blockM); }
  int64_t bRowBytes() const { return rowBytes(!bKMajor, blockN); }
  /// Rows of one box of the A (`a`) or B tile: a K-major tile's own rows,
  /// an MN-major one's blockK.
  int64_t boxRows(bool a) const {
    bool mnMajor = a ? aMNMajor : !bKMajor;
    return mnMajor ? blockK : (a ? blockM : blockN);
  }
  /// Columns of one box of an MN-major B tile.
  int64_t bBoxCols() const {
    return bRowBytes() / (elementType.getIntOrFloatBitWidth() / 8);
  }
  /// Bytes from the aligned base to the end of the stages' mbarriers.
  int64_t barriersEnd() const { return stages * stageBytes() + 16 * stages; }
  /// ... and to the end of the exchange's (clusterK = 2).
  int64_t exchangeEnd() const {
    return barriersEnd() +
           (clusterK == 2 ? getClusterKExchangeBytes(blockM * blockN) : 0);
  }
  /// Offsets from the aligned base of the exchange's `full` and `empty`
  /// mbarriers and of its buffer (clusterK = 2).
  int64_t exchangeFullOffset() const { return barriersEnd(); }
  int64_t exchangeEmptyOffset() const { return exchangeFullOffset() + 8; }
  int64_t exchangeOffset() const { return exchangeFullOffset() + 16; }
  /// The TMA-store epilogue (tma_store = 1): the descriptor of the stored
  /// memref (i64, 0 when the runtime could not make one: the store then
  /// goes from registers) and the consumer warps whose staging boxes follow
  /// the exchange, 1024-byte aligned (two 2 KiB boxes a warp).
  Value storeDescriptor;
  unsigned stagingWarps = 0;
  int64_t stagingOffset() const { return (exchangeEnd() + 1023) / 1024 * 1024; }
  /// Bytes from the aligned base to the end of the barriers (and of the
  /// exchange buffer and the staging boxes).
  int64_t ringBytes() const {
    return stagingWarps
               ? stagingOffset() + getTmaStoreStagingBytes(stagingWarps)
               : exchangeEnd();
  }
  /// Where the ring ends at the latest (the base is aligned up by at most
  /// 1023 bytes).
  int64_t ringEnd() const { return sharedBase + 1024 + ringBytes(); }
};

/// Where a warp-specialized wgmma program runs in its CTA and what it may
/// use. The defaults are a kernel that owns its CTA.
struct WgmmaPartition {
  /// The block holding the program's ops: the kernel's entry block, or the
  /// block of one partition of a fused kernel.
  Block *block = nullptr;
  /// First warp of the partition (its consumers; the producer warpgroup
  /// follows them).
  unsigned warpBase = 0;
  /// Named barriers: over all the partition's threads (0: bar.sync 0 over
  /// the CTA), over its consumers, over its producer warpgroup.
  unsigned allBarrier = 0, consumerBarrier = 1, producerBarrier = 2;
  /// Consumer groups (ping-pong, PersistentOptions::consumerGroups); group
  /// g synchronises on named barrier consumerBarrier + g * groupBarrierStep.
  unsigned consumerGroups = 1, groupBarrierStep = 2;
  /// The groups' turns at their K loops: group g waits on named barrier
  /// orderBarrier + g (4 and 5 for two groups).
  unsigned orderBarrier = 4;
  /// setmaxnreg of the consumer and producer warpgroups.
  unsigned consumerRegisters = 232, producerRegisters = 40;
  /// Byte offset of the partition's slice of dynamic shared memory.
  int64_t sharedMemoryBase = 0;
  /// Programs along x per group of the tile order.
  int64_t groupSize = 8;
  /// The thread-block cluster (WgmmaPipeline::clusterM/N/K).
  unsigned clusterM = 1, clusterN = 1, clusterK = 1;
  /// Whether the epilogue stores the accumulator tile with TMA.
  bool tmaStore = false;
  /// The logical grid (x, y, z), and the first program and stride of the
  /// persistent loop. Without a grid the kernel gets hidden grid
  /// parameters and strides from blockIdx.x by gridDim.x.
  SmallVector<Value, 3> grid;
  Value first, stride;
  /// Stages of the ring, when they override the K loop's ism.pipeline.
  unsigned stages = 0;
  /// Tracing (lowerPartitions): the trace buffer's address (i64; null: no
  /// tracing), the record index of program 0 (index) and the record's
  /// launch/copy bits.
  Value traceBuffer, traceFirstRecord;
  int64_t traceTag = 0;
  /// Hidden parameters of the kernel that follow the TMA descriptors (the
  /// TMA descriptors are inserted before them).
  unsigned hiddenAfterTma = 0;
};

class LoweringContext {
public:
  LoweringContext(PartitionInfo partition, unsigned numWarps)
      : partition(partition), numWarps(numWarps) {}

  const PartitionInfo &getPartition() const { return partition; }
  void setPartition(const PartitionInfo &info) { partition = info; }
  unsigned getNumWarps() const { return numWarps; }
  unsigned getNumThreads() const { return 32 * numWarps; }

  /// The thread's index within the kernel's warps (relative to warpBase,
  /// and to its group's first warp).
  Value getThreadId(OpBuilder &b, Location loc) const;
  /// The thread's group (index), when the partition has several.
  Value getGroupId(OpBuilder &b, Location loc) const;
  /// The lane (0-31) and the warp (relative to warpBase) of the thread.
  Value getLaneId(OpBuilder &b, Location loc) const;
  Value getWarpId(OpBuilder &b, Location loc) const;

  /// Synchronises the kernel's threads: `bar.sync 0` for a whole CTA, or the
  /// named barrier `bar.sync id, threads` of a partition.
  void barrier(OpBuilder &b, Location loc) const;

  /// Starts one use of shared-memory scratch by `op` and returns the scratch
  /// region it should use. A use is: writes, a barrier, reads. Uses by ops
  /// at the top level of the kernel alternate between regions 0 and 1, so
  /// the next use never overwrites memory the previous one still reads and
  /// needs no trailing barrier; uses nested in loops or branches (which may
  /// repeat or be skipped) share region 2 and end with a barrier. Pass
  /// `alwaysBarrier` for ops that reuse their scratch internally.
  unsigned beginScratch(Operation *op, bool alwaysBarrier = false);
  /// Whether a use of `region` must end with a barrier.
  bool needsTrailingBarrier(unsigned region) const { return region == 2; }

  /// A 1-D view of `numElements` elements of `elementType` in scratch
  /// `region`, `byteOffset` bytes (a multiple of 16) into it.
  Value getScratch(OpBuilder &b, Location loc, unsigned region,
                   Type elementType, int64_t numElements,
                   int64_t byteOffset = 0);

  /// A 1-D view of `numElements` elements of `elementType` in shared memory
  /// of its own, which no other use of scratch overwrites: a tile written
  /// once and read for the rest of the kernel (the loop-invariant operand
  /// of a product inside a loop).
  Value getOwnScratch(OpBuilder &b, Location loc, Type elementType,
                      int64_t numElements);

  /// A 1-D view of `numElements` elements of `elementType` for the ring of
  /// one loop's product operands (AsyncOperands.cpp). The rings of all
  /// loops start at the same place (region 4): loops run one after the
  /// other, and each ring loop ends with a barrier when the kernel has
  /// several (the next one's prologue writes stages that slower warps may
  /// still read).
  Value getRingScratch(OpBuilder &b, Location loc, Type elementType,
                       int64_t numElements);

  /// The shared-memory address (i64, shared window) where a loop-invariant
  /// A operand of a product was written, by tile (before conversion): the
  /// products of several loops that read the same tile (attention's Q,
  /// with the key blocks split into a loop without masks and one with)
  /// write it once.
  llvm::DenseMap<Value, Value> ownOperands;

  /// Elements per vector access of each ism.gather and ism.scatter, by op
  /// (before conversion), and whether each vector's alignment follows from
  /// uniform facts of the memref (getIndexedVectors in AxisInfo.h). Absent:
  /// element accesses.
  llvm::DenseMap<Operation *, std::pair<unsigned, bool>> indexedVectors;

  /// Of each masked ism.load (before conversion), how many consecutive
  /// elements along the last dimension its mask keeps equal, in aligned
  /// runs (AxisInfo's constancy). Absent: 0, nothing known.
  llvm::DenseMap<Operation *, int64_t> maskRuns;

  /// The shared-memory address (i64, shared window) of ring `ring` of
  /// ism.async_gather / ism.async_gather_wait (ism-pipeline-gathers):
  /// `bytes` of shared memory of its own, taken when the ring is first
  /// asked for (the ops of a ring agree on its size: checkTiles).
  Value getGatherRing(OpBuilder &b, Location loc, uint32_t ring, int64_t bytes);

  /// Lays the scratch regions out one after the other (from the
  /// partition's base) once every op of `root` is lowered: fixes the
  /// offsets of the views getScratch made.
  void finalizeScratch(Operation *root);

  /// Bytes of dynamic shared memory the kernel needs (from byte 0, so the
  /// partition's base is included). Valid after finalizeScratch.
  unsigned getSharedMemoryBytes() const {
    unsigned total = regionBytes[0] + regionBytes[1] + regionBytes[2] +
                     regionBytes[3] + regionBytes[4];
    return total ? partition.sharedMemoryBase + total * partition.groups : 0;
  }

  /// A product's B operand that a ring of loop stages holds instead of
  /// registers (prepareAsyncOperands): the loaded tile [rows, cols] in the
  /// swizzled operand layout at `address` (i64, shared window) in the
  /// current iteration's stage, B being that tile or, with `transposed`,
  /// its transpose.
  struct RingOperand {
    Value address;
    int64_t rows = 0, cols = 0;
    bool transposed = false;
  };
  /// The ring operands, by product (ism.dot).
  llvm::DenseMap<Operation *, RingOperand> ringOperands;
  /// Stages of those rings: the kernel's num_stages (1: no ring), 0 to
  /// choose (3 where they fit).
  unsigned ringStages = 0;
  /// Whether wgmma rings at the kernel's top level are filled by a
  /// producer warpgroup of their own (the kernel's ring_producer; unset:
  /// when the kernel has two warpgroups or more; AsyncOperands.cpp).
  std::optional<bool> ringProducer;
  /// Whether the warpgroups of a kernel whose rings a producer warpgroup
  /// fills take turns issuing each iteration's products (the kernel's
  /// ping_pong; unset: no; AsyncOperands.cpp).
  std::optional<bool> pingPong;
  /// Whether a kernel whose rings a producer warpgroup fills runs on a
  /// persistent grid (the kernel's persistent; unset: no): one CTA per SM,
  /// both roles walking the programs, so that the producer loads the next
  /// program's tiles while the kernel's warps finish this one
  /// (AsyncOperands.cpp).
  std::optional<bool> persistentGrid;
  /// The warpgroups' turns (groups 0: none): the ring loops marked
  /// ism.turns get their named barriers after the conversion (takeTurns).
  /// bases: each marked loop's first iteration counted over all of them,
  /// then their total (scalars before the first loop).
  struct Turns {
    unsigned groups = 0;
    SmallVector<Value> bases;
  } turns;

  /// The wgmma pipeline of the kernel's K loop, when it has one.
  std::optional<WgmmaPipeline> pipeline;
  /// Warps of the warp-specialized kernel's producer warpgroup (0: none).
  unsigned producerWarps = 0;

private:
  PartitionInfo partition;
  unsigned numWarps;
  /// Of each gather ring: its byte offset in region 3.
  llvm::DenseMap<uint32_t, int64_t> gatherRings;
  /// Bytes of the alternating regions 0 and 1, of region 2 (nested uses),
  /// of the kernel's own tiles (region 3, getOwnScratch) and of the loops'
  /// operand rings (region 4, getRingScratch).
  unsigned regionBytes[5] = {0, 0, 0, 0, 0};
  unsigned parity = 0;
};

/// Converts tiles with #ism.blocked layouts to one vector per thread.
class TileTypeConverter : public TypeConverter {
public:
  TileTypeConverter();
};

/// Adds the patterns that lower the ism tile ops, and arith/math ops on
/// tiles, inside a kernel body to per-thread GPU code.
/// Splits a kernel with a pipelined wgmma K loop into a producer warpgroup
/// (TMA loads into the ring) and consumer warps (wgmma and the epilogue),
/// on a persistent grid. Runs on the gpu.func before its tiles are lowered;
/// sets `context.pipeline`. `persistent` is the kernel's ism.persistent
/// attribute.
LogicalResult prepareWarpSpecializedKernel(Operation *func,
                                           DictionaryAttr persistent,
                                           LoweringContext &context);

/// The same split for a program in `config.block` of `func` (a gpu.func),
/// placed as `config` says. Sets `context.pipeline` (nothing when the block
/// has no pipelined wgmma K loop) and the consumers' partition; appends the
/// program's TMA operands to the kernel's `ism.tma`.
LogicalResult prepareWarpSpecializedProgram(Operation *func,
                                            const WgmmaPartition &config,
                                            LoweringContext &context);

/// Lowers a kernel whose body is an ism.warp_specialize (a fused kernel of
/// partitions): each partition becomes the code of its warps (or CTAs) with
/// its own thread base, named barriers, shared-memory slice, registers and
/// work loop, and is lowered by `convert` with its own LoweringContext.
/// Sets the kernel's thread count and shared memory size.
/// With `trace`, the kernel gets one more hidden parameter, the address of
/// a trace buffer, and each partition records its work items in it
/// (CompiledKernel::Fused::trace in Pipelines.h says the format).
LogicalResult lowerPartitions(
    Operation *func, Operation *warpSpecialize, bool trace,
    function_ref<LogicalResult(Operation *, LoweringContext &)> convert);

/// Loads the B operands of the tensor-core products in loops of `root`
/// ahead of time: a tile that ism.load reads in the loop body and only a
/// product uses (through ism.reshape and ism.trans) is copied with cp.async
/// into a ring of stages in shared memory, two iterations ahead, and the
/// product reads it there (context.ringOperands) instead of from registers.
/// Runs before the tiles are lowered.
LogicalResult prepareAsyncOperands(Operation *root, LoweringContext &context);

/// After the tiles are lowered: the warpgroups of the loops that
/// prepareAsyncOperands marked take turns issuing their iteration's wgmma
/// (FA3's ping-pong), where the lowered iteration issues them together;
/// else they are left as they are.
LogicalResult takeTurns(Operation *root, LoweringContext &context);

void populateIsmToGPUConversionPatterns(TileTypeConverter &typeConverter,
                                        LoweringContext &context,
                                        RewritePatternSet &patterns);

} // namespace mlir::ism

#endif // ISM_CONVERSION_ISMTOGPU_ISMTOGPU_H
