//===- Distribution.cpp - how a blocked tile maps onto threads ------------===//

#include "Distribution.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::ism;

Distribution::Distribution(RankedTensorType type) : type(type) {
  if (auto slice = dyn_cast<SliceEncodingAttr>(type.getEncoding())) {
    sliceDim = slice.getDim();
    parent = std::make_shared<Distribution>(getSliceParentType(type));
    numRegs = parent->numRegs;
    return;
  }
  if ((mma = dyn_cast<MmaEncodingAttr>(type.getEncoding()))) {
    // A one-column tile keeps only the row bases, a one-row tile only the
    // column bases, a single element ([1, 1], a scale broadcast over an
    // accumulator) none: every thread holds it.
    column = getShape()[1] == 1;
    row = getShape()[0] == 1;
    if (column && row)
      regBases = {};
    else if (column)
      regBases = {{8, 0}};
    else if (row)
      regBases = {{0, 1}};
    else
      regBases = {{0, 1}, {8, 0}};
    for (int64_t c = 8; !column && c < mmaWarpN(); c *= 2)
      regBases.push_back({0, c});
    for (int64_t r = 16 * mmaWarpsM(); r < getShape()[0]; r *= 2)
      regBases.push_back({r, 0});
    numRegs = int64_t(1) << regBases.size();
    return;
  }
  layout = cast<BlockedEncodingAttr>(type.getEncoding());
  numRegs = 1;
  for (unsigned d = 0; d < getRank(); ++d)
    numRegs *= layout.getSizePerThread()[d] * reps(d);
}

std::pair<unsigned, unsigned> Distribution::getAccessRun() const {
  if (!parent)
    return {getFastDim(), getContiguity()};
  // Only slices whose root layout is blocked: an accumulator's row or
  // column keeps the element-wise accesses it has always had.
  const Distribution *root = parent.get();
  while (root->parent)
    root = root->parent.get();
  if (!root->layout)
    return {getFastDim(), getContiguity()};
  auto [fast, run] = parent->getAccessRun();
  if (fast == sliceDim)
    return {getFastDim(), getContiguity()};
  return {fast > sliceDim ? fast - 1 : fast, run};
}

int64_t Distribution::getNumThreads() const {
  if (parent)
    return parent->getNumThreads();
  if (mma)
    return 32 * mmaWarpsM() * mmaWarpsN();
  return 32 * layout.getNumWarps();
}

RankedTensorType Distribution::getSliceParentType(RankedTensorType type) {
  auto slice = cast<SliceEncodingAttr>(type.getEncoding());
  SmallVector<int64_t> shape(type.getShape());
  shape.insert(shape.begin() + slice.getDim(), 1);
  return RankedTensorType::get(shape, type.getElementType(),
                               slice.getUnslicedLayout());
}

bool Distribution::isSupported(RankedTensorType type, std::string &reason) {
  if (auto slice = dyn_cast_or_null<SliceEncodingAttr>(type.getEncoding())) {
    if (slice.getDim() > type.getRank()) {
      reason = "has an #ism.slice layout whose dim exceeds the tile's rank";
      return false;
    }
    return isSupported(getSliceParentType(type), reason);
  }
  if (auto mma = dyn_cast_or_null<MmaEncodingAttr>(type.getEncoding())) {
    ArrayRef<unsigned> warps = mma.getWarpsPerCTA();
    if (type.getRank() != 2 || warps.size() != 2 ||
        (type.getDimSize(0) != 1 &&
         type.getDimSize(0) < 16 * int64_t(warps[0])) ||
        (type.getDimSize(1) != 1 &&
         type.getDimSize(1) < 8 * int64_t(warps[1]))) {
      reason = "has an #ism.mma layout whose warps do not tile it (each "
               "warp needs at least 16 rows and 8 columns, or the tile one "
               "row or one column)";
      return false;
    }
    return true;
  }
  auto layout = dyn_cast_or_null<BlockedEncodingAttr>(type.getEncoding());
  if (!layout) {
    reason = "has no #ism.blocked layout (run ism-assign-layouts first)";
    return false;
  }
  for (unsigned d = 0; d < type.getRank(); ++d) {
    if (layout.getSizePerThread()[d] > type.getDimSize(d)) {
      reason = "has a layout whose sizePerThread exceeds the tile";
      return false;
    }
  }
  return true;
}

