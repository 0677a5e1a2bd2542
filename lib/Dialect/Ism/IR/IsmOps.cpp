//===- IsmOps.cpp - ism operations: verifiers, folders, assembly ----------===//

#include "ism/Dialect/Ism/IR/IsmOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/FunctionImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::ism;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

Type mlir::ism::getMaskType(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  return RankedTensorType::get(tensor.getShape(),
                               IntegerType::get(type.getContext(), 1),
                               tensor.getEncoding());
}

bool mlir::ism::isTile(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.hasStaticShape() &&
         llvm::all_of(tensor.getShape(), [](int64_t d) {
           return d > 0 && llvm::isPowerOf2_64(d);
         });
}

/// Checks that a static tensor type has at most kMaxTileElements elements
/// (any tensor value of a kernel: ism ops, and arith and scf on tiles).
static LogicalResult verifyTileSize(Operation *op, Type type, StringRef kind,
                                    unsigned index) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return success();
  int64_t elements = 1;
  bool overflow = false;
  for (int64_t size : tensor.getShape())
    overflow |= __builtin_mul_overflow(elements, size, &elements);
  if (!overflow && elements <= kMaxTileElements)
    return success();
  InFlightDiagnostic diag = op->emitOpError() << kind << " #" << index
                                              << " of type " << type << " has ";
  if (overflow)
    diag << "more than 2^63";
  else
    diag << elements;
  return diag << " elements; a tile has at most " << kMaxTileElements
              << " (2^20)";
}

/// Checks one value's type for the TileShaped trait.
static LogicalResult verifyTileValue(Operation *op, Type type, StringRef kind,
                                     unsigned index) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return success();
  if (isTile(type))
    return verifyTileSize(op, type, kind, index);
  for (auto [d, size] : llvm::enumerate(tensor.getShape())) {
    if (ShapedType::isDynamic(size))
      return op->emitOpError() << kind << " #" << index << " of type " << type
                               << " is not a tile: dimension " << d
                               << " is dynamic; tiles have static shapes";
    if (size <= 0 || !llvm::isPowerOf2_64(size))
      return op->emitOpError()
             << kind << " #" << index << " of type " << type
             << " is not a tile: dimension " << d << " is " << size
             << ", but tile dimensions must be powers of two";
  }
  return success();
}

LogicalResult mlir::OpTrait::ism::impl::verifyTileShaped(Operation *op) {
  for (auto [i, type] : llvm::enumerate(op->getOperandTypes()))
    if (failed(verifyTileValue(op, type, "operand", i)))
      return failure();
  for (auto [i, type] : llvm::enumerate(op->getResultTypes()))
    if (failed(verifyTileValue(op, type, "result", i)))
      return failure();
  return success();
}

/// Prints a static shape as `128x64`.
static std::string shapeStr(ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  llvm::interleave(shape, os, "x");
  return s;
}

/// Checks that two tiles have the same element type.
static LogicalResult verifySameElementType(Operation *op, Type a, Type b,
                                           StringRef aName, StringRef bName) {
  Type ea = getElementTypeOrSelf(a), eb = getElementTypeOrSelf(b);
  if (ea != eb)
    return op->emitOpError()
           << aName << " element type " << ea << " differs from " << bName
           << " element type " << eb;
  return success();
}

/// Returns the splat value of a constant tile, or null.
static Attribute getConstantSplat(Attribute attr) {
  auto dense = dyn_cast_if_present<DenseElementsAttr>(attr);
  if (!dense || !dense.isSplat())
    return {};
  return dense.getSplatValue<Attribute>();
}

/// Folds an op whose operand is a constant splat tile to a splat of its
/// result type.
static OpFoldResult foldSplatOperand(Attribute operand, Type resultType) {
  Attribute splat = getConstantSplat(operand);
  if (!splat)
    return {};
  return DenseElementsAttr::get(cast<ShapedType>(resultType), splat);
}

namespace {
/// Replaces a shape-only op (broadcast, expand_dims, reshape, trans) of an
/// `ism.splat` by a splat of the result type: every element is the scalar.
template <typename OpTy>
struct ShapeOpOfSplat : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    auto splat = op.getSrc().template getDefiningOp<SplatOp>();
    if (!splat)
      return rewriter.notifyMatchFailure(op, "source is not an ism.splat");
    rewriter.replaceOpWithNewOp<SplatOp>(op, op.getType(), splat.getSrc());
    return success();
  }
};
} // namespace

/// Verifies that an op that queries the launch grid sits in a kernel.
static LogicalResult verifyInKernel(Operation *op) {
  if (!op->getParentOfType<KernelOp>())
    return op->emitOpError("must be inside an ism.kernel");
  return success();
}

//===----------------------------------------------------------------------===//
// KernelOp
//===----------------------------------------------------------------------===//

ParseResult KernelOp::parse(OpAsmParser &parser, OperationState &result) {
  auto buildFuncType =
      [](Builder &builder, ArrayRef<Type> argTypes, ArrayRef<Type> results,
         function_interface_impl::VariadicFlag,
         std::string &) { return builder.getFunctionType(argTypes, results); };
  SMLoc loc = parser.getCurrentLocation();
  if (function_interface_impl::parseFunctionOp(
          parser, result, /*allowVariadic=*/false,
          getFunctionTypeAttrName(result.name), buildFuncType,
          getArgAttrsAttrName(result.name), getResAttrsAttrName(result.name)))
    return failure();
  // The inherent attributes must satisfy their constraints before the op's
  // properties are built from the dictionary, which would drop one of the
  // wrong kind (found by fuzzing: `num_warps = @k` crashed the verifier).
  // Declarative formats check this in their generated parsers; a custom one
  // must ask.
  return verifyInherentAttrs(result.name, result.attributes,
                             [&] { return parser.emitError(loc); });
}

