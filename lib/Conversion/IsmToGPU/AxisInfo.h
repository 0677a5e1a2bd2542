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
/// v, v + 1, ..., v + c - 1; `constancy[d] = c` that they are all equal;
/// `divisibility[d] = k` that the first value of each of those contiguity
/// runs is a multiple of k (of every value, where contiguity[d] is 1).
/// `elementDivisibility` divides every value. 1 is always true.
struct AxisFacts {
  SmallVector<int64_t> contiguity, constancy, divisibility;
  int64_t elementDivisibility = 1;
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

/// How an ism.gather or ism.scatter (before conversion) moves each thread's
/// elements.
struct IndexedVectors {
  /// Elements a vector access: the thread's register run along the
  /// layout's fast dimension, capped at 16 bytes, and reduced to what the
  /// index tiles guarantee (the last memref dimension's index contiguous
  /// along that dimension, the other indices and the mask constant along
  /// it). A power of two; 1: element accesses.
  unsigned width = 1;
  /// Whether the last index at the start of each vector is a multiple of
  /// `width`: then alignment and whole-vector bounds follow from uniform
  /// facts of the memref (its base, strides and last size), and no thread
  /// needs a test of its own.
  bool aligned = false;
};
IndexedVectors getIndexedVectors(Operation *gatherOrScatter, AxisInfo &info);

} // namespace mlir::ism

#endif // ISM_LIB_CONVERSION_ISMTOGPU_AXISINFO_H
