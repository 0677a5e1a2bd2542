//===- AxisInfo.h - contiguity and constancy of integer tiles ---*- C++ -*-===//
//
// What the lowering of indexed accesses (ism.gather, ism.scatter) needs to
// know about their index tiles to move several elements with one vector
// access: along a dimension, in which aligned runs the values count up by
// one (contiguity) or stay equal (constancy). Triton's AxisInfo analysis
// answers the same question for pointer tensors; this one is smaller: it
// follows the ops that build index tiles (ranges, splats, broadcasts,
// expand_dims, additions, casts) and knows nothing of anything else.
//
//===----------------------------------------------------------------------===//

#ifndef ISM_LIB_CONVERSION_ISMTOGPU_AXISINFO_H
#define ISM_LIB_CONVERSION_ISMTOGPU_AXISINFO_H

#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::ism {

/// Per dimension of a tile: `contiguity[d] = c` says that in every run of c
/// consecutive elements along d starting at a multiple of c, the values are
/// v, v + 1, ..., v + c - 1; `constancy[d] = c` that they are all equal.
/// 1 is always true (a run of one element).
struct AxisFacts {
  SmallVector<int64_t> contiguity, constancy;
};

class AxisInfo {
public:
  /// The facts of the integer tile `tile` (a ranked tensor; any other value
  /// gets none). A copy: later queries may move the memoized ones.
  AxisFacts get(Value tile);

private:
  AxisFacts compute(Value tile);
  llvm::DenseMap<Value, AxisFacts> facts;
};

/// Elements of `gatherOrScatter` (an ism.gather or ism.scatter before
/// conversion) that each thread can move with one vector access: its
/// register run along the layout's fast dimension, capped at 16 bytes, and
/// reduced to what the index tiles guarantee (the last memref dimension's
/// index contiguous along that dimension, the other indices and the mask
/// constant along it). A power of two; 1 when nothing is guaranteed.
unsigned getIndexedVectorWidth(Operation *gatherOrScatter, AxisInfo &info);

} // namespace mlir::ism

#endif // ISM_LIB_CONVERSION_ISMTOGPU_AXISINFO_H