void KernelOp::print(OpAsmPrinter &p) {
  function_interface_impl::printFunctionOp(
      p, *this, /*isVariadic=*/false, getFunctionTypeAttrName(),
      getArgAttrsAttrName(), getResAttrsAttrName());
}

LogicalResult KernelOp::verify() {
  if (!getResultTypes().empty())
    return emitOpError("must not return values; write results through memref "
                       "arguments");
  if (!getNumWarpsAttr())
    return emitOpError("requires 'num_warps', a 32-bit integer");
  int32_t numWarps = getNumWarps();
  // A kernel of partitions (ism.warp_specialize) has as many warps as its
  // partitions together.
  bool partitioned = !getBody().empty() &&
                     !getBody().front().getOps<WarpSpecializeOp>().empty();
  if (numWarps < 1 || numWarps > 32 ||
      (!partitioned && !llvm::isPowerOf2_32(numWarps)))
    return emitOpError("num_warps must be a power of two from 1 to 32, got ")
           << numWarps;
  for (StringRef flag : {"ring_producer", "ping_pong", "persistent"})
    if (Attribute value = (*this)->getAttr(flag);
        value && !isa<BoolAttr>(value))
      return emitOpError() << flag << " must be true or false, got " << value;
  // ism-pipeline-gathers: the ring slots of a pipelined gather (1: none).
  if (Attribute value = (*this)->getAttr("gather_stages")) {
    auto stages = dyn_cast<IntegerAttr>(value);
    if (!stages || stages.getInt() < 1 || stages.getInt() > 8)
      return emitOpError("gather_stages must be an integer from 1 (gathers "
                         "not pipelined) to 8, got ")
             << value;
  }
  // ism-pipeline-loads: how many iterations a loop's loads run ahead, plus
  // one (1: none).
  if (Attribute value = (*this)->getAttr("load_stages")) {
    auto stages = dyn_cast<IntegerAttr>(value);
    if (!stages || stages.getInt() < 1 || stages.getInt() > 8)
      return emitOpError("load_stages must be an integer from 1 (loads not "
                         "issued ahead) to 8, got ")
             << value;
  }
  if (std::optional<int32_t> minCtas = getMinCtasPerSm()) {
    // An SM holds at most 32 CTAs and 2048 threads (sm_80 and sm_90).
    if (*minCtas < 1 || *minCtas > 32)
      return emitOpError("min_ctas_per_sm must be from 1 to 32 (an SM holds "
                         "at most 32 CTAs), got ")
             << *minCtas;
    int64_t threads = int64_t(*minCtas) * 32 * numWarps;
    if (threads > 2048)
      return emitOpError("min_ctas_per_sm = ")
             << *minCtas << " with " << numWarps << " warps asks for "
             << threads << " threads on one SM; an SM holds at most 2048";
  }
  for (auto [i, type] : llvm::enumerate(getArgumentTypes())) {
    if (isa<MemRefType, IntegerType, IndexType, FloatType>(type))
      continue;
    return emitOpError("argument #")
           << i << " has type " << type
           << "; kernel arguments must be memrefs (global memory) or scalars "
              "(integer, index or float)";
  }
  if (getBody().empty())
    return emitOpError("must have a body");
  return success();
}

KernelOp::ArgumentAccess KernelOp::getArgumentAccess(unsigned index) {
  ArgumentAccess access;
  if (getBody().empty() || index >= getNumArguments())
    return access;
  Value param = getArgument(index);
  for (Operation *user : param.getUsers()) {
    // The ring copies read their base (they declare no effects: an op
    // with only a read and no result would be erased as dead).
    if (isa<AsyncCopyOp, AsyncLoadOp, AsyncGatherOp>(user)) {
      access.reads = true;
      continue;
    }
    // An op without declared effects, or one making a view of it (whose
    // uses this does not follow), counts as both.
    auto effects = dyn_cast<MemoryEffectOpInterface>(user);
    if (!effects || llvm::any_of(user->getResultTypes(),
                                 llvm::IsaPred<BaseMemRefType>)) {
      access.reads = access.writes = true;
      continue;
    }
    access.reads |= bool(effects.getEffectOnValue<MemoryEffects::Read>(param));
    access.writes |=
        bool(effects.getEffectOnValue<MemoryEffects::Write>(param));
  }
  return access;
}

