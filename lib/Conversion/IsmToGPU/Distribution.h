//===- Distribution.h - how a blocked tile maps onto threads ----*- C++ -*-===//
//
// A blocked layout gives every thread of a CTA (or of a partition) a fixed
// set of tile elements, held in one vector per thread ("registers").
// Distribution computes, for register r of thread (lane, warp), the element's
// coordinates: a static part that depends on r only plus a per-thread part
// that depends on (lane, warp) only.
//
//===----------------------------------------------------------------------===//

#ifndef ISM_LIB_CONVERSION_ISMTOGPU_DISTRIBUTION_H
#define ISM_LIB_CONVERSION_ISMTOGPU_DISTRIBUTION_H

#include "ism/Dialect/Ism/IR/IsmAttrs.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

#include <memory>

namespace mlir::ism {

class Distribution {
public:
  /// The distribution of `type`, which must carry a #ism.blocked encoding
  /// whose sizePerThread fits the shape, an #ism.mma accumulator encoding,
  /// or an #ism.slice of one (see isSupported).
  explicit Distribution(RankedTensorType type);

  /// Whether `type` has a blocked layout this lowering can distribute;
  /// otherwise `reason` says why.
  static bool isSupported(RankedTensorType type, std::string &reason);

  RankedTensorType getType() const { return type; }
  ArrayRef<int64_t> getShape() const { return type.getShape(); }
  unsigned getRank() const { return type.getRank(); }
  /// The tensor-core accumulator layout, when the tile has one (else null).
  MmaEncodingAttr getMmaLayout() const { return mma; }
  /// Whether the tile is a slice (#ism.slice) of a layout of higher rank.
  bool isSlice() const { return parent != nullptr; }
  /// Elements each thread holds.
  int64_t getNumRegs() const { return numRegs; }
  /// Threads the layout spreads over (32 x warps).
  int64_t getNumThreads() const;
  /// The contiguous (fastest) dimension.
  unsigned getFastDim() const {
    return parent ? 0 : mma ? 1 : layout.getOrder()[0];
  }
  /// Consecutive registers that are consecutive along the fast dimension.
  unsigned getContiguity() const {
    if (parent || column)
      return 1;
    return mma ? 2 : layout.getSizePerThread()[getFastDim()];
  }
  /// For memory accesses: the dimension along which consecutive registers
  /// run, and how many do (getFastDim and getContiguity, except that a
  /// slice of a blocked layout keeps its parent's run unless the slice
  /// removed that dimension: a row of cos values sliced from a 4-d tile's
  /// layout still loads 16 bytes at a time).
  std::pair<unsigned, unsigned> getAccessRun() const;

  /// Static part of register `reg`'s coordinates.
  SmallVector<int64_t> getRegCoord(int64_t reg) const;
  /// The per-thread part of the coordinates, for a concrete thread.
  SmallVector<int64_t> getThreadCoord(int64_t lane, int64_t warp) const;
  /// The per-thread part of the coordinates, as values of `type` (index by
  /// default; i32 keeps in-tile address arithmetic in 32-bit registers).
  /// `lane` and `warp` are index values.
  SmallVector<Value> getThreadCoord(OpBuilder &b, Location loc, Value lane,
                                    Value warp, Type type = {}) const;
  /// Whether the thread (index values `lane`, `warp`) holds the first copy
  /// of its elements. A blocked layout whose footprint exceeds the tile
  /// along a dimension wraps around it, so several threads hold (and would
  /// store) the same elements; stores and atomics take this predicate so
  /// that each element is written once (an in-place update could otherwise
  /// have one copy store before another copy has loaded). Null when no
  /// element is held twice.
  Value getOwnerCondition(OpBuilder &b, Location loc, Value lane,
                          Value warp) const;
  /// The full coordinates of register `reg` of a concrete thread.
  SmallVector<int64_t> getCoord(int64_t reg, int64_t lane, int64_t warp) const;

  /// Lanes along `dim` that hold distinct data, and the first lane-id bit
  /// of `dim` (lanes along a dimension differ in a contiguous bit range).
  int64_t getDistinctLanes(unsigned dim) const;
  unsigned getLaneBitOffset(unsigned dim) const;
  /// Warps along `dim` that hold distinct data.
  int64_t getDistinctWarps(unsigned dim) const;
  /// The warp's index along `dim`, as a value of `warp`'s type.
  Value getWarpCoord(OpBuilder &b, Location loc, Value warp,
                     unsigned dim) const;
  /// The lane's index along `dim`, as a value of `lane`'s type.
  Value getLaneCoord(OpBuilder &b, Location loc, Value lane,
                     unsigned dim) const;

  /// Row-major linear index of `coord` in `shape`.
  static int64_t linearize(ArrayRef<int64_t> coord, ArrayRef<int64_t> shape);

  /// The parent tile of an #ism.slice tile: its shape with a dimension of
  /// size 1 put back, in SliceEncodingAttr::getUnslicedLayout().
  static RankedTensorType getSliceParentType(RankedTensorType type);

private:
  /// Footprint of one CTA along each dimension, and repetitions.
  int64_t footprint(unsigned dim) const;
  int64_t reps(unsigned dim) const;

  /// The accumulator layout of mma.sync (m16n8) and wgmma (m64nN): a warp
  /// owns 16-row stripes; lane l holds rows l/4 and l/4 + 8 and the column
  /// pair 2(l%4), 2(l%4)+1 of each 8-column block. Register bit i moves the
  /// coordinates by regBases[i] (bit 0: the column pair, bit 1: +8 rows,
  /// then the 8-column blocks of the warp's columns, then repetitions along
  /// M); warps step 16 rows (warpsPerCTA[0] of them), then warpN columns.
  int64_t mmaWarpsM() const { return mma.getWarpsPerCTA()[0]; }
  int64_t mmaWarpsN() const { return mma.getWarpsPerCTA()[1]; }
  /// Columns one warp covers.
  int64_t mmaWarpN() const { return getShape()[1] / mmaWarpsN(); }

  /// Parent dimension of dimension `dim` of a slice.
  unsigned parentDim(unsigned dim) const {
    return dim >= sliceDim ? dim + 1 : dim;
  }
  /// Drops the sliced dimension from parent coordinates.
  template <typename T>
  SmallVector<T> sliced(SmallVector<T> coord) const {
    coord.erase(coord.begin() + sliceDim);
    return coord;
  }

  RankedTensorType type;
  BlockedEncodingAttr layout;
  MmaEncodingAttr mma;
  /// An #ism.mma tile of one column ([M, 1], e.g. row statistics expanded
  /// for a broadcast): lanes and warps along N hold copies.
  bool column = false;
  /// An #ism.mma tile of one row ([1, N], e.g. column indices expanded for
  /// a broadcast): lanes and warps along M hold copies. Both `row` and
  /// `column`: a single element, which every thread holds.
  bool row = false;
  /// A slice: the parent layout's distribution of the tile with a size-1
  /// dimension `sliceDim` inserted.
  std::shared_ptr<const Distribution> parent;
  unsigned sliceDim = 0;
  SmallVector<SmallVector<int64_t, 2>> regBases;
  int64_t numRegs;
};

} // namespace mlir::ism

#endif // ISM_LIB_CONVERSION_ISMTOGPU_DISTRIBUTION_H
