//===- AssignLayouts.cpp - ism-assign-layouts: pick thread layouts --------===//

#include "ism/Dialect/Ism/IR/IsmOps.h"
#include "ism/Dialect/Ism/Transforms/LayoutPropagation.h"
#include "ism/Dialect/Ism/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::ism {
#define GEN_PASS_DEF_ISMASSIGNLAYOUTS
#include "ism/Dialect/Ism/Transforms/Passes.h.inc"
} // namespace mlir::ism

using namespace mlir;
using namespace mlir::ism;

namespace {

using Shape = SmallVector<int64_t>;

/// Bytes of one element as stored in memory (i1 masks count as one byte).
unsigned elementBytes(Type type) {
  return std::max<unsigned>(
      1, getElementTypeOrSelf(type).getIntOrFloatBitWidth() / 8);
}

/// The blocked layout for a tile of `shape` whose memory accesses use
/// `bytes`-byte elements, spread over `numWarps` warps. See the pass
/// description.
BlockedEncodingAttr chooseLayout(MLIRContext *ctx, ArrayRef<int64_t> shape,
                                 unsigned bytes, unsigned numWarps) {
  unsigned rank = shape.size();
  SmallVector<unsigned> order, sizePerThread(rank, 1), threads(rank, 1),
      warps(rank, 1);
  for (unsigned d = rank; d-- > 0;)
    order.push_back(d);
  unsigned fast = order.front();
  sizePerThread[fast] = std::max<unsigned>(
      1, std::min<int64_t>(std::max<unsigned>(1, 16 / bytes), shape[fast]));

  unsigned lanesLeft = 32;
  for (unsigned d : order) {
    int64_t extent = std::max<int64_t>(1, shape[d] / sizePerThread[d]);
    unsigned t = std::min<int64_t>(lanesLeft, extent);
    threads[d] = t;
    lanesLeft /= t;
  }
  threads[order.back()] *= lanesLeft;

  unsigned warpsLeft = numWarps;
  for (unsigned d : order) {
    int64_t extent =
        std::max<int64_t>(1, shape[d] / (sizePerThread[d] * threads[d]));
    unsigned w = std::min<int64_t>(warpsLeft, extent);
    warps[d] = w;
    warpsLeft /= w;
  }
  warps[order.back()] *= warpsLeft;
  return BlockedEncodingAttr::get(ctx, sizePerThread, threads, warps, order);
}

/// Returns `type` with `encoding`, for ranked tensors without one.
Type withEncoding(Type type,
                  const DenseMap<Shape, BlockedEncodingAttr> &layouts) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || tensor.getEncoding())
    return type;
  auto it = layouts.find(Shape(tensor.getShape()));
  if (it == layouts.end())
    return type;
  return RankedTensorType::get(tensor.getShape(), tensor.getElementType(),
                               it->second);
}

/// The layout of a broadcast's source that puts, in every thread, exactly
/// the elements the thread needs for its share of the result: the result's
/// layout with each size-1 dimension holding one element per thread. Lanes
/// and warps along broadcast dimensions then replicate the source, and the
/// broadcast is a register shuffle instead of a trip through shared memory.
BlockedEncodingAttr sliceForBroadcast(BlockedEncodingAttr result,
                                      ArrayRef<int64_t> sourceShape) {
  SmallVector<unsigned> sizePerThread(result.getSizePerThread());
  for (auto [d, size] : llvm::enumerate(sourceShape))
    sizePerThread[d] = std::min<int64_t>(sizePerThread[d], size);
  return BlockedEncodingAttr::get(result.getContext(), sizePerThread,
                                  result.getThreadsPerWarp(),
                                  result.getWarpsPerCTA(), result.getOrder());
}

