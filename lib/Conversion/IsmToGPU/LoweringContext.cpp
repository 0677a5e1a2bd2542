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
  return arith::SubIOp::create(
      b, loc, tid, indexConstant(b, loc, 32 * partition.warpBase));
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

Value LoweringContext::getScratch(OpBuilder &b, Location loc, Type elementType,
                                  int64_t numElements, int64_t byteOffset) {
  int64_t bytes = numElements * ((elementType.getIntOrFloatBitWidth() + 7) / 8);
  scratchBytes = std::max<unsigned>(scratchBytes, (byteOffset + bytes + 15) / 16 * 16);
  auto workgroup = gpu::AddressSpaceAttr::get(
      b.getContext(), gpu::GPUDialect::getWorkgroupAddressSpace());
  auto raw = MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                             MemRefLayoutAttrInterface{}, workgroup);
  Value base = gpu::DynamicSharedMemoryOp::create(b, loc, raw);
  auto viewType = MemRefType::get({numElements}, elementType,
                                  MemRefLayoutAttrInterface{}, workgroup);
  Value offset =
      indexConstant(b, loc, partition.sharedMemoryBase + byteOffset);
  return memref::ViewOp::create(b, loc, viewType, base, offset, ValueRange{});
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