int64_t Distribution::footprint(unsigned dim) const {
  return int64_t(layout.getSizePerThread()[dim]) *
         layout.getThreadsPerWarp()[dim] * layout.getWarpsPerCTA()[dim];
}

int64_t Distribution::reps(unsigned dim) const {
  return std::max<int64_t>(1, type.getDimSize(dim) / footprint(dim));
}

SmallVector<int64_t> Distribution::getRegCoord(int64_t reg) const {
  if (parent)
    return sliced(parent->getRegCoord(reg));
  SmallVector<int64_t> coord(getRank(), 0);
  if (mma) {
    for (auto [bit, basis] : llvm::enumerate(regBases))
      if (reg & (int64_t(1) << bit))
        for (unsigned d = 0; d < 2; ++d)
          coord[d] += basis[d];
    return coord;
  }
  for (unsigned d : layout.getOrder()) {
    int64_t spt = layout.getSizePerThread()[d];
    int64_t s = reg % spt;
    reg /= spt;
    int64_t rep = reg % reps(d);
    reg /= reps(d);
    coord[d] = rep * footprint(d) + s;
  }
  return coord;
}

SmallVector<int64_t> Distribution::getThreadCoord(int64_t lane,
                                                  int64_t warp) const {
  if (parent)
    return sliced(parent->getThreadCoord(lane, warp));
  SmallVector<int64_t> coord(getRank(), 0);
  if (mma) {
    coord[0] = row ? 0 : (lane / 4) % 8 + 16 * (warp % mmaWarpsM());
    coord[1] = column ? 0
                      : 2 * (lane % 4) +
                            mmaWarpN() * ((warp / mmaWarpsM()) % mmaWarpsN());
    return coord;
  }
  for (unsigned d : layout.getOrder()) {
    int64_t t = layout.getThreadsPerWarp()[d], w = layout.getWarpsPerCTA()[d];
    int64_t laneD = lane % t, warpD = warp % w;
    lane /= t;
    warp /= w;
    int64_t spt = layout.getSizePerThread()[d];
    int64_t c = laneD * spt + warpD * spt * t;
    if (footprint(d) > type.getDimSize(d))
      c &= type.getDimSize(d) - 1;
    coord[d] = c;
  }
  return coord;
}

SmallVector<int64_t> Distribution::getCoord(int64_t reg, int64_t lane,
                                            int64_t warp) const {
  SmallVector<int64_t> coord = getRegCoord(reg);
  SmallVector<int64_t> thread = getThreadCoord(lane, warp);
  for (unsigned d = 0; d < getRank(); ++d)
    coord[d] += thread[d];
  return coord;
}

/// Product of `values[k]` over the dimensions that come before `dim` in
/// `order`.
static int64_t prefixProduct(ArrayRef<unsigned> values,
                             ArrayRef<unsigned> order, unsigned dim) {
  int64_t p = 1;
  for (unsigned d : order) {
    if (d == dim)
      break;
    p *= values[d];
  }
  return p;
}

/// An integer constant of `type` (index or an integer type).
static Value intConstant(OpBuilder &b, Location loc, Type type, int64_t v) {
  return arith::ConstantOp::create(b, loc, type, b.getIntegerAttr(type, v));
}

