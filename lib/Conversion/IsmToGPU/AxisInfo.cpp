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

/// Divisibility is tracked up to this power of two (0 is divisible by all).
constexpr int64_t kMaxDivisibility = int64_t(1) << 30;

/// The largest power of two dividing `v`, capped.
int64_t powerOfTwoDividing(int64_t v) {
  if (v == 0)
    return kMaxDivisibility;
  uint64_t u = v < 0 ? uint64_t(0) - uint64_t(v) : uint64_t(v);
  return std::min<int64_t>(int64_t(u & (~u + 1)), kMaxDivisibility);
}

/// The largest power of two known to divide the integer scalar `v`.
int64_t scalarDivisibility(Value v, unsigned depth = 0) {
  if (depth > 16)
    return 1;
  Operation *def = v.getDefiningOp();
  if (!def)
    return 1;
  if (auto c = dyn_cast<arith::ConstantOp>(def)) {
    if (auto i = dyn_cast<IntegerAttr>(c.getValue()))
      return powerOfTwoDividing(i.getValue().getSExtValue());
    return 1;
  }
  if (isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp,
          arith::ExtUIOp>(def))
    return scalarDivisibility(def->getOperand(0), depth + 1);
  if (isa<arith::MulIOp>(def))
    return std::min(kMaxDivisibility,
                    scalarDivisibility(def->getOperand(0), depth + 1) *
                        scalarDivisibility(def->getOperand(1), depth + 1));
  if (isa<arith::AddIOp, arith::SubIOp>(def))
    return std::gcd(scalarDivisibility(def->getOperand(0), depth + 1),
                    scalarDivisibility(def->getOperand(1), depth + 1));
  return 1;
}

/// No facts beyond runs of one element.
AxisFacts unknown(int64_t rank) {
  return {SmallVector<int64_t>(rank, 1), SmallVector<int64_t>(rank, 1),
          SmallVector<int64_t>(rank, 1), 1};
}

/// Every element equal, a multiple of `divisibility`.
AxisFacts uniform(ArrayRef<int64_t> shape, int64_t divisibility) {
  AxisFacts f = unknown(shape.size());
  f.constancy.assign(shape.begin(), shape.end());
  f.divisibility.assign(shape.size(), divisibility);
  f.elementDivisibility = divisibility;
  return f;
}

/// Constant in the runs where every operand is.
void commonConstancy(AxisFacts &f, ArrayRef<const AxisFacts *> operands) {
  for (size_t d = 0; d < f.constancy.size(); ++d) {
    int64_t k = 0;
    for (const AxisFacts *o : operands)
      k = std::gcd(k, o->constancy[d]);
    f.constancy[d] = std::max<int64_t>(k, 1);
  }
}

/// What divides operand `x` at the first element of each run of `run`
/// elements along `d` of a result whose runs split x's runs.
int64_t divisibilityAt(const AxisFacts &x, size_t d, int64_t run) {
  return x.contiguity[d] == 1 ? x.divisibility[d]
                              : std::gcd(x.divisibility[d], run);
}