LogicalResult KernelOp::verifyRegions() {
  for (Block &block : getBody())
    if (!isa<ReturnOp>(block.getTerminator()))
      return emitOpError("body must end with ism.return");
  // Every tensor value of the body is a tile of bounded size, also those of
  // ops that do not verify tiles themselves (arith, math, scf).
  WalkResult result = walk([&](Operation *op) {
    for (auto [i, type] : llvm::enumerate(op->getResultTypes()))
      if (failed(verifyTileSize(op, type, "result", i)))
        return WalkResult::interrupt();
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (auto [i, arg] : llvm::enumerate(block.getArguments()))
          if (failed(verifyTileSize(op, arg.getType(), "block argument", i)))
            return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

//===----------------------------------------------------------------------===//
// Grid queries
//===----------------------------------------------------------------------===//

LogicalResult ProgramIdOp::verify() { return verifyInKernel(*this); }
LogicalResult NumProgramsOp::verify() { return verifyInKernel(*this); }

//===----------------------------------------------------------------------===//
// RangeOp
//===----------------------------------------------------------------------===//

LogicalResult RangeOp::verify() {
  auto type = getType();
  if (type.getRank() != 1)
    return emitOpError("result must be a 1-D tile, got ") << type;
  int64_t start = getStart(), end = getEnd();
  if (end <= start)
    return emitOpError("end (")
           << end << ") must be greater than start (" << start << ")";
  if (end - start != type.getDimSize(0))
    return emitOpError("range ")
           << start << " to " << end << " has " << end - start
           << " elements but the result tile has " << type.getDimSize(0);
  // The largest value of the (signed) element type; an i0 holds only 0
  // (found by ism-interpret-fuzzer: the shift by width - 1 overflowed).
  unsigned width = type.getElementType().getIntOrFloatBitWidth();
  if (width < 32 &&
      end - 1 > (width == 0 ? 0 : (int64_t(1) << (width - 1)) - 1))
    return emitOpError("end - 1 (")
           << end - 1 << ") does not fit in " << type.getElementType();
  return success();
}

//===----------------------------------------------------------------------===//
// SplatOp
//===----------------------------------------------------------------------===//

OpFoldResult SplatOp::fold(FoldAdaptor adaptor) {
  auto value = dyn_cast_if_present<TypedAttr>(adaptor.getSrc());
  if (!value || !isa<IntegerAttr, FloatAttr>(value))
    return {};
  return DenseElementsAttr::get(cast<ShapedType>(getType()), value);
}

//===----------------------------------------------------------------------===//
// BroadcastOp
//===----------------------------------------------------------------------===//

LogicalResult BroadcastOp::verify() {
  auto srcType = getSrc().getType();
  auto resType = getType();
  if (failed(
          verifySameElementType(*this, srcType, resType, "source", "result")))
    return failure();
  if (srcType.getRank() != resType.getRank())
    return emitOpError("source rank ")
           << srcType.getRank() << " differs from result rank "
           << resType.getRank() << "; use ism.expand_dims to add dimensions";
  for (int64_t d = 0; d < srcType.getRank(); ++d) {
    int64_t s = srcType.getDimSize(d), r = resType.getDimSize(d);
    if (s != r && s != 1)
      return emitOpError("source dimension ")
             << d << " is " << s << ", which is neither 1 nor the result's "
             << r;
  }
  return success();
}

OpFoldResult BroadcastOp::fold(FoldAdaptor adaptor) {
  if (getSrc().getType() == getType())
    return getSrc();
  return foldSplatOperand(adaptor.getSrc(), getType());
}

namespace {
/// broadcast(broadcast(x)) -> broadcast(x).
struct BroadcastOfBroadcast : OpRewritePattern<BroadcastOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(BroadcastOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getSrc().getDefiningOp<BroadcastOp>();
    if (!inner)
      return rewriter.notifyMatchFailure(op, "source is not a broadcast");
    rewriter.modifyOpInPlace(
        op, [&] { op.getSrcMutable().assign(inner.getSrc()); });
    return success();
  }
};
} // namespace

void BroadcastOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *context) {
  results.add<ShapeOpOfSplat<BroadcastOp>, BroadcastOfBroadcast>(context);
}

//===----------------------------------------------------------------------===//
// ExpandDimsOp
//===----------------------------------------------------------------------===//

LogicalResult ExpandDimsOp::verify() {
  auto srcType = getSrc().getType();
  auto resType = getType();
  if (failed(
          verifySameElementType(*this, srcType, resType, "source", "result")))
    return failure();
  int64_t axis = getAxis();
  if (axis < 0 || axis > srcType.getRank())
    return emitOpError("axis ")
           << axis << " is out of range for a rank-" << srcType.getRank()
           << " source (0.." << srcType.getRank() << ")";
  SmallVector<int64_t> expected(srcType.getShape());
  expected.insert(expected.begin() + axis, 1);
  if (resType.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("result shape ")
           << shapeStr(resType.getShape()) << " should be "
           << shapeStr(expected) << " (the source with a 1 at axis " << axis
           << ")";
  return success();
}

OpFoldResult ExpandDimsOp::fold(FoldAdaptor adaptor) {
  return foldSplatOperand(adaptor.getSrc(), getType());
}

void ExpandDimsOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                               MLIRContext *context) {
  results.add<ShapeOpOfSplat<ExpandDimsOp>>(context);
}

//===----------------------------------------------------------------------===//
// ReshapeOp
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  auto srcType = getSrc().getType();
  auto resType = getType();
  if (failed(
          verifySameElementType(*this, srcType, resType, "source", "result")))
    return failure();
  if (srcType.getNumElements() != resType.getNumElements())
    return emitOpError("source has ")
           << srcType.getNumElements() << " elements but the result has "
           << resType.getNumElements();
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getSrc().getType() == getType())
    return getSrc();
  if (auto inner = getSrc().getDefiningOp<ReshapeOp>()) {
    if (inner.getSrc().getType() == getType())
      return inner.getSrc();
    getSrcMutable().assign(inner.getSrc());
    return getResult();
  }
  if (auto dense = dyn_cast_if_present<DenseElementsAttr>(adaptor.getSrc()))
    return dense.reshape(cast<ShapedType>(getType()));
  return {};
}

void ReshapeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                            MLIRContext *context) {
  results.add<ShapeOpOfSplat<ReshapeOp>>(context);
}

//===----------------------------------------------------------------------===//
// TransOp
//===----------------------------------------------------------------------===//

