//===- IsmAttrs.cpp - ism layout encodings --------------------------------===//

#include "ism/Dialect/Ism/IR/IsmAttrs.h"
#include "ism/Dialect/Ism/IR/IsmDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::ism;

#include "ism/Dialect/Ism/IR/IsmEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "ism/Dialect/Ism/IR/IsmAttrs.cpp.inc"

void IsmDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "ism/Dialect/Ism/IR/IsmAttrs.cpp.inc"
      >();
}

FailureOr<SmallVector<unsigned>> mlir::ism::parseDimList(AsmParser &parser) {
  SmallVector<unsigned> dims;
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
        unsigned value;
        if (parser.parseInteger(value))
          return failure();
        dims.push_back(value);
        return success();
      }))
    return failure();
  return dims;
}

void mlir::ism::printDimList(AsmPrinter &printer, ArrayRef<unsigned> dims) {
  printer << '[';
  llvm::interleaveComma(dims, printer);
  printer << ']';
}

namespace {
using EmitErrorFn = function_ref<InFlightDiagnostic()>;

/// Checks that every entry of `values` (named `name`) is a power of two.
LogicalResult verifyPowersOfTwo(EmitErrorFn emitError, StringRef name,
                                ArrayRef<unsigned> values) {
  for (unsigned v : values)
    if (!llvm::isPowerOf2_32(v))
      return emitError() << name << " entries must be powers of two, got " << v;
  return success();
}

/// Checks that `order` is a permutation of [0, rank).
LogicalResult verifyOrder(EmitErrorFn emitError, ArrayRef<unsigned> order,
                          size_t rank) {
  if (order.size() != rank)
    return emitError() << "order has " << order.size()
                       << " entries but the layout has rank " << rank;
  SmallVector<bool> seen(rank, false);
  for (unsigned d : order) {
    if (d >= rank || seen[d])
      return emitError() << "order must be a permutation of 0.." << rank - 1;
    seen[d] = true;
  }
  return success();
}

/// Checks that a layout of rank `layoutRank` fits a tensor shape.
LogicalResult verifyRank(EmitErrorFn emitError, StringRef layout,
                         size_t layoutRank, ArrayRef<int64_t> shape) {
  if (layoutRank != shape.size())
    return emitError() << "#ism." << layout << " layout has rank " << layoutRank
                       << " but the tensor has rank " << shape.size();
  return success();
}

unsigned product(ArrayRef<unsigned> values) {
  unsigned p = 1;
  for (unsigned v : values)
    p *= v;
  return p;
}
} // namespace

//===----------------------------------------------------------------------===//
// BlockedEncodingAttr
//===----------------------------------------------------------------------===//

unsigned BlockedEncodingAttr::getNumWarps() const {
  return product(getWarpsPerCTA());
}

LogicalResult BlockedEncodingAttr::verify(EmitErrorFn emitError,
                                          ArrayRef<unsigned> sizePerThread,
                                          ArrayRef<unsigned> threadsPerWarp,
                                          ArrayRef<unsigned> warpsPerCTA,
                                          ArrayRef<unsigned> order) {
  size_t rank = order.size();
  if (rank == 0)
    return emitError() << "#ism.blocked needs at least one dimension";
  if (sizePerThread.size() != rank || threadsPerWarp.size() != rank ||
      warpsPerCTA.size() != rank)
    return emitError() << "sizePerThread, threadsPerWarp, warpsPerCTA and "
                          "order must have one entry per dimension";
  if (failed(verifyPowersOfTwo(emitError, "sizePerThread", sizePerThread)) ||
      failed(verifyPowersOfTwo(emitError, "threadsPerWarp", threadsPerWarp)) ||
      failed(verifyPowersOfTwo(emitError, "warpsPerCTA", warpsPerCTA)))
    return failure();
  if (product(threadsPerWarp) != 32)
    return emitError() << "threadsPerWarp must multiply to 32 (a warp), got "
                       << product(threadsPerWarp);
  if (product(warpsPerCTA) > 32)
    return emitError() << "warpsPerCTA multiplies to " << product(warpsPerCTA)
                       << " warps; a CTA has at most 32";
  return verifyOrder(emitError, order, rank);
}

LogicalResult BlockedEncodingAttr::verifyEncoding(ArrayRef<int64_t> shape, Type,
                                                  EmitErrorFn emitError) const {
  return verifyRank(emitError, "blocked", getRank(), shape);
}

//===----------------------------------------------------------------------===//
// MmaEncodingAttr
//===----------------------------------------------------------------------===//