/// The layout of a broadcast source of `sourceShape` whose result has
/// `result` (blocked, or slices of a blocked layout): sliceForBroadcast,
/// through the slices. Null for other layouts.
Attribute getBroadcastSourceLayout(Attribute result,
                                   ArrayRef<int64_t> sourceShape) {
  if (auto blocked = dyn_cast<BlockedEncodingAttr>(result))
    return sliceForBroadcast(blocked, sourceShape);
  auto slice = dyn_cast<SliceEncodingAttr>(result);
  if (!slice)
    return {};
  Shape parentShape(sourceShape);
  parentShape.insert(parentShape.begin() + slice.getDim(), 1);
  Attribute parent = getBroadcastSourceLayout(slice.getParent(), parentShape);
  if (!parent)
    return {};
  return SliceEncodingAttr::get(result.getContext(), slice.getDim(), parent);
}

/// The warps along `axis` of a tile of `type` (a blocked layout or slices
/// of one) that hold distinct elements, or 0 for other layouts.
int64_t getDistinctWarps(RankedTensorType type, unsigned axis) {
  Attribute layout = type.getEncoding();
  Shape shape(type.getShape());
  while (auto slice = dyn_cast_or_null<SliceEncodingAttr>(layout)) {
    if (axis >= slice.getDim())
      ++axis;
    shape.insert(shape.begin() + slice.getDim(), 1);
    layout = slice.getUnslicedLayout();
  }
  auto blocked = dyn_cast_or_null<BlockedEncodingAttr>(layout);
  if (!blocked)
    return 0;
  int64_t perWarp = int64_t(blocked.getSizePerThread()[axis]) *
                    blocked.getThreadsPerWarp()[axis];
  return std::min<int64_t>(blocked.getWarpsPerCTA()[axis],
                           std::max<int64_t>(1, shape[axis] / perWarp));
}

/// Gives the totals of each reduction that stays within a warp (one warp
/// along its axis) the #ism.slice of its source's layout: every thread
/// then keeps the totals of its own elements, with no shared memory or
/// barrier, and the elementwise math, loops and broadcasts that use them
/// follow (ism::propagateForward).
void keepReductionsInWarps(KernelOp kernel) {
  SmallVector<ReduceOp> reduces;
  kernel.walk([&](ReduceOp reduce) { reduces.push_back(reduce); });
  OpBuilder b(kernel.getContext());
  for (ReduceOp reduce : reduces) {
    auto type = dyn_cast<RankedTensorType>(reduce.getResult(0).getType());
    if (!type || reduce.getSrcs().size() != 1)
      continue;
    auto src = cast<RankedTensorType>(reduce.getSrcs()[0].getType());
    if (getDistinctWarps(src, reduce.getAxis()) != 1)
      continue;
    auto slice = SliceEncodingAttr::get(kernel.getContext(), reduce.getAxis(),
                                        src.getEncoding());
    if (type.getEncoding() == slice)
      continue;
    reduce.getResult(0).setType(ism::withEncoding(type, slice));
    propagateForward(reduce.getResult(0), slice, type.getEncoding(), b);
  }
  // Broadcasts of totals, or into a tile, that the slices reached: the
  // expand_dims that makes their source takes the result's layout sliced
  // to its shape and reads a converted tile's original directly, so the
  // expansion and the broadcast stay in registers.
  kernel.walk([&](BroadcastOp bc) {
    auto src = cast<RankedTensorType>(bc.getSrc().getType());
    auto expand = bc.getSrc().getDefiningOp<ExpandDimsOp>();
    if (!expand || !bc.getSrc().hasOneUse())
      return;
    auto convert = expand.getSrc().getDefiningOp<ConvertLayoutOp>();
    Value original = convert ? convert.getSrc() : expand.getSrc();
    if (!isa<SliceEncodingAttr>(bc.getType().getEncoding()) &&
        !isa<SliceEncodingAttr>(
            cast<RankedTensorType>(original.getType()).getEncoding()))
      return;
    Attribute layout =
        getBroadcastSourceLayout(bc.getType().getEncoding(), src.getShape());
    if (!layout || src.getEncoding() == layout)
      return;
    expand.getResult().setType(ism::withEncoding(src, layout));
    if (convert) {
      expand.getSrcMutable().assign(original);
      if (convert->use_empty())
        convert->erase();
    }
  });
}