LogicalResult TransOp::verify() {
  auto srcType = getSrc().getType();
  auto resType = getType();
  if (failed(
          verifySameElementType(*this, srcType, resType, "source", "result")))
    return failure();
  ArrayRef<int32_t> order = getOrder();
  int64_t rank = srcType.getRank();
  if (static_cast<int64_t>(order.size()) != rank)
    return emitOpError("order has ")
           << order.size() << " entries but the source has rank " << rank;
  SmallVector<bool> seen(rank, false);
  for (int32_t d : order) {
    if (d < 0 || d >= rank || seen[d])
      return emitOpError("order must be a permutation of 0..") << rank - 1;
    seen[d] = true;
  }
  SmallVector<int64_t> expected;
  for (int32_t d : order)
    expected.push_back(srcType.getDimSize(d));
  if (resType.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("result shape ")
           << shapeStr(resType.getShape()) << " should be "
           << shapeStr(expected) << " (the source permuted by the order)";
  return success();
}

OpFoldResult TransOp::fold(FoldAdaptor adaptor) {
  auto isIdentity = [](ArrayRef<int32_t> order) {
    for (auto [i, d] : llvm::enumerate(order))
      if (static_cast<int32_t>(i) != d)
        return false;
    return true;
  };
  if (isIdentity(getOrder()) && getSrc().getType() == getType())
    return getSrc();
  if (auto inner = getSrc().getDefiningOp<TransOp>()) {
    // Result dim i is inner's dim order[i], which is x's dim
    // innerOrder[order[i]].
    SmallVector<int32_t> composed;
    for (int32_t d : getOrder())
      composed.push_back(inner.getOrder()[d]);
    if (isIdentity(composed) && inner.getSrc().getType() == getType())
      return inner.getSrc();
    getSrcMutable().assign(inner.getSrc());
    setOrder(composed);
    return getResult();
  }
  return foldSplatOperand(adaptor.getSrc(), getType());
}

void TransOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                          MLIRContext *context) {
  results.add<ShapeOpOfSplat<TransOp>>(context);
}

//===----------------------------------------------------------------------===//
// Memory access
//===----------------------------------------------------------------------===//

/// Checks the memref side of a structured block access.
static LogicalResult verifyBlockAccess(Operation *op, MemRefType memref,
                                       size_t numOffsets,
                                       RankedTensorType tile) {
  if (!memref.isStrided())
    return op->emitOpError("memref ")
           << memref << " must have a strided layout";
  if (numOffsets != static_cast<size_t>(memref.getRank()))
    return op->emitOpError("expects ")
           << memref.getRank() << " offsets (one per dimension of " << memref
           << "), got " << numOffsets;
  if (tile.getRank() != memref.getRank())
    return op->emitOpError("tile rank ")
           << tile.getRank() << " differs from memref rank " << memref.getRank()
           << "; access a tile of the memref's rank and reshape it";
  return verifySameElementType(op, tile, memref, "tile", "memref");
}

/// Checks the index tiles of a gather, scatter or atomic access.
static LogicalResult verifyIndexedAccess(Operation *op, MemRefType memref,
                                         ValueRange indices,
                                         RankedTensorType tile) {
  if (!memref.isStrided())
    return op->emitOpError("memref ")
           << memref << " must have a strided layout";
  if (indices.size() != static_cast<size_t>(memref.getRank()))
    return op->emitOpError("expects ")
           << memref.getRank() << " index tiles (one per dimension of "
           << memref << "), got " << indices.size();
  for (auto [i, index] : llvm::enumerate(indices)) {
    auto indexType = cast<RankedTensorType>(index.getType());
    if (indexType.getShape() != tile.getShape())
      return op->emitOpError("index tile #")
             << i << " has shape " << shapeStr(indexType.getShape())
             << " but the data tile has shape " << shapeStr(tile.getShape());
  }
  return verifySameElementType(op, tile, memref, "tile", "memref");
}

/// Checks that a padding value has the tile's element type.
static LogicalResult verifyPadding(Operation *op, std::optional<TypedAttr> pad,
                                   RankedTensorType tile) {
  if (!pad)
    return success();
  if (!isa<IntegerAttr, FloatAttr>(*pad))
    return op->emitOpError("padding must be an integer or float constant");
  if (pad->getType() != tile.getElementType())
    return op->emitOpError("padding type ")
           << pad->getType() << " differs from the tile element type "
           << tile.getElementType();
  return success();
}

LogicalResult LoadOp::verify() {
  if (failed(verifyBlockAccess(*this, getBase().getType(), getOffsets().size(),
                               getType())))
    return failure();
  return verifyPadding(*this, getPadding(), getType());
}

LogicalResult StoreOp::verify() {
  return verifyBlockAccess(*this, getBase().getType(), getOffsets().size(),
                           getValue().getType());
}

LogicalResult GatherOp::verify() {
  if (failed(verifyIndexedAccess(*this, getBase().getType(), getIndices(),
                                 getType())))
    return failure();
  return verifyPadding(*this, getPadding(), getType());
}

LogicalResult Im2colOp::verify() {
  MemRefType base = getBase().getType();
  RankedTensorType tile = getType();
  if (base.getRank() != 4)
    return emitOpError("reads an NHWC activation tensor (a rank-4 memref), "
                       "got ")
           << base;
  if (tile.getRank() != 2)
    return emitOpError("result is a 2-D tile (output pixels x channels), "
                       "got ")
           << tile;
  if (tile.getElementType() != base.getElementType())
    return emitOpError("result element type ")
           << tile.getElementType() << " differs from the memref's "
           << base.getElementType();
  auto check = [&](StringRef name, ArrayRef<int64_t> values,
                   int64_t min) -> LogicalResult {
    if (values.size() != 2)
      return emitOpError(name) << " takes two values (along H and W), got "
                               << values.size();
    for (int64_t v : values)
      if (v < min || v > 65535)
        return emitOpError(name) << " values must be from " << min
                                 << " to 65535, got " << v;
    return success();
  };
  if (failed(check("filter", getFilter(), 1)) ||
      failed(check("stride", getStride(), 1)) ||
      failed(check("padding", getPadding(), 0)) ||
      failed(check("dilation", getDilation(), 1)))
    return failure();
  return success();
}

RankedTensorType AsyncGatherOp::getTileType() {
  auto index = cast<RankedTensorType>(getIndices().front().getType());
  return RankedTensorType::get(index.getShape(),
                               getBase().getType().getElementType(),
                               index.getEncoding());
}

/// Checks a ring's slot count (the ops of one ring agree on it).
static LogicalResult verifyRingSlots(Operation *op, uint32_t slots) {
  if (slots < 2 || slots > 8)
    return op->emitOpError("a ring has 2 to 8 slots, got ") << slots;
  return success();
}