/// The divisibility facts of a sum or difference of `a` and `b`, once the
/// result's contiguity is known.
void sumDivisibility(AxisFacts &f, const AxisFacts &a, const AxisFacts &b) {
  for (size_t d = 0; d < f.contiguity.size(); ++d)
    f.divisibility[d] = std::gcd(divisibilityAt(a, d, f.contiguity[d]),
                                 divisibilityAt(b, d, f.contiguity[d]));
  f.elementDivisibility =
      std::gcd(a.elementDivisibility, b.elementDivisibility);
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
          .Case([&](RangeOp op) {
            AxisFacts r = unknown(rank);
            r.contiguity[0] = shape[0];
            r.divisibility[0] = powerOfTwoDividing(op.getStart());
            return r;
          })
          .Case([&](SplatOp op) {
            return uniform(shape, scalarDivisibility(op.getSrc()));
          })
          .Case([&](arith::ConstantOp op) {
            auto dense = dyn_cast<DenseIntElementsAttr>(op.getValue());
            if (!dense || !dense.isSplat())
              return unknown(rank);
            return uniform(shape,
                           powerOfTwoDividing(
                               dense.getSplatValue<APInt>().getSExtValue()));
          })
          .Case([&](BroadcastOp op) {
            auto srcType = cast<RankedTensorType>(op.getSrc().getType());
            AxisFacts r = get(op.getSrc());
            for (int64_t d = 0; d < rank; ++d)
              if (srcType.getDimSize(d) == 1 && shape[d] != 1) {
                r.constancy[d] = shape[d];
                r.contiguity[d] = 1;
                r.divisibility[d] = r.elementDivisibility;
              }
            return r;
          })
          .Case([&](ExpandDimsOp op) {
            AxisFacts r = get(op.getSrc());
            r.contiguity.insert(r.contiguity.begin() + op.getAxis(), 1);
            r.constancy.insert(r.constancy.begin() + op.getAxis(), 1);
            r.divisibility.insert(r.divisibility.begin() + op.getAxis(),
                                  r.elementDivisibility);
            return r;
          })
          .Case([&](ConvertLayoutOp op) { return get(op.getSrc()); })
          .Case([&](TransOp op) {
            AxisFacts s = get(op.getSrc());
            AxisFacts r = unknown(rank);
            for (auto [d, from] : llvm::enumerate(op.getOrder())) {
              r.contiguity[d] = s.contiguity[from];
              r.constancy[d] = s.constancy[from];
              r.divisibility[d] = s.divisibility[from];
            }
            r.elementDivisibility = s.elementDivisibility;
            return r;
          })
          .Case<arith::ExtSIOp, arith::ExtUIOp, arith::IndexCastOp>(
              [&](Operation *op) { return get(op->getOperand(0)); })
          .Case<arith::AddIOp, arith::SubIOp>([&](Operation *op) {
            // a - b counts up where a does and b is constant; a + b also
            // where b counts up and a is constant.
            bool add = isa<arith::AddIOp>(op);
            AxisFacts a = get(op->getOperand(0));
            AxisFacts b = get(op->getOperand(1));
            AxisFacts r = unknown(rank);
            commonConstancy(r, {&a, &b});
            for (int64_t d = 0; d < rank; ++d) {
              r.contiguity[d] = std::gcd(a.contiguity[d], b.constancy[d]);
              if (add)
                r.contiguity[d] = std::max(
                    r.contiguity[d], std::gcd(a.constancy[d], b.contiguity[d]));
            }
            sumDivisibility(r, a, b);
            return r;
          })
          .Case([&](arith::MulIOp op) {
            AxisFacts a = get(op.getLhs());
            AxisFacts b = get(op.getRhs());
            AxisFacts r = unknown(rank);
            commonConstancy(r, {&a, &b});
            r.elementDivisibility =
                std::min(kMaxDivisibility,
                         a.elementDivisibility * b.elementDivisibility);
            r.divisibility.assign(rank, r.elementDivisibility);
            return r;
          })
          .Case([&](arith::SelectOp op) {
            AxisFacts c = get(op.getCondition());
            AxisFacts a = get(op.getTrueValue());
            AxisFacts b = get(op.getFalseValue());
            AxisFacts r = unknown(rank);
            if (c.constancy.empty()) { // a scalar condition: uniform
              commonConstancy(r, {&a, &b});
            } else {
              commonConstancy(r, {&c, &a, &b});
              for (int64_t d = 0; d < rank; ++d)
                r.contiguity[d] = std::gcd(
                    c.constancy[d], std::gcd(a.contiguity[d], b.contiguity[d]));
            }
            sumDivisibility(r, a, b);
            return r;
          })
          .Case<arith::AndIOp, arith::OrIOp, arith::XOrIOp, arith::CmpIOp,
                arith::MaxSIOp, arith::MinSIOp, arith::DivSIOp, arith::DivUIOp,
                arith::RemSIOp, arith::RemUIOp>([&](Operation *op) {
            SmallVector<AxisFacts> values;
            for (Value v : op->getOperands())
              values.push_back(get(v));
            SmallVector<const AxisFacts *> operands;
            for (const AxisFacts &v : values) {
              if (v.constancy.empty())
                return unknown(rank);
              operands.push_back(&v);
            }
            AxisFacts r = unknown(rank);
            commonConstancy(r, operands);
            return r;
          })
          .Default([&](Operation *) { return unknown(rank); });
  if (f.contiguity.size() != size_t(rank) ||
      f.divisibility.size() != size_t(rank))
    return unknown(rank);
  for (int64_t d = 0; d < rank; ++d)
    if (shape[d] == 1) {
      f.contiguity[d] = f.constancy[d] = 1;
      f.divisibility[d] = f.elementDivisibility;
    }
  return f;
}

IndexedVectors mlir::ism::getIndexedVectors(Operation *op, AxisInfo &info) {
  RankedTensorType tile;
  MemRefType memref;
  OperandRange indices = op->getOperands().take_front(0);
  Value mask;
  if (auto gather = dyn_cast<GatherOp>(op)) {
    tile = gather.getType();
    memref = gather.getBase().getType();
    indices = gather.getIndices();
    mask = gather.getMask();
  } else if (auto async = dyn_cast<AsyncGatherOp>(op)) {
    tile = async.getTileType();
    memref = async.getBase().getType();
    indices = async.getIndices();
    mask = async.getMask();
  } else if (auto scatter = dyn_cast<ScatterOp>(op)) {
    tile = scatter.getValue().getType();
    memref = scatter.getBase().getType();
    indices = scatter.getIndices();
    mask = scatter.getMask();
  } else {
    return {};
  }
  std::string reason;
  if (!Distribution::isSupported(tile, reason) || indices.empty())
    return {};
  Distribution dist(tile);
  auto [fast, run] = dist.getAccessRun();
  unsigned bytes = memref.getElementTypeBitWidth() / 8;
  if (bytes == 0 || bytes > 16)
    return {};
  AxisFacts last = info.get(indices.back());
  int64_t vec = std::min<int64_t>(run, 16 / bytes);
  vec = std::gcd(vec, last.contiguity[fast]);
  for (Value index : indices.drop_back())
    vec = std::gcd(vec, info.get(index).constancy[fast]);
  if (mask)
    vec = std::gcd(vec, info.get(mask).constancy[fast]);
  // The largest power of two dividing it (runs start at its multiples).
  vec &= -vec;
  if (vec < 2)
    return {};
  return {unsigned(vec), last.divisibility[fast] % vec == 0};
}