/// The layout of an expand_dims source that keeps `result`'s distribution:
/// the inserted dimension is dropped and its lanes and warps move to a
/// size-1 dimension of the source (where they replicate), so that the
/// expand_dims needs no data movement. When the dropped dimension has
/// lanes or warps and the source has no size-1 dimension to take them
/// (e.g. RoPE's cos rows of several tokens, tokens x columns, whose
/// expansion is spread over the heads), a blocked layout cannot replicate
/// there: they go to the slowest dimension, the expand_dims moves data,
/// and `replicates` is set to false.
BlockedEncodingAttr dropDimension(BlockedEncodingAttr result,
                                  ArrayRef<int64_t> sourceShape, unsigned axis,
                                  bool &replicates) {
  replicates = (result.getThreadsPerWarp()[axis] == 1 &&
                result.getWarpsPerCTA()[axis] == 1) ||
               llvm::is_contained(sourceShape, 1);
  SmallVector<unsigned> spt, threads, warps, order;
  for (unsigned d = 0; d < result.getRank(); ++d) {
    if (d == axis)
      continue;
    spt.push_back(result.getSizePerThread()[d]);
    threads.push_back(result.getThreadsPerWarp()[d]);
    warps.push_back(result.getWarpsPerCTA()[d]);
  }
  for (unsigned d : result.getOrder())
    if (d != axis)
      order.push_back(d > axis ? d - 1 : d);
  // Where the dropped dimension's lanes and warps go: a size-1 dimension,
  // or else the slowest one.
  unsigned target = order.back();
  for (auto [d, size] : llvm::enumerate(sourceShape))
    if (size == 1)
      target = d;
  threads[target] *= result.getThreadsPerWarp()[axis];
  warps[target] *= result.getWarpsPerCTA()[axis];
  return BlockedEncodingAttr::get(result.getContext(), spt, threads, warps,
                                  order);
}

/// Gives the sources of broadcasts (and the expand_dims chains that make
/// them) layouts sliced from the broadcast results', once per shape. The
/// shapes of expand_dims sources no blocked layout fits (dropDimension)
/// go to `toSlice`.
void sliceBroadcastSources(KernelOp kernel,
                           DenseMap<Shape, BlockedEncodingAttr> &layouts,
                           llvm::DenseSet<Shape> &toSlice) {
  llvm::DenseSet<Shape> sliced;
  kernel.walk([&](BroadcastOp op) {
    auto resultType = cast<RankedTensorType>(op.getType());
    auto srcType = cast<RankedTensorType>(op.getSrc().getType());
    if (resultType.getEncoding() || srcType.getEncoding())
      return;
    Shape srcShape(srcType.getShape());
    if (!sliced.insert(srcShape).second)
      return;
    BlockedEncodingAttr layout =
        sliceForBroadcast(layouts[Shape(resultType.getShape())], srcShape);
    layouts[srcShape] = layout;
    Value value = op.getSrc();
    while (auto expand = value.getDefiningOp<ExpandDimsOp>()) {
      auto inner = cast<RankedTensorType>(expand.getSrc().getType());
      Shape innerShape(inner.getShape());
      if (inner.getEncoding() || !sliced.insert(innerShape).second)
        break;
      bool replicates;
      layout = dropDimension(layout, innerShape, expand.getAxis(), replicates);
      if (!replicates)
        toSlice.insert(innerShape);
      layouts[innerShape] = layout;
      value = expand.getSrc();
    }
  });
}

