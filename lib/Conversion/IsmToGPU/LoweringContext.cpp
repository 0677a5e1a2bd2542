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

Value LoweringContext::getThreadId(OpBuilder &b, Location loc) const {
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  if (partition.warpBase == 0)
    return tid;
  return arith::SubIOp::create(b, loc, tid,
                               indexConstant(b, loc, 32 * partition.warpBase));
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
  Value threads = arith::ConstantIntOp::create(b, loc, getNumThreads(), 32);
  NVVM::BarrierOp::create(b, loc, TypeRange{}, id, threads, {}, Value{});
}

/// Marks the placeholder offset constants of scratch views: their region
/// and offset within it, resolved by finalizeScratch.
static constexpr llvm::StringLiteral kScratchRegionAttr = "ism.scratch_region";
static constexpr llvm::StringLiteral kScratchOffsetAttr = "ism.scratch_offset";

unsigned LoweringContext::beginScratch(Operation *op, bool alwaysBarrier) {
  if (alwaysBarrier || !isa<gpu::GPUFuncOp>(op->getParentOp()))
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
  auto offset = arith::ConstantIndexOp::create(b, loc, 0);
  offset->setAttr(kScratchRegionAttr, b.getI32IntegerAttr(region));
  offset->setAttr(kScratchOffsetAttr, b.getI64IntegerAttr(byteOffset));
  return memref::ViewOp::create(b, loc, viewType, base, offset, ValueRange{});
}

void LoweringContext::finalizeScratch(Operation *root) {
  int64_t start[3] = {
      partition.sharedMemoryBase, partition.sharedMemoryBase + regionBytes[0],
      partition.sharedMemoryBase + regionBytes[0] + regionBytes[1]};
  root->walk([&](arith::ConstantIndexOp op) {
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
    return VectorType::get({dist.getNumRegs()}, type.getElementType());
  });
}