LogicalResult MmaEncodingAttr::verify(EmitErrorFn emitError, unsigned version,
                                      ArrayRef<unsigned> warpsPerCTA,
                                      ArrayRef<unsigned> instrShape) {
  if (version != 2 && version != 3)
    return emitError() << "#ism.mma version must be 2 (mma.sync) or 3 "
                          "(wgmma), got "
                       << version;
  if (warpsPerCTA.size() != 2 && warpsPerCTA.size() != 3)
    return emitError() << "#ism.mma warpsPerCTA must have 2 entries (or 3 "
                          "with a batch dimension)";
  if (failed(verifyPowersOfTwo(emitError, "warpsPerCTA", warpsPerCTA)))
    return failure();
  if (product(warpsPerCTA) > 32)
    return emitError() << "warpsPerCTA multiplies to " << product(warpsPerCTA)
                       << " warps; a CTA has at most 32";
  if (instrShape.size() != 3)
    return emitError() << "#ism.mma instrShape must be [M, N, K]";
  if (instrShape[0] != 16)
    return emitError() << "#ism.mma instrShape M must be 16 (one warp's rows), "
                          "got "
                       << instrShape[0];
  if (instrShape[1] == 0 || instrShape[1] % 8 != 0 || instrShape[1] > 256)
    return emitError() << "#ism.mma instrShape N must be a multiple of 8 up to "
                          "256, got "
                       << instrShape[1];
  if (instrShape[2] == 0 || !llvm::isPowerOf2_32(instrShape[2]))
    return emitError() << "#ism.mma instrShape K must be a power of two, got "
                       << instrShape[2];
  if (version == 3 && product(warpsPerCTA) % 4 != 0)
    return emitError() << "#ism.mma version 3 (wgmma) needs whole warpgroups: "
                          "warpsPerCTA must multiply to a multiple of 4";
  return success();
}

LogicalResult MmaEncodingAttr::verifyEncoding(ArrayRef<int64_t> shape, Type,
                                              EmitErrorFn emitError) const {
  return verifyRank(emitError, "mma", getWarpsPerCTA().size(), shape);
}

//===----------------------------------------------------------------------===//
// SliceEncodingAttr
//===----------------------------------------------------------------------===//

/// The rank of the tiles a layout fits, or 0 when `layout` is not one
/// that #ism.slice can take apart.
static unsigned getSliceableRank(Attribute layout) {
  if (auto blocked = dyn_cast<BlockedEncodingAttr>(layout))
    return blocked.getRank();
  if (auto mma = dyn_cast<MmaEncodingAttr>(layout))
    return mma.getWarpsPerCTA().size() == 2 ? 2 : 0;
  if (auto slice = dyn_cast<SliceEncodingAttr>(layout)) {
    unsigned rank = getSliceableRank(slice.getParent());
    return rank > 1 ? rank - 1 : 0;
  }
  return 0;
}

LogicalResult SliceEncodingAttr::verify(EmitErrorFn emitError, unsigned dim,
                                        Attribute parent) {
  unsigned rank = getSliceableRank(parent);
  if (rank < 2)
    return emitError() << "#ism.slice parent must be a #ism.blocked layout, "
                          "a 2-D #ism.mma layout or an #ism.slice, of rank "
                          "2 or more, got "
                       << parent;
  if (dim >= rank)
    return emitError() << "#ism.slice dim must be a dimension of the parent "
                          "layout (rank "
                       << rank << "), got " << dim;
  return success();
}

Attribute SliceEncodingAttr::getUnslicedLayout() const {
  auto blocked = dyn_cast<BlockedEncodingAttr>(getParent());
  if (!blocked || blocked.getSizePerThread()[getDim()] == 1)
    return getParent();
  SmallVector<unsigned> sizePerThread(blocked.getSizePerThread());
  sizePerThread[getDim()] = 1;
  return BlockedEncodingAttr::get(getContext(), sizePerThread,
                                  blocked.getThreadsPerWarp(),
                                  blocked.getWarpsPerCTA(), blocked.getOrder());
}

LogicalResult SliceEncodingAttr::verifyEncoding(ArrayRef<int64_t> shape, Type,
                                                EmitErrorFn emitError) const {
  return verifyRank(emitError, "slice", getSliceableRank(getParent()) - 1,
                    shape);
}

//===----------------------------------------------------------------------===//
// DotOperandEncodingAttr
//===----------------------------------------------------------------------===//

LogicalResult DotOperandEncodingAttr::verify(EmitErrorFn emitError,
                                             unsigned opIdx, Attribute parent,
                                             unsigned kWidth) {
  if (opIdx > 1)
    return emitError() << "#ism.dot_op opIdx must be 0 (A) or 1 (B), got "
                       << opIdx;
  if (!isa<MmaEncodingAttr, BlockedEncodingAttr>(parent))
    return emitError() << "#ism.dot_op parent must be an #ism.mma or "
                          "#ism.blocked layout, got "
                       << parent;
  if (kWidth == 0 || !llvm::isPowerOf2_32(kWidth))
    return emitError() << "#ism.dot_op kWidth must be a power of two, got "
                       << kWidth;
  return success();
}