/// The unmasked loads of `toSlice`'s shapes that feed an expand_dims (and
/// nothing else) take the #ism.slice of the expansion's layout: every
/// thread loads the elements it holds after the expansion, and the
/// expand_dims moves no data (instead of a trip through shared memory and
/// a barrier).
void sliceExpandedLoads(KernelOp kernel, const llvm::DenseSet<Shape> &toSlice) {
  if (toSlice.empty())
    return;
  kernel.walk([&](ExpandDimsOp expand) {
    Value src = expand.getSrc();
    auto type = cast<RankedTensorType>(src.getType());
    auto load = src.getDefiningOp<LoadOp>();
    if (!toSlice.contains(Shape(type.getShape())) || !src.hasOneUse() ||
        !load || load.getMask())
      return;
    auto result = cast<RankedTensorType>(expand.getType()).getEncoding();
    if (!isa_and_nonnull<BlockedEncodingAttr>(result))
      return;
    src.setType(ism::withEncoding(
        type,
        SliceEncodingAttr::get(kernel.getContext(), expand.getAxis(), result)));
  });
}

struct IsmAssignLayoutsPass
    : mlir::ism::impl::IsmAssignLayoutsBase<IsmAssignLayoutsPass> {
  using Base::Base;

  void runOnOperation() override {
    getOperation().walk([&](KernelOp kernel) {
      if (numWarps != 0) {
        if (numWarps > 32 || !llvm::isPowerOf2_32(numWarps)) {
          kernel.emitOpError("num-warps must be a power of two from 1 to 32, "
                             "got ")
              << numWarps.getValue();
          return signalPassFailure();
        }
        kernel.setNumWarps(numWarps);
      }
      assign(kernel);
    });
  }

  void assign(KernelOp kernel) {
    // The element size that decides the vector width of each shape.
    DenseMap<Shape, unsigned> memoryBytes, valueBytes;
    auto note = [](DenseMap<Shape, unsigned> &map, Type type) {
      auto tensor = dyn_cast<RankedTensorType>(type);
      if (!tensor || tensor.getEncoding())
        return;
      Shape shape(tensor.getShape());
      unsigned bytes = elementBytes(tensor);
      auto [it, inserted] = map.try_emplace(shape, bytes);
      if (!inserted)
        it->second = std::min(it->second, bytes);
    };
    kernel.walk([&](Operation *op) {
      if (isa<LoadOp, GatherOp>(op))
        note(memoryBytes, op->getResult(0).getType());
      if (isa<StoreOp, ScatterOp, AtomicRMWOp>(op))
        note(memoryBytes,
             op->getOperand(isa<AtomicRMWOp>(op) ? 2 : 0).getType());
      for (Type type : op->getResultTypes())
        if (!getElementTypeOrSelf(type).isInteger(1))
          note(valueBytes, type);
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments())
            note(valueBytes, arg.getType());
    });

    DenseMap<Shape, BlockedEncodingAttr> layouts;
    auto choose = [&](const Shape &shape, unsigned bytes) {
      if (!layouts.count(shape))
        layouts[shape] =
            chooseLayout(&getContext(), shape, bytes, kernel.getNumWarps());
    };
    for (auto &[shape, bytes] : memoryBytes)
      choose(shape, bytes);
    for (auto &[shape, bytes] : valueBytes)
      choose(shape, bytes);
    // Shapes seen only as i1 masks.
    kernel.walk([&](Operation *op) {
      for (Type type : op->getResultTypes())
        if (auto tensor = dyn_cast<RankedTensorType>(type);
            tensor && !tensor.getEncoding())
          choose(Shape(tensor.getShape()), 4);
    });

    llvm::DenseSet<Shape> toSlice;
    sliceBroadcastSources(kernel, layouts, toSlice);

    kernel.walk([&](Operation *op) {
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments())
            arg.setType(withEncoding(arg.getType(), layouts));
      for (OpResult result : op->getResults())
        result.setType(withEncoding(result.getType(), layouts));
      if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
        if (auto dense = dyn_cast<DenseElementsAttr>(constant.getValue()))
          if (dense.getType() != constant.getType())
            constant.setValueAttr(
                dense.reshape(cast<ShapedType>(constant.getType())));
      }
    });

    sliceExpandedLoads(kernel, toSlice);
    keepReductionsInWarps(kernel);
  }
};

} // namespace