LogicalResult AsyncGatherOp::verify() {
  if (getIndices().empty())
    return emitOpError("expects one index tile per dimension of ")
           << getBase().getType() << ", got none";
  RankedTensorType tile = getTileType();
  if (failed(
          verifyIndexedAccess(*this, getBase().getType(), getIndices(), tile)))
    return failure();
  for (auto [i, index] : llvm::enumerate(getIndices()))
    if (cast<RankedTensorType>(index.getType()).getEncoding() !=
        tile.getEncoding())
      return emitOpError("index tile #")
             << i << " has a different layout than index tile #0";
  if (Value mask = getMask())
    if (cast<RankedTensorType>(mask.getType()).getShape() != tile.getShape())
      return emitOpError("mask has shape ")
             << shapeStr(cast<RankedTensorType>(mask.getType()).getShape())
             << " but the index tiles have shape " << shapeStr(tile.getShape());
  return verifyRingSlots(*this, getSlots());
}

LogicalResult AsyncGatherWaitOp::verify() {
  return verifyRingSlots(*this, getSlots());
}

LogicalResult ScatterOp::verify() {
  return verifyIndexedAccess(*this, getBase().getType(), getIndices(),
                             getValue().getType());
}

LogicalResult AtomicRMWOp::verify() {
  auto valueType = getValue().getType();
  if (failed(verifyIndexedAccess(*this, getBase().getType(), getIndices(),
                                 valueType)))
    return failure();
  Type elem = valueType.getElementType();
  switch (getKind()) {
  case AtomicKind::Add:
  case AtomicKind::Max:
  case AtomicKind::Min:
  case AtomicKind::Xchg:
    if (isa<FloatType>(elem) && !elem.isF16() && !elem.isBF16() &&
        !elem.isF32() && !elem.isF64())
      return emitOpError("atomic ")
             << stringifyAtomicKind(getKind()) << " does not support " << elem;
    if (!isa<FloatType, IntegerType>(elem))
      return emitOpError("atomic ")
             << stringifyAtomicKind(getKind())
             << " needs integer or float elements, got " << elem;
    break;
  default:
    if (!isa<IntegerType>(elem))
      return emitOpError("atomic ") << stringifyAtomicKind(getKind())
                                    << " needs integer elements, got " << elem;
  }
  if (auto width = elem.getIntOrFloatBitWidth();
      width != 16 && width != 32 && width != 64)
    return emitOpError("atomics need 16-, 32- or 64-bit elements, got ")
           << elem;
  return success();
}

//===----------------------------------------------------------------------===//
// DotOp
//===----------------------------------------------------------------------===//

LogicalResult DotOp::verify() {
  auto aType = getA().getType(), bType = getB().getType();
  auto cType = getC().getType();
  int64_t rank = aType.getRank();
  if (rank != 2 && rank != 3)
    return emitOpError("operands must be 2-D (M x K, K x N) or 3-D with a "
                       "leading batch dimension, got rank ")
           << rank;
  if (bType.getRank() != rank || cType.getRank() != rank)
    return emitOpError("A, B and the accumulator must have the same rank, got ")
           << rank << ", " << bType.getRank() << " and " << cType.getRank();
  ArrayRef<int64_t> a = aType.getShape(), b = bType.getShape(),
                    c = cType.getShape();
  if (rank == 3 && (a[0] != b[0] || a[0] != c[0]))
    return emitOpError("batch dimensions differ: ")
           << a[0] << ", " << b[0] << " and " << c[0];
  int64_t m = a[rank - 2], k = a[rank - 1];
  int64_t kb = b[rank - 2], n = b[rank - 1];
  if (k != kb)
    return emitOpError("contraction dimensions differ: A is ")
           << shapeStr(a) << " (K = " << k << ") but B is " << shapeStr(b)
           << " (K = " << kb << ")";
  if (c[rank - 2] != m || c[rank - 1] != n)
    return emitOpError("accumulator is ")
           << shapeStr(c) << " but A x B is " << m << "x" << n;

  Type in = aType.getElementType(), acc = cType.getElementType();
  // The 8-bit floats mix (e4m3 x e5m2: wgmma takes either for each).
  auto isFloat8 = [](Type t) {
    return isa<Float8E4M3FNType, Float8E5M2Type>(t);
  };
  if (in != bType.getElementType() &&
      !(isFloat8(in) && isFloat8(bType.getElementType())))
    return emitOpError("A and B element types differ: ")
           << in << " and " << bType.getElementType()
           << " (only f8E4M3FN and f8E5M2 mix)";
  bool ok = false;
  if (in.isF16())
    ok = acc.isF32() || acc.isF16();
  else if (in.isBF16() || in.isF32() ||
           isa<Float8E4M3FNType, Float8E5M2Type>(in))
    ok = acc.isF32();
  else if (in.isF64())
    ok = acc.isF64();
  else if (in.isSignlessInteger(8))
    ok = acc.isSignlessInteger(32);
  else
    return emitOpError("unsupported operand element type ")
           << in << "; expected f16, bf16, f32, f64, i8, f8E4M3FN or f8E5M2";
  if (!ok)
    return emitOpError("accumulator element type ")
           << acc << " does not go with " << in
           << " operands (f32 for float inputs, also f16 for f16, f64 for "
              "f64, i32 for i8)";
  if (getInputPrecision() != InputPrecision::IEEE && !in.isF32())
    return emitOpError("input precision ")
           << stringifyInputPrecision(getInputPrecision())
           << " applies to f32 operands only, got " << in;
  return success();
}

//===----------------------------------------------------------------------===//
// ReduceOp / ScanOp
//===----------------------------------------------------------------------===//