LogicalResult
DotOperandEncodingAttr::verifyEncoding(ArrayRef<int64_t> shape, Type,
                                       EmitErrorFn emitError) const {
  unsigned parentRank =
      TypeSwitch<Attribute, unsigned>(getParent())
          .Case([](MmaEncodingAttr mma) { return mma.getWarpsPerCTA().size(); })
          .Case([](BlockedEncodingAttr b) { return b.getRank(); })
          .Default([](Attribute) { return 0u; });
  return verifyRank(emitError, "dot_op", parentRank, shape);
}

//===----------------------------------------------------------------------===//
// SharedEncodingAttr
//===----------------------------------------------------------------------===//

LogicalResult SharedEncodingAttr::verify(EmitErrorFn emitError, unsigned vec,
                                         unsigned perPhase, unsigned maxPhase,
                                         ArrayRef<unsigned> order) {
  if (failed(verifyPowersOfTwo(emitError, "vec, perPhase and maxPhase",
                               {vec, perPhase, maxPhase})))
    return failure();
  if (order.empty())
    return emitError() << "#ism.shared needs at least one dimension";
  return verifyOrder(emitError, order, order.size());
}

LogicalResult SharedEncodingAttr::verifyEncoding(ArrayRef<int64_t> shape, Type,
                                                 EmitErrorFn emitError) const {
  return verifyRank(emitError, "shared", getOrder().size(), shape);
}

//===----------------------------------------------------------------------===//
// PartitionAttr
//===----------------------------------------------------------------------===//

LogicalResult PartitionAttr::verify(
    EmitErrorFn emitError, unsigned warpBase, unsigned numWarps,
    ArrayRef<unsigned> registers, ArrayRef<unsigned> barriers,
    unsigned sharedMemory, unsigned stages, int workCounter, unsigned groupSize,
    unsigned clusterM, unsigned clusterN, unsigned operandStages, int after) {
  if (after < -1)
    return emitError() << "after must be -1 (none) or the index of a wgmma "
                          "partition, got "
                       << after;
  if (after >= 0 && (stages > 0 || operandStages > 0 || workCounter < 0 ||
                     numWarps != 4 || warpBase % 4 != 0))
    return emitError() << "a partition that runs after a wgmma partition's "
                          "consumers is one warpgroup of a counter-driven "
                          "launch without tensor cores";
  if (operandStages > 8)
    return emitError() << "operand_stages must be from 0 (the lowering's "
                          "choice) to 8, got "
                       << operandStages;
  if (operandStages > 0 && stages > 0)
    return emitError() << "operand_stages is for the products of a partition "
                          "without a wgmma K loop; a wgmma partition's ring "
                          "depth is its stages";
  if (clusterM < 1 || clusterN < 1 || clusterM * clusterN > 2)
    return emitError() << "cluster_m = " << clusterM
                       << " and cluster_n = " << clusterN
                       << ": a partition's cluster is 1x1, 2x1 or 1x2 CTAs";
  if (clusterM * clusterN > 1 && stages == 0)
    return emitError() << "only a wgmma partition (stages > 0) can have a "
                          "cluster";
  if (numWarps == 0)
    return emitError() << "a partition needs at least one warp";
  if (!registers.empty()) {
    if (numWarps % 4 != 0 || warpBase % 4 != 0)
      return emitError()
             << "registers are set per warpgroup (setmaxnreg), so the "
                "partition must start and end on a warpgroup: warp_base = "
             << warpBase << ", num_warps = " << numWarps;
    if (registers.size() != numWarps / 4)
      return emitError() << "registers needs one value per warpgroup ("
                         << numWarps / 4 << "), got " << registers.size();
    for (unsigned r : registers)
      if (r < 24 || r > 256 || r % 8 != 0)
        return emitError() << "registers must be multiples of 8 from 24 to "
                              "256 (what setmaxnreg takes), got "
                           << r;
  }
  for (unsigned id : barriers)
    if (id < 1 || id > 15)
      return emitError() << "named barrier ids must be from 1 to 15 (0 is "
                            "the CTA-wide barrier), got "
                         << id;
  if (barriers.empty())
    return emitError() << "a partition needs at least one named barrier";
  if (workCounter < -1)
    return emitError() << "work_counter must be -1 (none) or a counter "
                          "index, got "
                       << workCounter;
  return success();
}
