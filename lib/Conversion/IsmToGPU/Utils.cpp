//===- Utils.cpp - helpers shared by the ism-to-GPU patterns --------------===//

#include "Patterns.h"

#include "ism/Dialect/Ism/IR/IsmOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::ism;

Value mlir::ism::indexConstant(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

Value mlir::ism::i32Const(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIntOp::create(b, loc, value, 32);
}

Value mlir::ism::i64Const(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIntOp::create(b, loc, value, 64);
}

Value mlir::ism::sharedPointer(OpBuilder &b, Location loc, Value address) {
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), 3), address);
}

void mlir::ism::fenceAsyncProxy(OpBuilder &b, Location loc) {
  NVVM::FenceProxyOp::create(
      b, loc, NVVM::ProxyKind::async_shared,
      NVVM::SharedSpaceAttr::get(b.getContext(),
                                 NVVM::SharedSpace::shared_cta));
}

Value mlir::ism::stageBarrier(OpBuilder &b, Location loc, Value base,
                              int64_t first, Value stage) {
  Value off = arith::AddIOp::create(
      b, loc, i64Const(b, loc, first),
      arith::MulIOp::create(
          b, loc, arith::IndexCastOp::create(b, loc, b.getI64Type(), stage),
          i64Const(b, loc, 8)));
  return sharedPointer(b, loc, arith::AddIOp::create(b, loc, base, off));
}

Value mlir::ism::ringStage(OpBuilder &b, Location loc, int64_t stages,
                           Value count) {
  return arith::RemUIOp::create(b, loc, count, indexConstant(b, loc, stages));
}

Value mlir::ism::ringPhase(OpBuilder &b, Location loc, int64_t stages,
                           Value count) {
  Value round =
      arith::DivUIOp::create(b, loc, count, indexConstant(b, loc, stages));
  return arith::AndIOp::create(
      b, loc, arith::IndexCastOp::create(b, loc, b.getI32Type(), round),
      i32Const(b, loc, 1));
}

void mlir::ism::waitParity(OpBuilder &b, Location loc, Value barrier,
                           Value phase) {
  // The try_wait suspend-time hint, in nanoseconds.
  constexpr int64_t kWaitTicks = 0x989680;
  NVVM::MBarrierTryWaitParityOp::create(b, loc, barrier, phase,
                                        i32Const(b, loc, kWaitTicks));
}

bool mlir::ism::runsOncePerKernel(Block *block) {
  Operation *parent = block->getParentOp();
  if (isa<gpu::GPUFuncOp>(parent))
    return true;
  auto split = dyn_cast<scf::IfOp>(parent);
  return split && split->hasAttr(kRingSplitAttrName) &&
         block == split.elseBlock() &&
         isa<gpu::GPUFuncOp>(split->getParentOp());
}

Value mlir::ism::extractReg(OpBuilder &b, Location loc, Value vector,
                            int64_t reg) {
  return vector::ExtractOp::create(b, loc, vector, reg);
}

Value mlir::ism::buildVector(OpBuilder &b, Location loc, Type elementType,
                             ArrayRef<Value> elements) {
  auto type = VectorType::get({int64_t(elements.size())}, elementType);
  return vector::FromElementsOp::create(b, loc, type, elements);
}

