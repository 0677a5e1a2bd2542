//===- LoweringContext.cpp - threads, barriers, shared memory, types ------===//

#include "ism/Conversion/IsmToGPU/IsmToGPU.h"

#include "Distribution.h"
#include "Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::ism;

/// The thread's index from the partition's first warp, over all its groups.
static Value getPartitionThreadId(OpBuilder &b, Location loc,
                                  const PartitionInfo &partition) {
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  if (partition.warpBase == 0)
    return tid;
  return arith::SubIOp::create(b, loc, tid,
                               indexConstant(b, loc, 32 * partition.warpBase));
}

Value LoweringContext::getThreadId(OpBuilder &b, Location loc) const {
  Value tid = getPartitionThreadId(b, loc, partition);
  if (partition.groups == 1)
    return tid;
  return arith::RemUIOp::create(b, loc, tid,
                                indexConstant(b, loc, getNumThreads()));
}

Value LoweringContext::getGroupId(OpBuilder &b, Location loc) const {
  return arith::DivUIOp::create(b, loc, getPartitionThreadId(b, loc, partition),
                                indexConstant(b, loc, getNumThreads()));
}

Value LoweringContext::getLaneId(OpBuilder &b, Location loc) const {
  return arith::RemUIOp::create(b, loc, getThreadId(b, loc),
                                indexConstant(b, loc, 32));
}

Value LoweringContext::getWarpId(OpBuilder &b, Location loc) const {
  return arith::DivUIOp::create(b, loc, getThreadId(b, loc),
                                indexConstant(b, loc, 32));
}

void LoweringContext::barrier(OpBuilder &b, Location loc) const {
  if (partition.barrierId == 0) {
    NVVM::Barrier0Op::create(b, loc);
    return;
  }
  Value id = arith::ConstantIntOp::create(b, loc, partition.barrierId, 32);
  if (partition.groups > 1) {
    // Each group has its own barrier: barrierId + group * barrierStep.
    Value group =
        arith::IndexCastOp::create(b, loc, b.getI32Type(), getGroupId(b, loc));
    id = arith::AddIOp::create(
        b, loc, id,
        arith::MulIOp::create(
            b, loc, group,
            arith::ConstantIntOp::create(b, loc, partition.barrierStep, 32)));
  }
  Value threads = arith::ConstantIntOp::create(b, loc, getNumThreads(), 32);
  NVVM::BarrierOp::create(b, loc, TypeRange{}, id, threads, {}, Value{});
}

/// Marks the placeholder offset constants of scratch views: their region
/// and offset within it, resolved by finalizeScratch.
static constexpr llvm::StringLiteral kScratchRegionAttr = "ism.scratch_region";
static constexpr llvm::StringLiteral kScratchOffsetAttr = "ism.scratch_offset";
/// Marks the placeholder of the bytes between two groups' scratch.
static constexpr llvm::StringLiteral kScratchGroupAttr = "ism.scratch_group";

unsigned LoweringContext::beginScratch(Operation *op, bool alwaysBarrier) {
  if (alwaysBarrier || !runsOncePerKernel(op->getBlock()))
    return 2;
  unsigned region = parity;
  parity ^= 1;
  return region;
}

Value LoweringContext::getScratch(OpBuilder &b, Location loc, unsigned region,
                                  Type elementType, int64_t numElements,
                                  int64_t byteOffset) {
  int64_t bytes = numElements * ((elementType.getIntOrFloatBitWidth() + 7) / 8);
  regionBytes[region] = std::max<unsigned>(regionBytes[region],
                                           (byteOffset + bytes + 15) / 16 * 16);
  auto workgroup = gpu::AddressSpaceAttr::get(
      b.getContext(), gpu::GPUDialect::getWorkgroupAddressSpace());
  auto raw = MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                             MemRefLayoutAttrInterface{}, workgroup);
  Value base = gpu::DynamicSharedMemoryOp::create(b, loc, raw);
  auto viewType = MemRefType::get({numElements}, elementType,
                                  MemRefLayoutAttrInterface{}, workgroup);
  // The region's place is known only when the whole kernel is lowered.
  auto placeholder = arith::ConstantIndexOp::create(b, loc, 0);
  placeholder->setAttr(kScratchRegionAttr, b.getI32IntegerAttr(region));
  placeholder->setAttr(kScratchOffsetAttr, b.getI64IntegerAttr(byteOffset));
  Value offset = placeholder;
  if (partition.groups > 1) {
    // Group g's scratch follows the g groups before it.
    auto stride = arith::ConstantIndexOp::create(b, loc, 0);
    stride->setAttr(kScratchGroupAttr, b.getUnitAttr());
    offset = arith::AddIOp::create(
        b, loc, offset,
        arith::MulIOp::create(b, loc, getGroupId(b, loc), stride));
  }
  return memref::ViewOp::create(b, loc, viewType, base, offset, ValueRange{});
}

Value LoweringContext::getOwnScratch(OpBuilder &b, Location loc,
                                     Type elementType, int64_t numElements) {
  // Each view takes fresh bytes of region 3 (getScratch grows it to the
  // view's end).
  return getScratch(b, loc, 3, elementType, numElements, regionBytes[3]);
}

Value LoweringContext::getGatherRing(OpBuilder &b, Location loc, uint32_t ring,
                                     int64_t bytes) {
  int64_t offset = gatherRings.try_emplace(ring, regionBytes[3]).first->second;
  Value view = getScratch(b, loc, 3, b.getI8Type(), bytes, offset);
  Value address = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, view);
  return arith::IndexCastOp::create(b, loc, b.getI64Type(), address);
}

Value LoweringContext::getRingScratch(OpBuilder &b, Location loc,
                                      Type elementType, int64_t numElements) {
  return getScratch(b, loc, 4, elementType, numElements, 0);
}

void LoweringContext::finalizeScratch(Operation *root) {
  int64_t start[5];
  int64_t groupBytes = 0;
  for (unsigned r = 0; r < 5; ++r) {
    start[r] = partition.sharedMemoryBase + groupBytes;
    groupBytes += regionBytes[r];
  }
  root->walk([&](arith::ConstantIndexOp op) {
    if (op->hasAttr(kScratchGroupAttr)) {
      op.setValueAttr(OpBuilder(op).getIndexAttr(groupBytes));
      op->removeAttr(kScratchGroupAttr);
      return;
    }
    auto region = op->getAttrOfType<IntegerAttr>(kScratchRegionAttr);
    if (!region)
      return;
    auto offset = op->getAttrOfType<IntegerAttr>(kScratchOffsetAttr);
    OpBuilder b(op);
    op.setValueAttr(b.getIndexAttr(start[region.getInt()] + offset.getInt()));
    op->removeAttr(kScratchRegionAttr);
    op->removeAttr(kScratchOffsetAttr);
  });
}

TileTypeConverter::TileTypeConverter() {
  addConversion([](Type type) { return type; });
  addConversion([](RankedTensorType type) -> std::optional<Type> {
    std::string reason;
    if (!Distribution::isSupported(type, reason))
      return std::nullopt;
    Distribution dist(type);
    return VectorType::get({dist.getNumRegs()},
                           getStorageType(type.getElementType()));
  });
}