/// Checks the sources and axis shared by reduce and scan.
static LogicalResult verifyCombinerSources(Operation *op, ValueRange srcs,
                                           int32_t axis) {
  if (srcs.empty())
    return op->emitOpError("needs at least one source tile");
  auto first = cast<RankedTensorType>(srcs[0].getType());
  for (Value src : srcs.drop_front())
    if (cast<RankedTensorType>(src.getType()).getShape() != first.getShape())
      return op->emitOpError("all source tiles must have the same shape");
  if (axis < 0 || axis >= first.getRank())
    return op->emitOpError("axis ")
           << axis << " is out of range for rank-" << first.getRank()
           << " tiles (0.." << first.getRank() - 1 << ")";
  return success();
}

/// Checks a combiner region: two block arguments per source (all the
/// accumulated values, then all the new ones) and an ism.yield of one value
/// per source, with the sources' element types.
static LogicalResult verifyCombiner(Operation *op, Region &region,
                                    ValueRange srcs) {
  if (region.empty())
    return op->emitOpError("combiner region must have a block");
  Block &block = region.front();
  size_t n = srcs.size();
  if (block.getNumArguments() != 2 * n)
    return op->emitOpError("combiner takes ")
           << 2 * n << " arguments (two per source), got "
           << block.getNumArguments();
  for (size_t i = 0; i < 2 * n; ++i) {
    Type expected = getElementTypeOrSelf(srcs[i % n].getType());
    if (block.getArgument(i).getType() != expected)
      return op->emitOpError("combiner argument #")
             << i << " has type " << block.getArgument(i).getType()
             << " but source #" << i % n << " has elements of type "
             << expected;
  }
  auto yield = dyn_cast<YieldOp>(block.getTerminator());
  if (!yield)
    return op->emitOpError("combiner must end with ism.yield");
  if (yield.getValues().size() != n)
    return op->emitOpError("combiner yields ")
           << yield.getValues().size() << " values, expected " << n;
  for (auto [i, value] : llvm::enumerate(yield.getValues()))
    if (value.getType() != getElementTypeOrSelf(srcs[i].getType()))
      return op->emitOpError("combiner yield #")
             << i << " has type " << value.getType() << ", expected "
             << getElementTypeOrSelf(srcs[i].getType());
  return success();
}

LogicalResult ReduceOp::verify() {
  if (failed(verifyCombinerSources(*this, getSrcs(), getAxis())))
    return failure();
  if (getResults().size() != getSrcs().size())
    return emitOpError("has ") << getResults().size() << " results for "
                               << getSrcs().size() << " sources";
  for (auto [i, pair] :
       llvm::enumerate(llvm::zip(getSrcs().getTypes(), getResultTypes()))) {
    auto [srcType, resType] = pair;
    auto src = cast<RankedTensorType>(srcType);
    if (src.getRank() == 1) {
      if (resType != src.getElementType())
        return emitOpError("result #")
               << i << " must be the scalar " << src.getElementType()
               << " (reducing a 1-D tile), got " << resType;
      continue;
    }
    SmallVector<int64_t> expected(src.getShape());
    expected.erase(expected.begin() + getAxis());
    auto res = dyn_cast<RankedTensorType>(resType);
    if (!res || res.getShape() != ArrayRef<int64_t>(expected) ||
        res.getElementType() != src.getElementType())
      return emitOpError("result #")
             << i << " must be a " << shapeStr(expected) << " tile of "
             << src.getElementType() << " (the source without axis "
             << getAxis() << "), got " << resType;
  }
  return success();
}

LogicalResult ReduceOp::verifyRegions() {
  return verifyCombiner(*this, getCombiner(), getSrcs());
}

LogicalResult ScanOp::verify() {
  if (failed(verifyCombinerSources(*this, getSrcs(), getAxis())))
    return failure();
  if (getResults().size() != getSrcs().size())
    return emitOpError("has ") << getResults().size() << " results for "
                               << getSrcs().size() << " sources";
  for (auto [i, pair] :
       llvm::enumerate(llvm::zip(getSrcs().getTypes(), getResultTypes()))) {
    auto [srcType, resType] = pair;
    if (srcType != resType)
      return emitOpError("result #")
             << i << " has type " << resType << " but source #" << i
             << " has type " << srcType;
  }
  return success();
}

LogicalResult ScanOp::verifyRegions() {
  return verifyCombiner(*this, getCombiner(), getSrcs());
}

//===----------------------------------------------------------------------===//
// ConvertLayoutOp
//===----------------------------------------------------------------------===//

LogicalResult ConvertLayoutOp::verify() {
  auto srcType = getSrc().getType();
  auto resType = getType();
  if (srcType.getShape() != resType.getShape())
    return emitOpError("changes the shape from ")
           << shapeStr(srcType.getShape()) << " to "
           << shapeStr(resType.getShape()) << "; only the layout may change";
  return verifySameElementType(*this, srcType, resType, "source", "result");
}

OpFoldResult ConvertLayoutOp::fold(FoldAdaptor adaptor) {
  if (getSrc().getType() == getType())
    return getSrc();
  if (auto inner = getSrc().getDefiningOp<ConvertLayoutOp>()) {
    if (inner.getSrc().getType() == getType())
      return inner.getSrc();
    getSrcMutable().assign(inner.getSrc());
    return getResult();
  }
  return foldSplatOperand(adaptor.getSrc(), getType());
}

//===----------------------------------------------------------------------===//
// AssertOp
//===----------------------------------------------------------------------===//