SmallVector<int64_t> mlir::ism::rowMajorStrides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = int64_t(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

/// sum_d coord[d] * coefs[d].
static int64_t dot(ArrayRef<int64_t> coord, ArrayRef<int64_t> coefs) {
  int64_t sum = 0;
  for (auto [c, k] : llvm::zip(coord, coefs))
    sum += c * k;
  return sum;
}

/// sum_d coord[d] * coefs[d] for index values.
static Value dot(OpBuilder &b, Location loc, ArrayRef<Value> coord,
                 ArrayRef<int64_t> coefs) {
  Value sum = indexConstant(b, loc, 0);
  for (auto [c, k] : llvm::zip(coord, coefs)) {
    if (k == 0)
      continue;
    sum = arith::AddIOp::create(
        b, loc, sum,
        arith::MulIOp::create(b, loc, c, indexConstant(b, loc, k)));
  }
  return sum;
}

/// If every thread finds each result element in the same source register,
/// returns that register for each result register.
static std::optional<SmallVector<int64_t>>
findRegisterMap(const Distribution &from, const Distribution &to,
                ArrayRef<int64_t> coefs) {
  if (from.getNumThreads() != to.getNumThreads())
    return std::nullopt;
  SmallVector<int64_t> fromStrides = rowMajorStrides(from.getShape());
  SmallVector<int64_t> map(to.getNumRegs(), -1);
  // Candidates from thread 0, then checked on every thread.
  llvm::DenseMap<int64_t, int64_t> thread0;
  for (int64_t r = 0; r < from.getNumRegs(); ++r)
    thread0.try_emplace(dot(from.getCoord(r, 0, 0), fromStrides), r);
  for (int64_t r = 0; r < to.getNumRegs(); ++r) {
    auto it = thread0.find(dot(to.getCoord(r, 0, 0), coefs));
    if (it == thread0.end())
      return std::nullopt;
    map[r] = it->second;
  }
  for (int64_t t = 1; t < to.getNumThreads(); ++t) {
    int64_t lane = t % 32, warp = t / 32;
    for (int64_t r = 0; r < to.getNumRegs(); ++r)
      if (dot(to.getCoord(r, lane, warp), coefs) !=
          dot(from.getCoord(map[r], lane, warp), fromStrides))
        return std::nullopt;
  }
  return map;
}

Value mlir::ism::relayout(OpBuilder &b, Operation *op, LoweringContext &context,
                          Value src, const Distribution &from,
                          const Distribution &to, ArrayRef<int64_t> coefs) {
  Location loc = op->getLoc();
  if (std::optional<SmallVector<int64_t>> map =
          findRegisterMap(from, to, coefs)) {
    bool identity = from.getNumRegs() == to.getNumRegs() &&
                    llvm::all_of(llvm::enumerate(*map), [](auto pair) {
                      return int64_t(pair.index()) == pair.value();
                    });
    if (identity)
      return src;
    return vector::ShuffleOp::create(b, loc, src, src, *map);
  }

  return relayoutThroughScratch(b, op, context, src, from, to, coefs);
}

Value mlir::ism::relayoutThroughScratch(OpBuilder &b, Operation *op,
                                        LoweringContext &context, Value src,
                                        const Distribution &from,
                                        const Distribution &to,
                                        ArrayRef<int64_t> coefs, Value writes) {
  // Each thread writes its elements at their row-major position in the
  // source tile, then reads what it needs.
  Location loc = op->getLoc();
  Type elementType = getStorageType(from.getType().getElementType());
  int64_t numElements = from.getType().getNumElements();
  unsigned region = context.beginScratch(op);
  Value scratch = context.getScratch(b, loc, region, elementType, numElements);
  Value lane = context.getLaneId(b, loc), warp = context.getWarpId(b, loc);
  SmallVector<int64_t> fromStrides = rowMajorStrides(from.getShape());
  auto write = [&](OpBuilder &wb, Location wl) {
    Value fromBase =
        dot(wb, wl, from.getThreadCoord(wb, wl, lane, warp), fromStrides);
    for (int64_t r = 0; r < from.getNumRegs(); ++r) {
      Value index = arith::AddIOp::create(
          wb, wl, fromBase,
          indexConstant(wb, wl, dot(from.getRegCoord(r), fromStrides)));
      memref::StoreOp::create(wb, wl, extractReg(wb, wl, src, r), scratch,
                              index);
    }
  };
  if (writes) {
    scf::IfOp::create(b, loc, writes, [&](OpBuilder &wb, Location wl) {
      write(wb, wl);
      scf::YieldOp::create(wb, wl);
    });
  } else {
    write(b, loc);
  }
  context.barrier(b, loc);
  Value toBase = dot(b, loc, to.getThreadCoord(b, loc, lane, warp), coefs);
  SmallVector<Value> elements;
  for (int64_t r = 0; r < to.getNumRegs(); ++r) {
    Value index = arith::AddIOp::create(
        b, loc, toBase, indexConstant(b, loc, dot(to.getRegCoord(r), coefs)));
    elements.push_back(memref::LoadOp::create(b, loc, scratch, index));
  }
  if (context.needsTrailingBarrier(region))
    context.barrier(b, loc);
  return buildVector(b, loc, elementType, elements);
}

SmallVector<Value> mlir::ism::combine(OpBuilder &b, Location loc,
                                      Region &combiner, ValueRange lhs,
                                      ValueRange rhs) {
  Block &block = combiner.front();
  IRMapping mapping;
  for (auto [i, value] : llvm::enumerate(lhs))
    mapping.map(block.getArgument(i), value);
  for (auto [i, value] : llvm::enumerate(rhs))
    mapping.map(block.getArgument(lhs.size() + i), value);
  for (Operation &op : block.without_terminator())
    b.clone(op, mapping);
  SmallVector<Value> results;
  for (Value v : block.getTerminator()->getOperands())
    results.push_back(mapping.lookupOrDefault(v));
  return results;
}

LogicalResult mlir::ism::checkDistributable(ConversionPatternRewriter &rewriter,
                                            Operation *op, Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return success();
  std::string reason;
  if (!Distribution::isSupported(tensor, reason))
    return rewriter.notifyMatchFailure(op, "tile " + reason);
  return success();
}

void mlir::ism::emitTraceRecord(OpBuilder &b, Location loc, Value buffer,
                                Value index, Value isFirst, Value start,
                                Value end, int64_t tag, Value t) {
  emitTraceRecord(b, loc, buffer, index, isFirst, start, end,
                  arith::ConstantIntOp::create(b, loc, tag, 64), t);
}

void mlir::ism::emitTraceRecord(OpBuilder &b, Location loc, Value buffer,
                                Value index, Value isFirst, Value start,
                                Value end, Value tag, Value t) {
  Value zero = arith::ConstantIntOp::create(b, loc, 0, 64);
  Value record = arith::AndIOp::create(
      b, loc, isFirst,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, buffer, zero));
  scf::IfOp::create(b, loc, record, [&](OpBuilder &tb, Location tl) {
    Type i64 = tb.getI64Type();
    Value offset = arith::MulIOp::create(
        tb, tl, arith::IndexCastOp::create(tb, tl, i64, index),
        arith::ConstantIntOp::create(tb, tl, 32, 64));
    Value base = arith::AddIOp::create(tb, tl, buffer, offset);
    Value smid = arith::ExtUIOp::create(
        tb, tl, i64, NVVM::SmIdOp::create(tb, tl, tb.getI32Type()));
    Value where = arith::OrIOp::create(
        tb, tl,
        arith::ShLIOp::create(tb, tl, smid,
                              arith::ConstantIntOp::create(tb, tl, 32, 64)),
        tag);
    Value words[4] = {start, end, where,
                      arith::IndexCastOp::create(tb, tl, i64, t)};
    auto ptrType = LLVM::LLVMPointerType::get(tb.getContext(), 1);
    for (auto [i, word] : llvm::enumerate(words)) {
      Value address = arith::AddIOp::create(
          tb, tl, base, arith::ConstantIntOp::create(tb, tl, 8 * i, 64));
      LLVM::StoreOp::create(tb, tl, word,
                            LLVM::IntToPtrOp::create(tb, tl, ptrType, address));
    }
    scf::YieldOp::create(tb, tl);
  });
}