Value Distribution::getLaneCoord(OpBuilder &b, Location loc, Value lane,
                                 unsigned dim) const {
  if (parent)
    return parent->getLaneCoord(b, loc, lane, parentDim(dim));
  Type t = lane.getType();
  if (mma) {
    if (dim == 1)
      return arith::RemUIOp::create(b, loc, lane, intConstant(b, loc, t, 4));
    Value v = arith::DivUIOp::create(b, loc, lane, intConstant(b, loc, t, 4));
    return arith::RemUIOp::create(b, loc, v, intConstant(b, loc, t, 8));
  }
  int64_t below =
      prefixProduct(layout.getThreadsPerWarp(), layout.getOrder(), dim);
  Value v = arith::DivUIOp::create(b, loc, lane, intConstant(b, loc, t, below));
  return arith::RemUIOp::create(
      b, loc, v, intConstant(b, loc, t, layout.getThreadsPerWarp()[dim]));
}

Value Distribution::getWarpCoord(OpBuilder &b, Location loc, Value warp,
                                 unsigned dim) const {
  if (parent)
    return parent->getWarpCoord(b, loc, warp, parentDim(dim));
  Type t = warp.getType();
  if (mma) {
    if (dim == 0)
      return arith::RemUIOp::create(b, loc, warp,
                                    intConstant(b, loc, t, mmaWarpsM()));
    Value v = arith::DivUIOp::create(b, loc, warp,
                                     intConstant(b, loc, t, mmaWarpsM()));
    return arith::RemUIOp::create(b, loc, v,
                                  intConstant(b, loc, t, mmaWarpsN()));
  }
  int64_t below =
      prefixProduct(layout.getWarpsPerCTA(), layout.getOrder(), dim);
  Value v = arith::DivUIOp::create(b, loc, warp, intConstant(b, loc, t, below));
  return arith::RemUIOp::create(
      b, loc, v, intConstant(b, loc, t, layout.getWarpsPerCTA()[dim]));
}

SmallVector<Value> Distribution::getThreadCoord(OpBuilder &b, Location loc,
                                                Value lane, Value warp,
                                                Type intType) const {
  if (intType && !intType.isIndex()) {
    lane = arith::IndexCastUIOp::create(b, loc, intType, lane);
    warp = arith::IndexCastUIOp::create(b, loc, intType, warp);
  }
  if (parent)
    return sliced(parent->getThreadCoord(b, loc, lane, warp));
  Type t = lane.getType();
  SmallVector<Value> coord(getRank());
  if (mma) {
    // row = lane/4 + 16 * warpM; col = 2 * (lane % 4) + warpN * mmaWarpN;
    // 0 along a dimension of size 1.
    coord[0] =
        row ? intConstant(b, loc, t, 0)
            : arith::AddIOp::create(
                  b, loc, getLaneCoord(b, loc, lane, 0),
                  arith::MulIOp::create(b, loc, getWarpCoord(b, loc, warp, 0),
                                        intConstant(b, loc, t, 16)));
    coord[1] =
        column
            ? intConstant(b, loc, t, 0)
            : arith::AddIOp::create(
                  b, loc,
                  arith::MulIOp::create(b, loc, getLaneCoord(b, loc, lane, 1),
                                        intConstant(b, loc, t, 2)),
                  arith::MulIOp::create(b, loc, getWarpCoord(b, loc, warp, 1),
                                        intConstant(b, loc, t, mmaWarpN())));
    return coord;
  }
  for (unsigned d = 0; d < getRank(); ++d) {
    int64_t spt = layout.getSizePerThread()[d];
    int64_t threads = layout.getThreadsPerWarp()[d];
    Value laneD = getLaneCoord(b, loc, lane, d);
    Value warpD = getWarpCoord(b, loc, warp, d);
    Value c = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, laneD, intConstant(b, loc, t, spt)),
        arith::MulIOp::create(b, loc, warpD,
                              intConstant(b, loc, t, spt * threads)));
    if (footprint(d) > type.getDimSize(d))
      c = arith::AndIOp::create(b, loc, c,
                                intConstant(b, loc, t, type.getDimSize(d) - 1));
    coord[d] = c;
  }
  return coord;
}

