//===- AxisInfo.cpp - contiguity and constancy of integer tiles -----------===//

#include "AxisInfo.h"
#include "Distribution.h"

#include "ism/Dialect/Ism/IR/IsmOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/TypeSwitch.h"

#include <numeric>

using namespace mlir;
using namespace mlir::ism;

namespace {

/// No facts beyond runs of one element.
AxisFacts unknown(int64_t rank) {
  return {SmallVector<int64_t>(rank, 1), SmallVector<int64_t>(rank, 1)};
}

/// Every element equal.
AxisFacts uniform(ArrayRef<int64_t> shape) {
  AxisFacts f = unknown(shape.size());
  f.constancy.assign(shape.begin(), shape.end());
  return f;
}

/// Constant in the runs where every operand is.
AxisFacts commonConstancy(ArrayRef<const AxisFacts *> operands, int64_t rank) {
  AxisFacts f = unknown(rank);
  for (int64_t d = 0; d < rank; ++d) {
    int64_t k = 0;
    for (const AxisFacts *o : operands)
      k = std::gcd(k, o->constancy[d]);
    f.constancy[d] = std::max<int64_t>(k, 1);
  }
  return f;
}

} // namespace

AxisFacts AxisInfo::get(Value tile) {
  auto it = facts.find(tile);
  if (it != facts.end())
    return it->second;
  AxisFacts f = compute(tile);
  facts.try_emplace(tile, f);
  return f;
}

AxisFacts AxisInfo::compute(Value tile) {
  auto type = dyn_cast<RankedTensorType>(tile.getType());
  if (!type)
    return {};
  int64_t rank = type.getRank();
  ArrayRef<int64_t> shape = type.getShape();
  Operation *def = tile.getDefiningOp();
  if (!def)
    return unknown(rank);
  AxisFacts f =
      TypeSwitch<Operation *, AxisFacts>(def)
          .Case([&](RangeOp) {
            AxisFacts r = unknown(rank);
            r.contiguity[0] = shape[0];
            return r;
          })
          .Case([&](SplatOp) { return uniform(shape); })
          .Case([&](arith::ConstantOp op) {
            auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
            return dense && dense.isSplat() ? uniform(shape) : unknown(rank);
          })
          .Case([&](BroadcastOp op) {
            auto srcType = cast<RankedTensorType>(op.getSrc().getType());
            AxisFacts r = get(op.getSrc());
            for (int64_t d = 0; d < rank; ++d)
              if (srcType.getDimSize(d) == 1 && shape[d] != 1) {
                r.constancy[d] = shape[d];
                r.contiguity[d] = 1;
              }
            return r;
          })
          .Case([&](ExpandDimsOp op) {
            AxisFacts r = get(op.getSrc());
            r.contiguity.insert(r.contiguity.begin() + op.getAxis(), 1);
            r.constancy.insert(r.constancy.begin() + op.getAxis(), 1);
            return r;
          })
          .Case([&](ConvertLayoutOp op) { return get(op.getSrc()); })
          .Case([&](TransOp op) {
            AxisFacts s = get(op.getSrc());
            AxisFacts r = unknown(rank);
            for (auto [d, from] : llvm::enumerate(op.getOrder())) {
              r.contiguity[d] = s.contiguity[from];
              r.constancy[d] = s.constancy[from];
            }
            return r;
          })
          .Case<arith::ExtSIOp, arith::ExtUIOp, arith::IndexCastOp>(
              [&](Operation *op) { return get(op->getOperand(0)); })
          .Case([&](arith::AddIOp op) {
            AxisFacts a = get(op.getLhs());
            AxisFacts b = get(op.getRhs());
            AxisFacts r = commonConstancy({&a, &b}, rank);
            for (int64_t d = 0; d < rank; ++d)
              r.contiguity[d] =
                  std::max(std::gcd(a.contiguity[d], b.constancy[d]),
                           std::gcd(a.constancy[d], b.contiguity[d]));
            return r;
          })
          .Case([&](arith::SubIOp op) {
            AxisFacts a = get(op.getLhs());
            AxisFacts b = get(op.getRhs());
            AxisFacts r = commonConstancy({&a, &b}, rank);
            for (int64_t d = 0; d < rank; ++d)
              r.contiguity[d] = std::gcd(a.contiguity[d], b.constancy[d]);
            return r;
          })
          .Case([&](arith::SelectOp op) {
            AxisFacts c = get(op.getCondition());
            AxisFacts a = get(op.getTrueValue());
            AxisFacts b = get(op.getFalseValue());
            if (c.constancy.empty()) // a scalar condition: uniform
              return commonConstancy({&a, &b}, rank);
            AxisFacts r = commonConstancy({&c, &a, &b}, rank);
            for (int64_t d = 0; d < rank; ++d)
              r.contiguity[d] = std::gcd(
                  c.constancy[d], std::gcd(a.contiguity[d], b.contiguity[d]));
            return r;
          })
          .Case<arith::MulIOp, arith::AndIOp, arith::OrIOp, arith::XOrIOp,
                arith::CmpIOp, arith::MaxSIOp, arith::MinSIOp, arith::DivSIOp,
                arith::DivUIOp, arith::RemSIOp, arith::RemUIOp>(
              [&](Operation *op) {
                SmallVector<AxisFacts> values;
                for (Value v : op->getOperands())
                  values.push_back(get(v));
                SmallVector<const AxisFacts *> operands;
                for (const AxisFacts &v : values)
                  operands.push_back(&v);
                if (llvm::any_of(operands, [](const AxisFacts *o) {
                      return o->constancy.empty();
                    }))
                  return unknown(rank);
                return commonConstancy(operands, rank);
              })
          .Default([&](Operation *) { return unknown(rank); });
  if (f.contiguity.size() != size_t(rank))
    return unknown(rank);
  for (int64_t d = 0; d < rank; ++d)
    if (shape[d] == 1)
      f.contiguity[d] = f.constancy[d] = 1;
  return f;
}

unsigned mlir::ism::getIndexedVectorWidth(Operation *op, AxisInfo &info) {
  RankedTensorType tile;
  MemRefType memref;
  OperandRange indices = op->getOperands().take_front(0);
  Value mask;
  if (auto gather = dyn_cast<GatherOp>(op)) {
    tile = gather.getType();
    memref = gather.getBase().getType();
    indices = gather.getIndices();
    mask = gather.getMask();
  } else if (auto scatter = dyn_cast<ScatterOp>(op)) {
    tile = scatter.getValue().getType();
    memref = scatter.getBase().getType();
    indices = scatter.getIndices();
    mask = scatter.getMask();
  } else {
    return 1;
  }
  std::string reason;
  if (!Distribution::isSupported(tile, reason) || indices.empty())
    return 1;
  Distribution dist(tile);
  auto [fast, run] = dist.getAccessRun();
  unsigned bytes = memref.getElementTypeBitWidth() / 8;
  if (bytes == 0 || bytes > 16)
    return 1;
  int64_t vec = std::min<int64_t>(run, 16 / bytes);
  vec = std::gcd(vec, info.get(indices.back()).contiguity[fast]);
  for (Value index : indices.drop_back())
    vec = std::gcd(vec, info.get(index).constancy[fast]);
  if (mask)
    vec = std::gcd(vec, info.get(mask).constancy[fast]);
  // The largest power of two dividing it (runs start at its multiples).
  vec &= -vec;
  return vec > 1 ? unsigned(vec) : 1;
}