LogicalResult AssertOp::verify() {
  if ((*this)->getParentOfType<KernelOp>())
    return emitOpError("states a requirement of a host function; it cannot be "
                       "used inside an ism.kernel (use a mask there)");
  // Every {N} in the message must name an operand after the condition.
  StringRef message = getMessage();
  unsigned count = getValues().size();
  for (size_t open = message.find('{'); open != StringRef::npos;
       open = message.find('{', open + 1)) {
    size_t close = message.find('}', open);
    unsigned index;
    if (close == StringRef::npos ||
        message.slice(open + 1, close).getAsInteger(10, index))
      return emitOpError("message has a '{' that is not a placeholder {N}: \"")
             << message << "\"";
    if (index >= count)
      return emitOpError("message refers to {")
             << index << "} but the op has " << count << " value"
             << (count == 1 ? "" : "s");
  }
  return success();
}

//===----------------------------------------------------------------------===//
// LaunchOp
//===----------------------------------------------------------------------===//

KernelOp LaunchOp::getKernelOp(SymbolTableCollection &symbolTable) {
  return symbolTable.lookupNearestSymbolFrom<KernelOp>(*this, getKernelAttr());
}

LogicalResult LaunchOp::verify() {
  if (getGrid().empty() || getGrid().size() > 3)
    return emitOpError("grid must have 1 to 3 dimensions, got ")
           << getGrid().size();
  if ((*this)->getParentOfType<KernelOp>())
    return emitOpError("launches kernels from the host; it cannot be used "
                       "inside an ism.kernel");
  return success();
}