Value Distribution::getOwnerCondition(OpBuilder &b, Location loc, Value lane,
                                      Value warp) const {
  if (parent)
    return parent->getOwnerCondition(b, loc, lane, warp);
  if (mma && column && row) {
    // A single element: every thread holds it; the first owns it.
    Type t = lane.getType();
    Value zero = intConstant(b, loc, t, 0);
    Value owner;
    for (unsigned d = 0; d < 2; ++d)
      for (Value c :
           {getLaneCoord(b, loc, lane, d), getWarpCoord(b, loc, warp, d)}) {
        Value first =
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, c, zero);
        owner = owner ? arith::AndIOp::create(b, loc, owner, first) : first;
      }
    return owner;
  }
  if (mma && (column || row)) {
    // The first of the lanes (and of the warps) along the dimension whose
    // size is 1 that hold the same elements: 4 lanes of a row of a
    // one-column tile, 8 of a column pair of a one-row tile.
    unsigned copies = column ? 1 : 0;
    Type t = lane.getType();
    Value zero = intConstant(b, loc, t, 0);
    Value owner =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                              getLaneCoord(b, loc, lane, copies), zero);
    if ((column ? mmaWarpsN() : mmaWarpsM()) > 1)
      owner = arith::AndIOp::create(
          b, loc, owner,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                getWarpCoord(b, loc, warp, copies), zero));
    return owner;
  }
  if (mma)
    return {};
  Type t = lane.getType();
  Value owner;
  for (unsigned d = 0; d < getRank(); ++d) {
    if (footprint(d) <= type.getDimSize(d))
      continue;
    // The coordinate before getThreadCoord wraps it: the first copy is the
    // one that did not wrap.
    int64_t spt = layout.getSizePerThread()[d];
    int64_t threads = layout.getThreadsPerWarp()[d];
    Value c = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, getLaneCoord(b, loc, lane, d),
                              intConstant(b, loc, t, spt)),
        arith::MulIOp::create(b, loc, getWarpCoord(b, loc, warp, d),
                              intConstant(b, loc, t, spt * threads)));
    Value first =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, c,
                              intConstant(b, loc, t, type.getDimSize(d)));
    owner = owner ? arith::AndIOp::create(b, loc, owner, first) : first;
  }
  return owner;
}

int64_t Distribution::getDistinctLanes(unsigned dim) const {
  if (parent)
    return parent->getDistinctLanes(parentDim(dim));
  if (mma)
    return dim == 0 ? (row ? 1 : 8) : column ? 1 : 4;
  int64_t spt = layout.getSizePerThread()[dim];
  return std::min<int64_t>(layout.getThreadsPerWarp()[dim],
                           std::max<int64_t>(1, type.getDimSize(dim) / spt));
}

unsigned Distribution::getLaneBitOffset(unsigned dim) const {
  if (parent)
    return parent->getLaneBitOffset(parentDim(dim));
  if (mma)
    return dim == 0 ? 2 : 0;
  return llvm::Log2_64(
      prefixProduct(layout.getThreadsPerWarp(), layout.getOrder(), dim));
}

int64_t Distribution::getDistinctWarps(unsigned dim) const {
  if (parent)
    return parent->getDistinctWarps(parentDim(dim));
  if (mma)
    return dim == 0 ? (row ? 1 : mmaWarpsM()) : column ? 1 : mmaWarpsN();
  int64_t perWarp =
      int64_t(layout.getSizePerThread()[dim]) * layout.getThreadsPerWarp()[dim];
  return std::min<int64_t>(
      layout.getWarpsPerCTA()[dim],
      std::max<int64_t>(1, type.getDimSize(dim) / perWarp));
}

int64_t Distribution::linearize(ArrayRef<int64_t> coord,
                                ArrayRef<int64_t> shape) {
  int64_t index = 0;
  for (unsigned d = 0; d < shape.size(); ++d)
    index = index * shape[d] + coord[d];
  return index;
}