SmallVector<Value, 3> mlir::ism::programCoords(OpBuilder &b, Location loc,
                                               Value t, ArrayRef<Value> grid) {
  Value perZ = arith::MulIOp::create(b, loc, grid[0], grid[1]);
  return {arith::RemUIOp::create(b, loc, t, grid[0]),
          arith::RemUIOp::create(
              b, loc, arith::DivUIOp::create(b, loc, t, grid[0]), grid[1]),
          arith::DivUIOp::create(b, loc, t, perZ)};
}

/// The value of grid query `op` (ism.program_id: `pid`'s, ism.num_programs:
/// `sizes`'s entry for its axis), cast to its type at `b`'s insertion point;
/// null when `op` is no grid query.
static Value gridQueryValue(OpBuilder &b, Operation *op, ArrayRef<Value> pid,
                            ArrayRef<Value> sizes) {
  Value with;
  if (auto id = dyn_cast<ProgramIdOp>(op))
    with = pid[unsigned(id.getAxis())];
  else if (auto n = dyn_cast<NumProgramsOp>(op))
    with = sizes[unsigned(n.getAxis())];
  else
    return Value();
  Type type = op->getResult(0).getType();
  if (!type.isIndex())
    with = arith::IndexCastOp::create(b, op->getLoc(), type, with);
  return with;
}

void mlir::ism::replaceGridQueries(Block *block, ArrayRef<Value> pid,
                                   ArrayRef<Value> sizes) {
  SmallVector<Operation *> queries;
  block->walk([&](Operation *op) {
    if (isa<ProgramIdOp, NumProgramsOp>(op))
      queries.push_back(op);
  });
  for (Operation *op : queries) {
    OpBuilder rb(op);
    op->getResult(0).replaceAllUsesWith(gridQueryValue(rb, op, pid, sizes));
    op->erase();
  }
}

void mlir::ism::cloneForProgram(OpBuilder &b, ArrayRef<Operation *> ops,
                                ArrayRef<Value> pid, ArrayRef<Value> sizes,
                                IRMapping &map) {
  for (Operation *op : ops) {
    if (Value with = gridQueryValue(b, op, pid, sizes))
      map.map(op->getResult(0), with);
    else
      b.clone(*op, map);
  }
}