LogicalResult LaunchOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  KernelOp kernel = getKernelOp(symbolTable);
  if (!kernel)
    return emitOpError("@") << getKernel() << " does not name an ism.kernel";
  ArrayRef<Type> params = kernel.getArgumentTypes();
  if (params.size() != getArgs().size())
    return emitOpError("passes ") << getArgs().size() << " arguments but @"
                                  << getKernel() << " takes " << params.size();
  for (auto [i, pair] :
       llvm::enumerate(llvm::zip(getArgs().getTypes(), params))) {
    auto [actual, expected] = pair;
    if (actual != expected)
      return emitOpError("argument #")
             << i << " has type " << actual << " but @" << getKernel()
             << " expects " << expected;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// CoscheduleOp
//===----------------------------------------------------------------------===//

LogicalResult CoscheduleOp::verify() {
  // The overrides are inherent attributes (their types checked by ODS);
  // anything else must carry a dialect prefix, so that a misspelt
  // override is an error rather than silently ignored.
  for (NamedAttribute attr : (*this)->getDiscardableAttrs())
    if (!attr.getName().getValue().contains('.'))
      return emitOpError("has no attribute '")
             << attr.getName().getValue()
             << "'; its overrides are stages, registers, replicas, "
                "ctas_per_sm, ring_stages, work_counters, prefetch, fallback, "
                "join and timeout_ms (other attributes need a dialect prefix)";
  if (getPolicy() == CoschedulePolicy::Ordered)
    for (StringRef name : {"stages", "registers", "replicas",
                           "work_counters", "fallback", "join"})
      if ((*this)->hasAttr(name))
        return emitOpError(name)
               << " does not apply to the ordered policy (its overrides are "
                  "ctas_per_sm, prefetch, ring_stages and timeout_ms)";
  if (std::optional<APInt> timeout = getTimeoutMs()) {
    if (getPolicy() != CoschedulePolicy::Ordered)
      return emitOpError("timeout_ms applies to the ordered policy only, not ")
             << stringifyCoschedulePolicy(getPolicy());
    if (timeout->getSExtValue() < 1 || timeout->getSExtValue() > 600000)
      return emitOpError("timeout_ms must be from 1 to 600000, got ")
             << timeout->getSExtValue();
  }
  return success();
}

LogicalResult CoscheduleOp::verifyRegions() {
  unsigned launches = 0;
  if (!getBody().empty()) {
    for (Operation &op : getBody().front()) {
      if (!isa<LaunchOp>(op))
        return emitOpError("may only contain ism.launch ops, found '")
               << op.getName() << "'";
      ++launches;
    }
  }
  if (launches < 2)
    return emitOpError("needs at least two launches to co-schedule, found ")
           << launches;

  // The launches run concurrently, in no order: a buffer one of them
  // writes must not be passed to another. (Ordered launches wait for the
  // earlier ones whose buffers they share.)
  if (getPolicy() == CoschedulePolicy::Ordered)
    return success();
  SmallVector<LaunchOp> ops(getLaunches());
  auto writes = [](LaunchOp launch, unsigned index) {
    KernelOp kernel = SymbolTable::lookupNearestSymbolFrom<KernelOp>(
        launch, launch.getKernelAttr());
    return kernel && kernel.getArgumentAccess(index).writes;
  };
  for (auto [i, first] : llvm::enumerate(ops)) {
    for (LaunchOp second : ArrayRef(ops).drop_front(i + 1)) {
      for (auto [a, value] : llvm::enumerate(first.getArgs())) {
        if (!isa<BaseMemRefType>(value.getType()))
          continue;
        for (auto [b, other] : llvm::enumerate(second.getArgs())) {
          if (other != value)
            continue;
          bool firstWrites = writes(first, a), secondWrites = writes(second, b);
          if (!firstWrites && !secondWrites)
            continue;
          return emitOpError("launches of @")
                 << first.getKernel() << " and @" << second.getKernel()
                 << " share a buffer that @"
                 << (firstWrites ? first.getKernel() : second.getKernel())
                 << " writes (argument #" << (firstWrites ? a : b)
                 << "); co-scheduled launches run in no order, so none may "
                    "write a buffer another one uses";
        }
      }
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// TaskWaitOp
//===----------------------------------------------------------------------===//

LogicalResult TaskWaitOp::verify() {
  // The partition (region) of an ordered ism.warp_specialize it is in.
  Region *region = (*this)->getParentRegion();
  while (region && !isa<WarpSpecializeOp>(region->getParentOp()))
    region = region->getParentOp()->getParentRegion();
  auto ws = region ? cast<WarpSpecializeOp>(region->getParentOp())
                   : WarpSpecializeOp();
  if (!ws || ws.getPolicy() != CoschedulePolicy::Ordered)
    return emitOpError("must be inside a partition of an ordered "
                       "ism.warp_specialize");
  unsigned self = region->getRegionNumber();
  int32_t previous = -1;
  for (int32_t launch : getLaunches()) {
    if (launch <= previous || launch >= int32_t(self))
      return emitOpError("waits for launches in increasing order, each "
                         "before its own partition (")
             << self << "), got " << launch;
    previous = launch;
  }
  if (getLaunches().empty())
    return emitOpError("waits for no launch");
  return success();
}

//===----------------------------------------------------------------------===//
// WarpSpecializeOp
//===----------------------------------------------------------------------===//

LogicalResult WarpSpecializeOp::verifyRegions() {
  unsigned n = getBodies().size();
  if (n == 0)
    return emitOpError("needs at least one partition");
  if (getPartitions().size() != n)
    return emitOpError("has ") << n << " regions but " << getPartitions().size()
                               << " partition attributes";
  if (getGrids().size() != 3 * n)
    return emitOpError("needs three grid sizes per partition (")
           << 3 * n << "), got " << getGrids().size();
  auto kernel = dyn_cast<KernelOp>((*this)->getParentOp());
  if (!kernel)
    return emitOpError("must be at the top level of an ism.kernel");
  unsigned kernelWarps = kernel.getNumWarps();
  bool shared = getPolicy() == CoschedulePolicy::WarpSpecialized;
  llvm::SmallDenseMap<unsigned, unsigned> barrierOwner;
  std::optional<unsigned> clustered;
  for (unsigned i = 0; i < n; ++i) {
    PartitionAttr p = getPartition(i);
    if (p.getClusterM() * p.getClusterN() > 1) {
      if (!shared)
        return emitOpError("partition ")
               << i << " has a " << p.getClusterM() << "x" << p.getClusterN()
               << " cluster, which a " << stringifyCoschedulePolicy(getPolicy())
               << " kernel cannot have: its CTAs run one program at a time";
      if (clustered)
        return emitOpError("partitions ")
               << *clustered << " and " << i
               << " both have a cluster; a kernel has one cluster barrier";
      clustered = i;
    }
    if (p.getWarpBase() + p.getNumWarps() > kernelWarps)
      return emitOpError("partition ")
             << i << " uses warps " << p.getWarpBase() << ".."
             << p.getWarpBase() + p.getNumWarps() - 1 << " but the kernel has "
             << kernelWarps;
    if (!shared && p.getWarpBase() != 0)
      return emitOpError("partition ")
             << i << ": " << stringifyCoschedulePolicy(getPolicy())
             << " partitions start at warp 0, got " << p.getWarpBase();
    if (getPolicy() == CoschedulePolicy::Ordered && p.getStages() > 0)
      return emitOpError("partition ")
             << i << " is a wgmma partition (stages = " << p.getStages()
             << "), which an ordered kernel cannot run as tasks";
    if (!shared && p.getAfter() >= 0)
      return emitOpError("partition ")
             << i << " runs after partition " << p.getAfter()
             << ", which only a warp_specialized kernel can do";
    if (!shared)
      continue;
    if (p.getAfter() >= 0) {
      // It runs on consumer warps of an earlier wgmma partition (consumers
      // first, then the producer warpgroup).
      unsigned j = unsigned(p.getAfter());
      PartitionAttr q = j < i ? getPartition(j) : PartitionAttr();
      if (!q || q.getStages() == 0 || q.getClusterM() * q.getClusterN() > 1 ||
          p.getWarpBase() < q.getWarpBase() ||
          p.getWarpBase() + p.getNumWarps() + 4 >
              q.getWarpBase() + q.getNumWarps())
        return emitOpError("partition ")
               << i << " runs after partition " << p.getAfter()
               << ", which must be an earlier wgmma partition without a "
                  "cluster whose consumer warps hold its warps";
    }
    for (unsigned j = 0; j < i; ++j) {
      PartitionAttr q = getPartition(j);
      if (p.getAfter() == int(j))
        continue;
      if (p.getAfter() >= 0 && q.getAfter() == p.getAfter()) {
        // Two copies after the same partition: each its own warpgroup.
        if (p.getWarpBase() == q.getWarpBase())
          return emitOpError("partitions ")
                 << j << " and " << i << " both run after partition "
                 << p.getAfter() << " on warps from " << p.getWarpBase();
        continue;
      }
      if (p.getWarpBase() < q.getWarpBase() + q.getNumWarps() &&
          q.getWarpBase() < p.getWarpBase() + p.getNumWarps())
        return emitOpError("partitions ")
               << j << " and " << i << " share warps; each warp runs one "
               << "partition";
    }
    for (unsigned id : p.getBarriers()) {
      auto [it, inserted] = barrierOwner.try_emplace(id, i);
      if (!inserted)
        return emitOpError("partitions ") << it->second << " and " << i
                                          << " both use named barrier " << id;
    }
  }
  // The copies after a wgmma partition first meet on its consumers' named
  // barrier, which counts every consumer: one copy per consumer warpgroup.
  for (unsigned j = 0; j < n && shared; ++j) {
    PartitionAttr q = getPartition(j);
    unsigned after = 0;
    for (unsigned i = 0; i < n; ++i)
      after += getPartition(i).getAfter() == int(j);
    if (after && after != (q.getNumWarps() - 4) / 4)
      return emitOpError("partition ")
             << j << " has " << (q.getNumWarps() - 4) / 4
             << " consumer warpgroups, and either each runs one partition "
                "after its tiles or none does; got "
             << after;
  }
  return success();
}

#define GET_OP_CLASSES
#include "ism/Dialect/Ism/IR/IsmOps.cpp.inc"
